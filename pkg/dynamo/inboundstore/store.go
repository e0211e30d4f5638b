// Package inboundstore is the DynamoDB store of inbound webhooks' settings, quota and request log (pkg/inbound), on the service's one
// table (pkg/dynamo holds its keys and items).
package inboundstore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// Store is the store of this capability on one table.
type Store struct {
	*dynamo.Table
	// quotaSeen is what this instance knows of the quota windows' shards.
	quotaSeen dynamo.CounterCache
}

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{Table: dynamo.New(db, table)} }
