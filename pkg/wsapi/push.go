package wsapi

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Pusher is realtime.Pusher's batch method.
type Pusher interface {
	PushAll(ctx context.Context, changes []realtime.Change) (int, error)
}

// Push serves RealtimePushFunction: the table's stream, filtered to message
// inserts and modifications and channel room items (template.yaml).
type Push struct {
	Pusher Pusher
}

// HandleStream pushes the batch's changes in order (realtime.PushAll: each
// channel's audience read once). The first record whose change could not
// be pushed (the connection Query or the translation read failed: nothing
// was sent for it; or the push stopped before the function's deadline and
// could not hand the rest to the fan-out workers, realtime.ErrUnfinished)
// and every record after it are reported as batch item failures, so Lambda
// retries from it; records already pushed before it are not pushed again.
// The handler itself returns before its deadline: a timeout would fail the
// whole batch, records already pushed included.
func (p *Push) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var (
		changes []realtime.Change
		records []int // index in ev.Records of each change
	)
	for i, rec := range ev.Records {
		c, ok := connstore.RealtimeChange(rec.EventName, dynamo.FromLambdaImage(rec.Change.OldImage), dynamo.FromLambdaImage(rec.Change.NewImage))
		if !ok {
			continue
		}
		c.Key = rec.EventID
		changes, records = append(changes, c), append(records, i)
	}
	done, err := p.Pusher.PushAll(ctx, changes)
	if err == nil {
		return events.DynamoDBEventResponse{}, nil
	}
	first := records[done]
	if errors.Is(err, realtime.ErrUnfinished) {
		slog.WarnContext(ctx, "realtime: push unfinished before the deadline; retried from this record", "records_left", len(ev.Records)-first, "error", err.Error())
	} else {
		slog.ErrorContext(ctx, "realtime: push failed", "error", err.Error())
	}
	var resp events.DynamoDBEventResponse
	for _, r := range ev.Records[first:] {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
	}
	return resp, nil
}

// JobRunner is realtime.Pusher's fan-out method.
type JobRunner interface {
	RunJob(ctx context.Context, job realtime.Job) error
}

// Fanout serves RealtimeFanoutFunction: the fan-out queue's push jobs.
type Fanout struct {
	Runner JobRunner
}

// HandleSQS runs each job of the batch, one after another (each sends to
// its connections concurrently). A job whose rest could not be queued is a
// batch item failure, run again after the queue's visibility timeout; a
// body that is not a job is logged and dropped (retrying cannot help).
func (f *Fanout) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		job, err := sqsqueue.DecodePushJob(rec.Body)
		if err != nil {
			slog.ErrorContext(ctx, "realtime: push job dropped", "message_id", rec.MessageId, "error", err.Error())
			continue
		}
		if err := f.Runner.RunJob(ctx, job); err != nil {
			slog.ErrorContext(ctx, "realtime: push job failed; retried", "job", job.Key, "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}
