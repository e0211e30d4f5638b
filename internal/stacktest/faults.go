package stacktest

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
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

// Clear removes every pending fault.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// match reports whether this call of op fails, and when.
func (f *Faults) match(op string) (fail, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rules {
		if r.op != op || r.left == 0 {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		r.left--
		return true, r.after
	}
	return false, false
}

// install adds the fault middleware to cfg.
func (f *Faults) install(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("InjectFaults",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := middleware.GetServiceID(ctx) + "." + middleware.GetOperationName(ctx)
				fail, after := f.match(op)
				if fail && !after {
					return middleware.InitializeOutput{}, middleware.Metadata{}, ErrInjected
				}
				out, md, err := next.HandleInitialize(ctx, in)
				if fail && after {
					return middleware.InitializeOutput{}, md, ErrInjected
				}
				return out, md, err
			}), middleware.Before)
	})
}
