// Package signature implements the HMAC scheme that authenticates webhook
// requests, inbound (a workspace's system posting into a channel) and
// outbound (this service calling a workspace's endpoint).
//
// A signed request carries the header
//
//	X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]
//
// where each v1 is the lowercase hex HMAC-SHA256, keyed by the webhook's
// signing secret, of the string "<t>.<raw body>", t exactly as sent in the
// header. t is 1 to 12 ASCII digits (leading zeros allowed, and signed with
// the rest; no sign). A sender rotating its secret sends one v1 per secret;
// one match is enough. Entries under other keys (v0=, ...) are ignored. A
// header holds at most 32 items (so at most 31 v1 entries) and 8192 bytes.
// A timestamp whose value is more than Tolerance away from the receiver's
// clock, in either direction, is refused.
//
// Verify returns the v1 value that matched; the caller stores it for the
// webhook to refuse a replay of the same signed request.
//
// # Behind API Gateway
//
// The API Gateway V2 adapter (aws-lambda-go-api-proxy, httpadapter.NewV2)
// splits every multi-valued header on commas, so "t=1,v1=ab" reaches the
// handler as two values of the header, "t=1" and "v1=ab". r.Header.Get would
// see only "t=1". Callers must read the header with FromRequest, which joins
// all values back with commas:
//
//	header := signature.FromRequest(r.Header) // strings.Join(r.Header.Values(Header), ",")
//	matched, err := signature.Verify(header, secret, body, now)
//
// The scheme's grammar tolerates the join: items are trimmed and empty items
// are skipped.
//
// Errors are *chat.Error with the contract's codes: chat.EMissingSignature,
// chat.EInvalidSignatureHeader, chat.ESignatureExpired and
// chat.EInvalidSignature. Their messages never contain the header, the
// secret or the expected signature.
package signature
