package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
)

// MaxURLLen bounds a target URL (contract section 10).
const MaxURLLen = 2048

// Reasons a target URL is refused.
var (
	ErrURLTooLong   = errors.New("netguard: url longer than 2048 characters")
	ErrNotAbsolute  = errors.New("netguard: not an absolute http(s) url with a host")
	ErrScheme       = errors.New("netguard: scheme is not https")
	ErrUserInfo     = errors.New("netguard: url carries user info")
	ErrBlockedRange = errors.New("netguard: host is an address in a blocked range")
)

// CheckTarget judges a webhook target URL as it is saved: absolute https
// with a host, no user info, at most MaxURLLen characters, and not an IP
// literal (in any spelling) in a blocked range. http, and blocked ranges,
// are accepted only for hosts inside allow. "localhost" and its subdomains
// stand for the loopback addresses (RFC 6761). A host name is not resolved
// here: the delivery dialler checks the address it actually dials.
func CheckTarget(raw string, allow []netip.Prefix) error {
	if len(raw) > MaxURLLen {
		return ErrURLTooLong
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return ErrNotAbsolute
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return ErrUserInfo
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return ErrNotAbsolute
	}
	host := strings.ToLower(u.Hostname())
	var ips []netip.Addr
	if ip, ok := HostIP(host); ok {
		ips = []netip.Addr{ip}
	} else if h := strings.TrimSuffix(host, "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		ips = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	}
	allowed := len(ips) > 0
	for _, ip := range ips {
		allowed = allowed && inAllow(ip, allow)
	}
	if scheme == "http" && !allowed {
		return ErrScheme
	}
	for _, ip := range ips {
		if !allowed && Blocked(ip) {
			return ErrBlockedRange
		}
	}
	return nil
}
