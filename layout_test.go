package chatbundle_test

import (
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// functionDeps is each function's module packages, itself included, by
// its functions/ directory (go list's Deps: every package it links).
func functionDeps(t *testing.T) map[string][]string {
	t.Helper()
	const module = "github.com/chatbridge/chat"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		fn := f[0][strings.LastIndex(f[0], "/")+1:]
		for _, p := range f {
			if p == module || strings.HasPrefix(p, module+"/") {
				deps[fn] = append(deps[fn], p)
			}
		}
	}
	return deps
}

// TestNoFunctionLinksLocalTooling: the local stack (motoserver, localrun,
// samtemplate, the APY starter, childproc), the handler registry and every
// other package under internal/ are for tests and chatctl; no Lambda
// function may link one.
func TestNoFunctionLinksLocalTooling(t *testing.T) {
	for fn, deps := range functionDeps(t) {
		for _, p := range deps {
			if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/cmd/chatctl") {
				t.Errorf("functions/%s links %s", fn, p)
			}
		}
	}
}

// TestFunctionPackagesReport prints how many of the module's packages each
// function links (its own included), and holds the fallback, which serves
// only the JSON 404 and 405, to at most 6.
func TestFunctionPackagesReport(t *testing.T) {
	deps := functionDeps(t)
	var names []string
	for fn := range deps {
		names = append(names, fn)
	}
	sort.Strings(names)
	for _, fn := range names {
		t.Logf("%-32s %2d", fn, len(deps[fn]))
	}
	if n := len(deps["fallback"]); n == 0 || n > 6 {
		t.Errorf("fallback links %d module packages, want 1 to 6: %v", n, deps["fallback"])
	}
}

// TestNoFunctionLinksTheSDKLoader: a function's configuration is its
// environment (awsenv.Load). The SDK's loader and the credential chain it
// links (SSO, SSO OIDC, sign-in, STS, IMDS, the shared-file parser) cost a
// quarter of a cold init in package initialisers for sources a Lambda
// function never has (docs/performance.md); only chatctl may link them.
func TestNoFunctionLinksTheSDKLoader(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	banned := []string{
		"github.com/aws/aws-sdk-go-v2/config",
		"github.com/aws/aws-sdk-go-v2/service/sso",
		"github.com/aws/aws-sdk-go-v2/service/ssooidc",
		"github.com/aws/aws-sdk-go-v2/service/sts",
		"github.com/aws/aws-sdk-go-v2/service/signin",
		"github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
		"github.com/aws/aws-sdk-go-v2/internal/ini",
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 40 {
		t.Fatalf("go list named %d functions, want every one", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		for _, p := range f[1:] {
			if slices.Contains(banned, p) {
				t.Errorf("%s links %s", f[0], p)
			}
		}
	}
}
