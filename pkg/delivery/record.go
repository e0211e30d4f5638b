package delivery

import "time"

// Record is a delivery as the delivery log shows it. It never holds a
// secret or a signature.
type Record struct {
	ID             string
	WebhookID      string
	Kind           string
	WorkspaceID    string
	WebhookKey     string
	EventID        string
	EventType      string
	Status         string
	Attempts       int
	LastAttemptAt  time.Time
	NextAttemptAt  time.Time
	ResponseStatus int
	Error          string
	DurationMS     int64
	CreatedAt      time.Time
}
