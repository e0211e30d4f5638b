// Package awsenv loads the AWS SDK configuration and the service's
// environment variables the same way in every Lambda and in chatctl, and
// counts AWS calls for the tests that hold the call budgets.
package awsenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"
)

// Environment variables every component reads.
const (
	EnvTable     = "TABLE_NAME"
	EnvQueueURL  = "TRANSLATION_QUEUE_URL"
	EnvCursorKey = "CURSOR_KEY"
	EnvEndpoint  = "AWS_ENDPOINT_URL"
	// EnvBucket names the attachments bucket.
	EnvBucket     = "ATTACHMENTS_BUCKET"
	EnvRegion     = "AWS_REGION"
	DefaultRegion = "us-east-1"
)

// EnvDeliveryQueueURL is the webhook delivery queue (contract section 11).
const EnvDeliveryQueueURL = "DELIVERY_QUEUE_URL"

// EnvSlowDeliveryQueueURL is the delivery queue's slow lane, for webhooks
// with a failure streak and for retries (docs/delivery.md).
const EnvSlowDeliveryQueueURL = "SLOW_DELIVERY_QUEUE_URL"

// EnvWaitDeliveryQueueURL is the delivery queue's wait lane, where
// retries wait until they are due.
const EnvWaitDeliveryQueueURL = "WAIT_DELIVERY_QUEUE_URL"

// Require returns the values of names, or one error naming every missing one.
func Require(names ...string) (map[string]string, error) {
	vals := map[string]string{}
	var missing []string
	for _, n := range names {
		v := strings.TrimSpace(os.Getenv(n))
		if v == "" {
			missing = append(missing, n)
		}
		vals[n] = v
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required environment variable(s): %s", strings.Join(missing, ", "))
	}
	return vals, nil
}

// Get returns the variable name, or def when it is unset or blank.
func Get(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// Counter counts AWS operations made through a configuration, by
// "Service.Operation". Tests use it to hold the call budgets.
type Counter struct {
	mu    sync.Mutex
	calls map[string]int
	order []string
}

// Count installs a Counter on cfg: every operation attempted by a client
// built from cfg afterwards is counted once (retries are not counted again).
func Count(cfg *aws.Config) *Counter {
	c := &Counter{calls: map[string]int{}}
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		// A presigned request (S3's presigned POST and GET) is signed
		// here and sent by someone else: its stack has no retry step, and
		// it is no call of the service's.
		if _, ok := stack.Finalize.Get("Retry"); !ok {
			return nil
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := middleware.GetServiceID(ctx) + "." + middleware.GetOperationName(ctx)
				c.mu.Lock()
				c.calls[op]++
				c.order = append(c.order, op)
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
	return c
}

// Total returns the number of operations counted so far.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// Calls returns the operations counted so far, in order.
func (c *Counter) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.order...)
}

// Reset forgets what was counted.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = map[string]int{}
	c.order = nil
}

// ForFunction returns a copy of cfg whose calls are signed with the access
// key id function (a template LogicalId, e.g. "DeliverWebhooksFunction"):
// the local stack's IAM check (internal/motoserver) then holds them to that
// function's policy. Only local tooling and tests use it; a deployed
// function keeps its execution role's credentials.
func ForFunction(cfg aws.Config, function string) aws.Config {
	cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(function, "local", ""))
	return cfg
}
