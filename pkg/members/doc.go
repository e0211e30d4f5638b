// Package members is the workspace members' capability: the channels a
// user is a member of, and reading and posting messages in them as that
// user. A member reads a message exactly as a guest does (rooms.ReadChannel
// builds both views), and a member's post is a message like any other: the
// table's stream queues it for translation for every reader.
//
// It declares the storage it needs as small interfaces; package dynamo
// implements them.
package members
