// Package sqsqueue adapts Amazon SQS to the translation queue: it sends
// translation jobs in batches. It receives its *sqs.Client; it never builds
// one.
package sqsqueue

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// maxBatch is SQS's limit of entries per SendMessageBatch.
const maxBatch = 10

// Queue is one SQS queue.
type Queue struct {
	client *sqs.Client
	url    string
}

// New returns the queue at url.
func New(client *sqs.Client, url string) *Queue { return &Queue{client: client, url: url} }

// SendJobs sends jobs with one SendMessageBatch per ten, and returns the
// indexes of the jobs that were not sent. A request that failed as a whole
// marks all of its jobs failed; err is set only when nothing could be
// attempted.
func (q *Queue) SendJobs(ctx context.Context, jobs []messages.Job) (failed []int, err error) {
	for start := 0; start < len(jobs); start += maxBatch {
		end := min(start+maxBatch, len(jobs))
		entries := make([]types.SendMessageBatchRequestEntry, 0, end-start)
		for i := start; i < end; i++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{
				Id:          aws.String(strconv.Itoa(i)),
				MessageBody: aws.String(jobs[i].Encode()),
				MessageAttributes: map[string]types.MessageAttributeValue{
					"message_id": {DataType: aws.String("String"), StringValue: aws.String(jobs[i].MessageID)},
				},
			})
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
		if err != nil {
			for i := start; i < end; i++ {
				failed = append(failed, i)
			}
			if start == 0 && end == len(jobs) {
				return failed, chat.Unavailable(fmt.Errorf("sqsqueue: send batch: %w", err))
			}
			continue
		}
		for _, f := range out.Failed {
			if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil {
				failed = append(failed, i)
			}
		}
	}
	return failed, nil
}
