package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/signature"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// clock is a settable clock, injected as the app's.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// adminWorld is a world with an admin (Ada) and a member (Mo) in Acme, its
// handlers on an injected clock, and the webhook cache TTL it uses.
type adminWorld struct {
	*world
	clock         *clock
	admin, member map[string]string
	adminID       string
	ttl           time.Duration
}

func newAdminWorld(t *testing.T) *adminWorld {
	t.Helper()
	w := newWorld(t, 600)
	ws := w.ws
	ws.Users = append(append([]fixture.User{}, ws.Users...),
		fixture.User{Name: "Ada", PreferredLanguage: "en", Role: fixture.RoleAdmin},
		fixture.User{Name: "Mo", PreferredLanguage: "en", Role: fixture.RoleMember})
	doc := &fixture.Document{Workspaces: []fixture.Workspace{ws}}
	if err := doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now().UTC()}
	w.app.Now = c.Now
	handlers, err := handlers.All(w.app)
	if err != nil {
		t.Fatal(err)
	}
	w.h = httpapi.Mux(handlers)
	users := doc.Workspaces[0].Users
	w.st.Calls.Reset()
	return &adminWorld{world: w, clock: c, ttl: time.Minute, adminID: users[1].ID,
		admin:  map[string]string{"Authorization": "Bearer " + users[1].APIToken},
		member: map[string]string{"Authorization": "Bearer " + users[2].APIToken}}
}

func (w *adminWorld) api(path string) string { return "/api/v1/workspaces/" + w.ws.ID + path }

// call sends a management request as hdr and returns the status and the
// decoded body, failing when it took more than budget AWS calls.
func (w *adminWorld) call(t *testing.T, method, path, body string, hdr map[string]string, budget int) (int, map[string]any, string) {
	t.Helper()
	w.st.Calls.Reset()
	rec := w.do(t, method, path, body, hdr)
	if n := w.st.Calls.Total(); budget > 0 && n > budget {
		t.Fatalf("%s %s made %d AWS calls %v, want at most %d", method, path, n, w.st.Calls.Calls(), budget)
	}
	var out map[string]any
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, rec.Body, err)
		}
	}
	return rec.Code, out, rec.Body.String()
}

func data(m map[string]any) map[string]any { d, _ := m["data"].(map[string]any); return d }

func (w *adminWorld) post(t *testing.T, id, secret string) int {
	t.Helper()
	return w.do(t, "POST", w.postPath(id), `{"content":"hello"}`, map[string]string{"X-Service-Webhook-Secret": secret}).Code
}

func (w *adminWorld) postSigned(t *testing.T, id, signingSecret string) int {
	t.Helper()
	body := `{"content":"signed hello"}`
	ts := w.clock.Now().Unix()
	return w.do(t, "POST", w.postPath(id), body,
		map[string]string{signature.Header: signature.Format(ts, signature.Sign([]byte(signingSecret), ts, []byte(body)))}).Code
}

