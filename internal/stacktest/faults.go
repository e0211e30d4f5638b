package stacktest

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ErrInjected is the error an injected fault returns.
var ErrInjected = errors.New("stacktest: injected fault")

// Faults makes chosen AWS operations fail, through an SDK middleware on
// the real clients: the request either never leaves (Before) or reaches the
// server and its answer is lost (After), which is how a timeout looks to
// the caller.
type Faults struct {
	mu    sync.Mutex
	rules []*rule
}

type rule struct {
	op    string
	skip  int
	after bool
	left  int
	err   error
	// attempt: the rule fails one attempt of the SDK's, inside its retry
	// loop (LoseAnswer), not the call.
	attempt bool
}

// When Faults.Fail is asked to fail a call.
const (
	Before = false
	After  = true
)

// Fail makes the (skip+1)th next call of op ("Service.Operation", e.g.
// "DynamoDB.TransactWriteItems") fail, before or after it reached the
// server.
func (f *Faults) Fail(op string, skip int, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{op: op, skip: skip, after: after, left: 1})
}

// FailWith makes the next times calls of op, after skipping skip, fail with
// err before they leave: an answer the server could give, such as the
// TransactionCanceledException of a transaction that collided with another
// one (moto runs transactions one at a time and never gives it).
func (f *Faults) FailWith(op string, skip, times int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{op: op, skip: skip, left: times, err: err})
}

// LoseAnswer makes the (skip+1)th next attempt of op reach the server and
// its answer be lost to an HTTP 500, as DynamoDB's InternalServerError (a
// request that may have been carried out) or a timeout looks to the SDK:
// the SDK's own retryer then sends the call again, as it does in AWS. The
// caller sees only the retry's answer.
func (f *Faults) LoseAnswer(op string, skip int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{op: op, skip: skip, after: true, left: 1, attempt: true})
}

// TransactionConflict is DynamoDB's answer to a transaction of n items that
// collided with another transaction on item i.
func TransactionConflict(n, i int) error {
	reasons := make([]types.CancellationReason, n)
	for j := range reasons {
		reasons[j].Code = aws.String("None")
	}
	reasons[i].Code = aws.String("TransactionConflict")
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled (injected)"), CancellationReasons: reasons}
}

// TransactionThrottled is DynamoDB's cancellation of an n-item transaction
// whose item i was refused for its partition's throughput.
func TransactionThrottled(n, i int) error {
	err := TransactionConflict(n, i).(*types.TransactionCanceledException)
	err.CancellationReasons[i].Code = aws.String("ThrottlingError")
	err.CancellationReasons[i].Message = aws.String("Throughput exceeds the current capacity for one or more global secondary indexes or the table (injected)")
	return err
}

// Clear removes every pending fault.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// match reports whether this call (or, with attempt, this attempt) of op
// fails, when, and with what.
func (f *Faults) match(op string, attempt bool) (fail, after bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules {
		if r.op != op || r.left == 0 || r.attempt != attempt {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		r.left--
		if r.err != nil {
			return true, r.after, r.err
		}
		return true, r.after, ErrInjected
	}
	return false, false, nil
}

// install adds the fault middleware to cfg.
func (f *Faults) install(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("InjectFaults",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := middleware.GetServiceID(ctx) + "." + middleware.GetOperationName(ctx)
				fail, after, injected := f.match(op, false)
				if fail && !after {
					return middleware.InitializeOutput{}, middleware.Metadata{}, injected
				}
				out, md, err := next.HandleInitialize(ctx, in)
				if fail && after {
					return middleware.InitializeOutput{}, md, injected
				}
				return out, md, err
			}), middleware.Before)
	}, func(stack *middleware.Stack) error {
		// After the SDK's retry middleware: once per attempt. A presigned
		// request has no retry step and makes no call: nothing to inject.
		if _, ok := stack.Finalize.Get("Retry"); !ok {
			return nil
		}
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("InjectAttemptFaults",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				if err != nil {
					return out, md, err
				}
				op := middleware.GetServiceID(ctx) + "." + middleware.GetOperationName(ctx)
				if fail, _, _ := f.match(op, true); fail {
					lost := &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}, Body: http.NoBody}
					return middleware.FinalizeOutput{}, md, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: lost}, Err: ErrInjected}
				}
				return out, md, err
			}), "Retry", middleware.After)
	})
}
