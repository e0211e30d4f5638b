package localrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// Function is a Lambda function as the local run invokes it: its logical
// id and its Timeout from template.yaml.
type Function struct {
	Name    string
	Timeout time.Duration
	// Concurrency, when set, is the account's concurrent executions: an
	// invocation past it is throttled (ErrThrottled) and runs nothing.
	Concurrency *Concurrency
}

// FunctionOf is function as tmpl declares it.
func FunctionOf(tmpl *samtemplate.Template, function string) Function {
	return Function{Name: function, Timeout: tmpl.Timeout(function)}
}

// ErrTimeout is what Invoke returns for a handler still running at its
// deadline; Lambda's log says "Task timed out after N seconds".
var ErrTimeout = errors.New("task timed out")

// Invoke runs h on ev as Lambda runs one invocation: h's context carries
// the deadline (now + fn.Timeout, as aws-lambda-go's context.WithDeadline)
// and a lambdacontext.LambdaContext. A handler still running at the
// deadline is a failed invocation (ErrTimeout) whatever it returns later:
// its answer is dropped and its context is cancelled. Lambda would also
// stop the environment; here the handler's goroutine runs on until it
// notices the cancelled context.
func Invoke[E, R any](ctx context.Context, fn Function, h func(context.Context, E) (R, error), ev E) (R, error) {
	var zero R
	release, ok := fn.Concurrency.Acquire()
	if !ok {
		return zero, fmt.Errorf("%s: %w", fn.Name, ErrThrottled)
	}
	// The slot is the execution environment's: a handler past its deadline
	// keeps it until it returns, as Lambda's environment is busy until
	// stopped.
	timeout := fn.Timeout
	if timeout <= 0 {
		timeout = samtemplate.DefaultTimeout
	}
	ctx, cancel := context.WithDeadline(ctx, time.Now().Add(timeout))
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       requestID(),
		InvokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:" + fn.Name,
	})
	type answer struct {
		r   R
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer release()
		defer func() {
			if p := recover(); p != nil {
				done <- answer{err: fmt.Errorf("%s: handler panicked: %v", fn.Name, p)}
			}
		}()
		r, err := h(ctx, ev)
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		// An answer that races the deadline counts only when it came first.
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return zero, fmt.Errorf("%s: %w after %v", fn.Name, ErrTimeout, timeout)
		}
		return a.r, a.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return zero, fmt.Errorf("%s: %w after %v", fn.Name, ErrTimeout, timeout)
		}
		return zero, ctx.Err()
	}
}

// requestID is a random UUID, the shape of Lambda's request ids.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
