package iampolicy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/chatbridge/chat/internal/samtemplate"
)

// Local says how the template's resources are named in a local run. A
// resource is named after its logical id: the one table is
// arn:<Partition>:dynamodb:<Region>:<Account>:table/ChatTable whatever its
// local name (tables are per test), its indexes .../table/ChatTable/index/<Name>,
// its stream .../table/ChatTable/stream/<label>, and a queue
// arn:<Partition>:sqs:<Region>:<Account>:<LogicalId>. The proxy that asks
// (internal/motoserver) names the resources of a request the same way: any
// table is the template's table, and a queue is the logical id its local
// name ends with (see Set.QueueOf).
type Local struct {
	Partition, Region, Account string
}

// DefaultLocal is moto's account in the local stack's region.
var DefaultLocal = Local{Partition: "aws", Region: "us-east-1", Account: "123456789012"}

// Set is the policy of every function of a template, with what a caller
// needs to name a request's resources the way the policies do.
type Set struct {
	Local Local
	// Functions maps each serverless function's logical id to its policy:
	// its Policies and the permissions SAM adds for its event sources.
	Functions map[string]*Policy
	// Table is the logical id of the template's one DynamoDB table;
	// TableKey its partition key attribute; IndexKeys each global
	// secondary index's partition key attribute.
	Table     string
	TableKey  string
	IndexKeys map[string]string
	// Queues are the logical ids of the template's SQS queues.
	Queues []string
}

// TableARN is the table's ARN.
func (s *Set) TableARN() string {
	return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", s.Local.Partition, s.Local.Region, s.Local.Account, s.Table)
}

// IndexARN is the ARN of the table's index name.
func (s *Set) IndexARN(name string) string { return s.TableARN() + "/index/" + name }

// StreamARN is the ARN of the table's stream with label.
func (s *Set) StreamARN(label string) string { return s.TableARN() + "/stream/" + label }

// QueueARN is the ARN of the queue with logical id.
func (s *Set) QueueARN(logical string) string {
	return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", s.Local.Partition, s.Local.Region, s.Local.Account, logical)
}

// QueueOf returns the logical id of the queue whose local name is name:
// the longest logical id that name ends with (queues are created as
// <prefix><LogicalId>, internal/localrun).
func (s *Set) QueueOf(name string) (string, bool) {
	best := ""
	for _, q := range s.Queues {
		if strings.HasSuffix(name, q) && len(q) > len(best) {
			best = q
		}
	}
	return best, best != ""
}

// Evaluate decides r for function; an unknown function is denied.
func (s *Set) Evaluate(function string, r Request) Decision {
	return s.Functions[function].Evaluate(r)
}

// FromTemplate reads every AWS::Serverless::Function's policy. Errors: a
// policy element, condition, intrinsic function or SAM policy template
// that is not implemented; the template not having exactly one table.
func FromTemplate(t *samtemplate.Template, l Local) (*Set, error) {
	s := &Set{Local: l, Functions: map[string]*Policy{}, IndexKeys: map[string]string{}, Queues: t.OfType("AWS::SQS::Queue")}
	tables := t.OfType("AWS::DynamoDB::Table")
	if len(tables) != 1 {
		return nil, fmt.Errorf("iampolicy: template declares %d tables, want 1", len(tables))
	}
	s.Table = tables[0]
	if err := s.readKeys(t.Resources[s.Table].Properties); err != nil {
		return nil, err
	}
	r := &resolver{t: t, s: s}
	for _, fn := range t.Functions() {
		p, err := r.function(t.Resources[fn].Properties)
		if err != nil {
			return nil, fmt.Errorf("iampolicy: %s: %w", fn, err)
		}
		s.Functions[fn] = p
	}
	return s, nil
}

func (s *Set) readKeys(props map[string]any) error {
	hash := func(schema any) string {
		for _, k := range list(schema) {
			m, _ := k.(map[string]any)
			if m["KeyType"] == "HASH" {
				v, _ := m["AttributeName"].(string)
				return v
			}
		}
		return ""
	}
	if s.TableKey = hash(props["KeySchema"]); s.TableKey == "" {
		return fmt.Errorf("iampolicy: table %s has no HASH key", s.Table)
	}
	for _, g := range list(props["GlobalSecondaryIndexes"]) {
		m, _ := g.(map[string]any)
		name, _ := m["IndexName"].(string)
		s.IndexKeys[name] = hash(m["KeySchema"])
	}
	return nil
}

type resolver struct {
	t *samtemplate.Template
	s *Set
}

// function reads one function's policies and the permissions SAM adds for
// its event sources.
func (r *resolver) function(props map[string]any) (*Policy, error) {
	p := &Policy{}
	for _, item := range list(props["Policies"]) {
		sts, err := r.policy(item)
		if err != nil {
			return nil, err
		}
		p.Statements = append(p.Statements, sts...)
	}
	events, _ := props["Events"].(map[string]any)
	names := make([]string, 0, len(events))
	for n := range events {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sts, err := r.eventSource(events[n])
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", n, err)
		}
		p.Statements = append(p.Statements, sts...)
	}
	return p, nil
}

