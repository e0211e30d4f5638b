// Package storetest gives tests every capability's DynamoDB store on one
// table, for tests that seed or inspect the table across capabilities. It
// is a set of fields, not one store: a test names the capability it calls
// (s.Rooms.LoadJoin), as the functions do.
package storetest

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/dynamo/editstore"
	"github.com/chatbridge/chat/pkg/dynamo/fixturestore"
	"github.com/chatbridge/chat/pkg/dynamo/inboundstore"
	"github.com/chatbridge/chat/pkg/dynamo/memberstore"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore"
)

// Stores is each capability's store on one table.
type Stores struct {
	*dynamo.Table
	Rooms       *roomstore.Store
	Members     *memberstore.Store
	Inbound     *inboundstore.Store
	Webhooks    *webhookstore.Store
	Tokens      *dynamo.Table
	Deliveries  *deliverystore.Store
	Relay       *relaystore.Store
	Conns       *connstore.Store
	Translation *translationstore.Store
	Edits       *editstore.Store
	Fixture     *fixturestore.Store
}

// New returns the stores on table, using db.
func New(db *dynamodb.Client, table string) *Stores {
	t := dynamo.New(db, table)
	return &Stores{Table: t,
		Rooms: &roomstore.Store{Table: t}, Members: &memberstore.Store{Table: t}, Inbound: &inboundstore.Store{Table: t},
		Webhooks: &webhookstore.Store{Table: t}, Tokens: t, Deliveries: &deliverystore.Store{Table: t},
		Relay: &relaystore.Store{Table: t}, Conns: &connstore.Store{Table: t}, Translation: &translationstore.Store{Table: t}, Edits: &editstore.Store{Table: t},
		Fixture: &fixturestore.Store{Table: t},
	}
}
