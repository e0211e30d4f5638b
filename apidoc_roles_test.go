package chatbundle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// pathParam is a path parameter, {name}; a brace of alternatives,
// {a,b,c}, is not one.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// routeKey is a route as "METHOD path", its parameters' names left out
// ({webhook} and {id} name the same segment in different paths).
func routeKey(method, path string) string {
	return method + " " + pathParam.ReplaceAllString(path, "{}")
}

// expandAlternatives expands each {a,b,c} of path into one path per
// alternative.
func expandAlternatives(path string) []string {
	i := strings.Index(path, "{")
	for i >= 0 {
		j := strings.Index(path[i:], "}")
		if j < 0 {
			break
		}
		if inner := path[i+1 : i+j]; strings.Contains(inner, ",") {
			var out []string
			for _, alt := range strings.Split(inner, ",") {
				out = append(out, expandAlternatives(path[:i]+alt+path[i+j+1:])...)
			}
			return out
		}
		next := strings.Index(path[i+j:], "{")
		if next < 0 {
			break
		}
		i += j + next
	}
	return []string{path}
}

// docAdminRoutes returns the routes that docs/api.md's endpoint table (the
// one after its introduction) marks "(admin)" in its Credential column, as
// routeKeys.
func docAdminRoutes(t *testing.T, doc string) []string {
	t.Helper()
	var out []string
	inTable := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| | Endpoint | Credential |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := tableCells(line)
		if len(cells) < 3 || strings.HasPrefix(cells[0], "---") || !strings.Contains(cells[2], "(admin)") {
			continue
		}
		path := strings.Trim(strings.Fields(cells[1])[0], "`")
		for _, m := range strings.Fields(cells[0]) {
			for _, p := range expandAlternatives(path) {
				out = append(out, routeKey(strings.Trim(m, "`"), p))
			}
		}
	}
	if !inTable {
		t.Fatal("docs/api.md: no endpoint table (| | Endpoint | Credential | Section |)")
	}
	sort.Strings(out)
	return out
}

func TestExpandAlternatives(t *testing.T) {
	got := expandAlternatives("/w/{workspace_id}/{inbound,outbound}-webhooks/{id}/{a,b}")
	want := []string{"/w/{workspace_id}/inbound-webhooks/{id}/a", "/w/{workspace_id}/inbound-webhooks/{id}/b",
		"/w/{workspace_id}/outbound-webhooks/{id}/a", "/w/{workspace_id}/outbound-webhooks/{id}/b"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestAPIDocAdminMarksAreTheCode: the routes docs/api.md's endpoint table
// marks "(admin)" are exactly the workspace routes that answer a member's
// valid token 403 forbidden and an admin's something else, each called
// with the demo's ids (an unknown id where a delivery or a message is
// named) by the real handlers on a local stack, each function held to its
// IAM policy.
func TestAPIDocAdminMarksAreTheCode(t *testing.T) {
	doc, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	marked := docAdminRoutes(t, string(doc))

	st, d := wiringtest.Demo(t)
	// A test delivery stays on this machine.
	t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.0/8")
	t.Setenv(app.EnvOutboundAllowOnly, "true")
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.AsApp(a)
	hs, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	mux := httpapi.Mux(hs)
	ws := d.Workspaces[0]
	var admin, member string
	for _, u := range ws.Users {
		switch {
		case u.Role == chat.RoleAdmin && admin == "":
			admin = u.APIToken
		case u.Role != chat.RoleAdmin && member == "" && slices.Contains(channelMembers(ws.Channels, ws.TemporaryRooms[0].ChannelID), u.ID):
			member = u.APIToken
		}
	}
	unknown := chat.NewIDs().New(time.Now())
	values := map[string]string{"workspace_id": ws.ID, "channel_id": ws.TemporaryRooms[0].ChannelID, "room_id": ws.TemporaryRooms[0].RoomID,
		"webhook": ws.InboundWebhooks[0].ID, "delivery_id": unknown, "message_id": unknown, "emoji": "%F0%9F%91%8D"}
	call := func(rt httpapi.Route, token string) (int, string) {
		path := pathParam.ReplaceAllStringFunc(rt.Path, func(p string) string {
			name := strings.Trim(p, "{}")
			switch {
			case name == "id" && strings.Contains(rt.Path, "/outbound-webhooks/"):
				return ws.OutboundWebhooks[0].ID
			case name == "id" && strings.Contains(rt.Path, "/support-webhooks/"):
				return ws.SupportWebhooks[0].ID
			}
			if v, ok := values[name]; ok {
				return v
			}
			t.Fatalf("%s %s: no value for %s", rt.Method, rt.Path, p)
			return ""
		})
		var body []byte
		if rt.Method == http.MethodPost || rt.Method == http.MethodPatch {
			body = []byte("{}")
		}
		req := httptest.NewRequest(rt.Method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var e struct {
			Errors struct{ Code []string } `json:"errors"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		return rec.Code, strings.Join(e.Errors.Code, ",")
	}
	// Deletions last, so that every other route finds the demo's webhooks.
	routes := slices.Clone(httpapi.Routes)
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].Method != http.MethodDelete && routes[j].Method == http.MethodDelete
	})
	var adminOnly []string
	for _, rt := range routes {
		if !strings.HasPrefix(rt.Path, "/api/v1/workspaces/") {
			continue
		}
		ms, mc := call(rt, member)
		as, ac := call(rt, admin)
		if ms >= 500 || as >= 500 || ms == http.StatusUnauthorized || as == http.StatusUnauthorized {
			t.Errorf("%s %s: got %d %s for a member, %d %s for an admin; want neither a 401 nor a 5xx", rt.Method, rt.Path, ms, mc, as, ac)
		}
		if ms == http.StatusForbidden && mc == "forbidden" && as != http.StatusForbidden {
			adminOnly = append(adminOnly, routeKey(rt.Method, rt.Path))
		}
	}
	sort.Strings(adminOnly)
	if len(adminOnly) < 10 {
		t.Fatalf("only %d routes refuse a member: %v; is the member's token a member's?", len(adminOnly), adminOnly)
	}
	for _, r := range adminOnly {
		if !slices.Contains(marked, r) {
			t.Errorf("docs/api.md's endpoint table does not mark %s (admin): it refuses a member, not an admin", r)
		}
	}
	for _, r := range marked {
		if !slices.Contains(adminOnly, r) {
			t.Errorf("docs/api.md's endpoint table marks %s (admin), but it does not refuse only a member", r)
		}
	}
}

// channelMembers returns the user ids of channel id among channels.
func channelMembers(channels []fixture.Channel, id string) []string {
	for _, c := range channels {
		if c.ID == id {
			return c.Members
		}
	}
	return nil
}
