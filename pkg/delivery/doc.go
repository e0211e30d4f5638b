// Package delivery makes the attempts of outbound and support webhook
// deliveries (contract section 11): it signs and posts an event's envelope
// through the guarded client (pkg/netguard), judges the answer, chooses the
// next attempt's delay from the schedule, and records the attempt. It
// imports no AWS package; the queue and the store are interfaces it
// declares.
package delivery
