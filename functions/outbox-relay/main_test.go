package main

import (
	"context"
	"os"
	"testing"

	"github.com/chatbridge/chat/pkg/awsenv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/messages"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	h, err := handler(context.Background())
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
	broken, err := handler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = broken(context.Background(), ev)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != ev.Records[0].Change.SequenceNumber {
		t.Fatalf("failed send reported as %+v, want the record's sequence number", resp)
	}
}