// TestInboundWebhookLifecycle is the acceptance path: create, post with the
// shown secret, rotate, post with the old and the new, the old refused
// after the window, delete, 404 after the cache TTL, the log still
// readable; each management call within two AWS calls.
func TestInboundWebhookLifecycle(t *testing.T) {
	w := newAdminWorld(t)
	status, created, raw := w.call(t, "POST", w.api("/inbound-webhooks"),
		`{"channel_id":"`+w.general+`","bot_name":"  Release Bot 🚀 ","bot_avatar_url":"https://avatars.example.invalid/r.png"}`, w.admin, 2)
	if status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	d := data(created)
	id, secret, signing := d["id"].(string), d["secret"].(string), d["signing_secret"].(string)
	if !strings.HasPrefix(secret, fixture.SecretPrefix) || !strings.HasPrefix(signing, fixture.SigningSecretPrefix) || len(secret) < 40 {
		t.Fatalf("secrets %q %q, want whsec_/whsig_ and 256 bits", secret, signing)
	}
	if d["bot_name"] != "Release Bot 🚀" || d["enabled"] != true || d["signature_required"] != false || d["url"] != "/webhooks/"+id+"/messages" {
		t.Fatalf("created %v", d)
	}
	if got := w.post(t, id, secret); got != 202 {
		t.Fatalf("post with the shown secret: %d, want 202", got)
	}

	status, rotated, raw := w.call(t, "POST", w.api("/inbound-webhooks/"+id+"/rotate-secret"), "", w.admin, 2)
	if status != 200 {
		t.Fatalf("rotate: %d %s", status, raw)
	}
	r := data(rotated)
	newSecret, newSigning := r["secret"].(string), r["signing_secret"].(string)
	if newSecret == secret || newSigning == signing || !strings.HasPrefix(newSecret, fixture.SecretPrefix) {
		t.Fatalf("rotation returned %v", r)
	}
	if want := chat.FormatTime(w.clock.Now().Add(24 * time.Hour)); r["previous_secret_expires_at"] != want {
		t.Fatalf("previous_secret_expires_at %v, want %s", r["previous_secret_expires_at"], want)
	}
	w.clock.Add(w.ttl + time.Second) // the warm cache expires
	for _, s := range []string{secret, newSecret, secret} {
		if got := w.post(t, id, s); got != 202 {
			t.Fatalf("within the window: post %d, want 202 with the old and the new secret", got)
		}
	}
	w.clock.Add(24 * time.Hour)
	if rec := w.do(t, "POST", w.postPath(id), `{"content":"x"}`, map[string]string{"X-Service-Webhook-Secret": secret}); rec.Code != 401 || codeOf(t, rec) != chat.EInvalidSecret {
		t.Fatalf("old secret after the window: %d %s, want 401 invalid_secret", rec.Code, rec.Body)
	}
	if got := w.post(t, id, newSecret); got != 202 {
		t.Fatalf("new secret after the window: %d", got)
	}

	// The signature scheme: a v1 of either signing secret within the window.
	status, patched, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"signature_required":true,"bot_avatar_url":null,"unknown":1}`, w.admin, 2)
	if status != 200 || data(patched)["signature_required"] != true || data(patched)["bot_avatar_url"] != nil {
		t.Fatalf("patch: %d %s", status, raw)
	}
	status, rotated, _ = w.call(t, "POST", w.api("/inbound-webhooks/"+id+"/rotate-secret"), "", w.admin, 2)
	if status != 200 {
		t.Fatalf("second rotate: %d", status)
	}
	latest := data(rotated)["signing_secret"].(string)
	w.clock.Add(w.ttl + time.Second)
	if w.post(t, id, newSecret) != 401 {
		t.Fatal("the static secret opens a signature webhook")
	}
	for _, s := range []string{newSigning, latest} {
		if got := w.postSigned(t, id, s); got != 202 {
			t.Fatalf("signed within the window: %d, want 202", got)
		}
	}
	if got := w.postSigned(t, id, signing); got != 401 {
		t.Fatalf("signed with the secret replaced two rotations ago: %d, want 401", got)
	}
	w.clock.Add(24 * time.Hour)
	if got := w.postSigned(t, id, newSigning); got != 401 {
		t.Fatalf("previous signing secret after the window: %d, want 401", got)
	}
	if got := w.postSigned(t, id, latest); got != 202 {
		t.Fatalf("latest signing secret: %d, want 202", got)
	}

	status, _, raw = w.call(t, "DELETE", w.api("/inbound-webhooks/"+id), "", w.admin, 2)
	if status != 204 || raw != "" {
		t.Fatalf("delete: %d %q", status, raw)
	}
	w.clock.Add(w.ttl + time.Second)
	if rec := w.do(t, "POST", w.postPath(id), `{"content":"x"}`, map[string]string{}); rec.Code != 404 || codeOf(t, rec) != chat.EWebhookNotFound {
		t.Fatalf("post after delete and TTL: %d %s", rec.Code, rec.Body)
	}
	status, logs, raw := w.call(t, "GET", w.api("/inbound-webhooks/"+id+"/requests"), "", w.admin, 0)
	if status != 200 || len(logs["data"].([]any)) < 8 {
		t.Fatalf("request log of a deleted webhook: %d %s", status, raw)
	}
	if status, _, _ := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"enabled":true}`, w.admin, 2); status != 404 {
		t.Fatalf("patch of a deleted webhook: %d, want 404", status)
	}
	_, list, raw := w.call(t, "GET", w.api("/inbound-webhooks"), "", w.member, 2)
	for _, it := range list["data"].([]any) {
		if it.(map[string]any)["id"] == id {
			t.Fatal("the deleted webhook is still listed")
		}
	}
	if len(list["data"].([]any)) != 2 || strings.Contains(raw, "whs") || strings.Contains(raw, "secret") {
		t.Fatalf("list: %s, want the two fixture webhooks and no secret", raw)
	}

	status, audit, raw := w.call(t, "GET", w.api("/audit-events"), "", w.admin, 2)
	if status != 200 {
		t.Fatalf("audit: %d %s", status, raw)
	}
	var actions []string
	for _, e := range audit["data"].([]any) {
		ev := e.(map[string]any)
		actions = append(actions, ev["action"].(string))
		if ev["actor"].(map[string]any)["id"] != w.adminID || ev["target"].(map[string]any)["id"] != id {
			t.Fatalf("audit event %v, want actor %s target %s", ev, w.adminID, id)
		}
	}
	if got := strings.Join(actions, " "); got != "webhook.deleted webhook.secret_rotated webhook.updated webhook.secret_rotated webhook.created" {
		t.Fatalf("audit actions newest first: %s", got)
	}
	for _, s := range []string{secret, newSecret, signing, newSigning, latest, "whs"} {
		if strings.Contains(raw, s) {
			t.Fatalf("the audit trail holds a secret: %s", raw)
		}
	}
	// Kept one year, checked in code whatever the TTL has done.
	w.clock.Add(366 * 24 * time.Hour)
	if _, audit, raw = w.call(t, "GET", w.api("/audit-events"), "", w.admin, 2); len(audit["data"].([]any)) != 0 || audit["meta"].(map[string]any)["next_cursor"] != nil {
		t.Fatalf("audit after a year: %s, want empty", raw)
	}
}

