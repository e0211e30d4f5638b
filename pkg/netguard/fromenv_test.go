package netguard_test

import (
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/netguard"
)

// TestFromEnvNamesTheVariable: a malformed allow list or switch fails the
// function's init with an error naming the variable; a good one allows
// exactly what it lists, and only it when the switch is true.
func TestFromEnvNamesTheVariable(t *testing.T) {
	const cidrs, only = "TEST_ALLOW_CIDRS", "TEST_ALLOW_ONLY"
	for _, tc := range []struct{ cidrs, only, want string }{
		{"127.0.0.1/33", "", cidrs},
		{"not-an-address", "", cidrs},
		{"127.0.0.0/8", "yes", only},
	} {
		t.Setenv(cidrs, tc.cidrs)
		t.Setenv(only, tc.only)
		if _, err := netguard.FromEnv(cidrs, only); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q %s=%q: %v, want an error naming %s", cidrs, tc.cidrs, only, tc.only, err, tc.want)
		}
	}
	t.Setenv(cidrs, "127.0.0.0/8, ::1")
	t.Setenv(only, "true")
	g, err := netguard.FromEnv(cidrs, only)
	if err != nil || !g.AllowOnly || len(g.Allow) != 2 {
		t.Fatalf("guard %+v, %v; want the two ranges, only them", g, err)
	}
}
