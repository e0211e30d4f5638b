package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inboundapi"
)

// logRecord is one record of the inbound request log as the list returns it.
type logRecord struct {
	Status         int     `json:"status"`
	Outcome        string  `json:"outcome"`
	ErrorCode      string  `json:"error_code"`
	Scheme         string  `json:"auth_scheme"`
	IdempotencyKey *string `json:"idempotency_key"`
	MessageID      *string `json:"message_id"`
}

// requestLog returns webhook's request log, newest first.
func (w *world) requestLog(t *testing.T, webhook string) []logRecord {
	t.Helper()
	rec := w.do(t, "GET", "/api/v1/workspaces/"+w.ws.ID+"/inbound-webhooks/"+webhook+"/requests?limit=100", "",
		map[string]string{"Authorization": "Bearer " + w.token})
	if rec.Code != 200 {
		t.Fatalf("request log: got %d %s, want 200", rec.Code, rec.Body)
	}
	var page struct {
		Data []logRecord `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		t.Fatalf("request log: %v", err)
	}
	return page.Data
}

// Contract section 4: credentials are judged before the body, and a
// signature already accepted is a credential failure unless the request is
// the idempotent retry of the request that used it (the same key). The
// signature covers the body, so a replayed signature carries the accepted
// body; what can make its request "bad" is what the signature does not
// cover: the Content-Type or the Idempotency-Key. Without the key that used
// it, each is 401 signature_replayed and logged as rejected; with that key
// the request is a retry, refused for its own fault or replayed.
func TestReplayedSignatureJudgedBeforeTheBody(t *testing.T) {
	w := newWorld(t, 600)
	body := `{"content":"deploy 8"}`
	ts := time.Now().Unix()
	keyed := map[string]string{"Idempotency-Key": "deploy-8"}
	if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, keyed)); rec.Code != 202 {
		t.Fatalf("first: got %d %s, want 202", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		name   string
		hdr    map[string]string
		status int
		code   string
		log    string
	}{
		{"another media type, no key", map[string]string{"Content-Type": "text/plain"}, 401, "signature_replayed", "401 rejected signature_replayed"},
		{"a malformed key", map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 401, "signature_replayed", "401 rejected signature_replayed"},
		{"another key", map[string]string{"Idempotency-Key": "deploy-9"}, 401, "signature_replayed", "401 rejected signature_replayed"},
		{"no key", nil, 401, "signature_replayed", "401 rejected signature_replayed"},
		{"its key, another media type", map[string]string{"Idempotency-Key": "deploy-8", "Content-Type": "text/plain"}, 415, "unsupported_media_type", "415 rejected unsupported_media_type"},
		{"its key: the idempotent retry", keyed, 202, "", "202 replayed "},
	} {
		rec := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, c.hdr))
		if rec.Code != c.status || (c.code != "" && codeOf(t, rec) != c.code) {
			t.Fatalf("%s: got %d %s, want %d %s", c.name, rec.Code, rec.Body, c.status, c.code)
		}
		logs := w.requestLog(t, w.signed.ID)
		if got := fmt.Sprintf("%d %s %s", logs[0].Status, logs[0].Outcome, logs[0].ErrorCode); got != c.log {
			t.Fatalf("%s: logged %q, want %q", c.name, got, c.log)
		}
	}
	if n := len(w.requestLog(t, w.signed.ID)); n != 7 {
		t.Fatalf("got %d log records, want 7", n)
	}
	if n := w.count(t, "MSG#"); n != 1 {
		t.Fatalf("got %d messages, want 1", n)
	}
}

// Every refused signed request is in the request log: one refused at the
// body (its signature checked, not recorded) and, when that check's write
// fails as AWS would answer a call the role may not make, one answered
// with the store's error instead of the body's (step 4 was not judged),
// logged by the plain write.
func TestRefusedSignedRequestIsLogged(t *testing.T) {
	w := newWorld(t, 600)
	body := `{"content":""}`
	if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, time.Now().Unix(), nil)); rec.Code != 422 {
		t.Fatalf("invalid body: got %d %s, want 422", rec.Code, rec.Body)
	}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: InboundWebhookFunction is not authorized to perform: dynamodb:ConditionCheckItem (injected)"}
	w.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 1, denied)
	body2 := `{"content":"", "n": 2}`
	rec := w.do(t, "POST", w.postPath(w.signed.ID), body2, w.signedHeaders(body2, time.Now().Unix(), nil))
	if rec.Code < 500 {
		t.Fatalf("invalid body, signature check denied: got %d %s, want a 5xx (the signature was not judged)", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "ConditionCheckItem") {
		t.Fatalf("the answer leaks the store's error: %s", rec.Body)
	}
	logs := w.requestLog(t, w.signed.ID)
	if len(logs) != 2 {
		t.Fatalf("got %d log records, want 2", len(logs))
	}
	if l := logs[1]; l.Status != 422 || l.Outcome != "rejected" || l.ErrorCode != "validation_failed" || l.Scheme != "signature" {
		t.Fatalf("invalid body's record: got %+v, want 422 rejected validation_failed signature", l)
	}
	if l := logs[0]; l.Status != rec.Code || l.Outcome != "rejected" || l.ErrorCode == "" {
		t.Fatalf("denied check's record: got %+v, want %d rejected with a code", l, rec.Code)
	}
}

// callRecorder records the DynamoDB calls of one client as IAM authorizes
// them: one (action, leading key) per call, one per item of a transaction.
type callRecorder struct {
	mu    sync.Mutex
	calls []string
}

var keyCondPK = regexp.MustCompile(`\bpk\s*=\s*(:\w+)`)

func pkOf(m map[string]types.AttributeValue) string {
	if s, ok := m["pk"].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func (r *callRecorder) add(action, pk string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, action+" "+pk)
}

func (r *callRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *callRecorder) install(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordIAMActions",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch p := in.Parameters.(type) {
				case *dynamodb.GetItemInput:
					r.add("dynamodb:GetItem", pkOf(p.Key))
				case *dynamodb.PutItemInput:
					r.add("dynamodb:PutItem", pkOf(p.Item))
				case *dynamodb.UpdateItemInput:
					r.add("dynamodb:UpdateItem", pkOf(p.Key))
				case *dynamodb.DeleteItemInput:
					r.add("dynamodb:DeleteItem", pkOf(p.Key))
				case *dynamodb.QueryInput:
					pk := ""
					if m := keyCondPK.FindStringSubmatch(aws.ToString(p.KeyConditionExpression)); m != nil {
						if s, ok := p.ExpressionAttributeValues[m[1]].(*types.AttributeValueMemberS); ok {
							pk = s.Value
						}
					}
					r.add("dynamodb:Query", pk)
				case *dynamodb.TransactWriteItemsInput:
					for _, it := range p.TransactItems {
						switch {
						case it.Put != nil:
							r.add("dynamodb:PutItem", pkOf(it.Put.Item))
						case it.Update != nil:
							r.add("dynamodb:UpdateItem", pkOf(it.Update.Key))
						case it.Delete != nil:
							r.add("dynamodb:DeleteItem", pkOf(it.Delete.Key))
						case it.ConditionCheck != nil:
							r.add("dynamodb:ConditionCheckItem", pkOf(it.ConditionCheck.Key))
						}
					}
				default:
					r.add(fmt.Sprintf("unrecorded:%T", p), "")
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	})
}

// prefix is a leading key up to and including its first '#'.
func prefix(pk string) string {
	if i := strings.IndexByte(pk, '#'); i >= 0 {
		return pk[:i+1]
	}
	return pk
}

// policyStatement is an Allow statement of a function's inline policy, as
// far as this test reads it: DynamoDB actions on the table, optionally
// limited by ForAllValues:StringLike on dynamodb:LeadingKeys.
type policyStatement struct {
	actions     []string
	leadingKeys []string // nil: any key
}

// inlinePolicy reads function's statements from template.yaml; a statement
// it cannot read fails the test rather than allowing anything.
func inlinePolicy(t *testing.T, function string) []policyStatement {
	t.Helper()
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatal(err)
	}
	strs := func(v any) []string {
		var out []string
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				s, _ := e.(string)
				out = append(out, s)
			}
		}
		return out
	}
	var out []policyStatement
	policies, _ := tmpl.Resources[function].Properties["Policies"].([]any)
	for _, p := range policies {
		doc, ok := p.(map[string]any)
		if !ok {
			t.Fatalf("%s: policy %v is not an inline document", function, p)
		}
		sts, _ := doc["Statement"].([]any)
		for _, s := range sts {
			st, _ := s.(map[string]any)
			if st["Effect"] != "Allow" {
				t.Fatalf("%s: statement %v: only Allow statements are read here", function, st)
			}
			ps := policyStatement{actions: strs(st["Action"])}
			if cond, ok := st["Condition"].(map[string]any); ok {
				like, ok := cond["ForAllValues:StringLike"].(map[string]any)
				if !ok || len(cond) != 1 || len(like) != 1 || like["dynamodb:LeadingKeys"] == nil {
					t.Fatalf("%s: condition %v not read here", function, cond)
				}
				ps.leadingKeys = strs(like["dynamodb:LeadingKeys"])
			}
			out = append(out, ps)
		}
	}
	return out
}

func allowed(sts []policyStatement, action, pk string) bool {
	for _, st := range sts {
		hasAction := false
		for _, a := range st.actions {
			if strings.EqualFold(a, action) {
				hasAction = true
			}
		}
		if !hasAction {
			continue
		}
		if st.leadingKeys == nil {
			return true
		}
		for _, pat := range st.leadingKeys {
			if ok, _ := path.Match(pat, pk); ok && !strings.Contains(pk, "/") {
				return true
			}
		}
	}
	return false
}

// TestInboundCallsAllowedByItsPolicy makes every kind of inbound request
// with a client that records each DynamoDB call as IAM authorizes it, and
// holds two things: the calls of each path are the ones listed (docs/
// delivery.md), and InboundWebhookFunction's policy in template.yaml allows
// each of them. A ConditionCheck its role may not make is how refused signed
// requests vanished from the log in AWS (issue 18 item 5).
func TestInboundCallsAllowedByItsPolicy(t *testing.T) {
	w := newWorld(t, 600)
	rec := &callRecorder{}
	cfg := w.st.AWS.Copy()
	rec.install(&cfg)
	a := app.New(cfg, w.st.Table)
	h := httpapi.Mux(map[string]http.Handler{"InboundWebhookFunction": inboundapi.InboundHandler(inboundapi.Service(a, time.Minute), a.Now, nil)})
	send := func(id, body string, hdr map[string]string) int {
		req := httptest.NewRequest("POST", w.postPath(id), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp := httptest.NewRecorder()
		h.ServeHTTP(resp, req)
		return resp.Code
	}
	static := func(body string, hdr map[string]string) func() int {
		return func() int {
			h := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
			for k, v := range hdr {
				h[k] = v
			}
			return send(w.static.ID, body, h)
		}
	}
	now := time.Now().Unix()
	signed := func(body string, ts int64, hdr map[string]string) func() int {
		return func() int { return send(w.signed.ID, body, w.signedHeaders(body, ts, hdr)) }
	}
	const (
		quota  = "dynamodb:UpdateItem QUOTA#"
		log    = "dynamodb:PutItem REQLOG#"
		sig    = "dynamodb:PutItem SIG#"
		check  = "dynamodb:ConditionCheckItem SIG#"
		idem   = "dynamodb:PutItem IDEM#"
		msg    = "dynamodb:PutItem CHAN#"
		lookup = "dynamodb:GetItem IWH#"
		wsRead = "dynamodb:Query WS#"
	)
	key := map[string]string{"Idempotency-Key": "k-1"}
	policy := inlinePolicy(t, "InboundWebhookFunction")
	for _, c := range []struct {
		name   string
		send   func() int
		status int
		want   []string
	}{
		{"cold: accepted, static", static(`{"content":"a"}`, nil), 202, []string{lookup, wsRead, quota, msg, log}},
		{"cold: accepted, signed, with key", signed(`{"content":"b"}`, now, key), 202, []string{lookup, wsRead, quota, sig, idem, msg, log}},
		{"accepted, static, with key", static(`{"content":"c"}`, key), 202, []string{lookup, quota, idem, msg, log}},
		{"replay, static", static(`{"content":"c"}`, key), 202, []string{lookup, quota, idem, msg, log, log}},
		{"replay, signed anew", signed(`{"content":"b"}`, now+1, key), 202, []string{lookup, quota, sig, idem, msg, log, sig, log}},
		{"reused key", static(`{"content":"other"}`, key), 422, []string{lookup, quota, idem, msg, log, log}},
		{"replayed signature", signed(`{"content":"b"}`, now, nil), 401, []string{lookup, quota, sig, msg, log, log}},
		{"replayed signature, bad media type", signed(`{"content":"b"}`, now, map[string]string{"Content-Type": "text/plain"}), 401, []string{lookup, quota, check, log, log}},
		{"rejected, bad secret", static(`{"content":"d"}`, map[string]string{"X-Service-Webhook-Secret": "bad"}), 401, []string{quota, lookup, log}},
		{"rejected, invalid body, static", static(`{"content":""}`, nil), 422, []string{lookup, quota, log}},
		{"rejected, invalid body, signed", signed(`{"content":""}`, now, nil), 422, []string{lookup, quota, check, log}},
		{"rejected, invalid key, signed", signed(`{"content":"e"}`, now, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}), 400, []string{lookup, quota, check, log}},
		{"rejected, bad signature", func() int { return send(w.signed.ID, `{}`, map[string]string{"X-Service-Signature": "t=1,v1=00"}) }, 401, []string{lookup, quota, log}},
		{"rejected, too large", static(`{"content":"`+strings.Repeat("a", 64<<10)+`"}`, nil), 413, []string{lookup, quota, log}},
	} {
		rec.take()
		if got := c.send(); got != c.status {
			t.Fatalf("%s: got status %d, want %d", c.name, got, c.status)
		}
		var got []string
		for _, call := range rec.take() {
			action, pk, _ := strings.Cut(call, " ")
			if !allowed(policy, action, pk) {
				t.Errorf("%s: %s on %s is not allowed by InboundWebhookFunction's policy", c.name, action, pk)
			}
			got = append(got, action+" "+prefix(pk))
		}
		sort.Strings(got)
		want := append([]string(nil), c.want...)
		sort.Strings(want)
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s: calls\n got %v\nwant %v", c.name, got, want)
		}
	}
}
