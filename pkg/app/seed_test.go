package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// world is a seeded stack with the whole API mounted.
type world struct {
	st      *stacktest.Stack
	app     *app.App
	h       http.Handler
	doc     *fixture.Document
	ws      fixture.Workspace
	static  fixture.InboundWebhook
	signed  fixture.InboundWebhook
	other   fixture.Workspace
	token   string
	general string
}

func boolp(b bool) *bool { return &b }
func intp(n int) *int    { return &n }

// newWorld seeds two workspaces: Acme (quota as given) with a static and a
// signed webhook, and Other with one channel.
func newWorld(t *testing.T, quota int) *world {
	t.Helper()
	st := stacktest.New(t)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{{
		Name: "Acme", DefaultLanguage: "en", WebhookQuotaPerMinute: intp(quota),
		Users:    []fixture.User{{Name: "Ana", PreferredLanguage: "es-ES"}},
		Channels: []fixture.Channel{{Name: "general"}, {Name: "random"}},
		InboundWebhooks: []fixture.InboundWebhook{
			{BotName: "CI Bot", BotAvatarURL: "https://example.com/bot.png"},
			{BotName: "Deploy Bot", SignatureRequired: boolp(true)},
		},
	}, {
		Name: "Other", Channels: []fixture.Channel{{Name: "elsewhere"}},
		Users: []fixture.User{{Name: "Zed", PreferredLanguage: "en"}},
	}}}
	now := time.Now()
	if err := doc.Complete(chat.NewIDs(), now); err != nil {
		t.Fatalf("complete fixture: %v", err)
	}
	a := app.New(st.AWS, st.Table)
	a.Bucket = st.Bucket
	a.CursorKey = []byte("test-cursor-key-0123456789abcdef")
	if err := storetest.New(a.DB, a.Table).Fixture.Apply(context.Background(), doc, now); err != nil {
		t.Fatalf("apply fixture: %v", err)
	}
	t.Setenv(app.EnvWebhookCacheTTL, "1m")
	// Each handler makes its calls as its own function, held to its policy.
	st.AsApp(a)
	handlers, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	ws := doc.Workspaces[0]
	st.Calls.Reset()
	return &world{st: st, app: a, h: httpapi.Mux(handlers), doc: doc, ws: ws, static: ws.InboundWebhooks[0], signed: ws.InboundWebhooks[1],
		other: doc.Workspaces[1], token: ws.Users[0].APIToken, general: ws.Channels[0].ID}
}

// do sends one request through the whole handler stack and holds the
// response, whatever it is, to openapi.yaml.
func (w *world) do(t *testing.T, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// count returns the number of items whose sk starts with prefix.
func (w *world) count(t *testing.T, prefix string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(w.st.DB, &dynamodb.ScanInput{TableName: aws.String(w.st.Table),
		FilterExpression:          aws.String("begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: prefix}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		n += len(page.Items)
	}
	return n
}

// scanAll returns every item's attributes rendered as text, for leak checks.
func (w *world) scanAll(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	p := dynamodb.NewScanPaginator(w.st.DB, &dynamodb.ScanInput{TableName: aws.String(w.st.Table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, it := range page.Items {
			for k, v := range it {
				b.WriteString(k + "=")
				if s, ok := v.(*types.AttributeValueMemberS); ok {
					b.WriteString(s.Value)
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
