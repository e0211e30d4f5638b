package chatbundle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/templategen"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/httpapi"
	"gopkg.in/yaml.v3"
)

// ref is how samtemplate decodes `!Ref name`.
func ref(name string) map[string]any { return map[string]any{"!Ref": name} }

func props(tmpl *samtemplate.Template, id string) map[string]any {
	return tmpl.Resources[id].Properties
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }

func listOf(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case nil:
		return nil
	}
	return []any{v}
}

// dimensions returns an alarm's dimensions as name -> value.
func dimensions(p map[string]any) map[string]any {
	out := map[string]any{}
	for _, d := range listOf(p["Dimensions"]) {
		out[fmt.Sprint(mapOf(d)["Name"])] = mapOf(d)["Value"]
	}
	return out
}

// TestEveryFunctionHasAnErrorsAlarm: one AWS/Lambda Errors alarm per
// function, by its FunctionName, and no alarm on the account-wide
// aggregate (an alarm without FunctionName).
func TestEveryFunctionHasAnErrorsAlarm(t *testing.T) {
	tmpl := parse(t)
	alarms := map[string][]string{}
	for _, id := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		p := props(tmpl, id)
		if p["Namespace"] != "AWS/Lambda" || p["MetricName"] != "Errors" {
			continue
		}
		fn, ok := mapOf(dimensions(p)["FunctionName"])["!Ref"].(string)
		if !ok {
			t.Errorf("%s: an Errors alarm without a FunctionName: !Ref <function> dimension", id)
			continue
		}
		alarms[fn] = append(alarms[fn], id)
		if len(p["AlarmActions"].([]any)) == 0 {
			t.Errorf("%s: no AlarmActions", id)
		}
	}
	for _, fn := range tmpl.Functions() {
		if got := alarms[fn]; len(got) != 1 {
			t.Errorf("%s: Errors alarms %v, want exactly one", fn, got)
		}
		delete(alarms, fn)
	}
	for fn, ids := range alarms {
		t.Errorf("Errors alarms %v name %s, which is no function of the template", ids, fn)
	}
}

