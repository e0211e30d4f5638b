// Package openapitest holds the responses that tests see to openapi.yaml:
// a test passes every response to Check, which fails the test when the
// document does not describe that response for that request (status,
// required headers, and the JSON body against its schema, errors included).
//
// Requests are never validated: tests send hostile requests on purpose. The
// document is loaded from the embed in the root package and validated once.
package openapitest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validator matches responses against one OpenAPI document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// noRoute answers requests that match no operation: 404 for an
	// unknown path, 405 for a known path with another method.
	noRoute *openapi3.Operation
}

// Load parses an OpenAPI document, validates it (examples included) and
// prepares its router.
func Load(data []byte) (*Validator, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapitest: load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapitest: invalid document: %w", err)
	}
	// Routing ignores servers: tests send requests to httptest's
	// example.com, and the paths are the same under every server.
	routing := *doc
	routing.Servers = nil
	router, err := gorillamux.NewRouter(&routing)
	if err != nil {
		return nil, fmt.Errorf("openapitest: router: %w", err)
	}
	v := &Validator{doc: doc, router: router}
	notFound := doc.Components.Responses["NotFound"]
	notAllowed := doc.Components.Responses["MethodNotAllowed"]
	if notFound == nil || notAllowed == nil {
		return nil, errors.New("openapitest: components.responses lacks NotFound or MethodNotAllowed")
	}
	v.noRoute = &openapi3.Operation{Responses: openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNotFound, notFound),
		openapi3.WithStatus(http.StatusMethodNotAllowed, notAllowed),
	)}
	return v, nil
}

var (
	loadOnce sync.Once
	std      *Validator
	errStd   error
)

// Default returns the validator of the embedded openapi.yaml, loaded once.
func Default() (*Validator, error) {
	loadOnce.Do(func() { std, errStd = Load(chatbundle.OpenAPI) })
	return std, errStd
}

// Doc returns the loaded document.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// Check fails t when the response (status, header, body) to req is not one
// that openapi.yaml describes. It reports with t.Errorf, not t.Fatalf, so
// that it may be called from the goroutines of concurrency tests.
func Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	v, err := Default()
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if err := v.Validate(req, status, header, body); err != nil {
		t.Errorf("openapi.yaml does not describe the response to %s %s: %v\nstatus %d, headers %v\nbody %s",
			req.Method, req.URL.RequestURI(), err, status, header, truncate(body, 2048))
	}
}

// Validate returns why the response to req does not match the document, or
// nil. A request that matches an operation is held to that operation's
// responses; any other request must get the document's NotFound (unknown
// path) or MethodNotAllowed (known path, with an Allow header naming exactly
// the path's methods).
func (v *Validator) Validate(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.router.FindRoute(req)
	switch {
	case err == nil:
	case errors.Is(err, routers.ErrPathNotFound):
		if status != http.StatusNotFound {
			return fmt.Errorf("no path of the document matches, so the status must be 404, got %d", status)
		}
		return v.validate(v.noRouteFor(req), nil, req, status, header, body)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		if status != http.StatusMethodNotAllowed {
			return fmt.Errorf("the path does not list %s, so the status must be 405, got %d", req.Method, status)
		}
		rt := v.noRouteFor(req)
		if allow := v.allowed(req); header.Get("Allow") != allow {
			return fmt.Errorf("Allow %q, want %q (the path's operations)", header.Get("Allow"), allow)
		}
		return v.validate(rt, nil, req, status, header, body)
	default:
		return fmt.Errorf("find route: %w", err)
	}
	if route.Operation.Responses.Status(status) == nil {
		// Checked here because openapi3filter passes some statuses (301,
		// 304, 307, 308) without looking at the operation.
		return fmt.Errorf("status %d is not a response of operation %s", status, route.Operation.OperationID)
	}
	return v.validate(route, params, req, status, header, body)
}

func (v *Validator) noRouteFor(req *http.Request) *routers.Route {
	return &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: v.noRoute}
}

// allowed lists the methods of the path that req's path matches, as the
// Allow header does: sorted, comma-separated.
func (v *Validator) allowed(req *http.Request) string {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(context.Background())
		probe.Method = m
		if route, _, err := v.router.FindRoute(probe); err == nil {
			var methods []string
			for method := range route.PathItem.Operations() {
				methods = append(methods, method)
			}
			slices.Sort(methods)
			return strings.Join(methods, ", ")
		}
	}
	return ""
}

func (v *Validator) validate(route *routers.Route, params map[string]string, req *http.Request, status int, header http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + fmt.Sprintf("… (%d bytes)", len(b))
}
