// Package webhooks is webhook management (contract section 10): creating,
// changing, deleting and rotating the secrets of a workspace's inbound,
// outbound and support webhooks, admin only, each change written to the
// workspace's audit trail in the same write. It imports no AWS package; the
// store it needs is the Store interface (pkg/dynamo implements it).
package webhooks
