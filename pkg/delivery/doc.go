// Package delivery is what outbound and support webhook deliveries are
// made of (contract section 11), apart from the requests: what an attempt
// needs of a webhook and records of itself (Webhook, Attempt, the
// reservation of an attempt number), the delivery log's record, the queue
// message and its lanes, the store and queue interfaces the attempts are
// made on, and the admin's redelivery of a delivery and recovery of a
// window's failed deliveries, which only queue messages. Package
// delivery/attempt makes the attempts: signed requests through the guarded
// client (pkg/netguard). They are apart so that the delivery log's
// functions and the delivery store link neither. It imports no AWS
// package; the queue and the store are interfaces it declares.
package delivery
