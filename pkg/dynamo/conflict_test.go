package dynamo_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/dynamo"
)

// TestAgainAfterConflict: a write refused for a transaction in flight goes
// again, at most six attempts in all; any other answer ends it at once.
func TestAgainAfterConflict(t *testing.T) {
	conflict := &types.TransactionConflictException{}
	other := errors.New("condition failed")
	for _, tc := range []struct {
		name    string
		answers []error
		calls   int
		want    error
	}{
		{"first time", []error{nil}, 1, nil},
		{"after two conflicts", []error{conflict, conflict, nil}, 3, nil},
		{"another error ends it", []error{conflict, other}, 2, other},
		{"six conflicts", []error{conflict, conflict, conflict, conflict, conflict, conflict, nil}, 6, conflict},
	} {
		calls := 0
		var err error
		for attempt := 0; ; attempt++ {
			calls++
			err = tc.answers[calls-1]
			if !dynamo.AgainAfterConflict(context.Background(), err, attempt) {
				break
			}
		}
		if calls != tc.calls || !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("%s: %d calls, %v; want %d, %v", tc.name, calls, err, tc.calls, tc.want)
		}
	}
}