// TestOutboundAndSupportManagement: create, change, rotate and delete each,
// within two AWS calls, the list agreeing at every step, no secret listed.
func TestOutboundAndSupportManagement(t *testing.T) {
	w := newAdminWorld(t)
	for _, tc := range []struct{ kind, create, patch, field string }{
		{"outbound", `{"name":"Analytics","url":"https://analytics.example.invalid/h","events":["message.created","room.closed"]}`, `{"events":["room.created"],"active":false}`, "events"},
		{"support", `{"name":"Escalations","url":"https://esc.example.invalid/h"}`, `{"name":"Escalations 2","active":false}`, "name"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			base := w.api("/" + tc.kind + "-webhooks")
			status, created, raw := w.call(t, "POST", base, tc.create, w.admin, 2)
			if status != 201 || !strings.HasPrefix(data(created)["signing_secret"].(string), fixture.SigningSecretPrefix) || data(created)["active"] != true {
				t.Fatalf("create: %d %s", status, raw)
			}
			id, signing := data(created)["id"].(string), data(created)["signing_secret"].(string)
			status, patched, raw := w.call(t, "PATCH", base+"/"+id, tc.patch, w.admin, 2)
			if status != 200 || data(patched)["active"] != false || strings.Contains(raw, "secret") {
				t.Fatalf("patch: %d %s", status, raw)
			}
			status, rotated, raw := w.call(t, "POST", base+"/"+id+"/rotate-secret", "", w.admin, 2)
			if status != 200 || data(rotated)["signing_secret"] == signing || data(rotated)["secret"] != nil {
				t.Fatalf("rotate: %d %s", status, raw)
			}
			// The stored item keeps what delivery needs: both secrets and the expiry.
			wh, err := storetest.New(w.app.DB, w.app.Table).Webhooks.Get(context.Background(), kindOf(tc.kind), id)
			if err != nil || wh == nil || wh.PreviousSigningSecret != signing || wh.SigningSecret != data(rotated)["signing_secret"] || wh.PreviousExpiresAt.IsZero() {
				t.Fatalf("stored after rotation: %+v %v", wh, err)
			}
			_, list, raw := w.call(t, "GET", base, "", w.member, 2)
			found := false
			for _, it := range list["data"].([]any) {
				found = found || it.(map[string]any)["id"] == id && it.(map[string]any)["active"] == false
			}
			if !found || strings.Contains(raw, "whsig_") || strings.Contains(raw, "secret") {
				t.Fatalf("list after patch: %s", raw)
			}
			// Re-enabling clears the delivery function's failure streak and
			// its reason, and marks when (only newer events are delivered).
			db, table := dynamodb.NewFromConfig(w.app.AWS), aws.String(w.app.Table)
			listed := func() map[string]types.AttributeValue {
				out, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: table, ConsistentRead: aws.Bool(true),
					KeyConditionExpression: aws.String("pk = :pk"), FilterExpression: aws.String("id = :id"),
					ExpressionAttributeValues: map[string]types.AttributeValue{
						":pk": &types.AttributeValueMemberS{Value: "WS#" + w.ws.ID}, ":id": &types.AttributeValueMemberS{Value: id}}})
				if err != nil || len(out.Items) != 1 {
					t.Fatalf("listed twin of %s: %d items, %v", id, len(out.Items), err)
				}
				return out.Items[0]
			}
			it := listed()
			if _, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: table,
				Key:              map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]},
				UpdateExpression: aws.String("SET failing_since = :s, failed_attempts = :n, disabled_reason = :r"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "2026-11-22T10:00:00.000000000Z"},
					":n": &types.AttributeValueMemberN{Value: "12"}, ":r": &types.AttributeValueMemberS{Value: "failing"}}}); err != nil {
				t.Fatal(err)
			}
			if status, _, raw := w.call(t, "PATCH", base+"/"+id, `{"active":true}`, w.admin, 2); status != 200 {
				t.Fatalf("re-enable: %d %s", status, raw)
			}
			it = listed()
			if it["failing_since"] != nil || it["failed_attempts"] != nil || it["disabled_reason"] != nil || it["reenabled_at"] == nil {
				t.Fatalf("listed twin after re-enable: %v, want no streak, no reason, a reenabled_at", it)
			}
			if status, _, raw = w.call(t, "DELETE", base+"/"+id, "", w.admin, 2); status != 204 {
				t.Fatalf("delete: %d %s", status, raw)
			}
			_, list, _ = w.call(t, "GET", base, "", w.member, 2)
			for _, it := range list["data"].([]any) {
				if it.(map[string]any)["id"] == id {
					t.Fatal("deleted webhook still listed")
				}
			}
			if status, _, _ = w.call(t, "DELETE", base+"/"+id, "", w.admin, 2); status != 404 {
				t.Fatalf("second delete: %d, want 404", status)
			}
		})
	}
}

