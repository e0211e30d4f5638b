package motoserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatbridge/chat/internal/iampolicy"
)

// Option configures Start.
type Option func(*options)

type options struct {
	iam    *IAM
	limits []func(*limiter) // limits.go's options
	// now is S3's clock (s3.go); cors, when corsSet, its buckets' CORS
	// rules instead of template.yaml's (cors.go).
	now     func() time.Time
	cors    []CORSRule
	corsSet bool
}

// WithIAM makes the proxy check every call signed by a function (access
// key id = the function's logical id) against that function's policy, as
// AWS checks a function's role: a call its policy does not allow answers
// AccessDeniedException (S3: AccessDenied in its XML shape, also for the
// presigned URLs and POSTs a function signed, s3.go). Calls signed with any other key id (test seeding,
// `chatctl apply`, "local") are an administrator's and are not checked.
func WithIAM(c *IAM) Option { return func(o *options) { o.iam = c } }

// IAM is the proxy's IAM check, and the record of what it decided.
type IAM struct {
	policies *iampolicy.Set
	// Log, when set, gets one line per denied call.
	Log io.Writer

	mu      sync.Mutex
	allowed map[string]Call
	denied  []Call
}

// NewIAM returns a check of the calls of set's functions.
func NewIAM(set *iampolicy.Set) *IAM {
	return &IAM{policies: set, allowed: map[string]Call{}}
}

// Call is one decision of the check: a function's request, its leading
// keys reduced to their prefixes up to and including '#' (a key without
// '#' is kept whole), so that a record holds kinds of calls, not items.
type Call struct {
	Function string
	iampolicy.Request
	Decision iampolicy.Decision
	// Sites are the adapter functions the call came from, innermost first
	// (iampolicy.SitesHeader); nil when its client did not say.
	Sites []string
}

func (c Call) key() string {
	return c.Function + " " + c.Action + " " + c.Resource + " " + strings.Join(c.LeadingKeys, ",") + " " + strings.Join(c.Sites, ",")
}

// Allowed returns the distinct calls allowed so far, sorted.
func (c *IAM) Allowed() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Call, 0, len(c.allowed))
	for _, call := range c.allowed {
		out = append(out, call)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// Allow records an allowed call that another local service checked
// against the same policies (the WebSocket gateway's Management API).
func (c *IAM) Allow(function string, req iampolicy.Request, sites []string) {
	call := Call{Function: function, Request: req, Decision: iampolicy.Allow, Sites: sites}
	c.mu.Lock()
	c.allowed[call.key()] = call
	c.mu.Unlock()
}

// Denied returns the calls denied so far, in order.
func (c *IAM) Denied() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.denied...)
}

// Policies is the policy set the check applies.
func (c *IAM) Policies() *iampolicy.Set { return c.policies }

// Prefix reduces a partition key value to its prefix up to and including
// its first '#' ("CHAN#01J..." is "CHAN#"); a value without '#' is kept.
func Prefix(key string) string {
	if i := strings.IndexByte(key, '#'); i >= 0 {
		return key[:i+1]
	}
	return key
}

// authorize answers AccessDeniedException and returns false when r is a
// function's call its policy does not allow; r's body is left readable.
func (c *IAM) authorize(w http.ResponseWriter, r *http.Request) bool {
	function, region, ok := iampolicy.Principal(r.Header.Get("Authorization"))
	if !ok {
		return true
	}
	if _, ok := c.policies.Functions[function]; !ok {
		return true // an administrator's call
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	reqs, err := c.requests(r, body, region)
	if err != nil {
		c.deny(w, function, iampolicy.Request{Action: "unknown", Resource: "*"}, iampolicy.ImplicitDeny, err.Error())
		return false
	}
	for _, req := range reqs {
		if d := c.decide(function, req, sitesOf(r)); d != iampolicy.Allow {
			c.deny(w, function, req, d, "")
			return false
		}
	}
	return true
}

// decide evaluates req for function and records the decision.
func (c *IAM) decide(function string, req iampolicy.Request, sites []string) iampolicy.Decision {
	d := c.policies.Evaluate(function, req)
	call := Call{Function: function, Request: req, Decision: d, Sites: sites}
	call.LeadingKeys = prefixes(req.LeadingKeys)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d != iampolicy.Allow {
		c.denied = append(c.denied, call)
	} else {
		c.allowed[call.key()] = call
	}
	return d
}

// logDenied writes a denial's line to Log, when set.
func (c *IAM) logDenied(function string, req iampolicy.Request) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "local IAM: denied %s %s %s keys %v\n", function, req.Action, req.Resource, req.LeadingKeys)
	}
}

