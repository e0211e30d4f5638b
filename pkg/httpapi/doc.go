// Package httpapi is the HTTP face of the service: one plain http.Handler
// per endpoint, the route table that template.yaml and `chatctl serve` share,
// strict JSON decoding, and the one error writer that maps contract codes to
// statuses and bodies.
//
// Every Lambda runs its handler through httpadapter.NewV2(h).ProxyWithContext;
// the local server mounts the same handlers on one mux.
package httpapi
