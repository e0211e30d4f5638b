package attempt_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/signature"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

const (
	wsID   = "01JD9N0V80G9T6DXN5EAY6K8H4"
	secret = "whsig_test_current"
)

// hit is one request the receiver got.
type hit struct {
	body    []byte
	header  http.Header
	status  int
	started time.Time
}

// receiver is a local webhook target on 127.0.0.1 whose answer to the
// n-th request (from 1) is answer(n).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter) int) *receiver {
	t.Helper()
	rv := &receiver{}
	rv.Server = loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		n := len(rv.hits) + 1
		rv.hits = append(rv.hits, hit{body: b, header: r.Header.Clone(), started: time.Now()})
		rv.mu.Unlock()
		st := answer(n, w)
		rv.mu.Lock()
		rv.hits[n-1].status = st
		rv.mu.Unlock()
	}))
	return rv
}

// loopback serves h on 127.0.0.1 only until tb ends.
func loopback(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

// hangs is a receiver that never answers: it waits until the client gives
// up (at most 5 s).
var hangs = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
})

func (rv *receiver) all() []hit {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]hit(nil), rv.hits...)
}

type env struct {
	st    *stacktest.Stack
	store *storetest.Stores
	queue *sqsqueue.Queue
	url   string
	// slowURL is the slow lane's queue, "" when the deliverer has none.
	slowURL string
	d       *attempt.Deliverer
}

func newEnv(t *testing.T, schedule []time.Duration) *env {
	t.Helper()
	st := stacktest.New(t)
	e := &env{st: st, store: storetest.New(st.DB, st.Table), url: st.Resources.Queues["DeliveryQueue"]}
	e.queue = sqsqueue.New(st.SQS, e.url)
	allow, _ := netguard.ParseCIDRs("127.0.0.1/32")
	c := (&netguard.Guard{Allow: allow, AllowOnly: true}).Client()
	c.Timeout = 300 * time.Millisecond
	e.d = &attempt.Deliverer{Store: e.store.Deliveries, Queue: e.queue, Client: c, Schedule: schedule}
	return e
}

// newLanesEnv is newEnv with the slow lane, as the function runs:
// SlowDeliveryQueue, and the lanes told apart by eventSourceARN.
func newLanesEnv(t *testing.T, schedule []time.Duration) *env {
	t.Helper()
	e := newEnv(t, schedule)
	e.slowURL = e.st.Resources.Queues["SlowDeliveryQueue"]
	e.d.Slow = sqsqueue.New(e.st.SQS, e.slowURL)
	e.d.LaneOf = delivering.Lanes(delivering.Queues{Fast: e.url, Slow: e.slowURL})
	return e
}

// arnOf is the ARN of the stack's queue at url.
func (e *env) arnOf(t *testing.T, url string) string {
	t.Helper()
	for name, u := range e.st.Resources.Queues {
		if u == url {
			return e.st.Resources.QueueARNs[name]
		}
	}
	t.Fatalf("no queue at %s", url)
	return ""
}

// urlOf is the URL of the stack's queue named by arn.
func (e *env) urlOf(t *testing.T, arn string) string {
	t.Helper()
	for name, a := range e.st.Resources.QueueARNs {
		if a == arn {
			return e.st.Resources.Queues[name]
		}
	}
	t.Fatalf("no queue %s", arn)
	return ""
}