// TestMembersAreForbidden: a member's valid token gets 403 forbidden on
// every admin action and writes nothing; the lists stay open to members.
func TestMembersAreForbidden(t *testing.T) {
	w := newAdminWorld(t)
	ob := w.doc.Workspaces[0]
	_ = ob
	status, created, _ := w.call(t, "POST", w.api("/outbound-webhooks"), `{"name":"a","url":"https://a.example.invalid/","events":["room.closed"]}`, w.admin, 2)
	if status != 201 {
		t.Fatal(status)
	}
	out := data(created)["id"].(string)
	before := w.snapshot(t)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/inbound-webhooks", `{"channel_id":"` + w.general + `","bot_name":"x"}`},
		{"PATCH", "/inbound-webhooks/" + w.static.ID, `{"enabled":false}`},
		{"DELETE", "/inbound-webhooks/" + w.static.ID, ""},
		{"POST", "/inbound-webhooks/" + w.static.ID + "/rotate-secret", ""},
		{"POST", "/outbound-webhooks", `{"name":"a","url":"https://a.example.invalid/","events":["room.closed"]}`},
		{"PATCH", "/outbound-webhooks/" + out, `{"active":false}`},
		{"DELETE", "/outbound-webhooks/" + out, ""},
		{"POST", "/outbound-webhooks/" + out + "/rotate-secret", ""},
		{"POST", "/support-webhooks", `{"name":"a","url":"https://a.example.invalid/"}`},
		{"PATCH", "/support-webhooks/" + out, `{"active":false}`},
		{"DELETE", "/support-webhooks/" + out, ""},
		{"POST", "/support-webhooks/" + out + "/rotate-secret", ""},
		{"GET", "/audit-events", ""},
		// An unknown id still answers a member 403, so ids cannot be probed.
		{"DELETE", "/inbound-webhooks/01JD9N1418BBS5R9EJ3SKBVPMA", ""},
		{"PATCH", "/outbound-webhooks/not-an-id", `{}`},
	} {
		rec := w.do(t, c.method, w.api(c.path), c.body, w.member)
		if rec.Code != 403 || codeOf(t, rec) != chat.EForbidden {
			t.Errorf("member %s %s: %d %s, want 403 forbidden", c.method, c.path, rec.Code, rec.Body)
		}
	}
	if after := w.snapshot(t); len(after) != len(before) {
		t.Fatalf("a member's request wrote: %d items, then %d", len(before), len(after))
	}
	for _, l := range []string{"/inbound-webhooks", "/outbound-webhooks", "/support-webhooks"} {
		if rec := w.do(t, "GET", w.api(l), "", w.member); rec.Code != 200 {
			t.Errorf("member list %s: %d", l, rec.Code)
		}
	}
}

