package sqsqueue

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/relay"
)

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
		return nil, chat.Unavailable(fmt.Errorf("sqsqueue: receive from %s: %w", q.url, err))
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
		return chat.Unavailable(fmt.Errorf("sqsqueue: delete from %s: %w", q.url, err))
	}
	return nil
}
