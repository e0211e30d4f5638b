package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
)

// TestIntegratorFunctionSamples is the wiring test of the test and recover
// functions (contract section 14): each events/ sample through its real
// Lambda handler on the demo. The demo's targets are .invalid, so a test
// fails (nothing leaves the machine) and is shown in the delivery log; the demo has no failed delivery, so a recovery
// queues none. A member gets 403, no token 401.
func TestIntegratorFunctionSamples(t *testing.T) {
	for _, tc := range []struct {
		function, sample, list string
		status                 int
		want                   string
	}{
		{"TestOutboundWebhookFunction", "test-outbound-webhook.json", "ListOutboundDeliveriesFunction", 200, `"status":"failed"`},
		{"TestSupportWebhookFunction", "test-support-webhook.json", "ListSupportDeliveriesFunction", 200, `"status":"failed"`},
		{"RecoverOutboundDeliveriesFunction", "recover-outbound-deliveries.json", "", 202, `{"data":{"queued":0}}`},
		{"RecoverSupportDeliveriesFunction", "recover-support-deliveries.json", "", 202, `{"data":{"queued":0}}`},
	} {
		t.Run(tc.function, func(t *testing.T) {
			wiringtest.Demo(t)
			t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.0/8")
			t.Setenv(delivering.EnvOutboundAllowOnly, "true")
			wiringtest.As(t, tc.function)
			h, err := handlers.FromEnv(context.Background(), tc.function)
			if err != nil {
				t.Fatalf("handler: %v", err)
			}
			ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, tc.sample)
			if ev.Body != "" {
				// The sample's since is a fixed day; the window must be
				// within the last 30 days of whenever the test runs.
				ev.Body = `{"since": "` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`
			}
			resp, err := h(context.Background(), ev)
			if err != nil || resp.StatusCode != tc.status || !strings.Contains(resp.Body, tc.want) {
				t.Fatalf("sample: %d %v %s, want %d with %s", resp.StatusCode, err, resp.Body, tc.status, tc.want)
			}
			if tc.list != "" {
				id := wiringtest.Body(t, resp)["data"].(map[string]any)["delivery_id"].(string)
				wiringtest.As(t, tc.list)
				list, err := handlers.FromEnv(context.Background(), tc.list)
				if err != nil {
					t.Fatal(err)
				}
				lev := ev
				lev.RawPath = strings.TrimSuffix(ev.RawPath, "/test") + "/deliveries"
				lev.RequestContext.HTTP.Method, lev.RequestContext.HTTP.Path = "GET", lev.RawPath
				lev.RouteKey = "GET " + strings.TrimSuffix(strings.TrimPrefix(ev.RouteKey, "POST "), "/test") + "/deliveries"
				lev.RequestContext.RouteKey = lev.RouteKey
				got, _ := list(context.Background(), lev)
				if got.StatusCode != 200 || !strings.Contains(got.Body, `"id":"`+id+`"`) || !strings.Contains(got.Body, `"event_type":"webhook.test"`) {
					t.Fatalf("delivery log: %d %s, want the test delivery %s", got.StatusCode, got.Body, id)
				}
				wiringtest.As(t, tc.function)
			}
			ev.Headers["authorization"] = "Bearer wsk_demo_ben_token"
			if member, _ := h(context.Background(), ev); member.StatusCode != 403 {
				t.Fatalf("member: %d %s, want 403", member.StatusCode, member.Body)
			}
			delete(ev.Headers, "authorization")
			if bad, _ := h(context.Background(), ev); bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
				t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
			}
		})
	}
}
