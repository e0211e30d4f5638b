package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxConflictAttempts bounds the attempts of a write that meets a
// transaction in flight on its item.
const MaxConflictAttempts = 6

// AgainAfterConflict reports whether a single-item write should be made
// again: its error is a TransactionConflictException and attempt (0 for
// the first) is not the last of MaxConflictAttempts. It then waits a
// jittered, doubling pause (about 10 ms, then 20, 40…: under a second in
// all) before it answers true; false at once when ctx ends. DynamoDB
// refuses a PutItem, UpdateItem or DeleteItem of an item that a
// TransactWriteItems is writing, and the SDK does not retry that refusal:
// a message's edit meeting its translation save would fail though nothing
// is wrong. The caller's loop makes the call itself, so the call's site is
// the caller.
func AgainAfterConflict(ctx context.Context, err error, attempt int) bool {
	var conflict *types.TransactionConflictException
	if !errors.As(err, &conflict) || attempt+1 >= MaxConflictAttempts {
		return false
	}
	pause := time.Duration(10<<attempt)*time.Millisecond + time.Duration(rand.IntN(10))*time.Millisecond
	select {
	case <-ctx.Done():
		return false
	case <-time.After(pause):
		return true
	}
}