// Actions SAM grants for event sources and its policy templates (SAM's
// policy_templates.json).
var (
	sqsPoller = []string{"sqs:ChangeMessageVisibility", "sqs:ChangeMessageVisibilityBatch", "sqs:DeleteMessage",
		"sqs:DeleteMessageBatch", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}
	streamRead   = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
	dynamoRead   = []string{"dynamodb:GetItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"}
	dynamoCrud   = []string{"dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem", "dynamodb:BatchGetItem", "dynamodb:DescribeTable", "dynamodb:ConditionCheckItem"}
	sqsSendMatch = []string{"sqs:SendMessage*"}
)

// eventSource returns what SAM adds to the role for one event: a queue's
// poller actions (SQS), a stream's read actions (DynamoDB), and sending to
// an on-failure SQS destination.
func (r *resolver) eventSource(ev any) ([]Statement, error) {
	m, _ := ev.(map[string]any)
	props, _ := m["Properties"].(map[string]any)
	switch m["Type"] {
	case "SQS":
		q, err := r.value(props["Queue"])
		if err != nil {
			return nil, err
		}
		return []Statement{{Effect: "Allow", Actions: sqsPoller, Resources: []string{q}}}, nil
	case "DynamoDB":
		stream, err := r.value(props["Stream"])
		if err != nil {
			return nil, err
		}
		out := []Statement{
			{Effect: "Allow", Actions: streamRead, Resources: []string{stream}},
			// ListStreams names no resource.
			{Effect: "Allow", Actions: []string{"dynamodb:ListStreams"}, Resources: []string{"*"}},
		}
		dc, _ := props["DestinationConfig"].(map[string]any)
		of, _ := dc["OnFailure"].(map[string]any)
		if of != nil {
			if of["Type"] != "SQS" {
				return nil, fmt.Errorf("on-failure destination of type %v is not implemented", of["Type"])
			}
			q, err := r.value(of["Destination"])
			if err != nil {
				return nil, err
			}
			out = append(out, Statement{Effect: "Allow", Actions: []string{"sqs:SendMessage"}, Resources: []string{q}})
		}
		return out, nil
	case "HttpApi", "Api", "Schedule", "ScheduleV2":
		return nil, nil
	}
	return nil, fmt.Errorf("event source type %v is not implemented", m["Type"])
}

// policy reads one item of Policies: an inline document or a SAM policy
// template.
func (r *resolver) policy(item any) ([]Statement, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy %v (a managed policy?) is not implemented", item)
	}
	if doc, ok := m["Statement"]; ok {
		var out []Statement
		for _, st := range list(doc) {
			s, err := r.statement(st)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("policy %v is neither a document nor one SAM policy template", m)
	}
	for name, params := range m {
		return r.samTemplate(name, params)
	}
	return nil, nil
}

// samTemplate expands the SAM policy templates implemented, as SAM does.
func (r *resolver) samTemplate(name string, params any) ([]Statement, error) {
	pm, _ := params.(map[string]any)
	param := func(k string) (string, error) {
		v, ok := pm[k]
		if !ok {
			return "", fmt.Errorf("%s: parameter %s missing", name, k)
		}
		return r.value(v)
	}
	l := r.s.Local
	table := func(n string) string {
		return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s", l.Partition, l.Region, l.Account, n)
	}
	queue := func(n string) string { return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", l.Partition, l.Region, l.Account, n) }
	switch name {
	case "DynamoDBReadPolicy", "DynamoDBCrudPolicy":
		t, err := param("TableName")
		if err != nil {
			return nil, err
		}
		actions := dynamoRead
		if name == "DynamoDBCrudPolicy" {
			actions = dynamoCrud
		}
		return []Statement{{Effect: "Allow", Actions: actions, Resources: []string{table(t), table(t) + "/index/*"}}}, nil
	case "DynamoDBStreamReadPolicy":
		t, err := param("TableName")
		if err != nil {
			return nil, err
		}
		sn, err := param("StreamName")
		if err != nil {
			return nil, err
		}
		return []Statement{
			{Effect: "Allow", Actions: streamRead, Resources: []string{table(t) + "/stream/" + sn}},
			{Effect: "Allow", Actions: []string{"dynamodb:ListStreams"}, Resources: []string{table(t) + "/stream/*"}},
		}, nil
	case "SQSPollerPolicy", "SQSSendMessagePolicy":
		q, err := param("QueueName")
		if err != nil {
			return nil, err
		}
		actions := sqsPoller
		if name == "SQSSendMessagePolicy" {
			actions = sqsSendMatch
		}
		return []Statement{{Effect: "Allow", Actions: actions, Resources: []string{queue(q)}}}, nil
	}
	return nil, fmt.Errorf("SAM policy template %s is not implemented", name)
}

func (r *resolver) statement(v any) (Statement, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Statement{}, fmt.Errorf("statement %v is not a map", v)
	}
	var s Statement
	for k, val := range m {
		switch k {
		case "Sid":
		case "Effect":
			s.Effect, _ = val.(string)
			if s.Effect != "Allow" && s.Effect != "Deny" {
				return s, fmt.Errorf("statement effect %v, want Allow or Deny", val)
			}
		case "Action":
			for _, a := range list(val) {
				str, ok := a.(string)
				if !ok || !strings.Contains(str, ":") && str != "*" {
					return s, fmt.Errorf("action %v is not service:name", a)
				}
				s.Actions = append(s.Actions, str)
			}
		case "Resource":
			for _, rv := range list(val) {
				arn, err := r.value(rv)
				if err != nil {
					return s, err
				}
				s.Resources = append(s.Resources, arn)
			}
		case "Condition":
			cm, _ := val.(map[string]any)
			for op, keys := range cm {
				km, _ := keys.(map[string]any)
				for key, vals := range km {
					c := Condition{Operator: op, Key: key}
					for _, x := range list(vals) {
						str, ok := x.(string)
						if !ok {
							return s, fmt.Errorf("condition value %v is not a string", x)
						}
						c.Values = append(c.Values, str)
					}
					if err := c.validate(); err != nil {
						return s, err
					}
					s.Conditions = append(s.Conditions, c)
				}
			}
		default:
			// NotAction, NotResource, Principal...: not implemented.
			return s, fmt.Errorf("statement element %s is not implemented", k)
		}
	}
	if s.Effect == "" || len(s.Actions) == 0 || len(s.Resources) == 0 {
		return s, fmt.Errorf("statement %v needs Effect, Action and Resource", m)
	}
	return s, nil
}

