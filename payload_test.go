package chatbundle_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPayloadPassRunsEveryPayloadTest: scripts/payload-tests, which gives
// make test's pass without the race detector its tests, names exactly the
// tests whose body calls racetest.Payload (found here by Go's parser), in
// their packages: a payload test it missed would run nowhere.
func TestPayloadPassRunsEveryPayloadTest(t *testing.T) {
	files, err := exec.Command("git", "ls-files", "*_test.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var want []string
	dirs := map[string]bool{}
	for _, name := range strings.Fields(string(files)) {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Payload" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "racetest" {
						want = append(want, fn.Name.Name)
						dirs["./"+filepath.Dir(name)] = true
					}
				}
				return true
			})
		}
	}
	if len(want) == 0 {
		t.Fatal("no test calls racetest.Payload")
	}
	out, err := exec.Command("scripts/payload-tests").Output()
	if err != nil {
		t.Fatalf("scripts/payload-tests: %v", err)
	}
	args := strings.Fields(string(out))
	if len(args) < 3 || args[0] != "-run" {
		t.Fatalf("scripts/payload-tests printed %q", out)
	}
	got := strings.Split(strings.TrimSuffix(strings.TrimPrefix(args[1], "^("), ")$"), "|")
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("the payload pass runs %v, want %v", got, want)
	}
	var wantDirs []string
	for d := range dirs {
		wantDirs = append(wantDirs, d)
	}
	slices.Sort(wantDirs)
	gotDirs := slices.Clone(args[2:])
	slices.Sort(gotDirs)
	if !slices.Equal(gotDirs, wantDirs) {
		t.Errorf("the payload pass runs packages %v, want %v", gotDirs, wantDirs)
	}
}
