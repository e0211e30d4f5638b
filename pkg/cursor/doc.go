// Package cursor makes the opaque pagination cursors of the list endpoints
// (meta.next_cursor in, ?cursor= back).
//
// A cursor carries a storage position (for example a DynamoDB sort key)
// and an HMAC over that position and a scope, so that a client can neither
// forge a position nor replay a cursor against another list or another
// workspace. Callers choose a scope that names one list of one workspace,
// such as "outbound:<workspace_id>", and pass the same scope to Decode.
//
// Any cursor that does not verify is a validation error on the field
// "cursor" (422), never an internal error: see Codec.Decode.
//
// The position is authenticated, not encrypted: anyone holding a cursor can
// read it. Positions are storage keys the caller may already show, never
// secrets.
package cursor
