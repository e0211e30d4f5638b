package events

// Event types of contract section 14.
const (
	// WebhookTest is the one event a webhook's test endpoint sends; no
	// webhook subscribes to it.
	WebhookTest = "webhook.test"
	// WebhookDisabled reports a webhook the service disabled (gone,
	// failing), to the workspace's other outbound webhooks subscribed to it.
	WebhookDisabled = "webhook.disabled"
)

// WebhookRef is the data of webhook.test.
type WebhookRef struct {
	WebhookID string `json:"webhook_id"`
}

// Disabled is the data of webhook.disabled.
type Disabled struct {
	WebhookID string `json:"webhook_id"`
	Kind      string `json:"kind"`
	Reason    string `json:"reason"`
}
