package motoserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// setClock stops the proxy's clock at now (or restarts it, for a zero now).
func setClock(l *limiter, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = func() time.Time { return now }
	if now.IsZero() {
		l.now = time.Now
	}
}

func createQueue(t *testing.T, q *sqs.Client) string {
	t.Helper()
	out, err := q.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(uniqueName("limits"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	return aws.ToString(out.QueueUrl)
}

func sendN(t *testing.T, q *sqs.Client, url string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m")}); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

func receive(t *testing.T, q *sqs.Client, url string, most, wait int32) ([]sqstypes.Message, error) {
	t.Helper()
	out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url,
		MaxNumberOfMessages: most, WaitTimeSeconds: wait, VisibilityTimeout: 600})
	if err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// TestVisibilityEndsWithin12HoursOfTheReceive stops the proxy's clock at
// the receive: a visibility of exactly 12 hours is accepted (moto, which
// counts from the send, refused it), 12 hours and a second is refused; 100
// seconds later, 43,100 seconds are accepted and 43,101 refused, alone and
// in a batch.
func TestVisibilityEndsWithin12HoursOfTheReceive(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	q := sqs.NewFromConfig(config(srv.URL, "local"))
	url := createQueue(t, q)
	sendN(t, q, url, 3)
	l := limitsOf(srv)
	clock := time.Now()
	setClock(l, clock)
	defer setClock(l, time.Time{})
	msgs, err := receive(t, q, url, 3, 0)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("receive: %d messages, %v; want 3", len(msgs), err)
	}
	change := func(m sqstypes.Message, seconds int32) error {
		_, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: seconds})
		return err
	}
	if err := change(msgs[0], 43200); err != nil {
		t.Fatalf("12 h from the receive: %v", err)
	}
	err = change(msgs[0], 43201)
	if code := errorCode(err); code != "InvalidParameterValue" || !strings.Contains(err.Error(), "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]") {
		t.Fatalf("12 h and 1 s from the receive: got %v, want InvalidParameterValue", err)
	}
	setClock(l, clock.Add(100*time.Second))
	if err := change(msgs[1], 43100); err != nil {
		t.Fatalf("12 h from the receive, 100 s after it: %v", err)
	}
	if err := change(msgs[1], 43101); errorCode(err) != "InvalidParameterValue" {
		t.Fatalf("12 h and 1 s from the receive, 100 s after it: got %v, want InvalidParameterValue", err)
	}
	out, err := q.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []sqstypes.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("edge"), ReceiptHandle: msgs[2].ReceiptHandle, VisibilityTimeout: 43100},
		{Id: aws.String("past"), ReceiptHandle: msgs[1].ReceiptHandle, VisibilityTimeout: 43101},
	}})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(out.Successful) != 1 || aws.ToString(out.Successful[0].Id) != "edge" {
		t.Fatalf("batch successes: %+v, want only edge", out.Successful)
	}
	if len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "past" || aws.ToString(out.Failed[0].Code) != "InvalidParameterValue" || !out.Failed[0].SenderFault {
		t.Fatalf("batch failures: %+v, want past (InvalidParameterValue, sender's fault)", out.Failed)
	}
	// All refused: the proxy answers alone.
	out, err = q.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []sqstypes.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("past"), ReceiptHandle: msgs[1].ReceiptHandle, VisibilityTimeout: 43101}}})
	if err != nil || len(out.Failed) != 1 || len(out.Successful) != 0 {
		t.Fatalf("batch of one refused entry: %+v, %v; want one failure", out, err)
	}
}

// TestDelaySecondsAtMost900 sends 900 and 901 seconds, alone and in a batch.
func TestDelaySecondsAtMost900(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	q := sqs.NewFromConfig(config(srv.URL, "local"))
	url := createQueue(t, q)
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"), DelaySeconds: 900}); err != nil {
		t.Fatalf("DelaySeconds 900: %v", err)
	}
	_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"), DelaySeconds: 901})
	if errorCode(err) != "InvalidParameterValue" {
		t.Fatalf("DelaySeconds 901: got %v, want InvalidParameterValue", err)
	}
	out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("edge"), MessageBody: aws.String("m"), DelaySeconds: 900},
		{Id: aws.String("past"), MessageBody: aws.String("m"), DelaySeconds: 901},
	}})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(out.Successful) != 1 || aws.ToString(out.Successful[0].Id) != "edge" {
		t.Fatalf("batch successes: %+v, want only edge", out.Successful)
	}
	want := "Value 901 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
	if len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "past" || aws.ToString(out.Failed[0].Message) != want || !out.Failed[0].SenderFault {
		t.Fatalf("batch failures: %+v, want past: %q", out.Failed, want)
	}
}

// TestInFlightLimit gives a queue a limit of 3 messages in flight: a
// receive gets no more than the limit leaves, a short poll at the limit
// answers OverLimit, a long poll waits and gets nothing, and a deleted
// message makes room again.
func TestInFlightLimit(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	q := sqs.NewFromConfig(config(srv.URL, "local"))
	url := createQueue(t, q)
	if err := SetLimits(ctx, srv.URL, Override{Queue: url, InFlight: 3}); err != nil {
		t.Fatal(err)
	}
	sendN(t, q, url, 5)
	msgs, err := receive(t, q, url, 2, 0)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("first receive: %d messages, %v; want 2", len(msgs), err)
	}
	more, err := receive(t, q, url, 10, 0)
	if err != nil || len(more) != 1 {
		t.Fatalf("receive of 10 with room for 1: %d messages, %v; want 1", len(more), err)
	}
	_, err = receive(t, q, url, 10, 0)
	var over *sqstypes.OverLimit
	if !errors.As(err, &over) {
		t.Fatalf("short poll at the limit: got %v, want OverLimit", err)
	}
	start := time.Now()
	none, err := receive(t, q, url, 10, 1)
	if err != nil || len(none) != 0 {
		t.Fatalf("long poll at the limit: %d messages, %v; want none and no error", len(none), err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("long poll at the limit answered after %v, want it to wait its 1 s", waited)
	}
	if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	again, err := receive(t, q, url, 10, 0)
	if err != nil || len(again) != 1 {
		t.Fatalf("receive after a delete: %d messages, %v; want 1", len(again), err)
	}
	// Another queue keeps the default limit.
	other := createQueue(t, q)
	sendN(t, q, other, 5)
	if got, err := receive(t, q, other, 10, 0); err != nil || len(got) != 5 {
		t.Fatalf("another queue: %d messages, %v; want 5", len(got), err)
	}
}