// TestApplyAndAPIManageTheSameWebhooks: a webhook made by chatctl apply is
// changed by the API, and one made by the API is listed like apply's.
func TestApplyAndAPIManageTheSameWebhooks(t *testing.T) {
	w := newAdminWorld(t)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{w.ws}}
	doc.Workspaces[0].OutboundWebhooks = []fixture.OutboundWebhook{{Name: "applied", URL: "https://applied.example.invalid/", Events: []string{"message.created"}}}
	doc.Workspaces[0].SupportWebhooks = []fixture.SupportWebhook{{Name: "applied", URL: "https://applied.example.invalid/"}}
	if err := doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	for path, id := range map[string]string{
		"/outbound-webhooks/" + doc.Workspaces[0].OutboundWebhooks[0].ID: "",
		"/support-webhooks/" + doc.Workspaces[0].SupportWebhooks[0].ID:   "",
		"/inbound-webhooks/" + w.static.ID:                               "",
	} {
		_ = id
		if status, _, raw := w.call(t, "PATCH", w.api(path), `{"active":false,"enabled":false}`, w.admin, 2); status != 200 {
			t.Fatalf("PATCH %s made by apply: %d %s", path, status, raw)
		}
	}
	if status, _, raw := w.call(t, "POST", w.api("/inbound-webhooks/"+w.signed.ID+"/rotate-secret"), "", w.admin, 2); status != 200 {
		t.Fatalf("rotate a fixture webhook: %d %s", status, raw)
	}
	// Re-applying keeps one listed copy of each, and the API sees apply's values again.
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, list, _ := w.call(t, "GET", w.api("/outbound-webhooks"), "", w.admin, 2)
	if n := len(list["data"].([]any)); n != 1 || list["data"].([]any)[0].(map[string]any)["active"] != true {
		t.Fatalf("outbound list after re-apply: %v", list["data"])
	}
	_, list, _ = w.call(t, "GET", w.api("/inbound-webhooks"), "", w.admin, 2)
	if n := len(list["data"].([]any)); n != 2 {
		t.Fatalf("inbound list after re-apply: %d items", n)
	}
}