// putWebhook stores an outbound (or support) webhook item and returns its
// recipient view.
func (e *env) putWebhook(t *testing.T, kind, id, url string, extra map[string]types.AttributeValue) evs.Webhook {
	t.Helper()
	prefix := map[string]string{evs.KindOutbound: "OWH#", evs.KindSupport: "SWH#"}[kind]
	sk := prefix + "2026-11-22T10:00:00.000000000Z#" + id
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "WS#" + wsID}, "sk": &types.AttributeValueMemberS{Value: sk},
		"id": &types.AttributeValueMemberS{Value: id}, "workspace_id": &types.AttributeValueMemberS{Value: wsID},
		"name": &types.AttributeValueMemberS{Value: "hook " + id}, "url": &types.AttributeValueMemberS{Value: url},
		"active": &types.AttributeValueMemberBOOL{Value: true}, "signing_secret": &types.AttributeValueMemberS{Value: secret},
		"events": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: evs.MessageCreated}}},
	}
	for k, v := range extra {
		item[k] = v
	}
	if _, err := e.st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &e.st.Table, Item: item}); err != nil {
		t.Fatalf("put webhook: %v", err)
	}
	// Its by-id twin, as webhook management and chatctl apply write it.
	twin := map[string]types.AttributeValue{}
	for k, v := range item {
		twin[k] = v
	}
	twin["pk"], twin["sk"] = &types.AttributeValueMemberS{Value: prefix + id}, &types.AttributeValueMemberS{Value: "#META"}
	if _, err := e.st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &e.st.Table, Item: twin}); err != nil {
		t.Fatalf("put webhook twin: %v", err)
	}
	return evs.Webhook{ID: id, Kind: kind, Key: sk, Active: true, Events: []string{evs.MessageCreated}}
}

func (e *env) webhookItem(t *testing.T, w evs.Webhook) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &e.st.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "WS#" + wsID}, "sk": &types.AttributeValueMemberS{Value: w.Key}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

var evSeq int

// event returns a message.created event and its deliveries to hooks.
func event(t *testing.T, content string, hooks ...evs.Webhook) (evs.Event, []evs.Delivery) {
	t.Helper()
	evSeq++
	m := chat.Message{ID: evs.DeriveID(time.Now(), "m", strconv.Itoa(evSeq)), WorkspaceID: wsID, ChannelID: "01JD9N0Z50BAKDWE0FBRMSFD5P",
		Author: chat.Author{Type: chat.AuthorBot, ID: "01JD9N13W1MBC3YXWDRW4DQ3TH", Name: "CI"}, Content: content, SourceLanguage: "en",
		CreatedAt: time.Now().UTC()}
	ev := evs.Event{ID: evs.DeriveID(m.CreatedAt, evs.MessageCreated, m.ID), Type: evs.MessageCreated, WorkspaceID: wsID, CreatedAt: m.CreatedAt, Data: evs.MessageOf(m)}
	body, err := evs.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return ev, evs.Deliveries(ev, body, hooks, wsID)
}

// run consumes the delivery queue as Lambda would until done or the
// deadline.
func (e *env) run(t *testing.T, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stopped sync.WaitGroup
	for _, url := range []string{e.url, e.slowURL} {
		if url != "" {
			arn := e.arnOf(t, url)
			stopped.Go(func() { _ = localrun.ConsumeQueue(ctx, e.st.SQS, url, arn, 10, e.d.HandleSQS) })
		}
	}
	defer func() {
		cancel()
		stopped.Wait()
		// moto finishes an abandoned 1 s long poll on its own and would
		// hide a message sent meanwhile: let it end.
		time.Sleep(1100 * time.Millisecond)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("deliveries did not finish within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) record(t *testing.T, d evs.Delivery) delivery.Record {
	t.Helper()
	r, err := e.store.Deliveries.Delivery(context.Background(), wsID, d.WebhookID, d.ID)
	if err != nil && chat.ErrorCode(err) != chat.ENotFound {
		t.Fatal(err)
	}
	return r
}

func ms(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

// TestScheduleRunsToFailed runs the whole schedule (milliseconds) against a
// receiver that always fails: eight attempts, same delivery id, attempt
// numbers 1..8, then failed; the webhook's failure streak counts them.
func TestScheduleRunsToFailed(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5, 5, 5, 5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "always failing", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e) })
	time.Sleep(100 * time.Millisecond) // nothing more may come
	hits := rv.all()
	if len(hits) != 8 {
		t.Fatalf("receiver got %d attempts, want 8 (1 + the schedule's 7)", len(hits))
	}
	for i, h := range hits {
		if h.header.Get("X-Service-Delivery") != ds[0].ID || h.header.Get("X-Service-Attempt") != strconv.Itoa(i+1) {
			t.Fatalf("attempt %d: delivery %q attempt %q", i+1, h.header.Get("X-Service-Delivery"), h.header.Get("X-Service-Attempt"))
		}
	}
	r := e.record(t, ds[0])
	if r.Attempts != 8 || r.Error != "http_500" || r.ResponseStatus != 500 || !r.NextAttemptAt.IsZero() {
		t.Fatalf("record %+v, want failed after 8 attempts with http_500 and no next attempt", r)
	}
	if n := e.webhookItem(t, w)["failed_attempts"]; n == nil || n.(*types.AttributeValueMemberN).Value != "8" {
		t.Fatalf("webhook failed_attempts = %v, want 8", n)
	}
}

