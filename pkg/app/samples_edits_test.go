package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// The demo's ids the edit samples name.
const (
	demoWorkspaceID = "01JD9N0V80G9T6DXN5EAY6K8H4"
	demoSupportID   = "01JD9N1048PXK951NGC7NEMZX9" // Ana's and the room's channel
	demoBuildsID    = "01JD9N0Z50BAKDWE0FBRMSFD5P" // the CI Bot's channel
)

// sampleAuthor prepares an edit sample's request and returns the message
// it changes, as posted by the actor the request authenticates as.
type sampleAuthor func(t *testing.T, st *stacktest.Stack, ev *events.APIGatewayV2HTTPRequest) chat.Message

// byAna: the sample's bearer token is Ana's.
func byAna(*testing.T, *stacktest.Stack, *events.APIGatewayV2HTTPRequest) chat.Message {
	return chat.Message{ChannelID: demoSupportID, Content: "Hola", SourceLanguage: "es-ES",
		Author: chat.Author{Type: chat.AuthorUser, ID: "01JD9N0W78H8Z7XT23BWPJKAFM", Name: "Ana", Language: "es-ES"}}
}

// byGuest: the sample's token is a placeholder; a real one comes from a
// join, and the message is that guest's.
func byGuest(t *testing.T, st *stacktest.Stack, ev *events.APIGatewayV2HTTPRequest) chat.Message {
	_, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
	ev.Headers["x-service-guest-token"] = joined.Token
	return chat.Message{ChannelID: demoSupportID, Content: "Hola", SourceLanguage: "es-ES",
		Author: chat.Author{Type: chat.AuthorGuest, ID: joined.Guest.ID, Name: joined.Guest.Nickname, Language: "es-ES"}}
}

// byCIBot: the sample changes a message the demo's CI Bot posted in its
// channel.
func byCIBot(_ *testing.T, _ *stacktest.Stack, ev *events.APIGatewayV2HTTPRequest) chat.Message {
	return chat.Message{ChannelID: demoBuildsID, Content: "Build 1042 passed on main.", SourceLanguage: "en",
		Author: chat.Author{Type: chat.AuthorBot, ID: ev.PathParameters["webhook"], Name: "CI Bot"}}
}

// editSample is the wiring check of an edit or delete function: the
// message of sample's path is stored first (author), the sample answers
// want, then each check runs on its answer.
func editSample(sample string, author sampleAuthor, want int, checks ...func(t *testing.T, h httpfn.Handler, ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse)) func(t *testing.T, fn string) {
	return func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, sample)
		m := author(t, st, &ev)
		m.ID, m.WorkspaceID, m.Status, m.CreatedAt = ev.PathParameters["message_id"], demoWorkspaceID, chat.MessageQueued, time.Now()
		if err := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table).PutMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("sample: %d %v %s, want %d", resp.StatusCode, err, resp.Body, want)
		}
		for _, check := range checks {
			check(t, h, ev, resp)
		}
	}
}

// requestIDEchoed: the answer carries API Gateway's request id.
func requestIDEchoed(t *testing.T, _ httpfn.Handler, ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
}

// atRevision2: the answer is the sample's message at revision 2, edited.
func atRevision2(t *testing.T, _ httpfn.Handler, ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	if id := ev.PathParameters["message_id"]; data["id"] != id || data["revision"] != float64(2) || data["edited_at"] == nil {
		t.Fatalf("body %s, want message %s at revision 2", resp.Body, id)
	}
}

// staleAgain: the sample sent again holds a stale If-Match (1).
func staleAgain(t *testing.T, h httpfn.Handler, ev events.APIGatewayV2HTTPRequest, _ events.APIGatewayV2HTTPResponse) {
	if again, _ := h(context.Background(), ev); again.StatusCode != 412 {
		t.Fatalf("the sample again (If-Match: 1): %d %s, want 412", again.StatusCode, again.Body)
	}
}

// webhookCredentials: the answer carries the quota's headers, and the
// sample without its secret is refused.
func webhookCredentials(t *testing.T, h httpfn.Handler, ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	if resp.Headers["X-Ratelimit-Limit"] == "" && resp.Headers["X-RateLimit-Limit"] == "" {
		t.Fatalf("headers %v, want the rate-limit headers", resp.Headers)
	}
	delete(ev.Headers, "x-service-webhook-secret")
	if bad, _ := h(context.Background(), ev); bad.StatusCode != 401 {
		t.Fatalf("without the secret: %d %s, want 401", bad.StatusCode, bad.Body)
	}
}

// The wiring checks of the edit and delete functions (samples).
func init() {
	samples["DeleteChannelMessageFunction"] = editSample("delete-channel-message.json", byAna, 204, requestIDEchoed)
	samples["DeleteGuestMessageFunction"] = editSample("delete-guest-message.json", byGuest, 204, requestIDEchoed)
	samples["DeleteWebhookMessageFunction"] = editSample("delete-webhook-message.json", byCIBot, 204, webhookCredentials)
	samples["EditChannelMessageFunction"] = editSample("edit-channel-message.json", byAna, 200, atRevision2, staleAgain)
	samples["EditGuestMessageFunction"] = editSample("edit-guest-message.json", byGuest, 200, atRevision2, staleAgain)
	samples["EditWebhookMessageFunction"] = editSample("edit-webhook-message.json", byCIBot, 200, atRevision2, webhookCredentials)
}