func kindOf(s string) webhooks.Kind { return webhooks.Kind(s) }

// TestNullClearsOptionalFields: in a PATCH, null removes an optional field
// (rate_limit of outbound and support webhooks, bot_avatar_url of inbound
// ones) from both twins in one write audited with the field's name; the
// answer, the next list and the field's effect (the delivery path's limit,
// the bot's avatar on a post) show it gone. A wrong type is still a 422 on
// the field, and null again changes nothing.
func TestNullClearsOptionalFields(t *testing.T) {
	w := newAdminWorld(t)
	ctx := context.Background()
	st := storetest.New(w.app.DB, w.app.Table)
	// twins returns the attribute of both twins of webhook id ("-" when
	// absent), by-id first.
	twins := func(byIDPK, attr, id string) string {
		var got []string
		for key, it := range w.snapshot(t) {
			if it.pk == byIDPK+id || strings.HasPrefix(key, "WS#"+w.ws.ID+" ") && strings.HasSuffix(it.sk, "#"+id) {
				v, ok := it.attrs[attr]
				if !ok {
					v = "-"
				}
				if it.pk == byIDPK+id {
					got = append([]string{v}, got...)
				} else {
					got = append(got, v)
				}
			}
		}
		return strings.Join(got, " ")
	}
	lastAudit := func() []any {
		_, audit, _ := w.call(t, "GET", w.api("/audit-events?limit=1"), "", w.admin, 0)
		return audit["data"].([]any)[0].(map[string]any)["changes"].([]any)
	}
	listed := func(path, id, field string) any {
		_, list, _ := w.call(t, "GET", w.api(path), "", w.member, 0)
		for _, it := range list["data"].([]any) {
			if m := it.(map[string]any); m["id"] == id {
				return m[field]
			}
		}
		t.Fatalf("%s does not list %s", path, id)
		return nil
	}

	for _, tc := range []struct{ kind, prefix, create string }{
		{"outbound", "OWH#", `{"name":"Limited","url":"https://limited.example.invalid/h","events":["room.created"],"rate_limit":7}`},
		{"support", "SWH#", `{"name":"Limited","url":"https://limited.example.invalid/h","rate_limit":7}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			base := w.api("/" + tc.kind + "-webhooks")
			status, created, raw := w.call(t, "POST", base, tc.create, w.admin, 2)
			if status != 201 || data(created)["rate_limit"] != float64(7) {
				t.Fatalf("create: %d %s", status, raw)
			}
			id := data(created)["id"].(string)
			wh, err := st.Webhooks.Get(ctx, kindOf(tc.kind), id)
			if err != nil || wh == nil {
				t.Fatalf("get %s: %v", id, err)
			}
			limit := func() int {
				d, err := st.Deliveries.Webhook(ctx, tc.kind, w.ws.ID, webhookstore.ListedSK(*wh))
				if err != nil {
					t.Fatalf("the delivery path's read: %v", err)
				}
				return d.RateLimit
			}
			if got := twins(tc.prefix, "rate_limit", id); got != "7 7" || limit() != 7 {
				t.Fatalf("stored before: %q, delivery limit %d, want 7 on both twins", got, limit())
			}
			if rec := w.do(t, "PATCH", base+"/"+id, `{"rate_limit":"7"}`, w.admin); rec.Code != 422 || !strings.Contains(rec.Body.String(), `"rate_limit"`) {
				t.Fatalf("a string: %d %s, want 422 on rate_limit", rec.Code, rec.Body)
			}
			status, patched, raw := w.call(t, "PATCH", base+"/"+id, `{"rate_limit":null}`, w.admin, 2)
			if status != 200 || data(patched)["rate_limit"] != nil {
				t.Fatalf("clear: %d %s", status, raw)
			}
			if got := twins(tc.prefix, "rate_limit", id); got != "- -" {
				t.Fatalf("stored after null: %q, want no rate_limit on either twin", got)
			}
			if got := limit(); got != 0 {
				t.Fatalf("the delivery path reads rate_limit %d after null, want 0 (none)", got)
			}
			if got := listed("/"+tc.kind+"-webhooks", id, "rate_limit"); got != nil {
				t.Fatalf("listed rate_limit %v after null, want null", got)
			}
			if ch := lastAudit(); len(ch) != 1 || ch[0] != "rate_limit" {
				t.Fatalf("audit changes %v, want [rate_limit]", ch)
			}
			// Null again: nothing to change, nothing written.
			before := len(w.snapshot(t))
			if status, patched, raw := w.call(t, "PATCH", base+"/"+id, `{"rate_limit":null}`, w.admin, 2); status != 200 || data(patched)["rate_limit"] != nil {
				t.Fatalf("null again: %d %s", status, raw)
			}
			if after := len(w.snapshot(t)); after != before {
				t.Fatalf("null again wrote: %d items, then %d", before, after)
			}
			// A value sets it again.
			if status, patched, _ := w.call(t, "PATCH", base+"/"+id, `{"rate_limit":3}`, w.admin, 2); status != 200 || data(patched)["rate_limit"] != float64(3) || limit() != 3 {
				t.Fatalf("set again: %d %v, delivery limit %d", status, data(patched)["rate_limit"], limit())
			}
		})
	}

	t.Run("inbound", func(t *testing.T) {
		status, created, raw := w.call(t, "POST", w.api("/inbound-webhooks"),
			`{"channel_id":"`+w.general+`","bot_name":"Avatar Bot","bot_avatar_url":"https://avatars.example.invalid/a.png"}`, w.admin, 2)
		if status != 201 {
			t.Fatalf("create: %d %s", status, raw)
		}
		id, secret := data(created)["id"].(string), data(created)["secret"].(string)
		avatar := func() any {
			rec := w.do(t, "POST", w.postPath(id), `{"content":"hello"}`, map[string]string{"X-Service-Webhook-Secret": secret})
			var b struct {
				Data struct {
					Author map[string]any `json:"author"`
				} `json:"data"`
			}
			if rec.Code != 202 || json.Unmarshal(rec.Body.Bytes(), &b) != nil {
				t.Fatalf("post: %d %s", rec.Code, rec.Body)
			}
			return b.Data.Author["avatar_url"]
		}
		if got := avatar(); got != "https://avatars.example.invalid/a.png" {
			t.Fatalf("post before: avatar_url %v", got)
		}
		if rec := w.do(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"bot_avatar_url":5}`, w.admin); rec.Code != 422 || !strings.Contains(rec.Body.String(), `"bot_avatar_url"`) {
			t.Fatalf("a number: %d %s, want 422 on bot_avatar_url", rec.Code, rec.Body)
		}
		status, patched, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"bot_avatar_url":null}`, w.admin, 2)
		if status != 200 || data(patched)["bot_avatar_url"] != nil {
			t.Fatalf("clear: %d %s", status, raw)
		}
		if got := twins("IWH#", "bot_avatar_url", id); got != "- -" {
			t.Fatalf("stored after null: %q, want no bot_avatar_url on either twin", got)
		}
		if got := listed("/inbound-webhooks", id, "bot_avatar_url"); got != nil {
			t.Fatalf("listed bot_avatar_url %v after null, want null", got)
		}
		if ch := lastAudit(); len(ch) != 1 || ch[0] != "bot_avatar_url" {
			t.Fatalf("audit changes %v, want [bot_avatar_url]", ch)
		}
		// The settings cache (1 minute here) does not outlive the change.
		if got := avatar(); got != nil {
			t.Fatalf("post after null: avatar_url %v, want null", got)
		}
	})
}