// TestExactlyOneSuccess: a receiver that fails twice, then times out, then
// answers 2xx gets one delivery id and answers 2xx exactly once.
func TestExactlyOneSuccess(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5, 5, 5, 5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int {
		switch n {
		case 1, 2:
			w.WriteHeader(503)
			return 503
		case 3:
			time.Sleep(600 * time.Millisecond) // past the client's timeout
		}
		w.WriteHeader(202)
		return 202
	})
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "flaky <receiver>", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusSucceeded && queueEmpty(t, e) })
	time.Sleep(100 * time.Millisecond)
	ok := 0
	for _, h := range rv.all() {
		if h.header.Get("X-Service-Delivery") != ds[0].ID {
			t.Fatalf("delivery id %q, want %q on every attempt", h.header.Get("X-Service-Delivery"), ds[0].ID)
		}
		if h.status == 202 && h.header.Get("X-Service-Attempt") == "4" {
			ok++
		}
	}
	if ok != 1 || len(rv.all()) != 4 {
		t.Fatalf("got %d requests, %d answered 2xx on attempt 4; want 4 and exactly 1", len(rv.all()), ok)
	}
	r := e.record(t, ds[0])
	if r.Attempts != 4 || r.Error != "" || r.ResponseStatus != 202 {
		t.Fatalf("record %+v, want succeeded after 4 attempts", r)
	}
	// The streak ended with the success.
	if it := e.webhookItem(t, w); it["failed_attempts"] != nil || it["failing_since"] != nil {
		t.Fatalf("webhook still failing: %v", it["failed_attempts"])
	}
}

// TestGoneDisables: a 410 disables the webhook at once, is not retried,
// and the webhook's next delivery is dropped.
func TestGoneDisables(t *testing.T) {
	e := newEnv(t, ms(5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(410); return 410 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "gone", w)
	_, ds2 := event(t, "after gone", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool {
		return e.record(t, ds[0]).Status == delivery.StatusFailed && e.webhookItem(t, w)["disabled_reason"] != nil && queueEmpty(t, e)
	})
	it := e.webhookItem(t, w)
	if it["active"].(*types.AttributeValueMemberBOOL).Value || it["disabled_reason"].(*types.AttributeValueMemberS).Value != "gone" {
		t.Fatalf("webhook active=%v disabled_reason=%v, want false, gone", it["active"], it["disabled_reason"])
	}
	// Management reads the by-id twin: it says the same.
	twin, err := e.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &e.st.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "OWH#" + w.ID}, "sk": &types.AttributeValueMemberS{Value: "#META"}}})
	if err != nil {
		t.Fatal(err)
	}
	if twin.Item["active"].(*types.AttributeValueMemberBOOL).Value || twin.Item["disabled_reason"].(*types.AttributeValueMemberS).Value != "gone" {
		t.Fatalf("by-id twin active=%v disabled_reason=%v, want false, gone", twin.Item["active"], twin.Item["disabled_reason"])
	}
	if _, err := e.queue.SendDeliveries(context.Background(), ds2); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return queueEmpty(t, e) })
	if n := len(rv.all()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1 (no retry after 410, nothing to a disabled webhook)", n)
	}
	if r := e.record(t, ds2[0]); r.ID != "" {
		t.Fatalf("dropped delivery has a record %+v", r)
	}
}

