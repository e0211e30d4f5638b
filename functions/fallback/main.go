// Command fallback is FallbackFunction, API Gateway's $default route: it
// answers every request that matched no route with the contract's JSON 404,
// or 405 with Allow when the path is a known route's. It needs no
// configuration and links no AWS SDK client, so it starts fast.
package main

import "github.com/chatbridge/chat/pkg/httpapi"

func main() { httpapi.RunPlain(httpapi.FallbackFunction, nil) }
