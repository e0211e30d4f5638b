// Package sqsqueue adapts Amazon SQS to the translation queue: it sends
// translation jobs in batches, and reads and deletes the records of the
// relay's failure queue. It receives its *sqs.Client; it never builds one.
package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// SQS's limits on SendMessageBatch.
const (
	// maxBatch is the most entries in one request.
	maxBatch = 10
	// MaxBatchBytes bounds the request's payload, the sum of its entries'
	// bodies and message attributes (names, data types and values); it is
	// also the most one message may hold. 256 KiB is the long-standing
	// limit; a queue that allows more still accepts this.
	MaxBatchBytes = 256 << 10
)

// attrMessageID is the message attribute naming the job's message, for
// inspecting a queue without decoding bodies.
const attrMessageID = "message_id"

// Queue is one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns the queue at url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// ErrRefusedBody is the cause of a job that was never sent because its
// body breaks SQS's rules; errors.Is finds it in SendResult.Poison.
var ErrRefusedBody = errors.New("sqsqueue: body refused before sending")

// CheckBody returns why SQS would refuse body, or nil: it must be valid
// UTF-8 of the characters SQS allows (chat.QueueSafe) and at most
// MaxBatchBytes bytes. Every body is checked before it is sent, so that
// no refused character or size ever reaches SQS.
func CheckBody(body string) error {
	if len(body) > MaxBatchBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrRefusedBody, len(body), MaxBatchBytes)
	}
	if !utf8.ValidString(body) {
		return fmt.Errorf("%w: invalid UTF-8", ErrRefusedBody)
	}
	for i, r := range body {
		if !chat.QueueSafe(r) {
			return fmt.Errorf("%w: character U+%04X at byte %d", ErrRefusedBody, r, i)
		}
	}
	return nil
}

// entrySize is what an entry adds to a request's payload.
func entrySize(body, messageID string) int {
	return len(body) + len(attrMessageID) + len("String") + len(messageID)
}

// SendJobs sends jobs with one SendMessageBatch per ten (more only if ten
// bodies passed MaxBatchBytes together, which jobs that carry ids never
// do). A job whose body CheckBody refuses is never sent; it is poison, as
// is an entry SQS refused as the sender's fault. An entry that failed
// otherwise, or a request that failed as a whole (throttling, an outage,
// a missing queue or permission: the queue's trouble, not the job's), is to
// be retried. err is set only when nothing could be sent at all.
func (q *Queue) SendJobs(ctx context.Context, jobs []messages.Job) (messages.SendResult, error) {
	var res messages.SendResult
	poison := func(i int, err error) {
		if res.Poison == nil {
			res.Poison = map[int]error{}
		}
		res.Poison[i] = err
	}
	var (
		batch     []types.SendMessageBatchRequestEntry
		indexes   []int
		size      int
		attempted int
		lastErr   error
	)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		attempted += len(batch)
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: batch})
		if err != nil {
			res.Retry = append(res.Retry, indexes...)
			lastErr = err
		} else {
			for _, f := range out.Failed {
				i, err := strconv.Atoi(aws.ToString(f.Id))
				if err != nil {
					continue
				}
				if f.SenderFault {
					poison(i, fmt.Errorf("sqsqueue: refused: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message)))
				} else {
					res.Retry = append(res.Retry, i)
				}
			}
		}
		batch, indexes, size = nil, nil, 0
	}
	for i, job := range jobs {
		body := job.Encode()
		if err := CheckBody(body); err != nil {
			poison(i, err)
			continue
		}
		n := entrySize(body, job.MessageID)
		if n > MaxBatchBytes {
			poison(i, fmt.Errorf("%w: entry of %d bytes", ErrRefusedBody, n))
			continue
		}
		if len(batch) == maxBatch || size+n > MaxBatchBytes {
			flush()
		}
		batch = append(batch, types.SendMessageBatchRequestEntry{
			Id:          aws.String(strconv.Itoa(i)),
			MessageBody: aws.String(body),
			MessageAttributes: map[string]types.MessageAttributeValue{
				attrMessageID: {DataType: aws.String("String"), StringValue: aws.String(job.MessageID)},
			},
		})
		indexes = append(indexes, i)
		size += n
	}
	flush()
	if lastErr != nil && len(res.Retry) == attempted && attempted == len(jobs) {
		return res, chat.Unavailable(fmt.Errorf("sqsqueue: send batch: %w", lastErr))
	}
	return res, nil
}
