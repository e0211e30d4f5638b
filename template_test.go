package chatbundle_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/samtemplate"
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
// target, a functions/<dir>/main.go and at least one events/ sample.
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
	for _, fn := range tmpl.Functions() {
		res := tmpl.Resources[fn]
		if res.Metadata["BuildMethod"] != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod = %v, want makefile", fn, res.Metadata["BuildMethod"])
		}
		target := regexp.MustCompile(`(?m)^build-` + fn + `:\s*$\n\t\$\(call lambda_build,([\w-]+)\)`)
		m := target.FindStringSubmatch(string(mk))
		if m == nil {
			t.Errorf("%s: Makefile has no build-%s target", fn, fn)
			continue
		}
		if listed[fn] != m[1] {
			t.Errorf("%s: FUNCTIONS lists %q, the build target builds %q", fn, listed[fn], m[1])
		}
		if _, err := os.Stat(filepath.Join("functions", m[1], "main.go")); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
		if ev, _ := filepath.Glob(filepath.Join("events", m[1]+"*.json")); len(ev) == 0 {
			t.Errorf("%s: no events/%s*.json sample", fn, m[1])
		}
		delete(listed, fn)
	}
	for fn := range listed {
		t.Errorf("Makefile FUNCTIONS lists %s, which template.yaml does not declare", fn)
	}
	globals := string(chatbundle.Template)
	for _, want := range []string{"Runtime: provided.al2023", "Architectures: [arm64]", "Handler: bootstrap", "CodeUri: ."} {
		if !strings.Contains(globals, want) {
			t.Errorf("template.yaml lacks %q", want)
		}
	}
}
