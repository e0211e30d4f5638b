// Package events defines the events outbound and support webhooks receive
// (contract section 11): their types, the envelope and its size cap, the
// payload of each type, which webhooks receive which type, and the stable
// ids of events and deliveries. It imports no AWS package.
package events
