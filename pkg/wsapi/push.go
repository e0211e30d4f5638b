package wsapi

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/realtime"
)

// Pusher is realtime.Pusher's one method.
type Pusher interface {
	Push(ctx context.Context, c realtime.Change) error
}

// Push serves RealtimePushFunction: the table's stream, filtered to message
// inserts and modifications and channel room items (template.yaml).
type Push struct {
	Pusher Pusher
}

// HandleStream pushes each record's change in order. The first record
// whose change could not be pushed (the connection Query or the
// translation read failed: nothing was sent for it; or the push stopped
// before the function's deadline, realtime.ErrUnfinished) and every record
// after it are reported as batch item failures, so Lambda retries from it;
// records already pushed before it are not pushed again. The handler
// itself returns before its deadline: a timeout would fail the whole
// batch, records already pushed included.
func (p *Push) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	for i, rec := range ev.Records {
		c, ok := connstore.RealtimeChange(rec.EventName, dynamo.FromLambdaImage(rec.Change.OldImage), dynamo.FromLambdaImage(rec.Change.NewImage))
		if !ok {
			continue
		}
		c.Key = rec.EventID
		err := p.Pusher.Push(ctx, c)
		if err == nil {
			continue
		}
		if errors.Is(err, realtime.ErrUnfinished) {
			slog.WarnContext(ctx, "realtime: push unfinished before the deadline; retried from this record", "records_left", len(ev.Records)-i, "error", err.Error())
		} else {
			slog.ErrorContext(ctx, "realtime: push failed", "error", err.Error())
		}
		var resp events.DynamoDBEventResponse
		for _, r := range ev.Records[i:] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
		}
		return resp, nil
	}
	return events.DynamoDBEventResponse{}, nil
}
