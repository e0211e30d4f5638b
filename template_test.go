package chatbundle_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/pkg/httpapi"
)

func parse(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatalf("parse template.yaml: %v", err)
	}
	return tmpl
}

// TestRoutesMatchTemplate fails when template.yaml and the route table that
// `chatctl serve` mounts drift apart.
func TestRoutesMatchTemplate(t *testing.T) {
	var want []string
	for _, r := range httpapi.Routes {
		want = append(want, r.Function+" "+r.Method+" "+r.Path)
	}
	want = append(want, httpapi.FallbackFunction+" ANY $default")
	var got []string
	for _, r := range parse(t).Routes() {
		got = append(got, r.Function+" "+r.Method+" "+r.Path)
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("template routes:\n%s\n\nroute table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEveryTemplateRouteIsInOpenAPI fails when openapi.yaml does not
// describe a route that template.yaml deploys (method and path). $default
// is the fallback of unmatched requests, which openapi.yaml describes once
// as its NotFound and MethodNotAllowed responses.
func TestEveryTemplateRouteIsInOpenAPI(t *testing.T) {
	v, err := openapitest.Default()
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	doc := v.Doc()
	routes := 0
	for _, r := range parse(t).Routes() {
		if r.Path == "$default" {
			continue
		}
		routes++
		item := doc.Paths.Value(r.Path)
		if item == nil {
			t.Errorf("%s: openapi.yaml has no path %s", r.Function, r.Path)
			continue
		}
		if item.GetOperation(r.Method) == nil {
			t.Errorf("%s: openapi.yaml has path %s but no %s operation", r.Function, r.Path, r.Method)
		}
	}
	if routes == 0 {
		t.Fatalf("template.yaml declares no routes besides $default")
	}
	for _, name := range []string{"NotFound", "MethodNotAllowed"} {
		if doc.Components.Responses[name] == nil {
			t.Errorf("openapi.yaml lacks components.responses.%s, which describes the $default route", name)
		}
	}
}

// TestEveryFunctionBuildsThroughTheMakefile checks each function's SAM
// build wiring: BuildMethod makefile, CodeUri ".", a build-<LogicalId>
// target that `make` resolves (SAM runs `make build-<LogicalId>` with
// ARTIFACTS_DIR) into a go build of functions/<dir>, at least one events/
// sample; and the other way round, that the Makefile's FUNCTIONS and the
// functions/ directories name only functions of the template.
func TestEveryFunctionBuildsThroughTheMakefile(t *testing.T) {
	tmpl := parse(t)
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+Function):([\w-]+)`).FindAllStringSubmatch(string(mk), -1) {
		listed[m[1]] = m[2]
	}
	built := map[string]bool{}
	artifacts := t.TempDir()
	for _, fn := range tmpl.Functions() {
		res := tmpl.Resources[fn]
		if res.Metadata["BuildMethod"] != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod = %v, want makefile", fn, res.Metadata["BuildMethod"])
		}
		dir, err := makeTarget(t, fn, artifacts)
		if err != nil {
			t.Errorf("%s: %v", fn, err)
			continue
		}
		built[dir] = true
		if listed[fn] != dir {
			t.Errorf("%s: FUNCTIONS lists %q, build-%s builds %q", fn, listed[fn], fn, dir)
		}
		if _, err := os.Stat(filepath.Join("functions", dir, "main.go")); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
		if ev, _ := filepath.Glob(filepath.Join("events", dir+"*.json")); len(ev) == 0 {
			t.Errorf("%s: no events/%s*.json sample", fn, dir)
		}
		delete(listed, fn)
	}
	for fn := range listed {
		t.Errorf("Makefile FUNCTIONS lists %s, which template.yaml does not declare", fn)
	}
	if _, err := makeTarget(t, "NoSuchFunction", artifacts); err == nil {
		t.Errorf("make build-NoSuchFunction succeeds, want an error for a function FUNCTIONS does not list")
	}
	dirs, err := filepath.Glob(filepath.Join("functions", "*", "main.go"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no functions/*/main.go (%v)", err)
	}
	for _, d := range dirs {
		if dir := filepath.Base(filepath.Dir(d)); !built[dir] {
			t.Errorf("functions/%s is the build of no function of template.yaml", dir)
		}
	}
	globals := string(chatbundle.Template)
	for _, want := range []string{"Runtime: provided.al2023", "Architectures: [arm64]", "Handler: bootstrap", "CodeUri: ."} {
		if !strings.Contains(globals, want) {
			t.Errorf("template.yaml lacks %q", want)
		}
	}
}

// buildCommand matches the go build of one function in `make -n` output.
var buildCommand = regexp.MustCompile(`(?m)^GOOS=linux GOARCH=arm64 CGO_ENABLED=0 \S*go build .*-o (\S+)/bootstrap \./functions/([\w-]+)$`)

// makeTarget runs `make -n build-<id>` as SAM would (ARTIFACTS_DIR in the
// environment) and returns the functions/ directory it builds into
// artifacts/bootstrap.
func makeTarget(t *testing.T, id, artifacts string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", "-n", "--no-print-directory", "build-"+id)
	cmd.Env = append(os.Environ(), "ARTIFACTS_DIR="+artifacts, "MAKEFLAGS=", "MAKELEVEL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("make -n build-%s: %v\n%s", id, err, out)
	}
	m := buildCommand.FindAllStringSubmatch(string(out), -1)
	if len(m) != 1 || m[0][1] != artifacts {
		return "", fmt.Errorf("make -n build-%s runs no single arm64 go build into $ARTIFACTS_DIR/bootstrap:\n%s", id, out)
	}
	return m[0][2], nil
}