// deniedMessage is AWS's message for a denied call.
func (c *IAM) deniedMessage(function string, req iampolicy.Request, d iampolicy.Decision, why string) string {
	reason := "because no identity-based policy allows the " + req.Action + " action"
	if d == iampolicy.ExplicitDeny {
		reason = "with an explicit deny in an identity-based policy"
	}
	if why != "" {
		reason = "because the local IAM check cannot read the request: " + why
	}
	return fmt.Sprintf("User: arn:%s:sts::%s:assumed-role/%sRole/%s is not authorized to perform: %s on resource: %s %s",
		c.policies.Local.Partition, c.policies.Local.Account, function, function, req.Action, req.Resource, reason)
}

func prefixes(keys []string) []string {
	if keys == nil {
		return nil
	}
	seen := map[string]bool{}
	out := []string{}
	for _, k := range keys {
		if p := Prefix(k); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// deny answers as AWS answers a call its caller's role may not make:
// HTTP 400, AccessDeniedException in the JSON protocol's error shape.
func (c *IAM) deny(w http.ResponseWriter, function string, req iampolicy.Request, d iampolicy.Decision, why string) {
	msg := c.deniedMessage(function, req, d, why)
	if c.Log != nil {
		fmt.Fprintf(c.Log, "local IAM: denied %s %s %s keys %v (%v)\n", function, req.Action, req.Resource, req.LeadingKeys, d)
	}
	body, _ := json.Marshal(map[string]string{"__type": "com.amazon.coral.service#AccessDeniedException", "message": msg, "Message": msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Errortype", "AccessDeniedException")
	// DynamoDB's SDK checks every answer's CRC32.
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	// SQS's JSON protocol also names the error its query protocol used.
	w.Header().Set("X-Amzn-Query-Error", "AccessDenied;Sender")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(body)
}

// requests maps one API call to the authorisation requests AWS makes for
// it: one per item of a transaction, one per table of a batch.
func (c *IAM) requests(r *http.Request, body []byte, region string) ([]iampolicy.Request, error) {
	target := r.Header.Get("X-Amz-Target")
	local := c.policies.Local
	local.Region = region
	s := *c.policies
	s.Local = local
	switch {
	case strings.HasPrefix(target, dynamoPrefix):
		return dynamoRequests(&s, strings.TrimPrefix(target, dynamoPrefix), body)
	case strings.HasPrefix(target, streamsPrefix):
		return streamRequests(&s, strings.TrimPrefix(target, streamsPrefix), body)
	case strings.HasPrefix(target, sqsPrefix):
		var in struct{ QueueUrl, QueueName string }
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
		return []iampolicy.Request{sqsRequest(&s, strings.TrimPrefix(target, sqsPrefix), in.QueueUrl, in.QueueName)}, nil
	case strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		// SQS's query protocol.
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("Action") == "" {
			return nil, fmt.Errorf("a form without an Action")
		}
		return []iampolicy.Request{sqsRequest(&s, form.Get("Action"), form.Get("QueueUrl"), form.Get("QueueName"))}, nil
	}
	return nil, fmt.Errorf("operation %q of %s is not one the check knows", target, r.URL.Path)
}

// sqsActions maps the batch operations to the action IAM checks.
var sqsActions = map[string]string{
	"SendMessageBatch":             "SendMessage",
	"DeleteMessageBatch":           "DeleteMessage",
	"ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}

func sqsRequest(s *iampolicy.Set, op, queueURL, queueName string) iampolicy.Request {
	if a, ok := sqsActions[op]; ok {
		op = a
	}
	name := queueName
	if queueURL != "" {
		name = queueURL[strings.LastIndexByte(queueURL, '/')+1:]
	}
	resource := "*"
	if name != "" {
		if logical, ok := s.QueueOf(name); ok {
			name = logical
		}
		resource = s.QueueARN(name)
	}
	return iampolicy.Request{Action: "sqs:" + op, Resource: resource}
}

// attr is a DynamoDB attribute value in the JSON protocol.
type attr map[string]json.RawMessage

// text is an attribute value's string form (S, N or B).
func (a attr) text() string {
	for _, k := range []string{"S", "N", "B"} {
		if raw, ok := a[k]; ok {
			var s string
			_ = json.Unmarshal(raw, &s)
			return s
		}
	}
	return ""
}

type itemRef struct {
	TableName string
	Key       map[string]attr
	Item      map[string]attr
}

type dynamoInput struct {
	itemRef
	IndexName                 string
	KeyConditionExpression    string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]attr
	KeyConditions             map[string]struct{ AttributeValueList []attr }
	RequestItems              map[string]json.RawMessage
	TransactItems             []map[string]itemRef
}

// transactActions maps a transaction item to the action IAM checks.
var transactActions = map[string]string{
	"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Get": "GetItem",
}

func dynamoRequests(s *iampolicy.Set, op string, body []byte) ([]iampolicy.Request, error) {
	var in dynamoInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("DynamoDB %s: %w", op, err)
	}
	table := func(name string) string {
		if name == "" {
			return "*"
		}
		// Every table of a local run is the template's table.
		return s.TableARN()
	}
	pk := func(ref itemRef) []string {
		item := ref.Key
		if item == nil {
			item = ref.Item
		}
		if v, ok := item[s.TableKey]; ok {
			return []string{v.text()}
		}
		return []string{}
	}
	switch op {
	case "GetItem", "PutItem", "UpdateItem", "DeleteItem":
		return []iampolicy.Request{{Action: "dynamodb:" + op, Resource: table(in.TableName), LeadingKeys: pk(in.itemRef)}}, nil
	case "Query", "Scan":
		resource, key := table(in.TableName), s.TableKey
		if in.IndexName != "" {
			resource, key = s.IndexARN(in.IndexName), s.IndexKeys[in.IndexName]
		}
		var keys []string
		if op == "Query" {
			v, err := partitionValue(in, key)
			if err != nil {
				return nil, fmt.Errorf("DynamoDB Query: %w", err)
			}
			keys = []string{v}
		}
		return []iampolicy.Request{{Action: "dynamodb:" + op, Resource: resource, LeadingKeys: keys}}, nil
	case "BatchGetItem", "BatchWriteItem":
		names := make([]string, 0, len(in.RequestItems))
		for n := range in.RequestItems {
			names = append(names, n)
		}
		sort.Strings(names)
		var out []iampolicy.Request
		for _, n := range names {
			keys := []string{}
			if op == "BatchGetItem" {
				var v struct{ Keys []map[string]attr }
				if err := json.Unmarshal(in.RequestItems[n], &v); err != nil {
					return nil, fmt.Errorf("DynamoDB %s: %w", op, err)
				}
				for _, k := range v.Keys {
					keys = append(keys, pk(itemRef{Key: k})...)
				}
			} else {
				var v []struct{ PutRequest, DeleteRequest *itemRef }
				if err := json.Unmarshal(in.RequestItems[n], &v); err != nil {
					return nil, fmt.Errorf("DynamoDB %s: %w", op, err)
				}
				for _, w := range v {
					if w.PutRequest != nil {
						keys = append(keys, pk(*w.PutRequest)...)
					}
					if w.DeleteRequest != nil {
						keys = append(keys, pk(*w.DeleteRequest)...)
					}
				}
			}
			out = append(out, iampolicy.Request{Action: "dynamodb:" + op, Resource: table(n), LeadingKeys: keys})
		}
		return out, nil
	case "TransactWriteItems", "TransactGetItems":
		var out []iampolicy.Request
		for _, item := range in.TransactItems {
			for kind, ref := range item {
				action, ok := transactActions[kind]
				if !ok {
					return nil, fmt.Errorf("DynamoDB %s: item kind %s", op, kind)
				}
				out = append(out, iampolicy.Request{Action: "dynamodb:" + action, Resource: table(ref.TableName), LeadingKeys: pk(ref)})
			}
		}
		return out, nil
	}
	// DescribeTable and the rest: the table, or no resource.
	return []iampolicy.Request{{Action: "dynamodb:" + op, Resource: table(in.TableName)}}, nil
}

// keyEquals finds "<name> = <:value>" (either side) in a key condition.
var keyEquals = regexp.MustCompile(`([#:]?[A-Za-z0-9_.\-]+)\s*=\s*([#:]?[A-Za-z0-9_.\-]+)`)

// partitionValue reads the partition key's value from a Query's key
// condition (KeyConditionExpression, or the legacy KeyConditions).
func partitionValue(in dynamoInput, key string) (string, error) {
	if c, ok := in.KeyConditions[key]; ok && len(c.AttributeValueList) == 1 {
		return c.AttributeValueList[0].text(), nil
	}
	name := func(tok string) string {
		if strings.HasPrefix(tok, "#") {
			return in.ExpressionAttributeNames[tok]
		}
		return tok
	}
	for _, m := range keyEquals.FindAllStringSubmatch(in.KeyConditionExpression, -1) {
		a, b := m[1], m[2]
		if strings.HasPrefix(a, ":") {
			a, b = b, a
		}
		if name(a) == key && strings.HasPrefix(b, ":") {
			if v, ok := in.ExpressionAttributeValues[b]; ok {
				return v.text(), nil
			}
		}
	}
	return "", fmt.Errorf("no equality on the partition key %s in %q", key, in.KeyConditionExpression)
}

func streamRequests(s *iampolicy.Set, op string, body []byte) ([]iampolicy.Request, error) {
	var in struct{ StreamArn, TableName string }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("DynamoDB Streams %s: %w", op, err)
	}
	resource := "*"
	switch op {
	case "DescribeStream", "GetShardIterator":
		label := in.StreamArn[strings.LastIndex(in.StreamArn, "/stream/")+len("/stream/"):]
		if !strings.Contains(in.StreamArn, "/stream/") {
			return nil, fmt.Errorf("DynamoDB Streams %s: stream ARN %q", op, in.StreamArn)
		}
		resource = s.StreamARN(label)
	case "GetRecords":
		// A shard iterator does not say its stream; the one table has one.
		resource = s.StreamARN("*")
	}
	return []iampolicy.Request{{Action: "dynamodb:" + op, Resource: resource}}, nil
}
