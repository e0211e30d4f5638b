package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app/delivering"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/signature"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
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
	h, err := handler(context.Background())
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
