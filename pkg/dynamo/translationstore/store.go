// Package translationstore is the DynamoDB store of translations, the translation budget and the pending-translation sweep (pkg/translation, pkg/messages), on the service's one
// table (pkg/dynamo holds its keys and items).
package translationstore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// Store is the store of this capability on one table.
type Store struct {
	*dynamo.Table
	// budgetSeen is what this instance knows of the budget counters'
	// shards.
	budgetSeen dynamo.CounterCache
}

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{Table: dynamo.New(db, table)} }
