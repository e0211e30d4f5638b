package openapitest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/events"
)

// TestEventCatalog: the catalog names every event type the service sends,
// and ValidateDelivery refuses what differs from it.
func TestEventCatalog(t *testing.T) {
	v, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	got := v.EventTypes()
	for _, typ := range append(slices.Clone(events.Types), events.WebhookTest, events.WebhookDisabled) {
		if !slices.Contains(got, typ) {
			t.Errorf("the catalog lacks %s", typ)
		}
	}
	h := http.Header{}
	for k, val := range map[string]string{"X-Service-Event": "webhook.test", "X-Service-Delivery": "01JDA5Q4V3B8000000000000D1",
		"X-Service-Attempt": "1", "X-Service-Signature": "t=1795341600,v1=" + strings.Repeat("ab", 32),
		"webhook-id": "01JDA5Q4V3B8000000000000D1", "webhook-timestamp": "1795341600", "webhook-signature": "v1,AAAA v1,BBBB"} {
		h.Set(k, val)
	}
	good := `{"id":"01JDA5Q4V3K7Z2M8N6P0R1S2T3","type":"webhook.test","created_at":"2026-11-22T10:00:00.123Z","workspace_id":"01JD9N0V80G9T6DXN5EAY6K8H4","data":{"webhook_id":"01JD9N15ZR836GD73VZ533YQJJ"}}`
	if err := v.ValidateDelivery(h, []byte(good)); err != nil {
		t.Fatalf("got %v, want the delivery to match", err)
	}
	for name, c := range map[string]struct {
		header, value, body, want string
	}{
		"unknown type":      {"X-Service-Event", "webhook.nope", good, "not in the catalog"},
		"no signature":      {"webhook-signature", "", good, "webhook-signature"},
		"uppercase hex":     {"X-Service-Signature", "t=1,v1=" + strings.Repeat("AB", 32), good, "X-Service-Signature"},
		"extra data field":  {"", "", strings.Replace(good, `"webhook_id"`, `"token":"x","webhook_id"`, 1), "token"},
		"type of another":   {"", "", strings.Replace(good, `"type":"webhook.test"`, `"type":"room.closed"`, 1), "type"},
		"data not a ref id": {"", "", strings.Replace(good, `01JD9N15ZR836GD73VZ533YQJJ`, `x`, 1), "webhook_id"},
		"whole seconds":     {"", "", strings.Replace(good, `10:00:00.123Z`, `10:00:00Z`, 1), "created_at"},
	} {
		hh := h.Clone()
		if c.header != "" {
			hh.Set(c.header, c.value)
		}
		err := v.ValidateDelivery(hh, []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
}
