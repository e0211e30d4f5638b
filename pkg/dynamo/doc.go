// Package dynamo adapts Amazon DynamoDB to the storage interfaces that the
// capability packages declare. Everything lives in one table (docs/data-model.md
// lists every item kind, its key and its access pattern); every access is a
// Key lookup or a key-range query, so the table needs no secondary index.
//
// The Store receives its *dynamodb.Client; it never builds one. SDK errors are
// translated into chat codes: a lost condition is EConflict (or the domain
// code it means), throttling and transport failures after the SDK's retries
// are EUnavailable, anything else is EInternal.
package dynamo
