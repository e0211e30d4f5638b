// Command fallback is FallbackFunction, API Gateway's $default route: it
// answers every request that matched no route with the contract's JSON 404,
// or 405 with Allow when the path is a known route's.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
)

func main() {
	app.InitLambdaLogger()
	app.StartHTTP(nil)
}
