// Package delivering builds the event delivery's functions (contract
// section 11) from the app: the delivery function and the delivery log's
// HTTP functions. It is apart from package app so that
// the other HTTP functions do not link the SQS client.
package delivering

import (
	"context"
	"math/rand/v2"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Environment of event delivery (contract section 11).
const (
	EnvDeliverySchedule  = "DELIVERY_SCHEDULE"
	EnvOutboundAllowOnly = app.EnvOutboundAllowOnly
)

// Guard reads OUTBOUND_ALLOW_CIDRS and OUTBOUND_ALLOW_ONLY
// (netguard.FromEnv).
func Guard() (*netguard.Guard, error) {
	return netguard.FromEnv(app.EnvOutboundAllowCIDRS, EnvOutboundAllowOnly)
}

// The queue adapter is the deliverer's queue.
var _ delivery.Queue = (*sqsqueue.Queue)(nil)

// Queues are the delivery function's lanes' queue URLs: the delivery
// queue (Fast), the slow lane and the wait lane ("" for none).
type Queues struct {
	Fast, Slow, Wait string
}

// Lanes returns the delivery function's lane of a record by its
// eventSourceARN: LaneFast for q.Fast's queue, LaneSlow for q.Slow's,
// LaneWait for q.Wait's (none for ""), LaneOther for any other
// (sqsqueue.IsQueue compares them).
func Lanes(q Queues) func(eventSourceARN string) delivery.Lane {
	fast, slow, wait := sqsqueue.IsQueue(q.Fast), sqsqueue.IsQueue(q.Slow), sqsqueue.IsQueue(q.Wait)
	return func(arn string) delivery.Lane {
		switch {
		case slow(arn):
			return delivery.LaneSlow
		case wait(arn):
			return delivery.LaneWait
		case fast(arn):
			return delivery.LaneFast
		}
		return delivery.LaneOther
	}
}

// Deliverer builds the delivery function's deliverer on queues (only Fast
// is required), from the environment (DELIVERY_SCHEDULE,
// OUTBOUND_ALLOW_*).
func Deliverer(a *app.App, queues Queues) (*attempt.Deliverer, error) {
	queueURL := queues.Fast
	st := deliverystore.New(a.DB, a.Table)
	sched, err := attempt.ParseSchedule(os.Getenv(EnvDeliverySchedule))
	if err != nil {
		return nil, err
	}
	g, err := Guard()
	if err != nil {
		return nil, err
	}
	q := sqs.NewFromConfig(a.AWS)
	d := &attempt.Deliverer{Store: st, Queue: sqsqueue.New(q, queueURL), Client: g.Client(),
		Schedule: sched, Now: a.Now, Rand: rand.Float64, Limiter: st, LaneOf: Lanes(queues), Marker: st, Messages: st}
	if queues.Slow != "" {
		d.Slow = sqsqueue.New(q, queues.Slow)
	}
	if queues.Wait != "" {
		d.Wait = sqsqueue.New(q, queues.Wait)
	}
	return d, nil
}

// Function is the delivery function's logical id.
const Function = "DeliverWebhooksFunction"

// FromEnv builds the delivery function's Lambda handler from its
// environment (TABLE_NAME, DELIVERY_QUEUE_URL, SLOW_DELIVERY_QUEUE_URL,
// WAIT_DELIVERY_QUEUE_URL, and Deliverer's): what its main.go runs and the tests invoke.
func FromEnv(ctx context.Context) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvDeliveryQueueURL, awsenv.EnvSlowDeliveryQueueURL, awsenv.EnvWaitDeliveryQueueURL)
	if err != nil {
		return nil, err
	}
	d, err := Deliverer(a, Queues{Fast: env[awsenv.EnvDeliveryQueueURL], Slow: env[awsenv.EnvSlowDeliveryQueueURL], Wait: env[awsenv.EnvWaitDeliveryQueueURL]})
	if err != nil {
		return nil, err
	}
	return d.HandleSQS, nil
}