// queueEmpty reports whether the delivery queue (and the slow lane, when
// the env has one) holds no message: none visible, in flight or delayed (a
// retry waiting).
//
// Each count is read at its own instant (moto evaluates the three
// attributes one after the other, and SQS's counts are approximate), so a
// message that turns from delayed to visible, or from in flight to
// visible, between two of them is in none of one answer: a queue holding
// one message waiting 2 s once read as empty as its wait ended, and a
// test stopped before its redelivery was attempted. Each queue is read
// twice in a row and is empty only when both reads are: a message counted
// in neither would have had to cross such an edge in both reads, and it
// crosses each edge once.
func queueEmpty(t *testing.T, e *env) bool {
	t.Helper()
	for range 2 {
		for _, url := range []string{e.url, e.slowURL} {
			if url == "" {
				continue
			}
			visible, inFlight, delayed := queueCountsAt(t, e, url)
			if visible+inFlight+delayed != 0 {
				return false
			}
		}
	}
	return true
}

// TestSignatures: the current and the unexpired previous secret each sign
// the raw body; an expired previous secret does not. Checked with an
// independent HMAC.
func TestSignatures(t *testing.T) {
	e := newEnv(t, ms(5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	s := func(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }
	rotated := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, map[string]types.AttributeValue{
		"previous_signing_secret": s("whsig_test_previous"), "previous_expires_at": s(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))})
	expired := e.putWebhook(t, evs.KindSupport, "01JD9N18XGGQFDKDZKXMRRSFE1", rv.URL, map[string]types.AttributeValue{
		"previous_signing_secret": s("whsig_test_old"), "previous_expires_at": s(time.Now().Add(-time.Second).UTC().Format(time.RFC3339))})
	expired.Events = nil
	_, ds := event(t, "signed \u2028 😀", rotated)
	room := evs.Event{ID: evs.DeriveID(time.Now(), "r"), Type: evs.RoomCreated, WorkspaceID: wsID, CreatedAt: time.Now(), Data: evs.Room{RoomID: "R"}}
	body, _ := evs.Encode(room)
	ds = append(ds, evs.Deliveries(room, body, []evs.Webhook{expired}, wsID)...)
	if len(ds) != 2 {
		t.Fatalf("got %d deliveries, want 2", len(ds))
	}
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return len(rv.all()) == 2 && queueEmpty(t, e) })
	for _, h := range rv.all() {
		p, err := signature.Parse(h.header.Get(signature.Header))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"whsig_test_current"}
		if h.header.Get("X-Service-Event") == evs.MessageCreated {
			want = append(want, "whsig_test_previous")
		}
		if len(p.V1) != len(want) {
			t.Fatalf("%s: %d v1 signatures, want %d", h.header.Get("X-Service-Event"), len(p.V1), len(want))
		}
		for i, sec := range want {
			m := hmac.New(sha256.New, []byte(sec))
			fmt.Fprintf(m, "%d.%s", p.T, h.body)
			if hex.EncodeToString(m.Sum(nil)) != p.V1[i] {
				t.Fatalf("v1[%d] does not verify with %s", i, sec)
			}
		}
		if h.header.Get("Content-Type") != "application/json" || h.header.Get("User-Agent") != "ChatService-Webhooks/1" {
			t.Fatalf("headers %v", h.header)
		}
		if time.Since(time.Unix(p.T, 0)) > time.Minute {
			t.Fatalf("t=%d is not now", p.T)
		}
	}
}

// receive takes the queue's next visible messages (waiting up to 2 s) as
// Lambda's event source mapping would hand them to the function, with the
// queue's ARN as each record's eventSourceARN.
func (e *env) receive(t *testing.T, url string) events.SQSEvent {
	t.Helper()
	out, err := e.st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	var ev events.SQSEvent
	arn := e.arnOf(t, url)
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: arn})
	}
	return ev
}

// receiveOne is receive, wanting exactly one message.
func (e *env) receiveOne(t *testing.T) events.SQSEvent {
	t.Helper()
	ev := e.receive(t, e.url)
	if len(ev.Records) != 1 {
		t.Fatalf("received %d messages, want 1", len(ev.Records))
	}
	return ev
}

// handle runs the function on ev and deletes the records it did not
// report as failures, as the event source mapping does; it returns the
// failures' ids and the AWS calls counted until the handler returned.
func (e *env) handle(t *testing.T, ev events.SQSEvent) (failures, calls []string) {
	t.Helper()
	resp, err := e.d.HandleSQS(context.Background(), ev)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	calls = e.st.Calls.Calls()
	failed := map[string]bool{}
	var ids []string
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
		ids = append(ids, f.ItemIdentifier)
	}
	for _, r := range ev.Records {
		if !failed[r.MessageId] {
			url := e.url
			if r.EventSourceARN != "" {
				url = e.urlOf(t, r.EventSourceARN)
			}
			if _, err := e.st.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: &r.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
	}
	return ids, calls
}

