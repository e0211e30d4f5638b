package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/signature"
)

func TestListenHandler(t *testing.T) {
	now := time.Unix(1795341600, 0)
	body := []byte(`{"id":"E","type":"room.closed","data":{"name":"\u003cx\u003e \u2028"}}`)
	cur, prev := []byte("whsig_current"), []byte("whsig_previous")
	cases := []struct {
		name   string
		header string
		method string
		want   int
		why    string // what the refusal line says
	}{
		{"current", signature.Format(now.Unix(), signature.Sign(cur, now.Unix(), body)), "POST", 204, ""},
		{"previous among two", signature.Format(now.Unix(), "00", signature.Sign(prev, now.Unix(), body)), "POST", 204, ""},
		{"at the window's edge", signature.Format(now.Unix()-300, signature.Sign(cur, now.Unix()-300, body)), "POST", 204, ""},
		{"past the window", signature.Format(now.Unix()-301, signature.Sign(cur, now.Unix()-301, body)), "POST", 401, "signature_expired"},
		{"other secret", signature.Format(now.Unix(), signature.Sign([]byte("nope"), now.Unix(), body)), "POST", 401, "invalid_signature"},
		{"other body", signature.Format(now.Unix(), signature.Sign(cur, now.Unix(), []byte("{}"))), "POST", 401, "invalid_signature"},
		{"none", "", "POST", 401, "missing_signature"},
		{"GET", "", "GET", 405, "want POST"},
	}
	for _, c := range cases {
		var out, refused bytes.Buffer
		h := ListenHandler("the test webhook", [][]byte{cur, prev}, &out, &refused, func() time.Time { return now })
		req := httptest.NewRequest(c.method, "/", bytes.NewReader(body))
		req.Header.Set(signature.Header, c.header)
		req.Header.Set("X-Service-Event", "room.closed")
		req.Header.Set("X-Service-Delivery", "01JDA5Q4V3B8000000000000DL")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: got %d, want %d", c.name, rec.Code, c.want)
		}
		printed := out.String()
		if c.want == 204 && (printed != string(body)+"\n" || strings.Count(printed, "\n") != 1) {
			t.Errorf("%s: printed %q, want the event as one line", c.name, printed)
		}
		if c.want != 204 && printed != "" {
			t.Errorf("%s: printed %q for a refused delivery", c.name, printed)
		}
		line := refused.String()
		if c.want == 204 && line != "" {
			t.Errorf("%s: got refusal %q for an accepted delivery", c.name, line)
		}
		if c.want != 204 && (strings.Count(line, "\n") != 1 || !strings.Contains(line, c.why) ||
			!strings.Contains(line, "room.closed delivery 01JDA5Q4V3B8000000000000DL to the test webhook")) {
			t.Errorf("%s: got refusal %q, want one line naming the event, the delivery, the webhook and %q", c.name, line, c.why)
		}
	}
}

// fakeStore is a hand-written delivery.Store with one webhook.
type fakeStore struct{ w delivery.Webhook }

func (f *fakeStore) Webhook(context.Context, string, string, string) (delivery.Webhook, error) {
	return f.w, nil
}
func (f *fakeStore) Reserve(context.Context, delivery.Reservation) (int, bool, delivery.State, error) {
	return 1, true, delivery.State{}, nil
}
func (f *fakeStore) RecordAttempt(context.Context, delivery.Attempt) error { return nil }
func (f *fakeStore) ExtendFailing(context.Context, delivery.Webhook, time.Time) error {
	return nil
}
func (f *fakeStore) Disable(context.Context, delivery.Webhook, string, time.Time) error {
	return nil
}
func (f *fakeStore) ClearFailing(context.Context, delivery.Webhook) error { return nil }
func (f *fakeStore) Event(context.Context, string) ([]byte, error)        { return nil, nil }

// TestListenVerifiesRealDeliveries: the delivery function's requests, with
// a current and a previous secret, verify with listen's verifier.
func TestListenVerifiesRealDeliveries(t *testing.T) {
	var out bytes.Buffer
	srv := httptest.NewUnstartedServer(ListenHandler("the test webhook", [][]byte{[]byte("whsig_previous")}, &out, io.Discard, time.Now))
	srv.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	srv.Start()
	defer srv.Close()
	allow, _ := netguard.ParseCIDRs("127.0.0.1/32")
	d := &attempt.Deliverer{Store: &fakeStore{w: delivery.Webhook{ID: "W", Kind: events.KindOutbound, URL: srv.URL, Active: true,
		Secrets: [][]byte{[]byte("whsig_current"), []byte("whsig_previous")}}},
		Client: (&netguard.Guard{Allow: allow, AllowOnly: true}).Client(), Schedule: attempt.DefaultSchedule}
	ev := events.Event{ID: "E", Type: events.RoomClosed, WorkspaceID: "WS", CreatedAt: time.Now(), Data: events.Room{Name: "<x> \u2028 😀"}}
	body, _ := events.Encode(ev)
	res, err := d.Handle(context.Background(), delivery.Message{Delivery: events.Delivery{ID: "D", WebhookID: "W", Kind: events.KindOutbound,
		EventType: ev.Type, Body: body}})
	if err != nil || !res.Done || res.Attempt.Status != delivery.StatusSucceeded || res.Attempt.ResponseStatus != http.StatusNoContent {
		t.Fatalf("attempt %+v %v, want succeeded with 204", res.Attempt, err)
	}
	if out.String() != string(body)+"\n" {
		t.Fatalf("listen printed %q, want %q", out.String(), body)
	}
}

// TestDemoListenHandlerNamesEachDelivery: the demo's receiver prints each
// event after whose it is, its type, its delivery and its attempt, on one
// line, so that two webhooks' copies of an event, or a redelivery, read as
// what they are.
func TestDemoListenHandlerNamesEachDelivery(t *testing.T) {
	now := time.Unix(1795341600, 0)
	body := []byte(`{"id":"E","type":"room.closed","data":{}}`)
	secret := []byte("whsig_current")
	var out bytes.Buffer
	h := DemoListenHandler(`the support webhook "Helpdesk"`, [][]byte{secret}, &out, io.Discard, func() time.Time { return now })
	req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
	req.Header.Set(signature.Header, signature.Format(now.Unix(), signature.Sign(secret, now.Unix(), body)))
	req.Header.Set("X-Service-Event", "room.closed")
	req.Header.Set("X-Service-Delivery", "01JDA5Q4V3B8000000000000DL")
	req.Header.Set("X-Service-Attempt", "2")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	want := `the support webhook "Helpdesk" got room.closed (delivery 01JDA5Q4V3B8000000000000DL, attempt 2): ` + string(body) + "\n"
	if rec.Code != http.StatusNoContent || out.String() != want {
		t.Fatalf("got %d %q, want 204 %q", rec.Code, out.String(), want)
	}
}
