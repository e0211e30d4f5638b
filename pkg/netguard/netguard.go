package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrNotAllowed is the cause of every refused connection: the target's
// address is in a blocked range, or outside the allow list when only the
// allow list is open. Callers test it with errors.Is (it survives the
// url.Error and net.OpError wrappers of net/http).
var ErrNotAllowed = errors.New("netguard: target_not_allowed")

// Timeout bounds one request, connection and response included.
const Timeout = 10 * time.Second

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// blocked4 are IPv4 ranges never connected to: "this network", RFC 1918,
// CGNAT, loopback, link-local (the instance metadata service), IETF protocol
// assignments, documentation, 6to4 relay anycast, benchmarking, multicast,
// reserved and broadcast.
var blocked4 = prefixes(
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
	"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
)

// blocked6 are IPv6 ranges never connected to. The IPv4-compatible ::/96
// (which holds :: and ::1), Teredo and the other IETF assignments of
// 2001::/23, the local-use NAT64 prefix and 6to4's deprecated relay are
// refused whole; 6to4 (2002::/16) and the well-known NAT64 prefix are
// judged by the IPv4 address they embed (embedded).
var blocked6 = prefixes(
	"::/96", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
	"64:ff9b:1::/48", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// siit is the IPv4-translated prefix of SIIT (RFC 2765, ::ffff:0:a.b.c.d).
	siit = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// embedded returns the IPv4 address an IPv6 address stands for, if any:
// IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (SIIT, ::ffff:0:a.b.c.d),
// well-known NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::/48).
func embedded(ip netip.Addr) (netip.Addr, bool) {
	switch {
	case ip.Is4In6():
		return ip.Unmap(), true
	case nat64.Contains(ip), siit.Contains(ip):
		b := ip.As16()
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		b := ip.As16()
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

func inAny(ip netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Allowed reports whether a connection to ip may be made. An address inside
// allow (OUTBOUND_ALLOW_CIDRS) is allowed; otherwise, when allowOnly
// (OUTBOUND_ALLOW_ONLY) is set, nothing is; otherwise an address is allowed
// unless it, or the IPv4 address it embeds, is in a blocked range. The
// zero Addr is refused.
func Allowed(ip netip.Addr, allow []netip.Prefix, allowOnly bool) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("")
	if inAny(ip, allow) || (ip.Is4In6() && inAny(ip.Unmap(), allow)) {
		return true
	}
	if allowOnly {
		return false
	}
	if v4, ok := embedded(ip); ok {
		if ip.Is4In6() {
			return !inAny(v4, blocked4)
		}
		return !inAny(v4, blocked4) && !inAny(ip, blocked6)
	}
	if ip.Is4() {
		return !inAny(ip, blocked4)
	}
	return !inAny(ip, blocked6)
}

// FromEnv returns the guard the environment describes: cidrsVar
// (OUTBOUND_ALLOW_CIDRS) holds the allowed ranges (ParseCIDRs), onlyVar
// (OUTBOUND_ALLOW_ONLY) "true" to allow only them, "false" or unset to
// allow every public address too. The delivery function and the webhook
// test build their guard with it.
func FromEnv(cidrsVar, onlyVar string) (*Guard, error) {
	allow, err := ParseCIDRs(os.Getenv(cidrsVar))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cidrsVar, err)
	}
	only := strings.TrimSpace(os.Getenv(onlyVar))
	if only != "" && only != "true" && only != "false" {
		return nil, fmt.Errorf("netguard: %s=%q, want true or false", onlyVar, only)
	}
	return &Guard{Allow: allow, AllowOnly: only == "true"}, nil
}

// ParseCIDRs parses a comma-separated list of CIDRs (OUTBOUND_ALLOW_CIDRS);
// a bare address stands for itself alone. Empty input is an empty list.
func ParseCIDRs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("netguard: allow list: %w", err)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("netguard: allow list: %w", err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard holds the allow list and enforces it on connections.
type Guard struct {
	Allow     []netip.Prefix
	AllowOnly bool
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer dials the checked address; nil means a net.Dialer with a 10 s
	// timeout. Its Control is replaced by the guard's.
	Dialer *net.Dialer
}

// Resolve returns the addresses of host that may be connected to. An IP
// literal is judged as it is; a name is resolved and refused when any of
// its addresses is blocked (a name that mixes public and private addresses
// is not one a webhook target should have). Errors: ErrNotAllowed, or the
// resolver's.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(host); err == nil {
		if !Allowed(ip, g.Allow, g.AllowOnly) {
			return nil, fmt.Errorf("%w: %s", ErrNotAllowed, ip)
		}
		return []netip.Addr{ip}, nil
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("netguard: %s has no address", host)
	}
	for _, a := range addrs {
		if !Allowed(a, g.Allow, g.AllowOnly) {
			return nil, fmt.Errorf("%w: %s resolves to %s", ErrNotAllowed, host, a)
		}
	}
	return addrs, nil
}

// Control is a net.Dialer Control hook: it runs on the socket's actual
// remote address, after resolution, before every connect, and refuses a
// blocked one. It is the last word: whatever resolved the name, and
// whichever proxy or redirect chose it, this is the address dialled.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrNotAllowed, address)
	}
	if !Allowed(ap.Addr(), g.Allow, g.AllowOnly) {
		return fmt.Errorf("%w: %s", ErrNotAllowed, ap.Addr())
	}
	return nil
}

// DialContext resolves addr with the guard's resolver, checks every
// address, and dials them in turn with the Control hook checking again.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	d := net.Dialer{Timeout: Timeout}
	if g.Dialer != nil {
		d = *g.Dialer
	}
	d.Control = g.Control
	d.ControlContext = nil
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// Client returns an HTTP client that connects only through the guard, never
// through a proxy (HTTP_PROXY and HTTPS_PROXY are ignored: a proxy would be
// the address dialled), follows no redirect (the 3xx is the response), and
// gives up after Timeout.
func (g *Guard) Client() *http.Client {
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   Timeout,
		ResponseHeaderTimeout: Timeout,
	}
	return &http.Client{
		Transport: t,
		Timeout:   Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
