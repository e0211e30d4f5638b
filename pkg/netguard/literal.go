package netguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// Blocked reports whether ip is in a range no target may be in, in any
// IPv4-in-IPv6 form, whatever the allow list. An invalid address is blocked.
func Blocked(ip netip.Addr) bool { return !Allowed(ip, nil, false) }

// inAllow reports whether ip, or the IPv4 address it maps, is inside allow.
func inAllow(ip netip.Addr, allow []netip.Prefix) bool {
	ip = ip.WithZone("")
	return inAny(ip, allow) || (ip.Is4In6() && inAny(ip.Unmap(), allow))
}

// ParseAllow is ParseCIDRs, under the name webhook management uses.
func ParseAllow(s string) ([]netip.Prefix, error) { return ParseCIDRs(s) }

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

// atonPart parses one part as strtoul(3) with base 0 does for inet_aton:
// any number of leading zeros (glibc reads "0000000000012" as octal 12), and
// a value past 64 bits is no address (strtoul's ERANGE).
func atonPart(p string) (uint64, bool) {
	if p == "" {
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
	// Leading zeros do not change the value, however many there are.
	if trimmed := strings.TrimLeft(p, "0"); trimmed != "" {
		p = trimmed
	} else {
		p = "0"
	}
	v, err := strconv.ParseUint(p, base, 64)
	return v, err == nil
}
