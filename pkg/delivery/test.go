package delivery

import "context"

// TestLog records a test delivery in the delivery log.
type TestLog interface {
	// PutTestDelivery writes a's delivery record as the attempt left it,
	// with one write. Errors: EUnavailable.
	PutTestDelivery(ctx context.Context, a Attempt) error
}
