package netguard_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/netguard"
)

// TestAllowedForms: the blocked ranges in their IPv4-mapped, NAT64, 6to4 and
// IPv4-compatible forms, and the allow list in every form.
func TestAllowedForms(t *testing.T) {
	local, err := netguard.ParseAllow("127.0.0.0/8, ::1/128,10.1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip      string
		allow   []netip.Prefix
		allowed bool
	}{
		{"93.184.216.34", nil, true},
		{"2606:4700::1111", nil, true},
		{"127.0.0.1", nil, false},
		{"127.255.255.254", nil, false},
		{"10.0.0.1", nil, false},
		{"172.16.0.1", nil, false},
		{"172.31.255.255", nil, false},
		{"172.32.0.1", nil, true},
		{"192.168.1.1", nil, false},
		{"169.254.169.254", nil, false},
		{"100.64.0.1", nil, false},
		{"100.127.255.255", nil, false},
		{"100.128.0.1", nil, true},
		{"0.0.0.0", nil, false},
		{"0.1.2.3", nil, false},
		{"224.0.0.1", nil, false},
		{"239.255.255.250", nil, false},
		{"255.255.255.255", nil, false},
		{"::1", nil, false},
		{"::", nil, false},
		{"fc00::1", nil, false},
		{"fd12:3456::1", nil, false},
		{"fe80::1", nil, false},
		{"fe80::1%eth0", nil, false},
		{"ff02::1", nil, false},
		{"::ffff:127.0.0.1", nil, false},
		{"::ffff:169.254.169.254", nil, false},
		{"::ffff:93.184.216.34", nil, true},
		{"64:ff9b::127.0.0.1", nil, false},
		{"64:ff9b::a9fe:a9fe", nil, false},
		{"64:ff9b::93.184.216.34", nil, true},
		{"64:ff9b:1::1", nil, false},
		// SIIT's IPv4-translated form.
		{"::ffff:0:7f00:1", nil, false},
		{"::ffff:0:a9fe:a9fe", nil, false},
		{"::ffff:0:5db8:d822", nil, true},
		{"::127.0.0.1", nil, false},
		{"2002:7f00:1::1", nil, false},
		{"2002:5db8:d822::1", nil, true},
		// The allow list exempts ranges, in every form.
		{"127.0.0.1", local, true},
		{"::ffff:127.0.0.1", local, true},
		{"::1", local, true},
		{"10.1.2.3", local, true},
		{"10.1.2.4", local, false},
		{"169.254.169.254", local, false},
	} {
		ip := netip.MustParseAddr(tc.ip)
		if got := netguard.Allowed(ip, tc.allow, false); got != tc.allowed {
			t.Errorf("Allowed(%s, %v) = %v, want %v", tc.ip, tc.allow, got, tc.allowed)
		}
	}
	if netguard.Allowed(netip.Addr{}, nil, false) {
		t.Fatal("the zero address is allowed")
	}
}

