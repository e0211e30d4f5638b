// Package chat holds the domain of the translated team-chat service: its
// entities (workspaces, users, channels, Temporary Rooms, guests, webhooks,
// messages), the one error type every layer speaks, and the small pieces of
// policy that are the same everywhere (identifiers, token hashing, language
// tags, timestamps).
//
// It imports nothing from AWS. Adapters (package dynamo, sqsqueue, ...)
// implement the interfaces that the capability packages declare.
package chat
