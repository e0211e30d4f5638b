// Package relay is the transactional outbox's relay: it turns the inserts
// of message items on the table's stream into translation jobs on the
// queue. A message item and the request that accepted it commit in one
// transaction; DynamoDB Streams keeps every insert for 24 hours and Lambda
// retries a record until the relay reports it sent. A record the queue
// refuses for good is set aside rather than retried, so that it never holds
// back its shard; its message keeps the marker that the sweep (Sweep)
// re-queues from, as it does for any message the relay never got to
// (docs/delivery.md).
package relay

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
)

// Sender puts jobs on the translation queue.
type Sender interface {
	// SendJobs sends jobs and says which were not sent: to be retried, or
	// poison (refused for good). err is set when nothing could be sent.
	SendJobs(ctx context.Context, jobs []messages.Job) (messages.SendResult, error)
}

// Entry is one stream record that holds a message.
type Entry struct {
	// ID identifies the record to the caller (its sequence number).
	ID      string
	Message chat.Message
}

// Relay forwards messages to the queue.
type Relay struct {
	Queue Sender
	// Events, when set, also turns the stream's changes into webhook
	// deliveries (fanout.go): the one stream consumer does both, as a shard
	// allows only two concurrent readers.
	Events *Fanout
}

// Forward sends the entries' jobs and returns the ids of the entries that
// were not sent, to be retried. An entry whose job the queue refuses for
// good is logged as poison and not returned: retrying it would only block
// the entries behind it. Its message is still marked untranslated, so the
// sweep tries it again later, a bounded number of times.
func (r *Relay) Forward(ctx context.Context, entries []Entry) []string {
	if len(entries) == 0 {
		return nil
	}
	jobs := make([]messages.Job, len(entries))
	for i, e := range entries {
		jobs[i] = messages.JobOf(e.Message)
	}
	res, err := r.Queue.SendJobs(ctx, jobs)
	if err != nil {
		slog.WarnContext(ctx, "relay: send jobs", "error", err.Error(), "jobs", len(jobs))
	}
	for i, cause := range res.Poison {
		slog.ErrorContext(ctx, "relay: poison record set aside; the sweep will retry its message",
			"sequence_number", entries[i].ID, "message_id", jobs[i].MessageID, "channel_id", jobs[i].ChannelID,
			"error", cause.Error())
	}
	ids := make([]string, 0, len(res.Retry))
	for _, i := range res.Retry {
		ids = append(ids, entries[i].ID)
	}
	return ids
}

// HandleStream is the Lambda handler of the table's stream. Records that
// are not message inserts are skipped (the event source mapping's filter
// already drops them in AWS). Failed records are reported as batch item
// failures, so that Lambda retries from the first of them.
func (r *Relay) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	var entries []Entry
	var changes []ChangeEntry
	for _, rec := range ev.Records {
		image := dynamo.FromLambdaImage(rec.Change.NewImage)
		if r.Events != nil {
			if c, ok := dynamo.ChangeFromImage(rec.EventName, image); ok {
				changes = append(changes, ChangeEntry{ID: rec.Change.SequenceNumber, Change: c, At: rec.Change.ApproximateCreationDateTime.Time})
			}
		}
		if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue
		}
		m, ok := dynamo.MessageFromImage(image)
		if !ok {
			continue
		}
		entries = append(entries, Entry{ID: rec.Change.SequenceNumber, Message: m})
	}
	var resp events.DynamoDBEventResponse
	failed := r.Forward(ctx, entries)
	if len(changes) > 0 {
		failed = append(failed, r.Events.Send(ctx, changes)...)
	}
	seen := map[string]bool{}
	for _, id := range failed {
		if !seen[id] {
			seen[id] = true
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
		}
	}
	slog.InfoContext(ctx, "batch", "source", "table-stream", "records", len(ev.Records), "messages", len(entries),
		"changes", len(changes), "failures", len(resp.BatchItemFailures), "duration_ms", time.Since(start).Milliseconds())
	return resp, nil
}