// TestEveryFunctionLogsWhereRetentionApplies: each function's
// LoggingConfig.LogGroup is a log group of the template, and every log
// group keeps its logs LogRetentionDays.
func TestEveryFunctionLogsWhereRetentionApplies(t *testing.T) {
	tmpl := parse(t)
	var doc struct {
		Parameters map[string]struct {
			Default any `yaml:"Default"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(chatbundle.Template, &doc); err != nil {
		t.Fatal(err)
	}
	if p, ok := doc.Parameters["LogRetentionDays"]; !ok || p.Default == nil {
		t.Fatalf("template.yaml has no LogRetentionDays parameter with a default")
	}
	groups := tmpl.OfType("AWS::Logs::LogGroup")
	for _, g := range groups {
		if got := props(tmpl, g)["RetentionInDays"]; fmt.Sprint(got) != fmt.Sprint(ref("LogRetentionDays")) {
			t.Errorf("%s: RetentionInDays = %v, want !Ref LogRetentionDays", g, got)
		}
	}
	used := map[string]string{}
	for _, fn := range tmpl.Functions() {
		g, _ := mapOf(mapOf(props(tmpl, fn)["LoggingConfig"])["LogGroup"])["!Ref"].(string)
		if tmpl.Resources[g].Type != "AWS::Logs::LogGroup" {
			t.Errorf("%s: LoggingConfig.LogGroup is %v, want !Ref of an AWS::Logs::LogGroup of the template", fn, props(tmpl, fn)["LoggingConfig"])
			continue
		}
		if other, ok := used[g]; ok {
			t.Errorf("%s and %s share log group %s", fn, other, g)
		}
		used[g] = fn
	}
	for _, g := range groups {
		if _, ok := used[g]; !ok {
			t.Errorf("log group %s is no function's", g)
		}
	}
}

// TestCursorKeyOnlyWhereRead: CURSOR_KEY, a secret, is given to exactly
// the functions that require it (their route's httpapi.NeedsCursorKey, or
// their main.go), and not through Globals.
func TestCursorKeyOnlyWhereRead(t *testing.T) {
	tmpl := parse(t)
	var doc struct {
		Globals struct {
			Function struct {
				Environment struct {
					Variables map[string]yaml.Node `yaml:"Variables"`
				} `yaml:"Environment"`
			} `yaml:"Function"`
		} `yaml:"Globals"`
	}
	if err := yaml.Unmarshal(chatbundle.Template, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Globals.Function.Environment.Variables["CURSOR_KEY"]; ok {
		t.Errorf("Globals gives CURSOR_KEY to every function; give it only to those that read it")
	}
	dirs := functionDirs(t)
	var readers, given []string
	for _, fn := range tmpl.Functions() {
		src, err := os.ReadFile(filepath.Join("functions", dirs[fn], "main.go"))
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		rt, _ := httpapi.RouteOf(fn)
		if strings.Contains(string(src), "awsenv.EnvCursorKey") || rt.Needs&httpapi.NeedsCursorKey != 0 {
			readers = append(readers, fn)
		}
		if _, ok := mapOf(mapOf(props(tmpl, fn)["Environment"])["Variables"])["CURSOR_KEY"]; ok {
			given = append(given, fn)
		}
	}
	if len(readers) == 0 {
		t.Fatalf("no functions/*/main.go requires awsenv.EnvCursorKey; the lists sign cursors")
	}
	if strings.Join(given, " ") != strings.Join(readers, " ") {
		t.Errorf("CURSOR_KEY given to %v, read by %v", given, readers)
	}
}

// functionDirs maps each function's logical id to its functions/ directory,
// from the Makefile's FUNCTIONS.
func functionDirs(t *testing.T) map[string]string {
	t.Helper()
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+Function):([\w-]+)`).FindAllStringSubmatch(string(mk), -1) {
		dirs[m[1]] = m[2]
	}
	return dirs
}

// dynamoWrites are the DynamoDB actions that write items (TransactWriteItems
// is authorised by the actions of its parts).
var dynamoWrites = map[string]bool{
	"dynamodb:PutItem": true, "dynamodb:UpdateItem": true, "dynamodb:DeleteItem": true,
	"dynamodb:BatchWriteItem": true, "dynamodb:ConditionCheckItem": true,
	"dynamodb:PartiQLInsert": true, "dynamodb:PartiQLUpdate": true, "dynamodb:PartiQLDelete": true,
}

// leadingKeyExceptions are the function/action pairs allowed to write
// without a dynamodb:LeadingKeys condition, each with its reason. None
// today: every write names the partition prefixes it writes.
var leadingKeyExceptions = map[string]string{}

// TestDynamoWritesNameTheirKeyPrefixes: every DynamoDB write a function is
// granted is limited by dynamodb:LeadingKeys to partition key prefixes
// ("ROOM#*"), with no wildcard action and no SAM policy template (whose
// writes cannot be narrowed).
func TestDynamoWritesNameTheirKeyPrefixes(t *testing.T) {
	tmpl := parse(t)
	prefix := regexp.MustCompile(`^[A-Z]+#\*$`)
	writers := 0
	for _, fn := range tmpl.Functions() {
		for _, pol := range listOf(props(tmpl, fn)["Policies"]) {
			pm := mapOf(pol)
			if _, ok := pm["Statement"]; !ok {
				t.Errorf("%s: policy %v is not an inline policy document; write its statements out", fn, pol)
				continue
			}
			for _, st := range listOf(pm["Statement"]) {
				sm := mapOf(st)
				for _, a := range listOf(sm["Action"]) {
					action := fmt.Sprint(a)
					if strings.Contains(action, "*") {
						t.Errorf("%s: wildcard action %s", fn, action)
						continue
					}
					if !dynamoWrites[action] {
						continue
					}
					writers++
					if why, ok := leadingKeyExceptions[fn+" "+action]; ok {
						t.Logf("%s %s without LeadingKeys: %s", fn, action, why)
						continue
					}
					keys := listOf(mapOf(mapOf(sm["Condition"])["ForAllValues:StringLike"])["dynamodb:LeadingKeys"])
					if len(keys) == 0 {
						t.Errorf("%s: %s without a ForAllValues:StringLike dynamodb:LeadingKeys condition", fn, action)
					}
					for _, k := range keys {
						if !prefix.MatchString(fmt.Sprint(k)) {
							t.Errorf("%s: %s LeadingKeys %q, want a key prefix such as \"ROOM#*\"", fn, action, k)
						}
					}
				}
			}
		}
	}
	if writers == 0 {
		t.Fatalf("no function is granted a DynamoDB write; the test reads the policies wrong")
	}
}

// TestOperationalAlarms: the relay's stream lag, the translation queue's
// oldest job, the delivery queue's and its slow lane's oldest message and
// in-flight count (and the slow lane's dead letters), and
// the translation budget each have an alarm, on the metric the code emits.
func TestOperationalAlarms(t *testing.T) {
	tmpl := parse(t)
	want := []string{
		"AWS/Lambda IteratorAge FunctionName=" + fmt.Sprint(ref("OutboxRelayFunction")),
		"AWS/SQS ApproximateAgeOfOldestMessage QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "TranslationQueue.QueueName"}),
		"AWS/SQS ApproximateAgeOfOldestMessage QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "DeliveryQueue.QueueName"}),
		"AWS/SQS ApproximateNumberOfMessagesNotVisible QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "DeliveryQueue.QueueName"}),
		"AWS/SQS ApproximateAgeOfOldestMessage QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "SlowDeliveryQueue.QueueName"}),
		"AWS/SQS ApproximateNumberOfMessagesNotVisible QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "SlowDeliveryQueue.QueueName"}),
		"AWS/SQS ApproximateNumberOfMessagesVisible QueueName=" + fmt.Sprint(map[string]any{"!GetAtt": "SlowDeliveryDLQ.QueueName"}),
		app.MetricsNamespace + " " + translating.BudgetExceededMetric + " Function=TranslateFunction",
	}
	var got []string
	for _, id := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		p := props(tmpl, id)
		var dims []string
		for k, v := range dimensions(p) {
			dims = append(dims, k+"="+fmt.Sprint(v))
		}
		sort.Strings(dims)
		got = append(got, fmt.Sprintf("%v %v %s", p["Namespace"], p["MetricName"], strings.Join(dims, ",")))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no alarm on %s; alarms:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestTemplateGeneratedBlockIsCurrent: the per-function Errors alarms and
// log groups are what internal/templategen makes of the template's
// functions; after adding a function, `make template` rewrites them.
func TestTemplateGeneratedBlockIsCurrent(t *testing.T) {
	want, err := templategen.Generate(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(chatbundle.Template) {
		t.Fatalf("template.yaml's generated block is stale: run `make template`")
	}
}
