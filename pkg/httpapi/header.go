package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// rawHeadersKey carries an API Gateway event's headers, as sent, in the
// context of the request built from it.
type rawHeadersKey struct{}

// Lambda returns h as the Lambda handler of a function behind API
// Gateway's HTTP API (payload format 2.0): the V2 adapter, keeping the
// request context and the event's header values for Header.
func Lambda(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	proxy := httpadapter.NewV2(h).ProxyWithContext
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return proxy(context.WithValue(ctx, rawHeadersKey{}, ev.Headers), ev)
	}
}

// Header returns header name's value as the client sent it, and whether it
// was sent. Repeated headers are joined with commas, as API Gateway does.
// Read credentials and keys with it, never with r.Header.Get: the V2
// adapter splits every header but a few on commas and trims the pieces, so
// a secret "ab, cd" would reach r.Header as "ab" and "cd". Under Lambda,
// Header reads the event's own value instead; locally, it joins net/http's
// values. A comma means the same in both.
func Header(r *http.Request, name string) (string, bool) {
	if raw, ok := r.Context().Value(rawHeadersKey{}).(map[string]string); ok {
		// API Gateway sends header names in lower case.
		if v, ok := raw[strings.ToLower(name)]; ok {
			return v, true
		}
		for k, v := range raw {
			if strings.EqualFold(k, name) {
				return v, true
			}
		}
		return "", false
	}
	vals := r.Header.Values(name)
	if len(vals) == 0 {
		return "", false
	}
	return strings.Join(vals, ","), true
}
