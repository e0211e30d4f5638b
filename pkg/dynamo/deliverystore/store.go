// Package deliverystore is the DynamoDB store of outbound and support deliveries and their webhooks' delivery state (pkg/delivery), on the service's one
// table (pkg/dynamo holds its keys and items).
package deliverystore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// Store is the store of this capability on one table.
type Store struct{ *dynamo.Table }

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{dynamo.New(db, table)} }
