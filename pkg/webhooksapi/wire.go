package webhooksapi

import (
	"fmt"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Service is webhook management on the table and the clock, and its
// authenticator; OUTBOUND_ALLOW_CIDRS exempts local receivers.
func Service(a *app.App) (*workspaces.Authenticator, *webhooks.Service, error) {
	allow, err := netguard.ParseAllow(awsenv.Get(app.EnvOutboundAllowCIDRS, ""))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", app.EnvOutboundAllowCIDRS, err)
	}
	return auth(a), &webhooks.Service{Store: webhookstore.New(a.DB, a.Table), IDs: a.IDs, Now: a.Now, Allow: allow}, nil
}

// with builds a management handler on Service.
func with(build func(auth *workspaces.Authenticator, m *webhooks.Service) http.Handler) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		auth, m, err := Service(a)
		if err != nil {
			return nil, err
		}
		return build(auth, m), nil
	}
}

// Create builds Create<kind>WebhookFunction.
func Create(kind webhooks.Kind) app.HTTPConstructor {
	return with(func(auth *workspaces.Authenticator, m *webhooks.Service) http.Handler {
		return CreateWebhookHandler(kind, auth, m)
	})
}

// Update builds Update<kind>WebhookFunction.
func Update(kind webhooks.Kind) app.HTTPConstructor {
	return with(func(_ *workspaces.Authenticator, m *webhooks.Service) http.Handler {
		return ChangeWebhookHandler(kind, m)
	})
}

// Delete builds Delete<kind>WebhookFunction.
func Delete(kind webhooks.Kind) app.HTTPConstructor {
	return with(func(_ *workspaces.Authenticator, m *webhooks.Service) http.Handler {
		return DeleteWebhookHandler(kind, m)
	})
}

// Rotate builds Rotate<kind>WebhookSecretFunction.
func Rotate(kind webhooks.Kind) app.HTTPConstructor {
	return with(func(_ *workspaces.Authenticator, m *webhooks.Service) http.Handler {
		return RotateWebhookHandler(kind, m)
	})
}

// AuditEvents builds ListAuditEventsFunction.
func AuditEvents(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	return with(func(auth *workspaces.Authenticator, m *webhooks.Service) http.Handler {
		return AuditEventsHandler(auth, m, codec)
	})(a)
}

// InboundWebhooks builds ListInboundWebhooksFunction.
func InboundWebhooks(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	return InboundWebhooksHandler(auth(a), webhookstore.New(a.DB, a.Table), codec), nil
}

// OutboundWebhooks builds ListOutboundWebhooksFunction.
func OutboundWebhooks(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	return OutboundWebhooksHandler(auth(a), webhookstore.New(a.DB, a.Table), codec), nil
}

// SupportWebhooks builds ListSupportWebhooksFunction.
func SupportWebhooks(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	return SupportWebhooksHandler(auth(a), webhookstore.New(a.DB, a.Table), codec), nil
}

// auth is the workspace authenticator on the API tokens.
func auth(a *app.App) *workspaces.Authenticator {
	return a.Authenticator()
}
