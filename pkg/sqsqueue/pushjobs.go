package sqsqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/realtime"
)

var _ realtime.JobQueue = (*Queue)(nil)

// Enqueue implements realtime.JobQueue (the fan-out queue) with one
// SendMessageBatch per ten jobs (fewer when their bodies pass MaxBatchBytes
// together), each delayed by delay in whole seconds, rounded up, at most
// 900. A body is JSON with the characters SQS refuses escaped. Errors: a
// job whose body SQS would refuse (realtime.ErrJobTooLarge past
// MaxBatchBytes), before anything is sent; a request or an entry that
// failed (some jobs may have been queued: the caller queues them all
// again).
func (q *Queue) Enqueue(ctx context.Context, jobs []realtime.Job, delay time.Duration) error {
	var secs int32
	if delay > 0 {
		secs = int32(min((delay+time.Second-1)/time.Second, MaxDelay/time.Second))
	}
	bodies := make([]string, len(jobs))
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("sqsqueue: encode push job %s: %w", j.Key, err)
		}
		bodies[i] = messages.EscapeForQueue(string(b))
		if len(bodies[i]) > MaxBatchBytes {
			return fmt.Errorf("sqsqueue: push job %s: %w (%d bytes)", j.Key, realtime.ErrJobTooLarge, len(bodies[i]))
		}
		if err := CheckBody(bodies[i]); err != nil {
			return fmt.Errorf("sqsqueue: push job %s: %w", j.Key, err)
		}
	}
	var (
		batch []types.SendMessageBatchRequestEntry
		size  int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: batch})
		batch, size = nil, 0
		switch {
		case err != nil:
			return fmt.Errorf("sqsqueue: send push jobs: %w", err)
		case len(out.Failed) > 0:
			f := out.Failed[0]
			return fmt.Errorf("sqsqueue: send push jobs: %d refused, first %s: %s", len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
		}
		return nil
	}
	for i, body := range bodies {
		if len(batch) == maxBatch || size+len(body) > MaxBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		batch = append(batch, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(body), DelaySeconds: secs})
		size += len(body)
	}
	return flush()
}

// DecodePushJob parses a fan-out queue body. Errors: a body that is not a
// job (poison: retrying it cannot help).
func DecodePushJob(body string) (realtime.Job, error) {
	var j realtime.Job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return realtime.Job{}, fmt.Errorf("sqsqueue: push job body: %w", err)
	}
	if j.Key == "" || j.ChannelID == "" || len(j.Data) == 0 || len(j.Connections) == 0 {
		return realtime.Job{}, fmt.Errorf("sqsqueue: push job body: key, channel_id, data and connections are required")
	}
	return j, nil
}
