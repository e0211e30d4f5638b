package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/fixture"
)

// TestHostileWebhookManagement sends every new endpoint hostile input as an
// admin: wrong types, sizes past every limit, unicode, another workspace's
// ids, huge bodies, bad JSON. Each gets a 4xx in the contract's shape and
// nothing is written.
func TestHostileWebhookManagement(t *testing.T) {
	w := newAdminWorld(t)
	admin := w.admin
	// Zed becomes Other's admin, to name Acme's webhooks under Other.
	other := w.other
	other.Users = []fixture.User{other.Users[0]}
	other.Users[0].Role = fixture.RoleAdmin
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), &fixture.Document{Workspaces: []fixture.Workspace{other}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	otherAdmin := map[string]string{"Authorization": "Bearer " + w.other.Users[0].APIToken}
	// A webhook of each kind in Acme, and an outbound one in Other.
	mk := func(path, body string, hdr map[string]string) string {
		status, d, raw := w.call(t, "POST", path, body, hdr, 0)
		if status != 201 {
			t.Fatalf("seed %s: %d %s", path, status, raw)
		}
		return data(d)["id"].(string)
	}
	out := mk(w.api("/outbound-webhooks"), `{"name":"o","url":"https://o.example.invalid/","events":["room.closed"]}`, admin)
	sup := mk(w.api("/support-webhooks"), `{"name":"s","url":"https://s.example.invalid/"}`, admin)
	in := w.static.ID
	foreignChan := w.other.Channels[0].ID
	unknown := "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"
	long := strings.Repeat("<", 40000)
	huge := `{"name":"` + strings.Repeat("a", 64<<10) + `"}`
	ct := func(v string) map[string]string {
		return map[string]string{"Authorization": admin["Authorization"], "Content-Type": v}
	}
	otherWS := "/api/v1/workspaces/" + w.other.ID

	type c struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		code                     string
	}
	var cases []c
	for _, k := range []struct{ kind, id, valid string }{
		{"inbound", in, `{"channel_id":"` + w.general + `","bot_name":"x"}`},
		{"outbound", out, `{"name":"x","url":"https://x.example.invalid/","events":["room.closed"]}`},
		{"support", sup, `{"name":"x","url":"https://x.example.invalid/"}`},
	} {
		list, item := w.api("/"+k.kind+"-webhooks"), w.api("/"+k.kind+"-webhooks/"+k.id)
		for _, target := range []struct{ method, path string }{{"POST", list}, {"PATCH", item}} {
			p := k.kind + " " + target.method
			cases = append(cases,
				c{p + " not JSON", target.method, target.path, `{"name":`, admin, 400, "invalid_json"},
				c{p + " array", target.method, target.path, `[1]`, admin, 400, "invalid_json"},
				c{p + " duplicate keys", target.method, target.path, `{"name":"a","name":"b"}`, admin, 400, "invalid_json"},
				c{p + " huge body", target.method, target.path, huge, admin, 413, "payload_too_large"},
				c{p + " text/plain", target.method, target.path, k.valid, ct("text/plain"), 415, "unsupported_media_type"},
				c{p + " no token", target.method, target.path, k.valid, map[string]string{}, 401, "unauthenticated"},
				c{p + " other workspace's token", target.method, target.path, k.valid, otherAdmin, 403, "forbidden"},
			)
		}
		for _, path := range []string{w.api("/" + k.kind + "-webhooks/" + unknown), w.api("/" + k.kind + "-webhooks/not-a-ulid"),
			w.api("/" + k.kind + "-webhooks/" + strings.ToLower(k.id))} {
			cases = append(cases,
				c{k.kind + " PATCH unknown " + path[len(path)-6:], "PATCH", path, `{}`, admin, 404, "not_found"},
				c{k.kind + " DELETE unknown " + path[len(path)-6:], "DELETE", path, "", admin, 404, "not_found"},
				c{k.kind + " rotate unknown " + path[len(path)-6:], "POST", path + "/rotate-secret", "", admin, 404, "not_found"})
		}
		// Another workspace's admin naming Acme's webhook under its own workspace.
		cases = append(cases,
			c{k.kind + " PATCH via other workspace", "PATCH", otherWS + "/" + k.kind + "-webhooks/" + k.id, `{}`, otherAdmin, 404, "not_found"},
			c{k.kind + " DELETE via other workspace", "DELETE", otherWS + "/" + k.kind + "-webhooks/" + k.id, "", otherAdmin, 404, "not_found"},
			c{k.kind + " rotate via other workspace", "POST", otherWS + "/" + k.kind + "-webhooks/" + k.id + "/rotate-secret", "", otherAdmin, 404, "not_found"})
	}
	inList, inItem := w.api("/inbound-webhooks"), w.api("/inbound-webhooks/"+in)
	outList, outItem := w.api("/outbound-webhooks"), w.api("/outbound-webhooks/"+out)
	supItem := w.api("/support-webhooks/" + sup)
	for _, f := range []struct{ name, body, field string }{
		{"channel of another workspace", `{"channel_id":"` + foreignChan + `","bot_name":"x"}`, "channel_id"},
		{"unknown channel", `{"channel_id":"` + unknown + `","bot_name":"x"}`, "channel_id"},
		{"channel number", `{"channel_id":5,"bot_name":"x"}`, "channel_id"},
		{"bot name 40000", `{"channel_id":"` + w.general + `","bot_name":"` + long + `"}`, "bot_name"},
		{"bot name U+2028", `{"channel_id":"` + w.general + `","bot_name":"a\u2028b"}`, "bot_name"},
		{"bot name U+FFFF", `{"channel_id":"` + w.general + `","bot_name":"\uffff"}`, "bot_name"},
		{"bot name object", `{"channel_id":"` + w.general + `","bot_name":{"a":1}}`, "bot_name"},
		{"avatar javascript", `{"channel_id":"` + w.general + `","bot_name":"x","bot_avatar_url":"javascript:alert(1)"}`, "bot_avatar_url"},
		{"signature_required 1", `{"channel_id":"` + w.general + `","bot_name":"x","signature_required":1}`, "signature_required"},
	} {
		cases = append(cases, c{"inbound create " + f.name, "POST", inList, f.body, admin, 422, "field:" + f.field})
	}
	for _, f := range []struct{ name, body, field string }{
		{"channel of another workspace", `{"channel_id":"` + foreignChan + `"}`, "channel_id"},
		{"bot name null", `{"bot_name":null}`, "bot_name"},
		{"enabled string", `{"enabled":"false"}`, "enabled"},
		{"bot name emoji 81", `{"bot_name":"` + strings.Repeat("🚀", 81) + `"}`, "bot_name"},
	} {
		cases = append(cases, c{"inbound patch " + f.name, "PATCH", inItem, f.body, admin, 422, "field:" + f.field})
	}
	for _, f := range []struct{ name, body, field string }{
		{"name 101", `{"name":"` + strings.Repeat("é", 101) + `","url":"https://a.example.invalid/","events":["room.closed"]}`, "name"},
		{"url loopback", `{"name":"a","url":"https://127.0.0.1/","events":["room.closed"]}`, "url"},
		{"url octal loopback", `{"name":"a","url":"https://0177.0.0.1/","events":["room.closed"]}`, "url"},
		{"url mapped metadata", `{"name":"a","url":"https://[::ffff:169.254.169.254]/","events":["room.closed"]}`, "url"},
		{"url nat64 private", `{"name":"a","url":"https://[64:ff9b::a00:1]/","events":["room.closed"]}`, "url"},
		{"url http", `{"name":"a","url":"http://a.example.invalid/","events":["room.closed"]}`, "url"},
		{"url userinfo", `{"name":"a","url":"https://u@a.example.invalid/","events":["room.closed"]}`, "url"},
		{"url 2049", `{"name":"a","url":"https://a.example.invalid/` + strings.Repeat("a", 2049) + `","events":["room.closed"]}`, "url"},
		{"url U+2028", `{"name":"a","url":"https://a.example.invalid/\u2028","events":["room.closed"]}`, "url"},
		{"events unknown", `{"name":"a","url":"https://a.example.invalid/","events":["message.exploded"]}`, "events"},
		{"events nested", `{"name":"a","url":"https://a.example.invalid/","events":[["room.closed"]]}`, "events"},
		{"events empty", `{"name":"a","url":"https://a.example.invalid/","events":[]}`, "events"},
	} {
		cases = append(cases, c{"outbound create " + f.name, "POST", outList, f.body, admin, 422, "field:" + f.field})
	}
	cases = append(cases,
		c{"outbound patch events null", "PATCH", outItem, `{"events":null}`, admin, 422, "field:events"},
		c{"outbound patch url private", "PATCH", outItem, `{"url":"https://10.0.0.1/"}`, admin, 422, "field:url"},
		c{"support patch active number", "PATCH", supItem, `{"active":0}`, admin, 422, "field:active"},
		c{"audit bad limit", "GET", w.api("/audit-events?limit=0"), "", admin, 422, "field:limit"},
		c{"audit bad cursor", "GET", w.api("/audit-events?cursor=abc"), "", admin, 422, "field:cursor"},
		c{"audit other workspace", "GET", otherWS + "/audit-events", "", admin, 403, "forbidden"},
		c{"inbound list bad limit", "GET", w.api("/inbound-webhooks?limit=101"), "", admin, 422, "field:limit"},
		c{"inbound list no token", "GET", w.api("/inbound-webhooks"), "", map[string]string{}, 401, "unauthenticated"},
	)

	before := w.snapshot(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := w.do(t, tc.method, tc.path, tc.body, tc.hdr)
			if rec.Code != tc.status {
				t.Fatalf("status %d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			switch {
			case tc.code == "unauthenticated":
				if rec.Body.String() != unauthenticatedBody {
					t.Fatalf("body %s", rec.Body)
				}
			case codeOf(t, rec) != tc.code:
				t.Fatalf("code %q, want %q: %s", codeOf(t, rec), tc.code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "whs") {
				t.Fatalf("an error holds a secret: %s", rec.Body)
			}
		})
	}
	after := w.snapshot(t)
	for k, it := range after {
		if old, ok := before[k]; !ok || old.String() != it.String() {
			t.Errorf("item %s written by a refused request", k)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d items, then %d", len(before), len(after))
	}
}
