package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/relay"
)

// eventWorld is a memberWorld whose workspace has an outbound webhook
// subscribed to every type and a support webhook, both delivering to a
// local receiver (at /out and /sup), with the outbox relay and the delivery
// function built as their functions are, each making its calls as itself
// under its policy. The relay is handed the table's stream by the test
// (relayStream) from the end of the world's setup, so that a test decides
// what it has read when.
type eventWorld struct {
	*memberWorld
	rv       *eventReceiver
	tail     *streamTail
	relay    *relay.Relay
	d        *attempt.Deliverer
	out, sup string // the webhooks' ids
	dq, sq   string
}

// newEventWorld builds it with schedule as DELIVERY_SCHEDULE.
func newEventWorld(t *testing.T, schedule string) *eventWorld {
	t.Helper()
	w := &eventWorld{memberWorld: newMemberWorld(t), rv: &eventReceiver{}}
	w.rv.srv = httptest.NewUnstartedServer(w.rv)
	w.rv.srv.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	w.rv.srv.Start()
	t.Cleanup(w.rv.srv.Close)
	admin := bearer(w.ana)
	create := func(kind, body string) string {
		rec := w.do(t, "POST", w.wsPath("/"+kind+"-webhooks"), body, admin)
		if rec.Code != 201 {
			t.Fatalf("create %s webhook: %d %s", kind, rec.Code, rec.Body)
		}
		return decodeAs[struct{ Data struct{ ID string } }](t, rec.Body.Bytes()).Data.ID
	}
	types, _ := json.Marshal(events.OutboundTypes)
	w.out = create("outbound", `{"name":"all","url":"https://out.example.invalid/","events":`+string(types)+`}`)
	w.sup = create("support", `{"name":"desk","url":"https://sup.example.invalid/"}`)
	hooks, err := storetest.New(w.app.DB, w.app.Table).Relay.EventWebhooks(context.Background(), w.ws.ID)
	if err != nil || len(hooks) != 2 {
		t.Fatalf("webhooks: %v %v, want two", hooks, err)
	}
	for _, h := range hooks {
		// An administrator's change: no API points a webhook at loopback.
		path := map[string]string{events.KindOutbound: "/out", events.KindSupport: "/sup"}[h.Kind]
		w.setWebhookURL(t, h.Key, w.rv.srv.URL+path)
	}
	w.dq, w.sq = w.st.Resources.Queues["DeliveryQueue"], w.st.Resources.Queues["SlowDeliveryQueue"]
	t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.1/32")
	t.Setenv(delivering.EnvOutboundAllowOnly, "true")
	t.Setenv(delivering.EnvDeliverySchedule, schedule)
	// The redeliver and recover functions queue onto the delivery queue.
	t.Setenv(awsenv.EnvDeliveryQueueURL, w.dq)
	hs, err := handlers.All(w.app)
	if err != nil {
		t.Fatal(err)
	}
	w.h = httpapi.Mux(hs)
	if w.d, err = delivering.Deliverer(w.app.For(delivering.Function), delivering.Queues{Fast: w.dq, Slow: w.sq}); err != nil {
		t.Fatal(err)
	}
	w.relay = relaying.Relay(w.app.For(relaying.Function), w.st.Resources.Queues["TranslationQueue"], w.dq)
	w.tail = &streamTail{st: w.st, seen: map[string]bool{}}
	w.tail.next(t) // the fixture's changes are not the tests' events
	return w
}

func (w *eventWorld) setWebhookURL(t *testing.T, sk, url string) {
	t.Helper()
	_, err := w.st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &w.st.Table,
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "WS#" + w.ws.ID}, "sk": &types.AttributeValueMemberS{Value: sk}},
		UpdateExpression: aws.String("SET #u = :u"), ExpressionAttributeNames: map[string]string{"#u": "url"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: url}}})
	if err != nil {
		t.Fatal(err)
	}
}

// relayStream hands the relay every stream record it has not had yet, in
// one batch, and fails t on a batch item failure.
func (w *eventWorld) relayStream(t *testing.T) {
	t.Helper()
	w.relayRecords(t, w.tail.next(t))
}

// relayRecords hands the relay recs as one batch.
func (w *eventWorld) relayRecords(t *testing.T, recs []lambdaevents.DynamoDBEventRecord) {
	t.Helper()
	if len(recs) == 0 {
		return
	}
	resp, err := w.relay.HandleStream(context.Background(), lambdaevents.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("relay: %+v %v", resp, err)
	}
}

