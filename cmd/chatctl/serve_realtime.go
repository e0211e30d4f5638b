package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
)

// realtimePath is where chatctl serve serves the WebSocket API, on the
// HTTP API's own origin (the guest page connects there).
const realtimePath = "/realtime"

// localRealtime is what chatctl serve runs for the realtime API, doing
// locally what API Gateway and the push's event source mapping do in AWS:
// a WebSocket gateway invoking RealtimeFunction's handler on its $default
// route, the Management API on its own loopback port (so the handlers use
// the real SDK client), and the push fed by the table's stream.
type localRealtime struct {
	Gateway *wsgateway.Gateway
	// ManagementURL is the Management API endpoint (stage included).
	ManagementURL string
	// FanoutJobs counts the push jobs the fan-out workers ran.
	FanoutJobs atomic.Int64
	srv        *http.Server
}

// startRealtime starts the gateway's Management API and the push's stream
// mapping (positioned at the stream's end before it returns); both stop
// when ctx ends. The route and the push run on a.For(their function), and
// streams should read as RealtimePushFunction; policies, when not nil, holds
// their Management API calls to their policies; conc, when not nil, is the
// account's concurrent executions the push's invocations take. Mount
// Gateway at realtimePath. pushed,
// when not nil, is told of each change once it is pushed (tests measure the
// time from a post to its push with it).
func startRealtime(ctx context.Context, a *app.App, policies *iampolicy.Set, streams *dynamodbstreams.Client, res localrun.Resources, conc *localrun.Concurrency, pushed func(realtime.Change)) (*localRealtime, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("realtime: management API listener: %w", err)
	}
	rt := &localRealtime{
		// The template's stage, which the functions' execute-api grants name.
		Gateway: &wsgateway.Gateway{Stage: "live", SubscribeWithin: realtime.SubscribeWithin, IdleTimeout: realtime.IdleTimeout,
			Policies: policies},
		ManagementURL: "http://" + ln.Addr().String() + "/live",
	}
	rt.srv = &http.Server{Handler: rt.Gateway.Management(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rt.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = rt.srv.Close()
	}()
	route, pushFn := a.For("RealtimeFunction"), a.For("RealtimePushFunction")
	rt.Gateway.Routes = map[string]wsgateway.Handler{"$default": withConcurrency(conc, realtiming.Route(route, wsapi.NewClientFromConfig(route.AWS, rt.ManagementURL)).Handle)}
	// The push runs as Lambda runs it: its template's stream mapping
	// (LATEST, batch size, filters, retries) and Timeout. The stream is
	// polled every 100 ms (Lambda: every 250 ms) for a snappier page.
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		return nil, err
	}
	// The fan-out workers read the fan-out queue as their SQS mapping
	// does in AWS; without the queue (a test's stack that made none) the
	// push sends everything itself.
	fanoutQueue := res.Queues["RealtimeFanoutQueue"]
	push := realtiming.Push(pushFn, wsapi.NewClientFromConfig(pushFn.AWS, rt.ManagementURL), fanoutQueue).HandleStream
	if pushed != nil {
		push = tellPushed(push, pushed)
	}
	// Batches it gives up on go to its on-failure destination, as in AWS.
	m, err := localrun.NewStreamMapping(tmpl, realtiming.RealtimePushFunction, streams, sqs.NewFromConfig(pushFn.AWS), res, push)
	if err != nil {
		return nil, err
	}
	m.Poll = 100 * time.Millisecond
	m.Function.Concurrency = conc
	if _, err := m.Start(ctx); err != nil {
		return nil, err
	}
	if fanoutQueue != "" {
		fanFn := a.For(realtiming.RealtimeFanoutFunction)
		fan := realtiming.Fanout(fanFn, wsapi.NewClientFromConfig(fanFn.AWS, rt.ManagementURL), fanoutQueue)
		run := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			rt.FanoutJobs.Add(int64(len(ev.Records)))
			return fan.HandleSQS(ctx, ev)
		}
		qm, err := localrun.NewQueueMapping(tmpl, realtiming.RealtimeFanoutFunction, sqs.NewFromConfig(fanFn.AWS), fanoutQueue, res.QueueARNs["RealtimeFanoutQueue"], run)
		if err != nil {
			return nil, err
		}
		qm.Function.Concurrency = conc
		go qm.Run(ctx)
	}
	return rt, nil
}

// withConcurrency is h taking one of conc's executions per invocation: one
// past the limit is throttled (localrun.ErrThrottled), which the gateway
// answers as API Gateway answers a failed integration ("Internal server
// error"). A nil conc is h.
func withConcurrency(conc *localrun.Concurrency, h wsgateway.Handler) wsgateway.Handler {
	if conc == nil {
		return h
	}
	return func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		release, ok := conc.Acquire()
		if !ok {
			return events.APIGatewayProxyResponse{}, localrun.ErrThrottled
		}
		defer release()
		return h(ctx, ev)
	}
}

// tellPushed is h, telling pushed of each change of a batch that was
// pushed (those before the first failed record).
func tellPushed(h localrun.StreamHandler, pushed func(realtime.Change)) localrun.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		resp, err := h(ctx, ev)
		if err != nil {
			return resp, err
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, rec := range ev.Records {
			if failed[rec.Change.SequenceNumber] {
				break
			}
			if c, ok := connstore.RealtimeChange(rec.EventName, dynamo.FromLambdaImage(rec.Change.OldImage), dynamo.FromLambdaImage(rec.Change.NewImage)); ok {
				pushed(c)
			}
		}
		return resp, nil
	}
}

// withRealtime serves the WebSocket API at realtimePath and everything else
// with api.
func withRealtime(api http.Handler, rt *localRealtime) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(realtimePath, rt.Gateway)
	mux.Handle("/", api)
	return mux
}
