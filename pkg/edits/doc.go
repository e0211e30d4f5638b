// Package edits is the editing and deleting of posted messages (contract
// section 13): who may change which message, the revision rules
// (If-Match, an unchanged edit is a no-op), and the tombstone a deletion
// leaves. It has no AWS imports: the Store it declares does each change in
// one conditional write and, when that write is refused, returns the
// message as it is, from which Service tells the caller why.
package edits
