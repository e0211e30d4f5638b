package deliveriesapi

import (
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Log builds List<kind>DeliveriesFunction (kind: events.KindOutbound or
// events.KindSupport).
func Log(kind string) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		codec, err := cursor.Of(a.CursorKey)
		if err != nil {
			return nil, err
		}
		return DeliveriesHandler(a.Authenticator(), kind, deliverystore.New(a.DB, a.Table), codec), nil
	}
}

// Redeliver builds Redeliver<kind>Function, queueing on DELIVERY_QUEUE_URL.
func Redeliver(kind string) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		r := &delivery.Redeliverer{Store: deliverystore.New(a.DB, a.Table), Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), os.Getenv(awsenv.EnvDeliveryQueueURL)), Now: a.Now}
		return RedeliverHandler(a.Authenticator(), kind, r), nil
	}
}

// Recover builds Recover<kind>DeliveriesFunction, queueing on
// DELIVERY_QUEUE_URL.
func Recover(kind string) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		st := deliverystore.New(a.DB, a.Table)
		q := sqsqueue.New(sqs.NewFromConfig(a.AWS), os.Getenv(awsenv.EnvDeliveryQueueURL))
		rec := &delivery.Recoverer{Store: st, Queue: q, Now: a.Now}
		return RecoverDeliveriesHandler(a.Authenticator(), kind, st, rec, a.Now), nil
	}
}

// Kinds of the delivery log's functions.
const (
	Outbound = events.KindOutbound
	Support  = events.KindSupport
)
