// Package netguard decides which network addresses the service may connect
// to on a workspace's behalf (outbound and support webhook targets): never
// loopback, private, link-local, CGNAT, multicast or other internal ranges,
// in any of their spellings, unless an operator allows a range explicitly
// (OUTBOUND_ALLOW_CIDRS). It is used when a target URL is saved and, later,
// by the delivery dialler on the address actually dialled.
package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// blocked4 are the IPv4 ranges no target may be in (contract section 11).
// 240.0.0.0/4 (reserved, never routable) is added beside the broadcast
// address it contains.
var blocked4 = prefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // RFC 1918
	"100.64.0.0/10",      // CGNAT
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, including 169.254.169.254
	"172.16.0.0/12",      // RFC 1918
	"192.168.0.0/16",     // RFC 1918
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // broadcast
)

// blocked6 are the IPv6 ranges no target may be in. IPv4 embedded in IPv6
// (mapped, compatible, NAT64, 6to4) is judged by its IPv4 address instead.
var blocked6 = prefixes(
	"::/128",         // unspecified
	"::1/128",        // loopback
	"fc00::/7",       // unique local
	"fe80::/10",      // link-local
	"fec0::/10",      // site-local (deprecated)
	"ff00::/8",       // multicast
	"64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
	"100::/64",       // discard-only
	"2001:db8::/32",  // documentation
)

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	compat = netip.MustParsePrefix("::/96")
	six4   = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// embedded4 returns the IPv4 address that ip stands for: itself, or the one
// embedded in an IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96) or 6to4
// address.
func embedded4(ip netip.Addr) (netip.Addr, bool) {
	if ip.Is4() {
		return ip, true
	}
	if ip.Is4In6() {
		return ip.Unmap(), true
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip), compat.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case six4.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Blocked reports whether ip is in a range no target may be in, in any
// IPv4-in-IPv6 form. An invalid address is blocked.
func Blocked(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("")
	if v4, ok := embedded4(ip); ok {
		for _, p := range blocked4 {
			if p.Contains(v4) {
				return true
			}
		}
		if ip.Is4() || ip.Is4In6() {
			return false
		}
	}
	for _, p := range blocked6 {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Allowed reports whether the service may connect to ip: it is inside one
// of allow (in its own or its IPv4 form), or outside every blocked range.
func Allowed(ip netip.Addr, allow []netip.Prefix) bool {
	if !ip.IsValid() {
		return false
	}
	return inAllow(ip, allow) || !Blocked(ip)
}

func inAllow(ip netip.Addr, allow []netip.Prefix) bool {
	ip = ip.WithZone("")
	v4, has4 := embedded4(ip)
	for _, p := range allow {
		if p.Contains(ip) || has4 && p.Contains(v4) {
			return true
		}
	}
	return false
}

// ParseAllow parses a comma-separated list of CIDRs (OUTBOUND_ALLOW_CIDRS);
// blanks are skipped. An address without a length is a single host.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("netguard: %q is not a CIDR", part)
			}
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("netguard: %q is not a CIDR", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// HostIP returns the address a URL host names literally, in any spelling a
// resolver accepts: IPv6 (with or without brackets and zone), dotted IPv4,
// and the inet_aton forms (decimal 2130706433, octal 0177.0.0.1, hex
// 0x7f.1, shortened 127.1), with or without one trailing dot. ok is false
// for a host name.
func HostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if i := strings.IndexByte(h, '%'); i >= 0 && strings.Contains(h, ":") {
		h = h[:i]
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.WithZone(""), true
	}
	return parseInetAton(h)
}

// parseInetAton parses the 1 to 4 part numeric IPv4 forms of inet_aton(3).
func parseInetAton(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func atonPart(p string) (uint64, bool) {
	if p == "" || len(p) > 12 {
		return 0, false
	}
	base := 10
	switch {
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" alone is 0 to inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	v, err := strconv.ParseUint(p, base, 64)
	return v, err == nil
}