func TestHostIP(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"017700000001", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"[::1]", "::1"},
		{"::ffff:7f00:1", "::ffff:127.0.0.1"},
		{"fe80::1%25eth0", "fe80::1"},
		{"example.invalid", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"4294967296", ""},
		{"0x1g", ""},
		// Long numeric spellings that getaddrinfo reads (leading zeros).
		{"0x00000000a9fea9fe", "169.254.169.254"},
		{"000000000000251.254.169.254", "169.254.169.254"},
		{"0000000000012.0.0.1", "10.0.0.1"},
		{"0x0000000000a.0.0.1", "10.0.0.1"},
		{"00000000000000000000", "0.0.0.0"},
		{"0x000000000000000", "0.0.0.0"},
		{"0x00000000000000000000000000000000000000007f000001", "127.0.0.1"},
		// Past 64 bits strtoul answers ERANGE: no address.
		{"0x1ffffffffffffffff", ""},
		{"99999999999999999999", ""},
		{"", ""},
	} {
		ip, ok := netguard.HostIP(tc.host)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tc.want {
			t.Errorf("HostIP(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	local, _ := netguard.ParseAllow("127.0.0.0/8,::1/128")
	long := "https://hooks.example.invalid/" + strings.Repeat("a", netguard.MaxURLLen-len("https://hooks.example.invalid/"))
	for _, tc := range []struct {
		url   string
		allow []netip.Prefix
		want  error
	}{
		{"https://hooks.example.invalid/chat", nil, nil},
		{"HTTPS://hooks.example.invalid:8443/a?b=c", nil, nil},
		{long, nil, nil},
		{long + "a", nil, netguard.ErrURLTooLong},
		{"http://hooks.example.invalid/chat", nil, netguard.ErrScheme},
		{"ftp://hooks.example.invalid/", nil, netguard.ErrNotAbsolute},
		{"/relative", nil, netguard.ErrNotAbsolute},
		{"hooks.example.invalid", nil, netguard.ErrNotAbsolute},
		{"https://", nil, netguard.ErrNotAbsolute},
		{"https:opaque", nil, netguard.ErrNotAbsolute},
		{"https://user:pass@hooks.example.invalid/", nil, netguard.ErrUserInfo},
		{"https://user@hooks.example.invalid/", nil, netguard.ErrUserInfo},
		{"https://127.0.0.1/", nil, netguard.ErrBlockedRange},
		{"https://2130706433/", nil, netguard.ErrBlockedRange},
		{"https://0x7f.1/", nil, netguard.ErrBlockedRange},
		{"https://0177.0.0.1/", nil, netguard.ErrBlockedRange},
		{"https://169.254.169.254/latest/meta-data", nil, netguard.ErrBlockedRange},
		{"https://[::1]/", nil, netguard.ErrBlockedRange},
		{"https://[::ffff:127.0.0.1]/", nil, netguard.ErrBlockedRange},
		{"https://[64:ff9b::a9fe:a9fe]/", nil, netguard.ErrBlockedRange},
		{"https://[fe80::1%25eth0]/", nil, netguard.ErrBlockedRange},
		{"https://0x00000000a9fea9fe/", nil, netguard.ErrBlockedRange},
		{"https://000000000000251.254.169.254/", nil, netguard.ErrBlockedRange},
		{"https://0000000000012.0.0.1/", nil, netguard.ErrBlockedRange},
		{"https://0x0000000000a.0.0.1/", nil, netguard.ErrBlockedRange},
		{"https://00000000000000000000/", nil, netguard.ErrBlockedRange},
		{"https://0x000000000000000/", nil, netguard.ErrBlockedRange},
		{"https://[::ffff:0:7f00:1]/", nil, netguard.ErrBlockedRange},
		{"https://localhost/", nil, netguard.ErrBlockedRange},
		{"https://api.localhost./", nil, netguard.ErrBlockedRange},
		{"https://93.184.216.34/", nil, nil},
		// Inside OUTBOUND_ALLOW_CIDRS, http and the range are accepted.
		{"http://127.0.0.1:8080/hook", local, nil},
		{"https://127.0.0.1:8080/hook", local, nil},
		{"http://localhost:8080/hook", local, nil},
		{"http://[::1]:8080/", local, nil},
		{"http://10.0.0.1/", local, netguard.ErrScheme},
		{"https://10.0.0.1/", local, netguard.ErrBlockedRange},
		{"http://hooks.example.invalid/", local, netguard.ErrScheme},
	} {
		if got := netguard.CheckTarget(tc.url, tc.allow); !errors.Is(got, tc.want) {
			t.Errorf("CheckTarget(%.60q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

func TestParseAllow(t *testing.T) {
	if p, err := netguard.ParseAllow(""); err != nil || len(p) != 0 {
		t.Fatalf("empty: %v %v, want none", p, err)
	}
	for _, bad := range []string{"127.0.0.0/33", "localhost", "10.0.0.0/8,nope"} {
		if _, err := netguard.ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}
