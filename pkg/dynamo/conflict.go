package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxConflictAttempts bounds the attempts of a write that meets a
// transaction in flight on its item.
const maxConflictAttempts = 6

// RetryConflict runs write until it does not answer
// TransactionConflictException, at most maxConflictAttempts times, waiting
// a jittered, doubling pause between attempts (about 10 ms, then 20, 40…:
// under a second in all). DynamoDB refuses a PutItem, UpdateItem or
// DeleteItem of an item that a TransactWriteItems is writing, and the SDK
// does not retry that refusal: a message's edit meeting its translation
// save would fail though nothing is wrong. The last error is returned as
// it came.
func RetryConflict(ctx context.Context, write func() error) error {
	var err error
	for attempt := 0; attempt < maxConflictAttempts; attempt++ {
		if attempt > 0 {
			pause := time.Duration(10<<(attempt-1))*time.Millisecond + time.Duration(rand.IntN(10))*time.Millisecond
			select {
			case <-ctx.Done():
				return err
			case <-time.After(pause):
			}
		}
		err = write()
		var conflict *types.TransactionConflictException
		if !errors.As(err, &conflict) {
			return err
		}
	}
	return err
}