// TestAttemptCallBudget counts the AWS calls of attempts: every attempt
// reads the webhook (GetItem: a change applies to the next attempt),
// reserves its number and records its result (two UpdateItem), a failure to retry sends the retry
// (SendMessage) and counts in the webhook's streak (an UpdateItem, until
// the streak holds ten), and a message received before its due time
// costs one SendMessage.
func TestAttemptCallBudget(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5))
	fail := true
	var mu sync.Mutex
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			w.WriteHeader(500)
			return 500
		}
		w.WriteHeader(200)
		return 200
	})
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "budget", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		fail bool
		want []string
	}{
		{true, []string{"DynamoDB.GetItem", "DynamoDB.UpdateItem", "SQS.SendMessage", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem"}},
		{true, []string{"DynamoDB.GetItem", "DynamoDB.UpdateItem", "SQS.SendMessage", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem"}},
		// The success ends the streak this function started: one more call,
		// once per streak.
		{false, []string{"DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem"}},
	}
	for i, s := range steps {
		mu.Lock()
		fail = s.fail
		mu.Unlock()
		ev := e.receiveOne(t)
		e.st.Calls.Reset()
		failed, got := e.handle(t, ev)
		if len(failed) != 0 {
			t.Fatalf("attempt %d: batch item failures %v, want none (a retry is a message of its own)", i+1, failed)
		}
		if strings.Join(got, ",") != strings.Join(s.want, ",") {
			t.Fatalf("attempt %d: calls %v, want %v", i+1, got, s.want)
		}
	}
	// A success without a streak: three calls.
	_, ds = event(t, "budget 2", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	ev := e.receiveOne(t)
	e.st.Calls.Reset()
	if _, got := e.handle(t, ev); strings.Join(got, ",") != "DynamoDB.GetItem,DynamoDB.UpdateItem,DynamoDB.UpdateItem" {
		t.Fatalf("success: calls %v, want [DynamoDB.GetItem DynamoDB.UpdateItem DynamoDB.UpdateItem]", got)
	}
	// As the function is wired, an event that carries a message reads
	// whether it was deleted: one GetItem more (for those events only).
	e.d.Messages = e.store.Deliveries
	_, ds3 := event(t, "budget 3", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds3); err != nil {
		t.Fatal(err)
	}
	ev = e.receiveOne(t)
	e.st.Calls.Reset()
	if _, got := e.handle(t, ev); strings.Join(got, ",") != "DynamoDB.GetItem,DynamoDB.GetItem,DynamoDB.UpdateItem,DynamoDB.UpdateItem" {
		t.Fatalf("success of a message event: calls %v, want [DynamoDB.GetItem DynamoDB.GetItem DynamoDB.UpdateItem DynamoDB.UpdateItem]", got)
	}
	e.d.Messages = nil
	// A message received before its due time waits on the queue again.
	early := ds[0]
	early.Attempt, early.Due = 2, time.Now().Add(time.Hour)
	if err := e.queue.Schedule(context.Background(), early, 0); err != nil {
		t.Fatal(err)
	}
	ev = e.receiveOne(t)
	e.st.Calls.Reset()
	if _, got := e.handle(t, ev); strings.Join(got, ",") != "SQS.SendMessage" {
		t.Fatalf("early message: calls %v, want [SQS.SendMessage]", got)
	}
}

// TestFanoutCallBudget: one event to 25 webhooks is three SendMessageBatch
// calls, and every delivery id is distinct and stable.
func TestFanoutCallBudget(t *testing.T) {
	e := newEnv(t, ms(5))
	var hooks []evs.Webhook
	for i := range 25 {
		hooks = append(hooks, evs.Webhook{ID: fmt.Sprintf("W%02d", i), Kind: evs.KindOutbound, Key: "OWH#x", Active: true, Events: []string{evs.MessageCreated}})
	}
	_, ds := event(t, strings.Repeat("<\u2028😀\uffff", 250), hooks...)
	_, again := event(t, "", hooks...)
	_ = again
	e.st.Calls.Reset()
	failed, err := e.queue.SendDeliveries(context.Background(), ds)
	if err != nil || len(failed) != 0 {
		t.Fatalf("send: %v %v", failed, err)
	}
	if got := e.st.Calls.Calls(); len(got) != 3 {
		t.Fatalf("calls %v, want 3 SendMessageBatch for 25 deliveries", got)
	}
	seen := map[string]bool{}
	for _, d := range ds {
		if seen[d.ID] {
			t.Fatalf("delivery id %s repeated", d.ID)
		}
		seen[d.ID] = true
	}
}

// TestFailingWebhookDisabled: a failure that extends a streak of 24 hours
// and ten attempts disables the webhook ("failing"); a longer streak of
// less than 24 hours does not.
func TestFailingWebhookDisabled(t *testing.T) {
	for _, c := range []struct {
		name     string
		since    time.Duration
		attempts string
		disabled bool
	}{
		{"24 h and the tenth attempt", 25 * time.Hour, "9", true},
		{"24 h, ninth attempt", 25 * time.Hour, "8", false},
		{"many attempts within 24 h", 23 * time.Hour, "40", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil) // one attempt: no retry
			rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
			since := time.Now().Add(-c.since).UTC().Format("2006-01-02T15:04:05.000000000Z")
			w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, map[string]types.AttributeValue{
				"failing_since": &types.AttributeValueMemberS{Value: since}, "failed_attempts": &types.AttributeValueMemberN{Value: c.attempts}})
			_, ds := event(t, "failing", w)
			if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
				t.Fatal(err)
			}
			e.run(t, func() bool {
				it := e.webhookItem(t, w)
				return it["disabled_reason"] != nil || (e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e))
			})
			it := e.webhookItem(t, w)
			got := it["disabled_reason"] != nil && it["disabled_reason"].(*types.AttributeValueMemberS).Value == "failing" &&
				!it["active"].(*types.AttributeValueMemberBOOL).Value
			if got != c.disabled {
				t.Fatalf("disabled %v (reason %v), want %v", got, it["disabled_reason"], c.disabled)
			}
		})
	}
}

