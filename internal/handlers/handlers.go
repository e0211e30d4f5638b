// Package handlers builds every HTTP function's handler by its logical id,
// for `chatctl serve` and the tests: the registry (HTTP, generated from
// functions/*/main.go by `make template`) is the functions' own choice of
// constructor, so local runs build exactly what each Lambda runs. No
// function links this package.
package handlers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/httpfn"
)

// plain adapts the handler of a function that needs no App
// (httpapi.RunPlain's).
func plain(h func() http.Handler) app.HTTPConstructor {
	return func(*app.App) (http.Handler, error) { return h(), nil }
}

// All builds every HTTP function's handler, each once (a local server
// keeps their caches warm like a Lambda does) on a.For(its function).
func All(a *app.App) (map[string]http.Handler, error) {
	out := make(map[string]http.Handler, len(HTTP))
	for fn, build := range HTTP {
		h, err := build(a.For(fn))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
		out[fn] = h
	}
	return out, nil
}

// FromEnv builds HTTP function function's Lambda handler from the
// environment, as its main.go does.
func FromEnv(ctx context.Context, function string) (httpfn.Handler, error) {
	build, ok := HTTP[function]
	if !ok {
		return nil, fmt.Errorf("handlers: %s is no HTTP function's", function)
	}
	return httpfn.FromEnv(ctx, function, build)
}
