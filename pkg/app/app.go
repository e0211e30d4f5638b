// Package app is what every function's composition shares: the
// configuration read from the environment (App), and the Lambda entry
// points (Start; httpfn.Run for HTTP functions). It builds no handler itself: each capability's
// API package (roomsapi, membersapi, webhooksapi, inboundapi,
// deliveriesapi, guestpage) has a constructor per function, and a
// function's main.go names its own, so that its binary links that
// capability and nothing else.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/s3bucket"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// App holds what the handlers are built from.
type App struct {
	AWS aws.Config
	// DB is the DynamoDB client, Table the service's table: each
	// capability builds its own store on them.
	DB    *dynamodb.Client
	Table string
	// Bucket is the attachments bucket (ATTACHMENTS_BUCKET); "" where
	// none is configured, and then a post with attachments is refused
	// (503) and views carry no links.
	Bucket string
	IDs    *chat.IDs
	Now    chat.Clock
	// CursorKey is the key list cursors are signed with (CURSOR_KEY), nil
	// when unset. The functions that page build their codec on it
	// (cursor.Of): the others do not link package cursor. A key shorter
	// than MinCursorKeyLen is refused at init (httpfn.FromEnv,
	// realtiming.FromEnv).
	CursorKey []byte
	// Metrics records CloudWatch metrics (EMF on stdout); nil records none.
	Metrics awsenv.MetricRecorder
	// Identity, when set, gives the configuration function's calls are
	// made with (awsenv.ForFunction): local runs and tests build each
	// handler as its own function, so that the local stack holds it to
	// that function's policy. Nil in AWS, where each function is its own
	// process with its own role.
	Identity func(function string) aws.Config
}

// Authenticator is the workspace API's caller authentication on the app's
// table: every workspace API function builds it.
func (a *App) Authenticator() *workspaces.Authenticator {
	return &workspaces.Authenticator{Tokens: dynamo.New(a.DB, a.Table)}
}

// bucket is the attachments bucket reached with a's configuration, nil
// without one. Against a local endpoint its addresses are path-style
// (http://127.0.0.1:port/<bucket>/<key>), as a loopback server needs.
func (a *App) bucket() *s3bucket.Bucket {
	if a.Bucket == "" {
		return nil
	}
	c := s3.NewFromConfig(a.AWS, func(o *s3.Options) { o.UsePathStyle = a.AWS.BaseEndpoint != nil })
	return s3bucket.New(c, a.Bucket)
}

// Attachments is the attachments service on the app's table and bucket;
// nil without a bucket.
func (a *App) Attachments() *attachments.Service {
	b := a.bucket()
	if b == nil {
		return nil
	}
	return &attachments.Service{Uploads: dynamo.New(a.DB, a.Table), Presigner: b, Objects: b, IDs: a.IDs, Now: a.Now}
}

// Renderer renders views with presigned attachment links valid for ttl
// (attachments.ViewURLTTL when 0).
func (a *App) Renderer(ttl time.Duration) messageview.Renderer {
	r := messageview.Renderer{TTL: ttl}
	if b := a.bucket(); b != nil {
		r.Links = b
	}
	return r
}

// For returns the App that function's handler is built on: a itself, or,
// when Identity is set, a copy whose clients make their calls as function.
func (a *App) For(function string) *App {
	if a.Identity == nil {
		return a
	}
	b := *a
	b.AWS = a.Identity(function)
	b.DB = dynamodb.NewFromConfig(b.AWS)
	b.Identity = nil
	return &b
}

// New builds an App on table using cfg.
func New(cfg aws.Config, table string) *App {
	return &App{
		AWS:   cfg,
		DB:    dynamodb.NewFromConfig(cfg),
		Table: table,
		IDs:   chat.NewIDs(),
		Now:   time.Now,
	}
}

// FromEnv loads the AWS configuration (awsenv.Load) and TABLE_NAME plus the
// variables in extra; a missing one is an error naming it.
func FromEnv(ctx context.Context, extra ...string) (*App, map[string]string, error) {
	return FromEnvWith(ctx, awsenv.Load, extra...)
}

// FromEnvWith is FromEnv with the AWS configuration of load: chatctl's
// administrator commands pass one that reads profiles and SSO.
func FromEnvWith(ctx context.Context, load awsenv.Loader, extra ...string) (*App, map[string]string, error) {
	env, err := awsenv.Require(append([]string{awsenv.EnvTable}, extra...)...)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := load(ctx)
	if err != nil {
		return nil, nil, err
	}
	a := New(cfg, env[awsenv.EnvTable])
	a.Bucket = awsenv.Get(awsenv.EnvBucket, "")
	if key := awsenv.Get(awsenv.EnvCursorKey, ""); key != "" {
		a.CursorKey = []byte(key)
	}
	return a, env, nil
}

// MinCursorKeyLen is the shortest CURSOR_KEY a function accepts:
// cursor.MinKeyLen, which a test holds it equal to (httpfn checks the key
// without linking package cursor).
const MinCursorKeyLen = 16

// EnvWebhookCacheTTL sets how long a warm function keeps a webhook's
// settings in memory (a Go duration, default 30s).
const EnvWebhookCacheTTL = "WEBHOOK_CACHE_TTL"

// WebhookCacheTTL reads EnvWebhookCacheTTL.
func WebhookCacheTTL() (time.Duration, error) {
	v := awsenv.Get(EnvWebhookCacheTTL, "30s")
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative duration", EnvWebhookCacheTTL, v)
	}
	return d, nil
}

// EnvOutboundAllowCIDRS lists the target ranges (comma-separated CIDRs)
// exempt from the blocked ranges, where http is also accepted (contract
// section 11). Empty in AWS.
const EnvOutboundAllowCIDRS = "OUTBOUND_ALLOW_CIDRS"

// EnvOutboundAllowOnly, "true", allows outbound requests only to the
// ranges of OUTBOUND_ALLOW_CIDRS ("false" or unset: every public address
// too).
const EnvOutboundAllowOnly = "OUTBOUND_ALLOW_ONLY"

// InitLambdaLogger makes the default logger write JSON lines carrying the
// Lambda request id.
func InitLambdaLogger() {
	slog.SetDefault(lambdacontext.NewLogger())
}

// MetricsNamespace is the CloudWatch namespace of the service's metrics.
const MetricsNamespace = "ChatService"

// LambdaMetrics returns the EMF recorder of function, on stdout.
func LambdaMetrics(function string) awsenv.MetricRecorder {
	return awsenv.NewMetricLogger(os.Stdout, MetricsNamespace, map[string]string{"Function": function})
}

// Exit logs an initialisation failure and exits non-zero: a function with
// missing configuration must fail at init, never inside a request.
func Exit(function string, err error) {
	slog.Error("init failed", "function", function, "error", err.Error())
	fmt.Fprintf(os.Stderr, "%s: init failed: %v\n", function, err)
	os.Exit(1)
}

// HTTPConstructor builds an HTTP function's handler from the App: each
// capability's API package has one per function it serves, and the
// function's main.go passes its own to httpfn.Run.
type HTTPConstructor func(a *App) (http.Handler, error)

// Start runs handler as the function's Lambda handler, or exits at init
// with err logged.
func Start[H any](function string, handler H, err error) {
	if err != nil {
		Exit(function, err)
	}
	lambda.Start(handler)
}
