package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
)

// TestDisabledReasonInEveryView (issue 24 item 9): a webhook the delivery
// function disabled shows disabled_reason in the list, a change's and a
// rotation's answer; an admin re-enabling it clears it, and an admin
// disabling it shows null. Every view carries the field (null while
// active), for outbound and support webhooks.
func TestDisabledReasonInEveryView(t *testing.T) {
	w := newAdminWorld(t)
	for _, c := range []struct {
		kind, path, body string
	}{
		{events.KindOutbound, "/outbound-webhooks", `{"name":"out","url":"https://hook.example.invalid/o","events":["message.created"]}`},
		{events.KindSupport, "/support-webhooks", `{"name":"desk","url":"https://hook.example.invalid/s"}`},
	} {
		status, created, raw := w.call(t, "POST", w.api(c.path), c.body, w.admin, 2)
		if status != 201 {
			t.Fatalf("create %s: got %d %s, want 201", c.kind, status, raw)
		}
		d := data(created)
		id := d["id"].(string)
		if v, ok := d["disabled_reason"]; !ok || v != nil {
			t.Fatalf("create %s: disabled_reason %v (present %v), want null", c.kind, v, ok)
		}
		reason := func(view map[string]any) any {
			t.Helper()
			v, ok := view["disabled_reason"]
			if !ok {
				t.Fatalf("%s view %v has no disabled_reason", c.kind, view)
			}
			return v
		}
		listed := func() map[string]any {
			t.Helper()
			_, list, raw := w.call(t, "GET", w.api(c.path), "", w.member, 2)
			for _, it := range list["data"].([]any) {
				if v := it.(map[string]any); v["id"] == id {
					return v
				}
			}
			t.Fatalf("list %s: %s has no %s", c.kind, raw, id)
			return nil
		}
		// The delivery function disables it: its receiver answered 410.
		hooks, err := storetest.New(w.app.DB, w.app.Table).Relay.EventWebhooks(context.Background(), w.ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		var key string
		for _, h := range hooks {
			if h.ID == id {
				key = h.Key
			}
		}
		if err := storetest.New(w.app.DB, w.app.Table).Deliveries.Disable(context.Background(), delivery.Webhook{ID: id, Kind: c.kind, WorkspaceID: w.ws.ID, Key: key},
			delivery.DisabledGone, time.Time{}); err != nil {
			t.Fatalf("disable %s: %v", c.kind, err)
		}
		if v := listed(); v["active"] != false || reason(v) != "gone" {
			t.Fatalf("listed %s after a 410: %v, want inactive, disabled_reason gone", c.kind, v)
		}
		status, patched, raw := w.call(t, "PATCH", w.api(c.path+"/"+id), `{"name":"renamed"}`, w.admin, 2)
		if status != 200 || reason(data(patched)) != "gone" {
			t.Fatalf("rename %s: got %d %s, want 200 with disabled_reason gone", c.kind, status, raw)
		}
		status, rotated, raw := w.call(t, "POST", w.api(c.path+"/"+id+"/rotate-secret"), "", w.admin, 2)
		if status != 200 || reason(data(rotated)) != "gone" || data(rotated)["active"] != false {
			t.Fatalf("rotate %s: got %d %s, want 200, inactive, disabled_reason gone", c.kind, status, raw)
		}
		status, patched, raw = w.call(t, "PATCH", w.api(c.path+"/"+id), `{"active":true}`, w.admin, 2)
		if status != 200 || reason(data(patched)) != nil {
			t.Fatalf("re-enable %s: got %d %s, want 200 with disabled_reason null", c.kind, status, raw)
		}
		if v := listed(); v["active"] != true || reason(v) != nil {
			t.Fatalf("listed %s after re-enabling: %v, want active, disabled_reason null", c.kind, v)
		}
		status, patched, raw = w.call(t, "PATCH", w.api(c.path+"/"+id), `{"active":false}`, w.admin, 2)
		if status != 200 || reason(data(patched)) != nil {
			t.Fatalf("admin disables %s: got %d %s, want 200 with disabled_reason null", c.kind, status, raw)
		}
		if v := listed(); v["active"] != false || reason(v) != nil {
			t.Fatalf("listed %s disabled by an admin: %v, want inactive, disabled_reason null", c.kind, v)
		}
	}
}
