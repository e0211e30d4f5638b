// Package relaying builds the outbox relay (the table's stream to the
// translation queue and the events' deliveries) from the app, for the
// OutboxRelayFunction, chatctl serve and chatctl's replay alike. It is
// apart from package delivering so that the delivery functions do not
// link the relay.
package relaying

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Fanout builds the relay's event fan-out onto the delivery queue at
// deliveryURL.
func Fanout(a *app.App, deliveryURL string) *relay.Fanout {
	return fanout(a, sqs.NewFromConfig(a.AWS), deliveryURL)
}

func fanout(a *app.App, client *sqs.Client, deliveryURL string) *relay.Fanout {
	return &relay.Fanout{Store: relaystore.New(a.DB, a.Table), Queue: sqsqueue.New(client, deliveryURL), Now: a.Now}
}

// Relay builds the outbox relay: translation jobs onto the queue at
// translationURL, events onto the delivery queue at deliveryURL (one SQS
// client for both), records it cannot process parked, a deleted message's
// translations removed.
func Relay(a *app.App, translationURL, deliveryURL string) *relay.Relay {
	client := sqs.NewFromConfig(a.AWS)
	return &relay.Relay{Queue: sqsqueue.New(client, translationURL), Events: fanout(a, client, deliveryURL),
		Parking: relaystore.New(a.DB, a.Table), Translations: translationstore.New(a.DB, a.Table)}
}
