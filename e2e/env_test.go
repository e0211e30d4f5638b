package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"gopkg.in/yaml.v3"
)

// samTemplate is the part of template.yaml that says how Lambda configures
// a function: its environment and memory.
type samTemplate struct {
	Parameters map[string]struct {
		Default yaml.Node `yaml:"Default"`
	} `yaml:"Parameters"`
	Globals struct {
		Function functionProps `yaml:"Function"`
	} `yaml:"Globals"`
	Resources map[string]struct {
		Type       string        `yaml:"Type"`
		Properties functionProps `yaml:"Properties"`
	} `yaml:"Resources"`
}

type functionProps struct {
	MemorySize  yaml.Node `yaml:"MemorySize"`
	Environment struct {
		Variables map[string]yaml.Node `yaml:"Variables"`
	} `yaml:"Environment"`
}

func parseTemplate(tb testing.TB) *samTemplate {
	tb.Helper()
	var t samTemplate
	if err := yaml.Unmarshal(chatbundle.Template, &t); err != nil {
		tb.Fatalf("template.yaml: %v", err)
	}
	return &t
}

// localParameters overrides the defaults of the template parameters whose
// default needs a service moto does not serve: Amazon Translate would fail
// every job after the SDK's retries. The translate wiring test runs its
// sample with none too.
var localParameters = map[string]string{"Translator": "none"}

// stackConfig is the configuration a function gets on a test stack.
type stackConfig struct {
	Stack     *stacktest.Stack
	CursorKey string
}

// variables returns the names of the environment variables the template
// gives function id, sorted.
func (t *samTemplate) variables(id string) []string {
	var names []string
	for k := range t.Globals.Function.Environment.Variables {
		names = append(names, k)
	}
	for k := range t.Resources[id].Properties.Environment.Variables {
		if _, ok := t.Globals.Function.Environment.Variables[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// functionEnv is the environment Lambda would give function id, with the
// template's references resolved against cfg's stack (the table, the
// queues, parameter defaults; CURSOR_KEY, a secret, is cfg's), and the
// AWS settings that point the SDK at moto. A variable it cannot resolve is
// left out, and logged.
func (t *samTemplate) functionEnv(tb testing.TB, id string, cfg stackConfig) map[string]string {
	tb.Helper()
	st := cfg.Stack
	env := map[string]string{}
	var unresolved []string
	for _, vars := range []map[string]yaml.Node{t.Globals.Function.Environment.Variables, t.Resources[id].Properties.Environment.Variables} {
		for name, n := range vars {
			if v, ok := t.resolve(n, st); ok {
				env[name] = v
			} else {
				delete(env, name)
				unresolved = append(unresolved, fmt.Sprintf("%s (%s %s)", name, n.ShortTag(), n.Value))
			}
		}
	}
	env[awsenv.EnvTable] = st.Table
	env[awsenv.EnvCursorKey] = cfg.CursorKey
	if url, ok := st.Resources.Queues["TranslationQueue"]; ok {
		env[awsenv.EnvQueueURL] = url
	}
	for _, u := range unresolved {
		name, _, _ := strings.Cut(u, " ")
		if _, ok := env[name]; !ok {
			tb.Logf("%s: template variable %s has no local value; left unset", id, u)
		}
	}
	for _, mem := range []yaml.Node{t.Globals.Function.MemorySize, t.Resources[id].Properties.MemorySize} {
		if mem.Kind == yaml.ScalarNode && mem.ShortTag() == "!!int" {
			env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = mem.Value
		}
	}
	env["AWS_LAMBDA_FUNCTION_NAME"] = id
	env[awsenv.EnvEndpoint] = st.Endpoint
	// Signed as the function: the local stack holds its calls to its
	// policy in template.yaml, as AWS holds them to its role.
	env["AWS_ACCESS_KEY_ID"] = id
	env["AWS_SECRET_ACCESS_KEY"] = "local"
	env[awsenv.EnvRegion] = awsenv.DefaultRegion
	// Deliveries never leave the machine in a test (contract section 11).
	env["OUTBOUND_ALLOW_CIDRS"] = "127.0.0.0/8,::1/128"
	env["OUTBOUND_ALLOW_ONLY"] = "true"
	return env
}

// resolve returns the local value of a template value: a literal, a
// parameter's default, or a !Ref/!GetAtt of the stack's table or queues.
func (t *samTemplate) resolve(n yaml.Node, st *stacktest.Stack) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch tag := n.ShortTag(); tag {
	case "!Ref":
		if v, ok := localParameters[n.Value]; ok {
			return v, true
		}
		if p, ok := t.Parameters[n.Value]; ok && p.Default.Kind == yaml.ScalarNode {
			return p.Default.Value, true
		}
		if t.Resources[n.Value].Type == "AWS::DynamoDB::Table" {
			return st.Table, true
		}
		if url, ok := st.Resources.Queues[n.Value]; ok {
			return url, true
		}
		if name, ok := st.Resources.Buckets[n.Value]; ok {
			return name, true
		}
	case "!GetAtt":
		if q, ok := strings.CutSuffix(n.Value, ".Arn"); ok {
			if arn, ok := st.Resources.QueueARNs[q]; ok {
				return arn, true
			}
		}
	default:
		if strings.HasPrefix(tag, "!!") {
			return n.Value, true
		}
	}
	return "", false
}
