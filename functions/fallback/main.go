// Command fallback is FallbackFunction, API Gateway's $default route: it
// answers every request that matched no route with the contract's JSON 404,
// or 405 with Allow when the path is a known route's.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
)

const function = "FallbackFunction"

func main() {
	app.InitLambdaLogger()
	app.Start(function, handler(), nil)
}

// handler needs no configuration: it serves no route of its own.
func handler() app.HTTPHandler { return app.HTTPLambda(nil) }
