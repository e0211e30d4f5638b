package webhooksapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

const wsID = apitest.WorkspaceID

// sliceStore serves webhooks from slices, positions being item indexes.
type sliceStore struct {
	outbound []chat.OutboundWebhook
	support  []chat.SupportWebhook
	calls    int
}

func (s *sliceStore) OutboundWebhooks(_ context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	s.calls++
	return apitest.PageOf(s.outbound, after, limit), nil
}

func (s *sliceStore) SupportWebhooks(_ context.Context, ws, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
	s.calls++
	return apitest.PageOf(s.support, after, limit), nil
}

func listFixture(n int) (*sliceStore, *workspaces.Authenticator, *cursor.Codec) {
	st := &sliceStore{}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		st.outbound = append(st.outbound, chat.OutboundWebhook{ID: fmt.Sprintf("O%02d", i), WorkspaceID: wsID, Name: fmt.Sprint("hook ", i),
			URL: "https://example.com/h", Events: []string{"message.created"}, Active: true, SigningSecret: "whsig_SECRET",
			CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base})
		st.support = append(st.support, chat.SupportWebhook{ID: fmt.Sprintf("S%02d", i), WorkspaceID: wsID, Name: "s", URL: "https://example.com/s", Active: i%2 == 0, CreatedAt: base, UpdatedAt: base})
	}
	auth := &workspaces.Authenticator{Tokens: fakeTokensFor(map[string]string{"wsk_member": wsID, "wsk_stranger": "01JDZ8Y7K3Q4W5E6R7T8Y9A0XX"})}
	codec, _ := cursor.New([]byte("0123456789abcdef0123456789abcdef"))
	return st, auth, codec
}

type tokenMap map[string]workspaces.APIToken

func (m tokenMap) APIToken(_ context.Context, hash string) (workspaces.APIToken, error) {
	if t, ok := m[hash]; ok {
		return t, nil
	}
	return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "none")
}

func fakeTokensFor(tokens map[string]string) tokenMap {
	m := tokenMap{}
	for tok, ws := range tokens {
		m[chat.HashToken(tok)] = workspaces.APIToken{Hash: chat.HashToken(tok), WorkspaceID: ws, UserID: "U"}
	}
	return m
}

func getList(t *testing.T, h http.Handler, path, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

func listMux(st *sliceStore, auth *workspaces.Authenticator, codec *cursor.Codec) http.Handler {
	return httpapi.Mux(map[string]http.Handler{
		"ListOutboundWebhooksFunction": webhooksapi.OutboundWebhooksHandler(auth, st, codec),
		"ListSupportWebhooksFunction":  webhooksapi.SupportWebhooksHandler(auth, st, codec),
	})
}

func TestListAuthentication(t *testing.T) {
	st, auth, codec := listFixture(3)
	h := listMux(st, auth, codec)
	for _, list := range []string{"outbound-webhooks", "support-webhooks"} {
		for _, tc := range []struct {
			name, ws, header string
			status           int
			body             string
		}{
			{"missing", wsID, "", 401, `{"message":"Unauthenticated."}`},
			{"malformed", wsID, "Bearer", 401, `{"message":"Unauthenticated."}`},
			{"unknown", wsID, "Bearer wsk_nobody", 401, `{"message":"Unauthenticated."}`},
			{"basic", wsID, "Basic d3NrX21lbWJlcjo=", 401, `{"message":"Unauthenticated."}`},
			{"other workspace", wsID, "Bearer wsk_stranger", 403, `{"message":"This action is unauthorized.","errors":{"code":["forbidden"]}}`},
			{"unknown workspace", "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ", "Bearer wsk_member", 403, `{"message":"This action is unauthorized.","errors":{"code":["forbidden"]}}`},
		} {
			rec := getList(t, h, "/api/v1/workspaces/"+tc.ws+"/"+list, tc.header)
			if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.body {
				t.Errorf("%s %s: got %d %s, want %d %s", list, tc.name, rec.Code, rec.Body, tc.status, tc.body)
			}
		}
	}
	if st.calls != 0 {
		t.Fatalf("the list store was called %d times for unauthorized requests", st.calls)
	}
}

func TestListPaginationVisitsEveryItemOnce(t *testing.T) {
	st, auth, codec := listFixture(27)
	h := listMux(st, auth, codec)
	seen := map[string]int{}
	path := "/api/v1/workspaces/" + wsID + "/outbound-webhooks?limit=10"
	var sizes []int
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("more pages than expected")
		}
		rec := getList(t, h, path, "Bearer wsk_member")
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		body := apitest.Decode(t, rec)
		data := body["data"].([]any)
		sizes = append(sizes, len(data))
		for _, it := range data {
			item := it.(map[string]any)
			seen[item["id"].(string)]++
			if len(item) != 10 {
				t.Fatalf("outbound item has fields %v, want exactly 10 (section 3, disabled_reason and rate_limit)", item)
			}
		}
		meta := body["meta"].(map[string]any)
		if meta["limit"].(float64) != 10 {
			t.Fatalf("meta.limit %v, want 10", meta["limit"])
		}
		next, _ := meta["next_cursor"].(string)
		if next == "" {
			if meta["next_cursor"] != nil {
				t.Fatalf("next_cursor %v, want null", meta["next_cursor"])
			}
			break
		}
		path = "/api/v1/workspaces/" + wsID + "/outbound-webhooks?limit=10&cursor=" + next
	}
	if fmt.Sprint(sizes) != "[10 10 7]" {
		t.Fatalf("page sizes %v, want [10 10 7]", sizes)
	}
	if len(seen) != 27 {
		t.Fatalf("saw %d distinct items, want 27", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("item %s seen %d times", id, n)
		}
	}
}

func TestListDefaultsAndValidation(t *testing.T) {
	st, auth, codec := listFixture(30)
	h := listMux(st, auth, codec)
	rec := getList(t, h, "/api/v1/workspaces/"+wsID+"/support-webhooks", "Bearer wsk_member")
	body := apitest.Decode(t, rec)
	if n := len(body["data"].([]any)); n != 25 {
		t.Fatalf("default page has %d items, want 25", n)
	}
	foreign := codec.Encode("outbound-webhooks:"+wsID, "pos-10")
	otherWS := codec.Encode("support-webhooks:01JDZ8Y7K3Q4W5E6R7T8Y9A0XX", "pos-10")
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "limit=-1", "limit=1.5", "limit=", "cursor=garbage", "cursor=" + foreign, "cursor=" + otherWS, "limit=5&limit=6"} {
		rec := getList(t, h, "/api/v1/workspaces/"+wsID+"/support-webhooks?"+q, "Bearer wsk_member")
		if rec.Code != 422 {
			t.Errorf("?%s: status %d, want 422", q, rec.Code)
			continue
		}
		errs := apitest.Decode(t, rec)["errors"].(map[string]any)
		if _, ok := errs["limit"]; !ok {
			if _, ok := errs["cursor"]; !ok {
				t.Errorf("?%s: errors %v name neither limit nor cursor", q, errs)
			}
		}
	}
}

func TestListNeverReturnsSecrets(t *testing.T) {
	st, auth, codec := listFixture(3)
	rec := getList(t, listMux(st, auth, codec), "/api/v1/workspaces/"+wsID+"/outbound-webhooks", "Bearer wsk_member")
	if strings.Contains(rec.Body.String(), "whsig_SECRET") || strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("response leaks a secret: %s", rec.Body)
	}
}
