package app

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Environment of event delivery (contract section 11).
const (
	EnvDeliverySchedule   = "DELIVERY_SCHEDULE"
	EnvOutboundAllowCIDRs = "OUTBOUND_ALLOW_CIDRS"
	EnvOutboundAllowOnly  = "OUTBOUND_ALLOW_ONLY"
)

// Guard reads OUTBOUND_ALLOW_CIDRS and OUTBOUND_ALLOW_ONLY.
func Guard() (*netguard.Guard, error) {
	allow, err := netguard.ParseCIDRs(os.Getenv(EnvOutboundAllowCIDRs))
	if err != nil {
		return nil, err
	}
	only := strings.TrimSpace(os.Getenv(EnvOutboundAllowOnly))
	if only != "" && only != "true" && only != "false" {
		return nil, fmt.Errorf("app: %s=%q, want true or false", EnvOutboundAllowOnly, only)
	}
	return &netguard.Guard{Allow: allow, AllowOnly: only == "true"}, nil
}

// Deliverer builds the delivery function's deliverer on the queue at
// queueURL, from the environment (DELIVERY_SCHEDULE, OUTBOUND_ALLOW_*).
func (a *App) Deliverer(queueURL string) (*delivery.Deliverer, error) {
	sched, err := delivery.ParseSchedule(os.Getenv(EnvDeliverySchedule))
	if err != nil {
		return nil, err
	}
	g, err := Guard()
	if err != nil {
		return nil, err
	}
	ttl, err := WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	return &delivery.Deliverer{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), queueURL), Client: g.Client(),
		Schedule: sched, Now: a.Now, Rand: rand.Float64, CacheTTL: ttl}, nil
}

// Fanout builds the relay's event fan-out onto the delivery queue.
func (a *App) Fanout(queueURL string) *relay.Fanout {
	return &relay.Fanout{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), queueURL), Now: a.Now}
}

// ListOutboundDeliveriesHandler serves ListOutboundDeliveriesFunction.
func (a *App) ListOutboundDeliveriesHandler() http.Handler {
	return httpapi.DeliveriesHandler(a.auth(), events.KindOutbound, a.Store, a.Cursor)
}

// ListSupportDeliveriesHandler serves ListSupportDeliveriesFunction.
func (a *App) ListSupportDeliveriesHandler() http.Handler {
	return httpapi.DeliveriesHandler(a.auth(), events.KindSupport, a.Store, a.Cursor)
}

// redeliverer queues redeliveries on DELIVERY_QUEUE_URL.
func (a *App) redeliverer() *delivery.Redeliverer {
	return &delivery.Redeliverer{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), os.Getenv(awsenv.EnvDeliveryQueueURL))}
}

// RedeliverOutboundHandler serves RedeliverOutboundFunction.
func (a *App) RedeliverOutboundHandler() http.Handler {
	return httpapi.RedeliverHandler(a.auth(), events.KindOutbound, a.redeliverer())
}

// RedeliverSupportHandler serves RedeliverSupportFunction.
func (a *App) RedeliverSupportHandler() http.Handler {
	return httpapi.RedeliverHandler(a.auth(), events.KindSupport, a.redeliverer())
}

// deliveryHandlers are the delivery log's HTTP functions.
func (a *App) deliveryHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"ListOutboundDeliveriesFunction": a.ListOutboundDeliveriesHandler(),
		"ListSupportDeliveriesFunction":  a.ListSupportDeliveriesHandler(),
		"RedeliverOutboundFunction":      a.RedeliverOutboundHandler(),
		"RedeliverSupportFunction":       a.RedeliverSupportHandler(),
	}
}