// deliver runs the delivery function on both lanes, as their event source
// mappings do (reading with its role), until done or 20 s.
func (w *eventWorld) deliver(t *testing.T, done func() bool) {
	t.Helper()
	if !deliverOnLanes(w.st, w.d.HandleSQS, done) {
		t.Fatalf("deliveries not done within 20 s; the receiver got %d", len(w.rv.all()))
	}
}

// delivered is one request the receiver got.
type delivered struct {
	path   string
	header http.Header
	body   []byte
}

func (d delivered) eventType() string { return d.header.Get("X-Service-Event") }

// envelope is a delivered envelope, data kept raw.
type envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

func (d delivered) envelope(t *testing.T) envelope {
	t.Helper()
	return decodeAs[envelope](t, d.body)
}

// eventReceiver answers every delivery with answer's status (204 when nil).
type eventReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []delivered
	answer func(d delivered) int
}

func (rv *eventReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	d := delivered{path: r.URL.Path, header: r.Header.Clone(), body: b}
	rv.mu.Lock()
	rv.got = append(rv.got, d)
	answer := rv.answer
	rv.mu.Unlock()
	status := http.StatusNoContent
	if answer != nil {
		status = answer(d)
	}
	w.WriteHeader(status)
}

func (rv *eventReceiver) setAnswer(f func(d delivered) int) {
	rv.mu.Lock()
	rv.answer = f
	rv.mu.Unlock()
}

func (rv *eventReceiver) all() []delivered {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]delivered(nil), rv.got...)
}

// of returns the deliveries at path whose body contains s ("" for any).
func (rv *eventReceiver) of(path, s string) []delivered {
	var out []delivered
	for _, d := range rv.all() {
		if d.path == path && strings.Contains(string(d.body), s) {
			out = append(out, d)
		}
	}
	return out
}

// streamTail reads the table's stream from its start, each record once, as
// Lambda hands it to a function: ApproximateCreationDateTime in whole
// seconds, images in Lambda's JSON form.
type streamTail struct {
	st   *stacktest.Stack
	seen map[string]bool
}

func (s *streamTail) next(t *testing.T) []lambdaevents.DynamoDBEventRecord {
	t.Helper()
	ctx := context.Background()
	streams := dynamodbstreams.NewFromConfig(s.st.AWS)
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &s.st.Resources.StreamARN})
	if err != nil {
		t.Fatal(err)
	}
	var out []lambdaevents.DynamoDBEventRecord
	for _, sh := range desc.StreamDescription.Shards {
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &s.st.Resources.StreamARN,
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		for iter := it.ShardIterator; iter != nil; {
			page, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Records {
				seq := aws.ToString(r.Dynamodb.SequenceNumber)
				if s.seen[seq] {
					continue
				}
				s.seen[seq] = true
				if !relayed(r) {
					continue
				}
				image := map[string]streamtypes.AttributeValue{}
				for k, v := range r.Dynamodb.NewImage {
					if _, ok := v.(*streamtypes.AttributeValueMemberL); !ok { // a webhook's events: not the relay's
						image[k] = v
					}
				}
				rec := lambdaevents.DynamoDBEventRecord{EventName: string(r.EventName), EventSource: "aws:dynamodb",
					EventSourceArn: s.st.Resources.StreamARN,
					Change:         lambdaevents.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: stacktest.LambdaImage(t, image)}}
				if at := r.Dynamodb.ApproximateCreationDateTime; at != nil {
					rec.Change.ApproximateCreationDateTime = lambdaevents.SecondsEpochTime{Time: time.Unix(at.Unix(), 0)}
				}
				out = append(out, rec)
			}
			if len(page.Records) == 0 {
				break
			}
			iter = page.NextShardIterator
		}
	}
	return out
}

// relayed reports whether the relay's event source mapping hands r to it
// (template.yaml's filters, roughly: the items it reads changes of).
func relayed(r streamtypes.Record) bool {
	key := func(name string) string {
		v, _ := r.Dynamodb.Keys[name].(*streamtypes.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	pk, sk := key("pk"), key("sk")
	return strings.HasPrefix(sk, "MSG#") || strings.HasPrefix(pk, "ROOM#") && (sk == "#META" || strings.HasPrefix(sk, "GUEST#")) ||
		strings.HasPrefix(pk, "AUDIT#")
}
