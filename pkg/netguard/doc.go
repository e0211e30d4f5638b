// Package netguard decides which network addresses an outbound delivery may
// connect to, and supplies the dialler and HTTP client that enforce that
// decision on the address actually dialled (after DNS resolution, on every
// connection), so that neither DNS rebinding, a redirect nor a proxy can
// reach a blocked range (contract section 11).
package netguard
