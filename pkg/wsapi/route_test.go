package wsapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
)

type subscribeFunc func(ctx context.Context, id string, req realtime.SubscribeRequest) (realtime.Subscribed, error)

func (f subscribeFunc) Subscribe(ctx context.Context, id string, req realtime.SubscribeRequest) (realtime.Subscribed, error) {
	return f(ctx, id, req)
}

func (f subscribeFunc) Ready(context.Context, realtime.Subscribed) ([][]byte, error) { return nil, nil }

type recorder struct {
	sent   []string
	closed []string
}

func (r *recorder) Send(_ context.Context, id string, b []byte) error {
	r.sent = append(r.sent, string(b))
	return nil
}
func (r *recorder) Close(_ context.Context, id string) error {
	r.closed = append(r.closed, id)
	return nil
}

func TestRoute(t *testing.T) {
	conn := realtime.Connection{ID: "abc=", WorkspaceID: "W", ChannelID: "C", RoomID: "R", Language: "es", ExpiresAt: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		name   string
		body   string
		binary bool
		subErr error
		want   string
		closed bool
	}{
		{"subscribe", `{"action":"subscribe","token":"gst_x"}`, false, nil, `{"type":"subscribed","channel_id":"C","room_id":"R","workspace_id":"W","language":"es","expires_at":"2026-11-22T11:00:00Z"}`, false},
		{"ping", `{"action":"ping"}`, false, nil, `{"type":"pong"}`, false},
		{"bad token", `{"action":"subscribe","token":"x"}`, false, chat.Errorf(chat.EUnauthenticated, "Unauthenticated."), `{"type":"error","code":"unauthenticated","message":"Unauthenticated."}`, true},
		{"closed room", `{"action":"subscribe","token":"x"}`, false, chat.Errorf(chat.ERoomExpired, "The room is no longer available."), `"code":"temporary_room_expired"`, true},
		{"store down: no internals", `{"action":"subscribe","token":"x"}`, false, chat.Unavailable(errors.New("dynamo: secret detail")), `{"type":"error","code":"service_unavailable","message":"The subscription was refused."}`, true},
		{"not JSON", `subscribe please`, false, nil, `"code":"invalid_message"`, true},
		{"binary", `AAEC`, true, nil, `"code":"invalid_message"`, true},
		{"unknown action", `{"action":"$connect"}`, false, nil, `"code":"unknown_action"`, true},
		{"past 32 KiB", `{"action":"ping","pad":"` + strings.Repeat("<", wsapi.MaxRequestBytes) + `"}`, false, nil, `"code":"payload_too_large"`, true},
		{"at 32 KiB", `{"action":"ping","pad":"` + strings.Repeat("<", wsapi.MaxRequestBytes-26) + `"}`, false, nil, `{"type":"pong"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			h := &wsapi.Route{Sender: rec, Subscriber: subscribeFunc(func(_ context.Context, id string, req realtime.SubscribeRequest) (realtime.Subscribed, error) {
				if id != "abc=" {
					t.Fatalf("subscribed connection %q", id)
				}
				return realtime.Subscribed{Connection: conn}, tc.subErr
			})}
			ev := events.APIGatewayWebsocketProxyRequest{Body: tc.body, IsBase64Encoded: tc.binary,
				RequestContext: events.APIGatewayWebsocketProxyRequestContext{ConnectionID: "abc=", EventType: "MESSAGE", RouteKey: "$default"}}
			resp, err := h.Handle(context.Background(), ev)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("handler returned %+v %v, want 200 and no error", resp, err)
			}
			if len(rec.sent) != 1 || !strings.Contains(rec.sent[0], tc.want) {
				t.Fatalf("sent %q, want one answer holding %s", rec.sent, tc.want)
			}
			if (len(rec.closed) == 1) != tc.closed {
				t.Fatalf("closed %v, want closed=%v", rec.closed, tc.closed)
			}
		})
	}
}
