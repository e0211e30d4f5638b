// Package samtemplate reads the parts of template.yaml that the local runner
// and the drift tests need: each function's HTTP routes, the DynamoDB table
// and the SQS queues. CloudFormation's short-form tags (!Ref, !GetAtt, !Sub)
// are kept as plain values tagged with their function.
package samtemplate

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	chatbundle "github.com/chatbridge/chat"
)

// Template is a parsed SAM template.
type Template struct {
	Parameters map[string]Parameter `yaml:"Parameters"`
	Globals    map[string]any       `yaml:"Globals"`
	Resources  map[string]Resource  `yaml:"Resources"`
}

// Parameter is one template parameter; a local run takes its Default.
type Parameter struct {
	Type    string `yaml:"Type"`
	Default any    `yaml:"Default"`
}

// Resource is one resource: its type, its properties and its metadata.
type Resource struct {
	Type       string         `yaml:"Type"`
	Properties map[string]any `yaml:"Properties"`
	Metadata   map[string]any `yaml:"Metadata"`
}

// Tagged is a value written with a CloudFormation short-form tag.
type Tagged struct {
	Tag   string // "!Ref", "!GetAtt", ...
	Value any
}

// Project returns the project's own template.yaml, parsed once per
// process: every test stack and IAM check reads it, and a parse costs about
// 12 ms, ten times that under the race detector. Callers only read it.
var Project = sync.OnceValues(func() (*Template, error) { return Parse(chatbundle.Template) })

// Parse reads a template.
func Parse(b []byte) (*Template, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	stripTags(&root)
	var t Template
	if err := root.Decode(&t); err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	return &t, nil
}

// stripTags turns "!Ref X" into {"!Ref": X} so that plain decoding works.
func stripTags(n *yaml.Node) {
	for _, c := range n.Content {
		stripTags(c)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		inner := *n
		inner.Tag = ""
		switch n.Kind {
		case yaml.ScalarNode:
			inner.Tag = "!!str"
		}
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: n.Tag}, &inner,
		}}
	}
}

// Route is one HTTP API event of a function.
type Route struct {
	Function string
	Method   string
	Path     string
}

// Routes returns every HttpApi event of every serverless function, sorted.
func (t *Template) Routes() []Route {
	var out []Route
	for name, r := range t.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		events, _ := r.Properties["Events"].(map[string]any)
		for _, e := range events {
			ev, _ := e.(map[string]any)
			if ev["Type"] != "HttpApi" {
				continue
			}
			p, _ := ev["Properties"].(map[string]any)
			m, _ := p["Method"].(string)
			path, _ := p["Path"].(string)
			out = append(out, Route{Function: name, Method: strings.ToUpper(m), Path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// Functions returns the logical ids of every serverless function, sorted.
func (t *Template) Functions() []string {
	var out []string
	for name, r := range t.Resources {
		if r.Type == "AWS::Serverless::Function" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// OfType returns the logical ids of resources of type typ, sorted.
func (t *Template) OfType(typ string) []string {
	var out []string
	for name, r := range t.Resources {
		if r.Type == typ {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