// value resolves a literal or an intrinsic function (!GetAtt, !Sub, !Ref,
// or their long forms) to a string, naming the template's resources as a
// local run does (see Local).
func (r *resolver) value(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		if len(x) != 1 {
			break
		}
		for fn, arg := range x {
			switch fn {
			case "!GetAtt", "Fn::GetAtt":
				ref := ""
				switch a := arg.(type) {
				case string:
					ref = a
				case []any:
					if len(a) == 2 {
						ref = fmt.Sprint(a[0]) + "." + fmt.Sprint(a[1])
					}
				}
				logical, attr, _ := strings.Cut(ref, ".")
				return r.attribute(logical, attr)
			case "!Ref", "Ref":
				name, _ := arg.(string)
				return r.attribute(name, "")
			case "!Sub", "Fn::Sub":
				s, ok := arg.(string)
				if !ok {
					return "", fmt.Errorf("!Sub with variables is not implemented: %v", arg)
				}
				return r.sub(s)
			}
		}
	}
	return "", fmt.Errorf("value %v is not implemented", v)
}

var subVar = regexp.MustCompile(`\$\{([^}!]+)\}`)

func (r *resolver) sub(s string) (string, error) {
	var err error
	out := subVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		logical, attr, _ := strings.Cut(name, ".")
		if strings.HasPrefix(name, "AWS::") {
			logical, attr = name, ""
		}
		v, e := r.attribute(logical, attr)
		if e != nil && err == nil {
			err = e
		}
		return v
	})
	return out, err
}

// attribute resolves !GetAtt logical.attr, or !Ref logical when attr is "".
func (r *resolver) attribute(logical, attr string) (string, error) {
	l, s := r.s.Local, r.s
	switch logical {
	case "AWS::Partition":
		return l.Partition, nil
	case "AWS::Region":
		return l.Region, nil
	case "AWS::AccountId":
		return l.Account, nil
	}
	res, ok := r.t.Resources[logical]
	if !ok {
		return "", fmt.Errorf("unknown resource %s", logical)
	}
	switch res.Type + "." + attr {
	case "AWS::DynamoDB::Table.Arn":
		return s.TableARN(), nil
	case "AWS::DynamoDB::Table.StreamArn":
		// The label changes with every local table.
		return s.StreamARN("*"), nil
	case "AWS::DynamoDB::Table.":
		return logical, nil
	case "AWS::SQS::Queue.Arn":
		return s.QueueARN(logical), nil
	case "AWS::SQS::Queue.QueueName":
		return logical, nil
	case "AWS::S3::Bucket.Arn":
		// The local bucket is named after its logical id: its policies
		// resolve, whatever checks S3 requests against them.
		return "arn:" + l.Partition + ":s3:::" + strings.ToLower(logical), nil
	case "AWS::ApiGatewayV2::Api.":
		// The API id of a local run is not known in advance.
		return "*", nil
	}
	return "", fmt.Errorf("%s.%s of a %s is not implemented", logical, attr, res.Type)
}

func list(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case nil:
		return nil
	}
	return []any{v}
}

// Project reads the policies of the project's own template.yaml, named as
// a local run names its resources (DefaultLocal), once per process (each
// test's local server builds its IAM check on them). Callers only read it.
var Project = sync.OnceValues(func() (*Set, error) {
	t, err := samtemplate.Project()
	if err != nil {
		return nil, err
	}
	return FromTemplate(t, DefaultLocal)
})
