package app_test

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/app/delivering"
)

// deliverOnLanes runs handle on both delivery lanes of st, as their event
// source mappings do (reading as the delivery function), until done or 20
// s; then it stops the consumers, once the messages they finished are
// deleted and moto has ended their long polls, and reports done().
func deliverOnLanes(st *stacktest.Stack, handle localrun.SQSHandler, done func() bool) bool {
	ctx, cancel := context.WithCancel(context.Background())
	var stopped sync.WaitGroup
	q := sqs.NewFromConfig(st.As(delivering.Function))
	// Both lanes: retries of failed attempts wait on the slow one.
	for _, lane := range []string{"DeliveryQueue", "SlowDeliveryQueue"} {
		stopped.Go(func() {
			_ = localrun.ConsumeQueue(ctx, q, st.Resources.Queues[lane], st.Resources.QueueARNs[lane], 10, handle)
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for !done() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the consumer deletes what it finished
	cancel()
	stopped.Wait()
	time.Sleep(1100 * time.Millisecond) // moto ends the abandoned long poll
	return done()
}
