package sqsqueue

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/events"
)

// MaxDelay is the longest SQS delays a message (DelaySeconds 900).
const MaxDelay = 900 * time.Second

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
		secs = int32(min((delay+time.Second-1)/time.Second, MaxDelay/time.Second))
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

// IsQueue returns whether a record's eventSourceARN names the queue at
// url. A queue's URL and ARN are compared by account and queue name, which
// both hold (https://sqs.<region>.amazonaws.com/<account>/<name>,
// arn:aws:sqs:<region>:<account>:<name>; a local endpoint's URL keeps the
// same path). A malformed url ("" included) is no queue, and a malformed
// ARN names none.
func IsQueue(url string) func(eventSourceARN string) bool {
	want, ok := urlQueue(url)
	return func(arn string) bool {
		q, qok := arnQueue(arn)
		return ok && qok && q == want
	}
}

// queueID is a queue's account and name.
type queueID struct{ account, name string }

// urlQueue reads a queue URL's last two path segments.
func urlQueue(raw string) (queueID, bool) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return queueID{}, false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[len(parts)-1] == "" || parts[len(parts)-2] == "" {
		return queueID{}, false
	}
	return queueID{account: parts[len(parts)-2], name: parts[len(parts)-1]}, true
}

// arnQueue reads arn:<partition>:sqs:<region>:<account>:<name>.
func arnQueue(arn string) (queueID, bool) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[4] == "" || parts[5] == "" {
		return queueID{}, false
	}
	return queueID{account: parts[4], name: parts[5]}, true
}
