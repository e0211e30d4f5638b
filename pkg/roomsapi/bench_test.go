package roomsapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/memstore"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/inboundapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
	"github.com/chatbridge/chat/pkg/signature"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// The hot paths, measured through the real mux, middleware, handlers and
// services on an in-memory store: what remains is the code, not the I/O.

const benchWebhook = "01JD9N150GTP1NX6PB7VS5FQ3M"

var benchSecret = []byte("whsig_bench_signing_secret")

func inboundBench() (http.Handler, *memstore.Store) {
	st := memstore.New()
	ws := chat.Workspace{ID: "01JD9N0V80G9T6DXN5EAY6K8H4", DefaultLanguage: "en", WebhookQuota: 1 << 30}
	st.Configs[benchWebhook] = inbound.Config{
		Webhook: chat.InboundWebhook{ID: benchWebhook, WorkspaceID: ws.ID, ChannelID: "01JD9N0Z50BAKDWE0FBRMSFD5P", BotName: "Deploy Bot",
			SignatureRequired: true, SigningSecret: string(benchSecret), Enabled: true},
		Workspace: ws, Channels: map[string]bool{"01JD9N0Z50BAKDWE0FBRMSFD5P": true},
	}
	svc := &inbound.Service{Configs: &inbound.Cache{Source: st, TTL: time.Hour, NegativeTTL: time.Second, Now: time.Now},
		Quota: st, Store: st, IDs: chat.NewIDs(), Now: time.Now}
	return httpapi.Mux(map[string]http.Handler{"InboundWebhookFunction": inboundapi.InboundHandler(svc, time.Now, nil)}), st
}

// signedRequests makes n distinct signed requests with idempotency keys.
func signedRequests(start, n int) [][3]string {
	out := make([][3]string, n)
	now := time.Now().Unix()
	for i := range out {
		body := `{"content":"Deployed build ` + strconv.Itoa(start+i) + ` to production"}`
		out[i] = [3]string{body, signature.Format(now, signature.Sign(benchSecret, now, []byte(body))), "deploy-" + strconv.Itoa(start+i)}
	}
	return out
}

func postSigned(h http.Handler, r [3]string) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/"+benchWebhook+"/messages", bytes.NewReader([]byte(r[0])))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signature.Header, r[1])
	req.Header.Set("Idempotency-Key", r[2])
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// BenchmarkAcceptedSignedWebhookPost is the accepted path of a signed post
// with an Idempotency-Key: lookup (cached), quota, signature, body,
// claim, acceptance, response. Signing the requests is not measured.
func BenchmarkAcceptedSignedWebhookPost(b *testing.B) {
	h, st := inboundBench()
	b.ReportAllocs()
	var reqs [][3]string
	for i := 0; i < b.N; i++ {
		if i%4096 == 0 {
			b.StopTimer()
			reqs = signedRequests(i, 4096)
			b.StartTimer()
		}
		if code := postSigned(h, reqs[i%4096]); code != http.StatusAccepted {
			b.Fatalf("status %d", code)
		}
	}
	if st.Messages != b.N {
		b.Fatalf("%d messages for %d requests", st.Messages, b.N)
	}
}

// TestAcceptedPathAllocationBudget holds issue 7's budget: at most 150
// allocations per accepted signed post, I/O excluded.
func TestAcceptedPathAllocationBudget(t *testing.T) {
	h, _ := inboundBench()
	reqs := signedRequests(0, 200)
	postSigned(h, reqs[0]) // warm the cache
	i := 1
	allocs := testing.AllocsPerRun(100, func() {
		if code := postSigned(h, reqs[i]); code != http.StatusAccepted {
			t.Fatalf("status %d", code)
		}
		i++
	})
	t.Logf("accepted signed webhook post: %.0f allocations per request", allocs)
	if allocs > 150 {
		t.Fatalf("accepted path makes %.0f allocations per request, budget 150", allocs)
	}
}

func BenchmarkJoin(b *testing.B) {
	st := memstore.New()
	const room = "01JD9N113GQYDPWDARF68MKWR7"
	st.Rooms[room] = chat.Room{ID: room, WorkspaceID: "W", ChannelID: "C", Name: "Support call", Status: chat.RoomActive, ExpiresAt: time.Now().Add(24 * time.Hour)}
	h := httpapi.Mux(map[string]http.Handler{"JoinRoomFunction": roomsapi.JoinHandler(&rooms.Service{Store: st, IDs: chat.NewIDs(), Now: time.Now}, nil)})
	body := []byte(`{"nickname":"Ana","preferred_language":"es-ES"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/external/rooms/"+room+"/guests", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkListPage(b *testing.B) {
	st := memstore.New()
	const ws = "01JD9N0V80G9T6DXN5EAY6K8H4"
	st.Tokens[chat.HashToken("wsk_bench_token_0123")] = workspaces.APIToken{Hash: chat.HashToken("wsk_bench_token_0123"), WorkspaceID: ws, UserID: "U"}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100; i++ {
		st.Outbound[ws] = append(st.Outbound[ws], chat.OutboundWebhook{ID: fmt.Sprintf("01JD9N0V80G9T6DXN5EAY6%04d", i), WorkspaceID: ws,
			Name: "hook", URL: "https://example.com/hooks/" + strconv.Itoa(i), Events: []string{"message.created"}, Active: true, CreatedAt: base, UpdatedAt: base})
	}
	codec, _ := cursor.New([]byte("bench-cursor-key-0123456789abcdef"))
	h := httpapi.Mux(map[string]http.Handler{"ListOutboundWebhooksFunction": webhooksapi.OutboundWebhooksHandler(&workspaces.Authenticator{Tokens: st}, st, codec)})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/workspaces/"+ws+"/outbound-webhooks?limit=25", nil)
		req.Header.Set("Authorization", "Bearer wsk_bench_token_0123")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
