// Package inbound is the inbound webhook capability: an external system
// posts a message into a channel through POST /webhooks/{webhook}/messages,
// and the service decides, in the contract's order (section 4), whether to
// accept it: webhook lookup, quota, size, credentials (static secret or
// HMAC signature with a replay guard), body, idempotency, acceptance.
//
// Every request that reaches the quota step is counted against the quota
// (a refused one takes nothing: the window is already spent) and logged
// with its outcome. An accepted message is written in one transaction with its
// request log record and its idempotency result, so that a 202 always means
// the message is stored, and a retry with the same Idempotency-Key after any
// failure yields exactly one message (docs/delivery.md).
//
// AWS calls on a warm function (webhook settings cached in memory):
// accepted, with or without a key, 2 (quota, one accept transaction that
// claims the key, records the signature and stores the message, its log
// record and the idempotency result); rejected before storage 2 (quota,
// log). Rejections that depend on stored state (a replayed signature, a
// replay, a reused or busy key) cost one call more: the accept transaction
// fails with the state, and the log is written after it.
package inbound