// TestBlockedAndDeleted: a target outside the allow list fails at once
// with target_not_allowed and no connection; a deleted webhook's delivery
// is dropped without a record.
func TestBlockedAndDeleted(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5))
	trap, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trap.Close()
	var conns sync.WaitGroup
	accepted := 0
	conns.Add(1)
	go func() {
		defer conns.Done()
		for {
			c, err := trap.Accept()
			if err != nil {
				return
			}
			accepted++
			c.Close()
		}
	}()
	blocked := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", "http://"+trap.Addr().String()+"/", nil)
	deleted := evs.Webhook{ID: "01JD9N16Z0PJ2VVEYQE79NT2QV", Kind: evs.KindOutbound, Key: "OWH#2026-11-22T10:00:00.000000000Z#01JD9N16Z0PJ2VVEYQE79NT2QV",
		Active: true, Events: []string{evs.MessageCreated}}
	_, ds := event(t, "blocked", blocked, deleted)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e) })
	r := e.record(t, ds[0])
	if r.Error != attempt.ErrTargetNotAllowed || r.Attempts != 1 || r.ResponseStatus != 0 {
		t.Fatalf("record %+v, want one attempt failed with target_not_allowed", r)
	}
	if r := e.record(t, ds[1]); r.ID != "" {
		t.Fatalf("deleted webhook's delivery recorded %+v, want dropped", r)
	}
	trap.Close()
	conns.Wait()
	if accepted != 0 {
		t.Fatalf("the blocked target got %d connections", accepted)
	}
}

