// Package editstore is the DynamoDB store of message edits and deletions
// (pkg/edits), on the service's one table (pkg/dynamo holds its keys and
// items).
package editstore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// Store is the store of this capability on one table.
type Store struct{ *dynamo.Table }

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{dynamo.New(db, table)} }
