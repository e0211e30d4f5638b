// Package rooms is the Temporary Room capability: joining a room as a guest
// (which creates a restricted guest and one room-scoped session token) and
// resolving a guest token back to its guest.
//
// It declares the storage it needs as small interfaces; package dynamo
// implements them.
package rooms
