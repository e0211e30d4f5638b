package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chatbridge/chat/pkg/netguard"
)

// fakeResolver answers from a table, like a system resolver that accepts
// inet_aton's forms ("0x7f.1") or a hostile DNS zone would.
type fakeResolver struct {
	mu    sync.Mutex
	names map[string][][]netip.Addr // successive answers; the last repeats
	calls map[string]int
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answers, ok := f.names[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	i := min(f.calls[host], len(answers)-1)
	f.calls[host]++
	return answers[i], nil
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func hostile() *fakeResolver {
	one := func(ss ...string) [][]netip.Addr { return [][]netip.Addr{addrs(ss...)} }
	return &fakeResolver{names: map[string][][]netip.Addr{
		"2130706433":        one("127.0.0.1"),
		"0177.0.0.1":        one("127.0.0.1"),
		"0x7f.1":            one("127.0.0.1"),
		"0x7f000001":        one("127.0.0.1"),
		"127.1":             one("127.0.0.1"),
		"017700000001":      one("127.0.0.1"),
		"localhost":         one("127.0.0.1", "::1"),
		"localhost.":        one("127.0.0.1", "::1"),
		"metadata.invalid":  one("169.254.169.254"),
		"metadata6.invalid": one("fd00:ec2::254"),
		"rfc1918.invalid":   one("10.1.2.3"),
		"mixed.invalid":     one("93.184.215.14", "192.168.1.1"),
		"cgnat.invalid":     one("100.64.0.1"),
		"mapped.invalid":    one("::ffff:169.254.169.254"),
		"nat64.invalid":     one("64:ff9b::7f00:1"),
		"public.invalid":    one("93.184.215.14"),
		"public6.invalid":   one("2606:2800:21f:cb07:6820:80da:af6b:8b2c"),
	}}
}

// TestResolveRefusesHostileTargets judges hostile URL hosts on the decision
// code with an injected resolver; nothing is dialled.
func TestResolveRefusesHostileTargets(t *testing.T) {
	refused := []string{
		"http://127.0.0.1/", "http://127.0.0.2:8080/", "http://2130706433/", "http://0177.0.0.1/",
		"http://0x7f.1/", "http://0x7f000001/", "http://127.1/", "http://017700000001/",
		"http://localhost/", "http://localhost./", "http://LOCALHOST/", "http://metadata.invalid/",
		"http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
		"http://[::ffff:a9fe:a9fe]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b::7f00:1]/",
		"http://[64:ff9b:1::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/", "http://[::1]/", "http://[::]/",
		"http://0.0.0.0/", "http://0.1.2.3/", "http://[fe80::1%25eth0]/", "http://[fe80::1]/", "http://[fd00::1]/",
		"http://[fc00::1]/", "http://10.0.0.1/", "http://172.16.5.4/", "http://172.31.255.255/",
		"http://192.168.0.1/", "http://100.64.0.1/", "http://100.127.255.254/", "http://224.0.0.1/",
		"http://255.255.255.255/", "http://240.0.0.1/", "http://[ff02::1]/", "http://192.0.2.1/",
		"http://198.18.0.1/", "http://[2001:db8::1]/", "http://[::127.0.0.1]/", "http://[2001::1]/",
		"http://rfc1918.invalid/", "http://mixed.invalid/", "http://cgnat.invalid/", "http://mapped.invalid/",
		"http://nat64.invalid/", "http://metadata6.invalid/", "http://[fec0::1]/", "http://[::ffff:10.0.0.1]/",
	}
	g := &netguard.Guard{Resolver: hostile()}
	for _, raw := range refused {
		t.Run(raw, func(t *testing.T) {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("url.Parse(%q): %v", raw, err)
			}
			got, err := g.Resolve(context.Background(), u.Hostname())
			if !errors.Is(err, netguard.ErrNotAllowed) {
				t.Fatalf("Resolve(%q) = %v, %v; want ErrNotAllowed", u.Hostname(), got, err)
			}
		})
	}
	if len(refused) < 30 {
		t.Fatalf("got %d hostile targets, want at least 30", len(refused))
	}
	for _, host := range []string{"93.184.215.14", "public.invalid", "public6.invalid", "2606:4700::1111", "::ffff:93.184.215.14", "64:ff9b::5db8:d70e"} {
		if _, err := g.Resolve(context.Background(), host); err != nil {
			t.Errorf("Resolve(%q) = %v, want allowed", host, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	loop, _ := netguard.ParseCIDRs("127.0.0.0/8, ::1")
	only1, _ := netguard.ParseCIDRs("127.0.0.1/32")
	cases := []struct {
		ip        string
		allow     []netip.Prefix
		allowOnly bool
		want      bool
	}{
		{"127.0.0.1", nil, false, false},
		{"127.0.0.1", loop, false, true},
		{"::1", loop, false, true},
		{"::ffff:127.0.0.1", loop, false, true},
		{"64:ff9b::7f00:1", loop, false, false}, // a NAT64 gateway is no loopback
		{"127.0.0.2", only1, true, false},
		{"127.0.0.1", only1, true, true},
		{"93.184.215.14", only1, true, false},
		{"93.184.215.14", nil, false, true},
		{"93.184.215.14", nil, true, false},
		{"169.254.169.254", nil, false, false},
		{"fe80::1%eth0", nil, false, false},
		{"2001:4860:4860::8888", nil, false, true},
		{"", nil, false, false},
	}
	for _, c := range cases {
		var ip netip.Addr
		if c.ip != "" {
			ip = netip.MustParseAddr(c.ip)
		}
		if got := netguard.Allowed(ip, c.allow, c.allowOnly); got != c.want {
			t.Errorf("Allowed(%s, %v, %v) = %v, want %v", c.ip, c.allow, c.allowOnly, got, c.want)
		}
	}
}

func TestParseCIDRs(t *testing.T) {
	got, err := netguard.ParseCIDRs(" 127.0.0.0/8,::1/128,10.1.2.3 ,")
	if err != nil || len(got) != 3 || got[2].String() != "10.1.2.3/32" {
		t.Fatalf("ParseCIDRs = %v, %v", got, err)
	}
	if _, err := netguard.ParseCIDRs("127.0.0.0/33"); err == nil {
		t.Fatal("ParseCIDRs(127.0.0.0/33): got nil error")
	}
}

// trap is a listener that must never be connected to.
type trap struct {
	ln    net.Listener
	conns atomic.Int32
}

func newTrap(t *testing.T, addr string) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	tr := &trap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tr.conns.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return tr
}

func (tr *trap) check(t *testing.T) {
	t.Helper()
	if n := tr.conns.Load(); n != 0 {
		t.Fatalf("trap at %s got %d connections, want 0", tr.ln.Addr(), n)
	}
}

func receiver(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestClientNeverReachesTheTrap(t *testing.T) {
	tr := newTrap(t, "127.0.0.2:0")
	only1, _ := netguard.ParseCIDRs("127.0.0.1/32")
	trapURL := "http://" + tr.ln.Addr().String() + "/"
	var hits atomic.Int32
	recv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, trapURL, http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(recv.URL, "http://"))
	res := &fakeResolver{names: map[string][][]netip.Addr{
		"trap.invalid":   {addrs("127.0.0.2")},
		"rebind.invalid": {addrs("127.0.0.1"), addrs("127.0.0.2")},
		"recv.invalid":   {addrs("127.0.0.1")},
	}}
	g := &netguard.Guard{Allow: only1, AllowOnly: true, Resolver: res}
	c := g.Client()

	t.Run("direct", func(t *testing.T) {
		for _, u := range []string{trapURL, "http://trap.invalid:" + portOf(tr) + "/"} {
			if _, err := c.Get(u); !errors.Is(err, netguard.ErrNotAllowed) {
				t.Fatalf("GET %s: got %v, want ErrNotAllowed", u, err)
			}
		}
	})
	t.Run("redirect", func(t *testing.T) {
		resp, err := c.Get(recv.URL + "/redirect")
		if err != nil {
			t.Fatalf("GET redirect: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("got status %d, want 302 returned, not followed", resp.StatusCode)
		}
	})
	t.Run("rebinding", func(t *testing.T) {
		u := "http://rebind.invalid:" + port + "/"
		for i, want := range []error{nil, netguard.ErrNotAllowed} {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			req.Close = true // a new connection, a new lookup
			resp, err := c.Do(req)
			if want == nil && err != nil {
				t.Fatalf("attempt %d: %v", i, err)
			}
			if want != nil && !errors.Is(err, want) {
				t.Fatalf("attempt %d: got %v, want %v", i, err, want)
			}
			if resp != nil {
				resp.Body.Close()
			}
		}
	})
	t.Run("control", func(t *testing.T) {
		d := net.Dialer{Control: g.Control}
		if _, err := d.Dial("tcp", tr.ln.Addr().String()); !errors.Is(err, netguard.ErrNotAllowed) {
			t.Fatalf("Dial with Control: got %v, want ErrNotAllowed", err)
		}
	})
	t.Run("proxy env ignored", func(t *testing.T) {
		// The proxy trap sits on an allowed address, so only Proxy: nil keeps
		// the request off it.
		ptrap := newTrap(t, "127.0.0.1:0")
		t.Setenv("HTTP_PROXY", "http://"+ptrap.ln.Addr().String())
		t.Setenv("HTTPS_PROXY", "http://"+ptrap.ln.Addr().String())
		if tp := c.Transport.(*http.Transport); tp.Proxy != nil {
			t.Fatal("Transport.Proxy is set, want nil")
		}
		before := hits.Load()
		resp, err := g.Client().Get("http://recv.invalid:" + port + "/")
		if err != nil {
			t.Fatalf("GET via name: %v", err)
		}
		resp.Body.Close()
		if hits.Load() != before+1 {
			t.Fatalf("receiver hits: got %d, want %d", hits.Load(), before+1)
		}
		ptrap.check(t)
	})
	tr.check(t)
}

func portOf(tr *trap) string {
	_, p, _ := net.SplitHostPort(tr.ln.Addr().String())
	return p
}

func Example() {
	allow, _ := netguard.ParseCIDRs("127.0.0.0/8,::1/128")
	fmt.Println(netguard.Allowed(netip.MustParseAddr("127.0.0.1"), allow, true))
	fmt.Println(netguard.Allowed(netip.MustParseAddr("169.254.169.254"), allow, false))
	// Output:
	// true
	// false
}
