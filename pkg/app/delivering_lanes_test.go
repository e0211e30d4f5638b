package app_test

import (
	"testing"

	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// TestLanesBySourceARN: the delivery function tells its lanes apart by the
// record's eventSourceARN, which names the queue as an ARN while the
// function is configured with URLs: the local stack's own queues (moto's
// URLs and ARNs) and AWS's forms are matched by account and name, and
// anything else is neither lane.
func TestLanesBySourceARN(t *testing.T) {
	st := stacktest.New(t)
	res := st.Resources
	lanes := delivering.Lanes(delivering.Queues{Fast: res.Queues["DeliveryQueue"], Slow: res.Queues["SlowDeliveryQueue"], Wait: res.Queues["DeliveryWaitQueue"]})
	aws := delivering.Lanes(delivering.Queues{Fast: "https://sqs.eu-west-1.amazonaws.com/123456789012/chat-DeliveryQueue-AbC",
		Slow: "https://sqs.eu-west-1.amazonaws.com/123456789012/chat-SlowDeliveryQueue-XyZ",
		Wait: "https://sqs.eu-west-1.amazonaws.com/123456789012/chat-DeliveryWaitQueue-Qrs"})
	one := delivering.Lanes(delivering.Queues{Fast: res.Queues["DeliveryQueue"]})
	for _, tc := range []struct {
		name  string
		lanes func(string) delivery.Lane
		arn   string
		want  delivery.Lane
	}{
		{"local delivery queue", lanes, res.QueueARNs["DeliveryQueue"], delivery.LaneFast},
		{"local slow queue", lanes, res.QueueARNs["SlowDeliveryQueue"], delivery.LaneSlow},
		{"local wait queue", lanes, res.QueueARNs["DeliveryWaitQueue"], delivery.LaneWait},
		{"AWS wait queue", aws, "arn:aws:sqs:eu-west-1:123456789012:chat-DeliveryWaitQueue-Qrs", delivery.LaneWait},
		{"local dead-letter queue", lanes, res.QueueARNs["DeliveryDLQ"], delivery.LaneOther},
		{"no ARN (a direct invocation)", lanes, "", delivery.LaneOther},
		{"AWS delivery queue", aws, "arn:aws:sqs:eu-west-1:123456789012:chat-DeliveryQueue-AbC", delivery.LaneFast},
		{"AWS slow queue", aws, "arn:aws:sqs:eu-west-1:123456789012:chat-SlowDeliveryQueue-XyZ", delivery.LaneSlow},
		{"same name, other account", aws, "arn:aws:sqs:eu-west-1:210987654321:chat-SlowDeliveryQueue-XyZ", delivery.LaneOther},
		{"a name that only starts alike", aws, "arn:aws:sqs:eu-west-1:123456789012:chat-DeliveryQueue-AbC-2", delivery.LaneOther},
		{"not an SQS ARN", aws, "arn:aws:sns:eu-west-1:123456789012:chat-DeliveryQueue-AbC", delivery.LaneOther},
		{"without a slow lane, its queue is other", one, res.QueueARNs["SlowDeliveryQueue"], delivery.LaneOther},
		{"without a slow lane, the delivery queue is fast", one, res.QueueARNs["DeliveryQueue"], delivery.LaneFast},
	} {
		if got := tc.lanes(tc.arn); got != tc.want {
			t.Errorf("%s: %q is lane %v, want %v", tc.name, tc.arn, got, tc.want)
		}
	}
}

// TestQueueDelayIsSQSs: the deliverer's longest wait on the queue is the
// longest delay the SQS adapter sends.
func TestQueueDelayIsSQSs(t *testing.T) {
	if delivery.MaxQueueDelay != sqsqueue.MaxDelay {
		t.Fatalf("delivery.MaxQueueDelay %v, sqsqueue.MaxDelay %v", delivery.MaxQueueDelay, sqsqueue.MaxDelay)
	}
}
