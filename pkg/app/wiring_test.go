package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// TestRegisteredFunctionSamples is the wiring test of each webhook
// management function: its events/<dir>.json sample through the real
// Lambda handler built from the environment, against the demo fixture.
func TestRegisteredFunctionSamples(t *testing.T) {
	for _, tc := range []struct {
		function, sample string
		status           int
		// want is a fragment the body must hold.
		want string
	}{
		{"ListInboundWebhooksFunction", "list-inbound-webhooks.json", 200, `"bot_name":"CI Bot"`},
		{"CreateInboundWebhookFunction", "create-inbound-webhook.json", 201, `"secret":"whsec_`},
		{"UpdateInboundWebhookFunction", "update-inbound-webhook.json", 200, `"bot_name":"CI Bot (renamed)"`},
		{"DeleteInboundWebhookFunction", "delete-inbound-webhook.json", 204, ""},
		{"RotateInboundWebhookSecretFunction", "rotate-inbound-webhook-secret.json", 200, `"previous_secret_expires_at"`},
		{"CreateOutboundWebhookFunction", "create-outbound-webhook.json", 201, `"signing_secret":"whsig_`},
		{"UpdateOutboundWebhookFunction", "update-outbound-webhook.json", 200, `"events":["message.created","message.translated"]`},
		{"DeleteOutboundWebhookFunction", "delete-outbound-webhook.json", 204, ""},
		{"RotateOutboundWebhookSecretFunction", "rotate-outbound-webhook-secret.json", 200, `"signing_secret":"whsig_`},
		{"CreateSupportWebhookFunction", "create-support-webhook.json", 201, `"name":"Escalations"`},
		{"UpdateSupportWebhookFunction", "update-support-webhook.json", 200, `"active":false`},
		{"DeleteSupportWebhookFunction", "delete-support-webhook.json", 204, ""},
		{"RotateSupportWebhookSecretFunction", "rotate-support-webhook-secret.json", 200, `"previous_secret_expires_at"`},
		{"ListAuditEventsFunction", "list-audit-events.json", 200, `"data":[]`},
	} {
		t.Run(tc.function, func(t *testing.T) {
			wiringtest.Demo(t)
			wiringtest.As(t, tc.function)
			h, err := handlers.FromEnv(context.Background(), tc.function)
			if err != nil {
				t.Fatalf("handler: %v", err)
			}
			ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, tc.sample)
			resp, err := h(context.Background(), ev)
			if err != nil || resp.StatusCode != tc.status || !strings.Contains(resp.Body, tc.want) {
				t.Fatalf("sample: %d %v %s, want %d with %s", resp.StatusCode, err, resp.Body, tc.status, tc.want)
			}
			// The demo's member gets 403 on every admin function; nobody
			// without a token gets in.
			ev.Headers["authorization"] = "Bearer wsk_demo_ben_token"
			member, _ := h(context.Background(), ev)
			if want := 403; strings.HasPrefix(tc.function, "List") && tc.function != "ListAuditEventsFunction" {
				want = 200
				if member.StatusCode != want {
					t.Fatalf("member: %d %s, want %d", member.StatusCode, member.Body, want)
				}
			} else if member.StatusCode != want {
				t.Fatalf("member: %d %s, want %d", member.StatusCode, member.Body, want)
			}
			delete(ev.Headers, "authorization")
			bad, _ := h(context.Background(), ev)
			if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
				t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
			}
		})
	}
	if _, err := handlers.FromEnv(context.Background(), "NoSuchFunction"); err == nil {
		t.Fatal("an unregistered function started")
	}
	// Every route's function starts from the environment (samples_test.go
	// checks each one's sample), and a list without its
	// cursor key does not.
	t.Run("every route", func(t *testing.T) {
		wiringtest.Demo(t)
		for _, rt := range httpapi.Routes {
			if _, err := handlers.FromEnv(context.Background(), rt.Function); err != nil {
				t.Errorf("%s: %v", rt.Function, err)
			}
		}
		t.Setenv(awsenv.EnvCursorKey, "")
		if _, err := handlers.FromEnv(context.Background(), "ListRoomsFunction"); err == nil || !strings.Contains(err.Error(), awsenv.EnvCursorKey) {
			t.Errorf("ListRoomsFunction without %s: %v, want an error naming it", awsenv.EnvCursorKey, err)
		}
		if _, err := handlers.FromEnv(context.Background(), "CreateRoomFunction"); err != nil {
			t.Errorf("CreateRoomFunction needs no cursor key: %v", err)
		}
	})
}

// TestDeliveryLogFunctionSamples runs each delivery log function's events/
// sample through its real Lambda handler: the lists answer the demo's empty
// last page to a member too; the samples' delivery does not exist, so a
// redelivery is 404 for an admin and 403 for a member (redelivery itself is
// TestRedeliverAgainstStack's); no token is 401 everywhere.
func TestDeliveryLogFunctionSamples(t *testing.T) {
	for _, tc := range []struct {
		function, sample string
		status, member   int
	}{
		{"ListOutboundDeliveriesFunction", "list-outbound-deliveries.json", 200, 200},
		{"ListSupportDeliveriesFunction", "list-support-deliveries.json", 200, 200},
		{"RedeliverOutboundFunction", "redeliver-outbound.json", 404, 403},
		{"RedeliverSupportFunction", "redeliver-support.json", 404, 403},
	} {
		t.Run(tc.function, func(t *testing.T) {
			wiringtest.Demo(t)
			wiringtest.As(t, tc.function)
			h, err := handlers.FromEnv(context.Background(), tc.function)
			if err != nil {
				t.Fatalf("handler: %v", err)
			}
			ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, tc.sample)
			resp, err := h(context.Background(), ev)
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("sample: %d %v %s, want %d", resp.StatusCode, err, resp.Body, tc.status)
			}
			if tc.status == 200 {
				body := wiringtest.Body(t, resp)
				if data := body["data"].([]any); len(data) != 0 || body["meta"].(map[string]any)["next_cursor"] != nil {
					t.Fatalf("got %v, want an empty last page (no delivery yet)", body)
				}
			}
			ev.Headers["authorization"] = "Bearer wsk_demo_ben_token"
			if member, _ := h(context.Background(), ev); member.StatusCode != tc.member {
				t.Fatalf("member: %d %s, want %d", member.StatusCode, member.Body, tc.member)
			}
			delete(ev.Headers, "authorization")
			if bad, _ := h(context.Background(), ev); bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
				t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
			}
		})
	}
}
