package app_test

// The wiring checks of the queue, stream, schedule and WebSocket functions,
// in the samples table beside the HTTP functions': each runs its events/
// sample through the Lambda handler its main.go builds (each composition
// package's FromEnv), as that function (its IAM policy applies), against
// the demo fixture. They were a test binary per function directory, each
// starting its own moto_server.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/signature"
	"github.com/chatbridge/chat/pkg/wsapi"
)

func init() {
	samples["DeliverWebhooksFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		var (
			mu   sync.Mutex
			got  []byte
			hdrs http.Header
		)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got, hdrs = b, r.Header.Clone()
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv.Listener = ln
		srv.Start()
		defer srv.Close()
		ev := wiringtest.Event[events.SQSEvent](t, "deliver-webhooks.json")
		d, err := evs.UnmarshalQueue(ev.Records[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		// Point the demo's webhook at the local receiver.
		_, err = st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &st.Table,
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "WS#" + d.WorkspaceID},
				"sk": &types.AttributeValueMemberS{Value: d.WebhookKey}},
			UpdateExpression: aws.String("SET #u = :u"), ConditionExpression: aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames: map[string]string{"#u": "url"}, ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: srv.URL}}})
		if err != nil {
			t.Fatalf("point webhook at receiver: %v", err)
		}
		t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.1/32")
		t.Setenv(delivering.EnvOutboundAllowOnly, "true")
		h, err := delivering.FromEnv(context.Background())
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		resp, err := h(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("sample: %+v %v, want no failures", resp, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if string(got) != string(d.Body) {
			t.Fatalf("receiver got %s, want the envelope %s", got, d.Body)
		}
		if _, err := signature.Verify(hdrs.Get(signature.Header), []byte("whsig_demo_audit_log_signing"), got, time.Now()); err != nil {
			t.Fatalf("signature %q: %v", hdrs.Get(signature.Header), err)
		}
		if hdrs.Get("X-Service-Delivery") != d.ID || hdrs.Get("X-Service-Event") != "message.created" || hdrs.Get("X-Service-Attempt") != "1" {
			t.Fatalf("headers %v", hdrs)
		}
		rec, err := storetest.New(st.DB, st.Table).Deliveries.Delivery(context.Background(), d.WorkspaceID, d.WebhookID, d.ID)
		if err != nil || rec.Status != "succeeded" || rec.Attempts != 1 || rec.ResponseStatus != http.StatusNoContent {
			t.Fatalf("delivery record %+v %v, want succeeded after 1 attempt with 204", rec, err)
		}
	}
	samples["OutboxRelayFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		h, err := relaying.FromEnv(context.Background())
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.DynamoDBEvent](t, "outbox-relay.json")
		resp, err := h(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("sample: %+v %v, want no failures", resp, err)
		}
		out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(st.Resources.Queues["TranslationQueue"]), MaxNumberOfMessages: 10})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("queue holds %d jobs (%v), want 1", len(out.Messages), err)
		}
		job, err := messages.DecodeJob(aws.ToString(out.Messages[0].Body))
		if err != nil || job.MessageID != "01JDA0000000000000000000MS" || job.SourceLanguage != "en" {
			t.Fatalf("job %+v %v, want the sample's message", job, err)
		}
		// A failed send is reported as a batch item failure, to be retried.
		t.Setenv(awsenv.EnvQueueURL, st.Resources.Queues["TranslationQueue"]+"-missing")
		broken, err := relaying.FromEnv(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		resp, _ = broken(context.Background(), ev)
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != ev.Records[0].Change.SequenceNumber {
			t.Fatalf("failed send reported as %+v, want the record's sequence number", resp)
		}
	}
	// TranslationSweepFunction: runs events/translation-sweep.json through the real
	// handler: a message stored an hour ago and never translated is queued
	// again; one stored now is not due yet.
	samples["TranslationSweepFunction"] = func(t *testing.T, fn string) {
		st, d := wiringtest.DemoAs(t, fn)
		store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
		ids := chat.NewIDs()
		channel := d.Workspaces[0].Channels[0].ID
		put := func(at time.Time) string {
			t.Helper()
			m := chat.Message{ID: ids.New(at), WorkspaceID: d.Workspaces[0].ID, ChannelID: channel,
				Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, Content: "Build passed", SourceLanguage: "en",
				Status: chat.MessageQueued, CreatedAt: at}
			if err := store.PutMessage(context.Background(), m); err != nil {
				t.Fatalf("put message: %v", err)
			}
			return m.ID
		}
		old := put(time.Now().Add(-time.Hour))
		put(time.Now())

		h, err := relaying.SweepFromEnv(context.Background())
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		res, err := h(context.Background(), wiringtest.Event[events.CloudWatchEvent](t, "translation-sweep.json"))
		if err != nil || res.Due != 1 || res.Requeued != 1 {
			t.Fatalf("sample: %+v %v, want one due message requeued", res, err)
		}
		out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(st.Resources.Queues["TranslationQueue"]), MaxNumberOfMessages: 10})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("queue holds %d jobs (%v), want 1", len(out.Messages), err)
		}
		if job, err := messages.DecodeJob(aws.ToString(out.Messages[0].Body)); err != nil || job.MessageID != old || job.ChannelID != channel {
			t.Fatalf("job %+v %v, want message %s of channel %s", job, err, old, channel)
		}

		// Missing configuration is an init error naming the variable.
		t.Setenv(awsenv.EnvQueueURL, "")
		if _, err := relaying.SweepFromEnv(context.Background()); err == nil {
			t.Fatalf("handler without %s: no error", awsenv.EnvQueueURL)
		}
	}
	// TranslateFunction: runs events/translate.json through the real handler with
	// the default translator, none: nothing to translate, nothing failed.
	samples["TranslateFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		t.Setenv(translating.EnvTranslator, "")
		h, err := translating.FromEnv(context.Background())
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.SQSEvent](t, "translate.json")
		resp, err := h(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("sample: %+v %v, want no failures", resp, err)
		}
		if got := storedTranslation(t, st.DB, st.Table, "01JDA0000000000000000000MS", "es"); got != "" {
			t.Fatalf("translator none stored a translation %q, want none", got)
		}

		// A poison record beside it fails alone, by its message id.
		poison := ev.Records[0]
		poison.MessageId, poison.Body = "poison-1", `{"content": "no ids"}`
		ev.Records = append(ev.Records, poison)
		resp, _ = h(context.Background(), ev)
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "poison-1" {
			t.Fatalf("with a poison record: failures %+v, want only poison-1", resp.BatchItemFailures)
		}
	}
	// RealtimeFunction:: the sample's subscribe, with a real guest token, through
	// the real handler: the answer is posted to the sample's connection through
	// the Management API, and the connection is stored under the room's channel.
	samples["RealtimeFunction"] = func(t *testing.T, fn string) {
		st, d := wiringtest.DemoAs(t, fn)
		var mu sync.Mutex
		posts := map[string]string{}
		mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			posts[r.Method+" "+r.URL.EscapedPath()] = string(b)
			mu.Unlock()
		}))
		defer mgmt.Close()
		t.Setenv(wsapi.EnvManagementEndpoint, mgmt.URL+"/live")
		room := d.Workspaces[0].TemporaryRooms[0]
		_, joined := wiringtest.Join(t, st, room.RoomID, "es-ES")
		a, sender, err := realtiming.FromEnv(context.Background())
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayWebsocketProxyRequest](t, "realtime.json")
		ev.Body = strings.Replace(ev.Body, "gst_placeholder_token_of_the_sample_000", joined.Token, 1)
		resp, err := realtiming.Route(a, sender).Handle(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %+v %v", resp, err)
		}
		got := posts["POST /live/@connections/K7fGadlvoAMCJWA%3D"]
		if !strings.Contains(got, `"type":"subscribed"`) || !strings.Contains(got, room.RoomID) {
			t.Fatalf("posts %v, want subscribed to the sample's connection", posts)
		}
		conns, err := storetest.New(a.DB, a.Table).Conns.Connections(context.Background(), room.ChannelID, time.Now())
		if err != nil || len(conns) != 1 || conns[0].ID != "K7fGadlvoAMCJWA=" || conns[0].Language != "es-ES" {
			t.Fatalf("stored connections %+v %v", conns, err)
		}
	}
	// RealtimeFanoutFunction: the sample's job names two connections: the
	// first takes the push, API Gateway keeps throttling the second, whose
	// send goes back on the queue as a job of its own.
	samples["RealtimeFanoutFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		a, sender, sent := managementAPI(t, "/L0SNAdmOvHcCJ1Q=", http.StatusTooManyRequests, "LimitExceededException")
		queue := st.Resources.Queues["RealtimeFanoutQueue"]
		ev := wiringtest.Event[events.SQSEvent](t, "realtime-fanout.json")
		resp, err := realtiming.Fanout(a, sender, queue).HandleSQS(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("sample: %+v %v, want no failures", resp, err)
		}
		if posts := sent(); len(posts) != 1 || !strings.Contains(posts[0], "/L0SM9cOFvHcCIhw=") || !strings.Contains(posts[0], `"content":"Versión 2.3.1 desplegada en producción."`) {
			t.Fatalf("posts %q, want the job's payload to its first connection", posts)
		}
		out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) != 1 || !strings.Contains(*out.Messages[0].Body, `"connections":["L0SNAdmOvHcCJ1Q="]`) || !strings.Contains(*out.Messages[0].Body, `"attempt":1`) {
			t.Fatalf("requeued %d jobs, want the throttled connection's, attempt 1", len(out.Messages))
		}
	}
	// RealtimePushFunction: the sample's INSERT then MODIFY (Spanish landing) of one
	// message, through the real handler: a Spanish reader's connection gets the
	// original, then the Spanish view; a gone connection loses its item.
	samples["RealtimePushFunction"] = func(t *testing.T, fn string) {
		st, d := wiringtest.DemoAs(t, fn)
		// Seeded as an administrator: the function itself may not write these.
		seed := storetest.New(st.DB, st.Table)
		a, sender, sent := managementAPI(t, "/gone", http.StatusGone, "GoneException")
		ctx := context.Background()
		const channel, message = "01JD9N0Z50BAKDWE0FBRMSFD5P", "01JDA0000000000000000000MS"
		user, token := wiringtest.ChannelMember(t, d, channel)
		for _, id := range []string{"reader", "gone"} {
			if err := seed.Conns.PutConnection(ctx, realtime.Connection{ID: id, ChannelID: channel, Kind: realtime.KindMember, SubjectID: user, Token: token, Language: "es-ES", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := seed.Translation.SaveTranslations(ctx, channel, message, []chat.Translation{{MessageID: message, Language: "es", Content: "La compilación pasó", SourceLanguage: "en", CreatedAt: time.Now()}}, false); err != nil {
			t.Fatal(err)
		}
		ev := wiringtest.Event[events.DynamoDBEvent](t, "realtime-push.json")
		resp, err := realtiming.Push(a, sender, "").HandleStream(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("sample: %+v %v, want no failures", resp, err)
		}
		if posts := sent(); len(posts) != 2 || !strings.Contains(posts[0], `"type":"message"`) || !strings.Contains(posts[0], `"translated":false`) ||
			!strings.Contains(posts[1], `"type":"message.updated"`) || !strings.Contains(posts[1], `"content":"La compilación pasó"`) {
			t.Fatalf("posts %q, want the original then the Spanish update", posts)
		}
		conns, _ := storetest.New(a.DB, a.Table).Conns.Connections(ctx, channel, time.Now())
		if len(conns) != 1 || conns[0].ID != "reader" {
			t.Fatalf("connections %+v, want the gone one dropped", conns)
		}
	}
}

// TestTranslateFunctionWithApertium translates the sample for the demo channel's
// readers (Ana es-ES, Ben en-US, Chloé fr-FR) with a real apertium-apy:
// Spanish is stored, English is the source, French has no installed pair.
func TestTranslateFunctionWithApertium(t *testing.T) {
	st, _ := demoWithApertium(t)
	h, err := translating.FromEnv(context.Background())
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.SQSEvent](t, "translate.json")
	job, err := messages.DecodeJob(ev.Records[0].Body)
	if err != nil {
		t.Fatalf("sample body: %v", err)
	}
	// A job comes from a stored message, which holds its content (the job
	// carries ids) and records its translations.
	job.Content = "Build #1042 passed on main."
	if err := storetest.New(st.DB, st.Table).PutMessage(context.Background(), chat.Message{ID: job.MessageID,
		WorkspaceID: job.WorkspaceID, ChannelID: job.ChannelID, Author: chat.Author{Type: job.AuthorType, Name: "CI Bot"},
		Content: job.Content, SourceLanguage: job.SourceLanguage, Status: chat.MessageQueued, CreatedAt: job.CreatedAt}); err != nil {
		t.Fatalf("store the sample's message: %v", err)
	}
	var created []string
	for delivery := 1; delivery <= 2; delivery++ {
		resp, err := h(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d: %+v %v, want no failures", delivery, resp, err)
		}
		es, at := storedTranslationItem(t, st.DB, st.Table, job.MessageID, "es")
		if es == "" || es == job.Content || !strings.Contains(strings.ToLower(es), "principal") {
			t.Fatalf("delivery %d: es translation %q of %q, want Spanish", delivery, es, job.Content)
		}
		created = append(created, at)
	}
	if created[0] != created[1] {
		t.Fatalf("the redelivery rewrote the translation (created_at %s, then %s)", created[0], created[1])
	}
	for _, lang := range []string{"en", "en-US", "fr"} {
		if got := storedTranslation(t, st.DB, st.Table, job.MessageID, lang); got != "" {
			t.Fatalf("stored a %s translation %q, want none", lang, got)
		}
	}
}

func TestTranslateFunctionConfigurationErrorsNameTheVariable(t *testing.T) {
	wiringtest.DemoAs(t, translating.Function)
	for _, tc := range []struct{ translator, url, concurrency, want string }{
		{"deepl", "", "", translating.EnvTranslator},
		{"apertium", "", "", translating.EnvApertiumURL},
		{"apertium", "127.0.0.1:2737", "", translating.EnvApertiumURL},
		{"none", "", "0", translating.EnvTranslateConcurrency},
		{"none", "", "many", translating.EnvTranslateConcurrency},
	} {
		t.Setenv(translating.EnvTranslator, tc.translator)
		t.Setenv(translating.EnvApertiumURL, tc.url)
		t.Setenv(translating.EnvTranslateConcurrency, tc.concurrency)
		if _, err := translating.FromEnv(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("TRANSLATOR=%q APERTIUM_URL=%q TRANSLATE_CONCURRENCY=%q: got %v, want an error naming %s",
				tc.translator, tc.url, tc.concurrency, err, tc.want)
		}
	}
	t.Setenv(translating.EnvTranslator, "amazon")
	t.Setenv(translating.EnvTranslateConcurrency, "8")
	if _, err := translating.FromEnv(context.Background()); err != nil {
		t.Fatalf("TRANSLATOR=amazon: %v", err)
	}
}

// storedTranslation reads the stored translation of message into lang ("" when
// there is none).
func storedTranslation(t *testing.T, db *dynamodb.Client, table, message, lang string) string {
	t.Helper()
	content, _ := storedTranslationItem(t, db, table, message, lang)
	return content
}

// storedTranslationItem reads the content and created_at of a stored translation.
func storedTranslationItem(t *testing.T, db *dynamodb.Client, table, message, lang string) (content, created string) {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "MSG#" + message}, "sk": &types.AttributeValueMemberS{Value: "TR#" + lang},
		}})
	if err != nil {
		t.Fatalf("get translation: %v", err)
	}
	if c, ok := out.Item["content"].(*types.AttributeValueMemberS); ok {
		content = c.Value
	}
	if c, ok := out.Item["created_at"].(*types.AttributeValueMemberS); ok {
		created = c.Value
	}
	return content, created
}

// managementAPI serves API Gateway's Management API for a realtime
// function's sample and builds the function's App and sender on it, as
// FromEnv does: a post to a connection whose path ends in refused is
// answered status with X-Amzn-ErrorType errType, every other post is
// recorded (its path and body, in sent's order).
func managementAPI(t *testing.T, refused string, status int, errType string) (*app.App, *wsapi.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var posts []string
	mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, refused) {
			w.Header().Set("X-Amzn-ErrorType", errType)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"message":"refused (test)"}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	t.Cleanup(mgmt.Close)
	t.Setenv(wsapi.EnvManagementEndpoint, mgmt.URL+"/live")
	a, sender, err := realtiming.FromEnv(context.Background())
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	return a, sender, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(posts)
	}
}
