package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// TestSampleEvent runs events/translation-sweep.json through the real
// handler: a message stored an hour ago and never translated is queued
// again; one stored now is not due yet.
func TestSampleEvent(t *testing.T) {
	st, d := wiringtest.Demo(t)
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

	h, err := handler(context.Background())
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
	if _, err := handler(context.Background()); err == nil {
		t.Fatalf("handler without %s: no error", awsenv.EnvQueueURL)
	}
}
