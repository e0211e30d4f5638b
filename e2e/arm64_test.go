package e2e

import (
	"debug/elf"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/httpapi"
)

// The arm64 bootstrap budgets: an HTTP function (a route's, or the
// fallback) carries only its endpoint and stays within 10 MiB; every
// function within 11 MiB.
const (
	maxHTTPBootstrapBytes = 10 << 20
	maxBootstrapBytes     = 11 << 20
)

// isHTTP reports whether function serves HTTP API routes.
func isHTTP(function string) bool {
	_, ok := httpapi.RouteOf(function)
	return ok || function == httpapi.FallbackFunction
}

// TestArm64Bootstrap builds every function exactly as `make build` does
// for Lambda, and holds each bootstrap to its size budget and to being a
// 64-bit ELF executable for aarch64.
func TestArm64Bootstrap(t *testing.T) {
	if !mk.targets("linux", "arm64") {
		t.Fatalf("the Makefile builds with %v, want GOOS=linux GOARCH=arm64 (template.yaml's architecture)", mk.LambdaEnv)
	}
	start := time.Now()
	set := buildAll(mk, "linux", "arm64", armDir(t), false)
	set.wait()
	var table strings.Builder
	fmt.Fprintf(&table, "arm64 bootstraps, built in %v:\n%-30s %10s %9s\n", time.Since(start).Round(time.Millisecond), "function", "bytes", "MiB")
	for _, fn := range mk.Functions {
		bin, b := set.binary(t, fn.ID)
		fmt.Fprintf(&table, "%-30s %10d %9.2f\n", fn.ID, b.Size, float64(b.Size)/(1<<20))
		budget := int64(maxBootstrapBytes)
		if isHTTP(fn.ID) {
			budget = maxHTTPBootstrapBytes
		}
		if b.Size > budget {
			t.Errorf("%s: bootstrap is %d bytes, over its %d-byte (%d MiB) budget", fn.ID, b.Size, budget, budget>>20)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Errorf("%s: %v, want an ELF executable", fn.ID, err)
			continue
		}
		// ET_DYN too: a position-independent build is as good to Lambda.
		if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
			t.Errorf("%s: ELF %v %v %v, want an EM_AARCH64 ELFCLASS64 executable", fn.ID, f.Machine, f.Class, f.Type)
		}
		f.Close()
	}
	t.Log(table.String())
}

// armDir is the arm64 builds' directory (buildDir), failing t if there is
// none.
func armDir(t *testing.T) string {
	t.Helper()
	dir, err := buildDir("linux", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
