package handlers_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/templategen"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// TestRegistryIsCurrent: the generated registry is what functions/*/main.go
// name today (`make template` rewrites it).
func TestRegistryIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := templategen.Handlers(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, templategen.HandlersFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `make template`", templategen.HandlersFile)
	}
}

// TestEveryRouteHasItsConstructor: each route's function is in the
// registry, and nothing else is.
func TestEveryRouteHasItsConstructor(t *testing.T) {
	routes := map[string]bool{}
	for _, rt := range httpapi.Routes {
		routes[rt.Function] = true
		if handlers.HTTP[rt.Function] == nil {
			t.Errorf("%s (%s %s): no constructor in the registry", rt.Function, rt.Method, rt.Path)
		}
	}
	for fn := range handlers.HTTP {
		if !routes[fn] {
			t.Errorf("%s: in the registry, serves no route", fn)
		}
	}
}
