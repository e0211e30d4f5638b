package wsapi

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/dynamo"
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

// HandleStream pushes each record's change in order. A record whose change
// could not be read (the connection Query or the translation read failed:
// nothing was sent for it) is reported as a batch item failure, so Lambda
// retries from it; records already pushed before it are not pushed again.
func (p *Push) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	for _, rec := range ev.Records {
		c, ok := dynamo.RealtimeChange(rec.EventName, dynamo.FromLambdaImage(rec.Change.OldImage), dynamo.FromLambdaImage(rec.Change.NewImage))
		if !ok {
			continue
		}
		if err := p.Pusher.Push(ctx, c); err != nil {
			slog.ErrorContext(ctx, "realtime: push failed", "error", err.Error())
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: rec.Change.SequenceNumber}}}, nil
		}
	}
	return events.DynamoDBEventResponse{}, nil
}
