// Package reactionstore is the DynamoDB store of emoji reactions
// (pkg/reactions, contract section 18), on the service's one table
// (pkg/dynamo holds the message item it registers emoji on).
//
// Layout: a reader item RXR#<message>#<hh> / <owner> holds the emoji set
// one reader reacted with (hh = fnv32a(owner) % 16, spreading a hot
// message's readers over 16 partitions); count shards RXC#<message>#<k> / C
// (k in 0..S-1, S the message's reaction_shards) hold n:<emoji> numbers
// whose sum is the emoji's count. Each reaction is one transaction of its
// reader item and one random shard, so the sum moves with the truth and
// no item is written by every reaction.
package reactionstore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/reactions"
)

// Store is the store of this capability on one table.
type Store struct{ *dynamo.Table }

var _ reactions.Store = (*Store)(nil)

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store { return &Store{dynamo.New(db, table)} }
