// Package failurequeue is the SQS adapter of RelayFailureQueue, the outbox
// relay's on-failure destination that a replay reads (relay.FailureQueue).
// It is apart from package sqsqueue so that the functions that send jobs
// and deliveries do not link the relay.
package failurequeue

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/relay"
)

// Queue is RelayFailureQueue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns the failure queue at url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

var _ relay.FailureQueue = (*Queue)(nil)

// replayVisibility hides a received failure record from other readers
// while a replay handles it; one it leaves comes back after it.
const replayVisibility = 120

// Receive implements relay.FailureQueue with one ReceiveMessage of up to
// ten messages, without waiting. Errors: EUnavailable.
func (q *Queue) Receive(ctx context.Context) ([]relay.Received, error) {
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: &q.url, MaxNumberOfMessages: 10, VisibilityTimeout: replayVisibility,
	})
	if err != nil {
		return nil, chat.Unavailable(fmt.Errorf("failurequeue: receive from %s: %w", q.url, err))
	}
	recs := make([]relay.Received, len(out.Messages))
	for i, m := range out.Messages {
		recs[i] = relay.Received{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), Handle: aws.ToString(m.ReceiptHandle)}
	}
	return recs, nil
}

// Delete implements relay.FailureQueue with one DeleteMessage.
// Errors: EUnavailable.
func (q *Queue) Delete(ctx context.Context, handle string) error {
	if _, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url, ReceiptHandle: &handle}); err != nil {
		return chat.Unavailable(fmt.Errorf("failurequeue: delete from %s: %w", q.url, err))
	}
	return nil
}
