package app_test

import (
	"strings"
	"testing"
)

// TestWebhookManagementSecretsNeverLeak runs every management endpoint,
// successes and failures, and asserts that each secret a create or a
// rotation shows appears in that response only: never in another
// response, a log line, an audit event, or a stored item but its own
// webhook's (static secrets nowhere at all: they are stored as hashes).
func TestWebhookManagementSecretsNeverLeak(t *testing.T) {
	logs := captureLogs(t)
	w := newAdminWorld(t)
	secrets := secretSet{}
	type shown struct{ body, secret string }
	var issuing []shown
	var others []string
	owner := map[string]string{} // secret -> webhook id
	issue := func(method, path, body string) string {
		t.Helper()
		status, d, raw := w.call(t, method, path, body, w.admin, 0)
		if status != 200 && status != 201 {
			t.Fatalf("%s %s: %d %s", method, path, status, raw)
		}
		id := data(d)["id"].(string)
		for _, f := range []string{"secret", "signing_secret", "signing_secret_standard"} {
			if v, ok := data(d)[f].(string); ok {
				secrets.add(f+" of "+id+" via "+method+" "+path, v)
				issuing = append(issuing, shown{raw, v})
				if f == "signing_secret" {
					owner[v] = id
				}
			}
		}
		return id
	}
	other := func(method, path, body string, hdr map[string]string) {
		t.Helper()
		_, _, raw := w.call(t, method, path, body, hdr, 0)
		others = append(others, raw)
	}
	for _, k := range []struct{ kind, create, patch string }{
		{"inbound", `{"channel_id":"` + w.general + `","bot_name":"Leak Bot"}`, `{"bot_name":"Leak Bot 2","signature_required":true}`},
		{"outbound", `{"name":"leak","url":"https://leak.example.invalid/","events":["room.closed"]}`, `{"name":"leak 2"}`},
		{"support", `{"name":"leak","url":"https://leak.example.invalid/"}`, `{"name":"leak 2"}`},
	} {
		base := w.api("/" + k.kind + "-webhooks")
		id := issue("POST", base, k.create)
		other("PATCH", base+"/"+id, k.patch, w.admin)
		other("PATCH", base+"/"+id, `{"name":5,"bot_name":5}`, w.admin)
		issue("POST", base+"/"+id+"/rotate-secret", "")
		issue("POST", base+"/"+id+"/rotate-secret", "")
		other("POST", base+"/"+id+"/rotate-secret", "", w.member)
		other("GET", base, "", w.member)
		keep := issue("POST", base, k.create)
		other("DELETE", base+"/"+id, "", w.admin)
		other("GET", base, "", w.admin)
		_ = keep
	}
	other("GET", w.api("/audit-events"), "", w.admin)
	other("GET", w.api("/audit-events"), "", w.member)

	for _, raw := range others {
		if leaked := secrets.found(raw); len(leaked) > 0 {
			t.Errorf("a response carries %v: %s", leaked, raw)
		}
	}
	for _, x := range issuing {
		for _, y := range issuing {
			if x.body != y.body && strings.Contains(x.body, y.secret) {
				t.Errorf("a create or rotation response carries another secret: %s", x.body)
			}
		}
	}
	if leaked := secrets.found(logs.String()); len(leaked) > 0 {
		t.Errorf("the logs carry %v", leaked)
	}
	for k, it := range w.snapshot(t) {
		text := it.String()
		var allowed []string
		for v, id := range owner {
			if strings.HasSuffix(it.pk, "#"+id) || strings.HasSuffix(it.sk, "#"+id) {
				allowed = append(allowed, v)
			}
		}
		if leaked := secrets.found(text, allowed...); len(leaked) > 0 {
			t.Errorf("stored item %s carries %v", k, leaked)
		}
	}
}
