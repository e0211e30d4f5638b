// Package attempt makes the attempts of outbound and support webhook
// deliveries (contract section 11): it signs and posts an event's envelope
// through the guarded client (pkg/netguard), judges the answer, chooses the
// next attempt's delay from the schedule, and records the attempt through
// the store interfaces of package delivery. It also sends a webhook's test
// event (contract section 14). It imports no AWS package.
package attempt
