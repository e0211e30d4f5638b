package main

import (
	"context"
	"fmt"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/streampoll"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/apigwmanagement"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/realtime"
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
	srv           *http.Server
}

// startRealtime starts the gateway's Management API and the push's stream
// reader (streams should read as RealtimePushFunction); both stop when ctx
// ends. The route and the push run on a.For(their function); policies,
// when not nil, holds their Management API calls to their policies. Mount Gateway at realtimePath. pushed,
// when not nil, is told of each change once it is pushed (tests measure the
// time from a post to its push with it).
func startRealtime(ctx context.Context, a *app.App, policies *iampolicy.Set, streams *dynamodbstreams.Client, streamARN string, pushed func(realtime.Change)) (*localRealtime, error) {
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
	rt.Gateway.Routes = map[string]wsgateway.Handler{"$default": realtiming.Route(route, apigwmanagement.NewFromConfig(route.AWS, rt.ManagementURL)).Handle}
	push := realtiming.Push(pushFn, apigwmanagement.NewFromConfig(pushFn.AWS, rt.ManagementURL)).Pusher
	go streampoll.Poll(ctx, streams, streamARN, 100*time.Millisecond, func(ctx context.Context, rec streampoll.Record) {
		c, ok := dynamo.RealtimeChange(rec.EventName, rec.OldImage, rec.NewImage)
		if !ok {
			return
		}
		// As the event source mapping retries a failed batch, retry a
		// change whose reads failed, a few times.
		for attempt := 0; attempt < 3; attempt++ {
			if err := push.Push(ctx, c); err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if pushed != nil {
			pushed(c)
		}
	})
	return rt, nil
}

// withRealtime serves the WebSocket API at realtimePath and everything else
// with api.
func withRealtime(api http.Handler, rt *localRealtime) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(realtimePath, rt.Gateway)
	mux.Handle("/", api)
	return mux
}
