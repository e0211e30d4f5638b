// Package realtiming builds the realtime functions (contract section 12)
// from the app: the WebSocket API's $default route and the stream push. It
// is apart from package app so that the HTTP functions do not link the API
// Gateway Management API client.
package realtiming

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/sqsqueue"
	"github.com/chatbridge/chat/pkg/wsapi"
)

// Logical ids of the realtime functions.
const (
	RealtimeFunction       = "RealtimeFunction"
	RealtimePushFunction   = "RealtimePushFunction"
	RealtimeFanoutFunction = "RealtimeFanoutFunction"
)

// EnvFanoutQueueURL names the fan-out queue (RealtimeFanoutQueue) the push
// hands large audiences and unfinished sends to, and the fan-out workers
// requeue what they leave on; unset, the push sends everything itself.
const EnvFanoutQueueURL = "REALTIME_FANOUT_QUEUE_URL"

// Route is RealtimeFunction's handler (the WebSocket API's
// $default route), answering through sender.
func Route(a *app.App, sender *wsapi.Client) *wsapi.Route {
	st, rs := connstore.New(a.DB, a.Table), roomstore.New(a.DB, a.Table)
	return &wsapi.Route{Sender: sender, Subscriber: &realtime.Subscriber{
		Sessions:     rs,
		Guests:       &rooms.GuestAuth{Sessions: rs, Now: a.Now},
		Members:      a.Authenticator(),
		Store:        st,
		Probe:        sender.Alive,
		Now:          a.Now,
		Backfills:    st,
		Translations: rs,
		Encode:       a.Renderer(0).Encode,
		Cursor:       backfillCursor(a),
		Reactions:    reactionstore.New(a.DB, a.Table),
	}, Typist: &realtime.Typist{Typing: st, Store: st, Sender: sender, Now: a.Now}}
}

// backfillCursor makes a backfill's "next_cursor": the cursor of the
// reader's own list (GuestMessagesHandler's scope for a guest,
// ChannelMessagesHandler's for a member), positioned at the oldest message
// the backfill sent; nil without a cursor key (or with a malformed one,
// which FromEnv refuses).
func backfillCursor(a *app.App) func(realtime.Connection, string) string {
	codec, err := cursor.Of(a.CursorKey)
	if codec == nil || err != nil {
		return nil
	}
	return func(c realtime.Connection, position string) string {
		if c.Kind == realtime.KindGuest {
			return codec.Encode("room-messages:"+c.RoomID, position)
		}
		return codec.Encode("channel-messages:"+c.WorkspaceID+":"+c.ChannelID, position)
	}
}

// EnvPushConcurrency names the most PostToConnection calls
// RealtimePushFunction has in flight (realtime.DefaultConcurrency when
// unset).
const EnvPushConcurrency = "REALTIME_PUSH_CONCURRENCY"

// pushConcurrency reads EnvPushConcurrency: 1 to 500.
func pushConcurrency() (int, error) {
	v := os.Getenv(EnvPushConcurrency)
	if v == "" {
		return realtime.DefaultConcurrency, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 500 {
		return 0, fmt.Errorf("%s %q: want a number from 1 to 500", EnvPushConcurrency, v)
	}
	return n, nil
}

// Push is RealtimePushFunction's handler (the table's stream),
// sending through sender with EnvPushConcurrency sends in flight (FromEnv
// has checked it), and remembering across invocations which connections an
// unfinished change was sent to. With fanoutQueue (a queue URL; "" for
// none) it hands large audiences and what it leaves to the fan-out workers.
func Push(a *app.App, sender realtime.Sender, fanoutQueue string) *wsapi.Push {
	return &wsapi.Push{Pusher: pusher(a, sender, fanoutQueue, RealtimePushFunction)}
}

// Fanout is RealtimeFanoutFunction's handler (the fan-out queue's jobs),
// sending through sender as Push does and queueing what it leaves on
// fanoutQueue.
func Fanout(a *app.App, sender realtime.Sender, fanoutQueue string) *wsapi.Fanout {
	return &wsapi.Fanout{Runner: pusher(a, sender, fanoutQueue, RealtimeFanoutFunction)}
}

// EnvFanoutAbove names how many sends a change makes in the stream
// function before it hands them to the fan-out workers
// (realtime.DefaultFanoutAbove when unset or not a number from 1 to
// 100,000).
const EnvFanoutAbove = "REALTIME_FANOUT_ABOVE"

// FanoutQueue is EnvFanoutQueueURL's value.
func FanoutQueue() string { return os.Getenv(EnvFanoutQueueURL) }

func pusher(a *app.App, sender realtime.Sender, fanoutQueue, function string) *realtime.Pusher {
	st, rs := connstore.New(a.DB, a.Table), roomstore.New(a.DB, a.Table)
	n, err := pushConcurrency()
	if err != nil {
		n = realtime.DefaultConcurrency
	}
	p := &realtime.Pusher{
		Store: st, Translations: rs, Sender: sender, Encode: a.Renderer(0).Encode, Now: a.Now,
		Concurrency: n, Sent: &realtime.Sent{}, Changes: st, Reactions: reactionstore.New(a.DB, a.Table),
	}
	if fanoutQueue != "" {
		p.Jobs = sqsqueue.New(sqs.NewFromConfig(a.AWS), fanoutQueue)
	}
	if n, err := strconv.Atoi(os.Getenv(EnvFanoutAbove)); err == nil && n >= 1 && n <= 100000 {
		p.FanoutAbove = n
	}
	if a.Metrics != nil {
		p.Metrics = counter{a.Metrics}
	}
	return p
}

// counter is realtime.Metrics on the function's EMF recorder.
type counter struct{ rec awsenv.MetricRecorder }

func (c counter) Count(ctx context.Context, name string, n int) {
	c.rec.Record(ctx, awsenv.Metric{Name: name, Unit: awsenv.UnitCount, Value: float64(n)})
}

// FromEnv builds the App and the Management API client of a
// realtime function: TABLE_NAME and WEBSOCKET_MANAGEMENT_ENDPOINT are
// required, the latter unless AWS_ENDPOINT_URL points every client at a
// local stack (whose Management API the SDK then calls);
// REALTIME_PUSH_CONCURRENCY, when set, must be a number from 1 to 500. The
// client keeps that many connections to the endpoint open (the SDK's
// default keeps 10), so concurrent pushes do not open new ones.
func FromEnv(ctx context.Context) (*app.App, *wsapi.Client, error) {
	var extra []string
	if os.Getenv(awsenv.EnvEndpoint) == "" {
		extra = append(extra, wsapi.EnvManagementEndpoint)
	}
	n, err := pushConcurrency()
	if err != nil {
		return nil, nil, err
	}
	a, _, err := app.FromEnv(ctx, extra...)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cursor.Of(a.CursorKey); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", awsenv.EnvCursorKey, err)
	}
	endpoint := os.Getenv(wsapi.EnvManagementEndpoint)
	return a, wsapi.NewClient(apigatewaymanagementapi.NewFromConfig(a.AWS, func(o *apigatewaymanagementapi.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, n)
		})
	})), nil
}
