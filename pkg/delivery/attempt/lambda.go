package attempt

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/delivery"
	evs "github.com/chatbridge/chat/pkg/events"
)

// Parallel is how many attempts of one batch run at once.
const Parallel = 10

// HandleSQS is the Lambda handler of the delivery queue: one attempt per
// record, in parallel. A retry is a message of its own, already sent, so a
// record is reported as a batch item failure only when its attempt could
// not be made (or its retry not sent): the queue then hands it out again
// after its visibility timeout, and that receive costs the schedule
// nothing. A record that is not a delivery is logged and dropped. Each
// record's lane is its eventSourceARN's (LaneOf): the function has an
// event source on each lane's queue.
func (d *Deliverer) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	lanes := map[delivery.Lane]int{}
	moved := 0
	var (
		mu   sync.Mutex
		resp events.SQSEventResponse
		wg   sync.WaitGroup
		sem  = make(chan struct{}, Parallel)
	)
	fail := func(id string) {
		mu.Lock()
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		mu.Unlock()
	}
	for _, rec := range ev.Records {
		del, err := evs.UnmarshalQueue(rec.Body)
		if err != nil {
			slog.ErrorContext(ctx, "delivery: poison message dropped", "message_id", rec.MessageId, "error", err.Error())
			continue
		}
		m := delivery.Message{Delivery: del, Lane: d.lane(rec.EventSourceARN)}
		lanes[m.Lane]++
		receives := rec.Attributes["ApproximateReceiveCount"]
		wg.Add(1)
		sem <- struct{}{}
		go func(id string) {
			defer func() { <-sem; wg.Done() }()
			res, err := d.Handle(ctx, m)
			if err != nil {
				slog.WarnContext(ctx, "delivery: attempt not made", "delivery_id", m.Delivery.ID, "receives", receives, "error", err.Error())
			}
			if err != nil || !res.Done {
				fail(id)
			}
			if res.Moved {
				mu.Lock()
				moved++
				mu.Unlock()
			}
		}(rec.MessageId)
	}
	wg.Wait()
	slog.InfoContext(ctx, "batch", "source", "delivery-queue", "records", len(ev.Records), "fast", lanes[delivery.LaneFast], "slow", lanes[delivery.LaneSlow],
		"other", lanes[delivery.LaneOther], "moved", moved, "failures", len(resp.BatchItemFailures), "duration_ms", time.Since(start).Milliseconds())
	return resp, nil
}

// lane is the lane of a record from the queue named by arn.
func (d *Deliverer) lane(arn string) delivery.Lane {
	if d.LaneOf == nil {
		return delivery.LaneOther
	}
	return d.LaneOf(arn)
}
