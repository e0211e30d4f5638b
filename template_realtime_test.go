package chatbundle_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// samRouteKey is what SAM CLI's `sam local start-api` accepts as an
// AWS::ApiGatewayV2::Route's RouteKey (its _parse_route_key): "$default" or
// "METHOD /path". A $connect, $disconnect or custom key makes the whole
// command fail at start, so the WebSocket API declares $default alone.
var samRouteKey = regexp.MustCompile(`^(\$default|(ANY|GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) /\S*)$`)

// TestRouteKeysStartSamLocal holds every AWS::ApiGatewayV2::Route of the
// template to a route key `sam local start-api` can read.
func TestRouteKeysStartSamLocal(t *testing.T) {
	tmpl := parse(t)
	routes := tmpl.OfType("AWS::ApiGatewayV2::Route")
	if len(routes) == 0 {
		t.Fatalf("no AWS::ApiGatewayV2::Route in the template; the realtime API's $default route is missing")
	}
	for _, id := range routes {
		key := fmt.Sprint(props(tmpl, id)["RouteKey"])
		if !samRouteKey.MatchString(key) {
			t.Errorf("%s: RouteKey %q, want $default or \"METHOD /path\" (sam local start-api fails on any other)", id, key)
		}
	}
}

// TestRealtimeAPIWiring: the WebSocket API selects routes on the body's
// action, its $default route reaches RealtimeFunction, and each realtime
// function may manage only that API's connections.
func TestRealtimeAPIWiring(t *testing.T) {
	tmpl := parse(t)
	api := props(tmpl, "RealtimeApi")
	if api["ProtocolType"] != "WEBSOCKET" || api["RouteSelectionExpression"] != "$request.body.action" {
		t.Fatalf("RealtimeApi: %v", api)
	}
	if uri := fmt.Sprint(props(tmpl, "RealtimeIntegration")["IntegrationUri"]); !strings.Contains(uri, "${RealtimeFunction.Arn}") {
		t.Fatalf("RealtimeIntegration targets %s, want RealtimeFunction", uri)
	}
	for _, fn := range []string{"RealtimeFunction", "RealtimePushFunction"} {
		managed := 0
		for _, pol := range listOf(props(tmpl, fn)["Policies"]) {
			for _, st := range listOf(mapOf(pol)["Statement"]) {
				sm := mapOf(st)
				for _, a := range listOf(sm["Action"]) {
					if fmt.Sprint(a) != "execute-api:ManageConnections" {
						continue
					}
					for _, r := range listOf(sm["Resource"]) {
						managed++
						arn := fmt.Sprint(r)
						if sub, ok := mapOf(r)["!Sub"]; ok {
							arn = fmt.Sprint(sub)
						}
						if !strings.Contains(arn, "${RealtimeApi}/live/") || !strings.HasSuffix(arn, "/@connections/*") {
							t.Errorf("%s: ManageConnections on %v, want the realtime API's connections only", fn, r)
						}
					}
				}
			}
		}
		if managed == 0 {
			t.Errorf("%s: no execute-api:ManageConnections grant", fn)
		}
	}
}