// TestLargestEnvelopeRoundTrips: an envelope at the cap, full of the
// characters that escape to six bytes, is stored once; its deliveries to
// three webhooks refer to it (one SendMessageBatch), and each receiver gets
// it byte for byte, the event read once.
func TestLargestEnvelopeRoundTrips(t *testing.T) {
	e := newEnv(t, ms(5))
	var mu sync.Mutex
	var got [][]byte
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	worst := strings.Repeat("<\u2028😀\uffff", 10_000)
	m := evs.MessageOf(chat.Message{ID: "01JD9N15ZR836GD73VZ533YQJJ", Content: worst, CreatedAt: time.Now()})
	m.Translations = map[string]string{"fr": worst, "de": worst}
	ev := evs.Event{ID: evs.DeriveID(time.Now(), "big"), Type: evs.MessageTranslated, WorkspaceID: wsID, CreatedAt: time.Now(), Data: m}
	body, err := evs.Encode(ev)
	if err != nil || len(body) < evs.MaxBytes-64 {
		t.Fatalf("envelope of %d bytes (%v), want close to %d", len(body), err, evs.MaxBytes)
	}
	var hooks []evs.Webhook
	for i := range 3 {
		w := e.putWebhook(t, evs.KindOutbound, fmt.Sprintf("01JD9N15ZR836GD73VZ533YQJ%d", i), rv.URL, nil)
		w.Events = []string{evs.MessageTranslated}
		hooks = append(hooks, w)
	}
	if err := e.store.Relay.PutEvents(context.Background(), []evs.Event{ev}, [][]byte{body}); err != nil {
		t.Fatal(err)
	}
	ds := evs.Deliveries(ev, body, hooks, wsID)
	e.st.Calls.Reset()
	if failed, err := e.queue.SendDeliveries(context.Background(), ds); err != nil || len(failed) != 0 {
		t.Fatalf("send: %v %v", failed, err)
	}
	if n := e.st.Calls.Total(); n != 1 {
		t.Fatalf("%d calls, want 1 SendMessageBatch for 3 deliveries of a large event", n)
	}
	e.st.Calls.Reset()
	e.run(t, func() bool { return len(rv.all()) == 3 && queueEmpty(t, e) })
	mu.Lock()
	defer mu.Unlock()
	_ = got
	for _, h := range rv.all() {
		if string(h.body) != string(body) {
			t.Fatalf("receiver got %d bytes, want the %d-byte envelope exactly", len(h.body), len(body))
		}
	}
	reads := 0
	for _, c := range e.st.Calls.Calls() {
		if c == "DynamoDB.GetItem" {
			reads++
		}
	}
	if reads > 6 { // three webhooks' settings and at most one read of the event per batch
		t.Fatalf("%d GetItem calls, want the event read once per batch", reads)
	}
}

// TestReenabledWebhookGetsOnlyNewEvents: a webhook re-enabled (reenabled_at,
// which webhook management sets) is sent only events from then on: a queued
// delivery of an older event is dropped, a newer event is delivered.
func TestReenabledWebhookGetsOnlyNewEvents(t *testing.T) {
	e := newEnv(t, ms(5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	const id = "01JD9N15ZR836GD73VZ533YQJJ"
	placeholder := evs.Webhook{ID: id, Kind: evs.KindOutbound, Key: "OWH#2026-11-22T10:00:00.000000000Z#" + id,
		Active: true, Events: []string{evs.MessageCreated}}
	_, before := event(t, "from before the re-enable", placeholder)
	time.Sleep(5 * time.Millisecond)
	reenabled := time.Now().UTC()
	w := e.putWebhook(t, evs.KindOutbound, id, rv.URL,
		map[string]types.AttributeValue{"reenabled_at": &types.AttributeValueMemberS{Value: reenabled.Format(time.RFC3339Nano)}})
	time.Sleep(5 * time.Millisecond)
	_, after := event(t, "after the re-enable", w)
	if _, err := e.queue.SendDeliveries(context.Background(), append(before, after...)); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, after[0]).Status == delivery.StatusSucceeded && queueEmpty(t, e) })
	hits := rv.all()
	if len(hits) != 1 || hits[0].header.Get("X-Service-Delivery") != after[0].ID {
		t.Fatalf("receiver got %d deliveries, want only the newer event's %s", len(hits), after[0].ID)
	}
	if r := e.record(t, before[0]); r.ID != "" {
		t.Fatalf("the older event's delivery was recorded %+v, want dropped", r)
	}
}
