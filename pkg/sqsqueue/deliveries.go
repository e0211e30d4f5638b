package sqsqueue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
)

var _ delivery.Queue = (*Queue)(nil)

// SendDeliveries sends deliveries with one SendMessageBatch per ten (a
// delivery carries an envelope of at most events.InlineMax, so ten fit
// MaxBatchBytes; the size check only guards that). It returns the indexes of the deliveries not
// sent, to be retried; a body SQS would refuse is among them, logged by the
// caller. err is the last request's error.
func (q *Queue) SendDeliveries(ctx context.Context, ds []events.Delivery) ([]int, error) {
	var (
		failed  []int
		batch   []types.SendMessageBatchRequestEntry
		indexes []int
		size    int
		lastErr error
	)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: batch})
		if err != nil {
			failed, lastErr = append(failed, indexes...), err
		} else {
			for _, f := range out.Failed {
				if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil {
					failed = append(failed, i)
					lastErr = fmt.Errorf("sqsqueue: delivery refused: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
				}
			}
		}
		batch, indexes, size = nil, nil, 0
	}
	for i, d := range ds {
		body, err := d.MarshalQueue()
		if err == nil {
			err = CheckBody(body)
		}
		if err != nil {
			failed, lastErr = append(failed, i), err
			continue
		}
		if len(batch) == maxBatch || size+len(body) > MaxBatchBytes {
			flush()
		}
		batch = append(batch, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(body)})
		indexes = append(indexes, i)
		size += len(body)
	}
	flush()
	return failed, lastErr
}

// Schedule implements delivery.Queue with one SendMessage whose
// DelaySeconds is delay in whole seconds, rounded up and at most 900; a
// delay under a second is none (the message's due time is within SQS's
// granularity).
func (q *Queue) Schedule(ctx context.Context, d events.Delivery, delay time.Duration) error {
	var secs int32
	if delay >= time.Second {
		secs = int32(min((delay+time.Second-1)/time.Second, delivery.MaxQueueDelay/time.Second))
	}
	body, err := d.MarshalQueue()
	if err == nil {
		err = CheckBody(body)
	}
	if err != nil {
		return err
	}
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: &body, DelaySeconds: secs}); err != nil {
		return fmt.Errorf("sqsqueue: schedule delivery %s attempt %d: %w", d.ID, d.Attempt, err)
	}
	return nil
}

// SendDelivery sends one delivery now (a redelivery).
func (q *Queue) SendDelivery(ctx context.Context, d events.Delivery) error {
	body, err := d.MarshalQueue()
	if err == nil {
		err = CheckBody(body)
	}
	if err != nil {
		return err
	}
	if _, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: &body}); err != nil {
		return fmt.Errorf("sqsqueue: send delivery %s: %w", d.ID, err)
	}
	return nil
}
