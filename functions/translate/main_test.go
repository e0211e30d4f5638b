package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/apyserver"
	"github.com/chatbridge/chat/internal/storetest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// translation reads the stored translation of message into lang ("" when
// there is none).
func translation(t *testing.T, db *dynamodb.Client, table, message, lang string) string {
	t.Helper()
	content, _ := translationItem(t, db, table, message, lang)
	return content
}

// translationItem reads the content and created_at of a stored translation.
func translationItem(t *testing.T, db *dynamodb.Client, table, message, lang string) (content, created string) {
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

// TestSampleEvent runs events/translate.json through the real handler with
// the default translator, none: nothing to translate, nothing failed.
func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	t.Setenv(translating.EnvTranslator, "")
	h, err := handler(context.Background())
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.SQSEvent](t, "translate.json")
	resp, err := h(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("sample: %+v %v, want no failures", resp, err)
	}
	if got := translation(t, st.DB, st.Table, "01JDA0000000000000000000MS", "es"); got != "" {
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

// TestSampleEventWithApertium translates the sample for the demo channel's
// readers (Ana es-ES, Ben en-US, Chloé fr-FR) with a real apertium-apy:
// Spanish is stored, English is the source, French has no installed pair.
func TestSampleEventWithApertium(t *testing.T) {
	if err := apyserver.Missing(apyserver.DefaultModesDir, "eng-spa"); err != nil {
		t.Skipf("SKIPPED, NOT PASSED: no real apertium-apy with eng-spa: %v. `make test` installs it via scripts/ensure-test-tools.", err)
	}
	apy, err := apyserver.Start(context.Background(), 0, apyserver.DefaultModesDir)
	if err != nil {
		t.Fatalf("start apertium-apy: %v", err)
	}
	defer apy.Stop()
	st, _ := wiringtest.Demo(t)
	t.Setenv(translating.EnvTranslator, translating.TranslatorApertium)
	t.Setenv(translating.EnvApertiumURL, apy.URL)
	h, err := handler(context.Background())
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
		es, at := translationItem(t, st.DB, st.Table, job.MessageID, "es")
		if es == "" || es == job.Content || !strings.Contains(strings.ToLower(es), "principal") {
			t.Fatalf("delivery %d: es translation %q of %q, want Spanish", delivery, es, job.Content)
		}
		created = append(created, at)
	}
	if created[0] != created[1] {
		t.Fatalf("the redelivery rewrote the translation (created_at %s, then %s)", created[0], created[1])
	}
	for _, lang := range []string{"en", "en-US", "fr"} {
		if got := translation(t, st.DB, st.Table, job.MessageID, lang); got != "" {
			t.Fatalf("stored a %s translation %q, want none", lang, got)
		}
	}
}

func TestConfigurationErrorsNameTheVariable(t *testing.T) {
	wiringtest.Demo(t)
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
		if _, err := handler(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("TRANSLATOR=%q APERTIUM_URL=%q TRANSLATE_CONCURRENCY=%q: got %v, want an error naming %s",
				tc.translator, tc.url, tc.concurrency, err, tc.want)
		}
	}
	t.Setenv(translating.EnvTranslator, "amazon")
	t.Setenv(translating.EnvTranslateConcurrency, "8")
	if _, err := handler(context.Background()); err != nil {
		t.Fatalf("TRANSLATOR=amazon: %v", err)
	}
}
