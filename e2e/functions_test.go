package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/chatbridge/chat/internal/lambdart"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// sampleStatus is the status each known HTTP function answers its sample
// with, as its wiring check (pkg/app TestFunctionSamples) expects. A
// function not listed must answer below 500, with a JSON body.
var sampleStatus = map[string]int{
	"JoinRoomFunction":             http.StatusCreated,
	"ListOutboundWebhooksFunction": http.StatusOK,
	"ListSupportWebhooksFunction":  http.StatusOK,
	"InboundWebhookFunction":       http.StatusAccepted,
	"ListInboundRequestsFunction":  http.StatusOK,
	"FallbackFunction":             http.StatusNotFound,
	// Webhook management (the demo's Ana is an admin).
	"ListInboundWebhooksFunction":         http.StatusOK,
	"CreateInboundWebhookFunction":        http.StatusCreated,
	"UpdateInboundWebhookFunction":        http.StatusOK,
	"DeleteInboundWebhookFunction":        http.StatusNoContent,
	"RotateInboundWebhookSecretFunction":  http.StatusOK,
	"CreateOutboundWebhookFunction":       http.StatusCreated,
	"UpdateOutboundWebhookFunction":       http.StatusOK,
	"DeleteOutboundWebhookFunction":       http.StatusNoContent,
	"RotateOutboundWebhookSecretFunction": http.StatusOK,
	"CreateSupportWebhookFunction":        http.StatusCreated,
	"UpdateSupportWebhookFunction":        http.StatusOK,
	"DeleteSupportWebhookFunction":        http.StatusNoContent,
	"RotateSupportWebhookSecretFunction":  http.StatusOK,
	"ListAuditEventsFunction":             http.StatusOK,
	// With a real guest token in place of the sample's placeholder.
	"ListGuestMessagesFunction": http.StatusOK,
	"PostGuestMessageFunction":  http.StatusCreated,
	// Members and rooms, as Ana of the demo fixture.
	"ListChannelsFunction":        http.StatusOK,
	"ListChannelMessagesFunction": http.StatusOK,
	"PostChannelMessageFunction":  http.StatusCreated,
	"ListRoomsFunction":           http.StatusOK,
	"CloseRoomFunction":           http.StatusOK,
	// The sample's expires_at is fixed and so more than 7 days ahead: the
	// real binary refuses it as the contract says (its wiring test sends a
	// fresh one and gets 201).
	"CreateRoomFunction": http.StatusUnprocessableEntity,
	// Delivery logs: the demo has no delivery yet, so an empty page, and
	// the sample's delivery is unknown.
	"ListOutboundDeliveriesFunction": http.StatusOK,
	"ListSupportDeliveriesFunction":  http.StatusOK,
	"RedeliverOutboundFunction":      http.StatusNotFound,
	"RedeliverSupportFunction":       http.StatusNotFound,
	// A test of a demo webhook: its .invalid target fails, which the
	// endpoint reports as a result (the recover sample's fixed since is
	// 202 within 30 days of it, 422 after: not listed).
	"TestOutboundWebhookFunction": http.StatusOK,
	"TestSupportWebhookFunction":  http.StatusOK,
}

// cleanBatch lists the event source functions whose sample must be
// processed without a batch item failure, as their wiring tests expect.
var cleanBatch = map[string]bool{"OutboxRelayFunction": true, "TranslateFunction": true}

// needsNoConfig lists the functions that start without any configuration:
// the fallback and the guest page need no table and no AWS client.
var needsNoConfig = map[string]bool{"FallbackFunction": true, "GuestPageFunction": true}

// credentialHeaders are the contract's request credentials.
var credentialHeaders = []string{"authorization", "x-service-guest-token", "x-service-webhook-secret", "x-service-signature"}

// samples maps each function directory to its events/ samples: the files
// named <dir>.json or <dir>-*.json, each going to the longest such dir.
func samples(tb testing.TB) map[string][]string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no events/*.json samples (%v)", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		best := ""
		for _, fn := range mk.Functions {
			if (base == fn.Dir || strings.HasPrefix(base, fn.Dir+"-")) && len(fn.Dir) > len(best) {
				best = fn.Dir
			}
		}
		if best == "" {
			tb.Logf("events/%s.json belongs to no function of the Makefile's FUNCTIONS", base)
			continue
		}
		out[best] = append(out[best], f)
	}
	return out
}

// demoEnv is function id's environment on a stack seeded by
// wiringtest.DemoStack, with the values wiringtest.Demo sets for the
// in-process tests.
func demoEnv(t *testing.T, tmpl *samTemplate, id string, st *stacktest.Stack) map[string]string {
	t.Helper()
	env := tmpl.functionEnv(t, id, stackConfig{Stack: st, CursorKey: wiringtest.CursorKey})
	env[awsenv.EnvTable] = st.Table
	env[awsenv.EnvCursorKey] = wiringtest.CursorKey
	env[awsenv.EnvQueueURL] = st.Resources.Queues["TranslationQueue"]
	return env
}

// TestSamples starts each function's real binary against a stack seeded
// with the demo fixture and invokes its samples, then a bad request.
func TestSamples(t *testing.T) {
	tmpl := parseTemplate(t)
	byDir := samples(t)
	for _, fn := range mk.Functions {
		t.Run(fn.ID, func(t *testing.T) {
			// Each function has its own stack and process: they run side by
			// side, most of their time spent waiting on a process or moto.
			t.Parallel()
			files := byDir[fn.Dir]
			if len(files) == 0 {
				t.Skipf("SKIPPED: %s has no events/%s.json sample to invoke it with", fn.ID, fn.Dir)
			}
			bin, _ := host.binary(t, fn.ID)
			st, _ := wiringtest.DemoStack(t)
			env := demoEnv(t, tmpl, fn.ID, st)
			r := lambdart.Start(t, bin, env)
			r.Timeout = functionTimeout(t, fn.ID)
			for _, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				t.Run(filepath.Base(f), func(t *testing.T) {
					switch kind := kindOf(raw); kind {
					case "http":
						testHTTP(t, r, fn, raw, tmpl, st)
					case "aws:sqs", "aws:dynamodb":
						testBatch(t, r, fn, kind, raw, st)
					default:
						resp, fnErr, err := r.Invoke(ctx(t), raw)
						if err != nil || fnErr != nil || !json.Valid(resp) {
							t.Fatalf("sample: %s %v %v, want a JSON response", resp, fnErr, err)
						}
					}
				})
			}
			if code := r.ExitCode(); code != -1 {
				t.Fatalf("the process exited (%d) during the samples", code)
			}
		})
	}
}

// functionTimeout is id's template Timeout (Globals' by default), under
// which the runtime runs it, as Lambda does.
func functionTimeout(t *testing.T, id string) time.Duration {
	t.Helper()
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatal(err)
	}
	return tmpl.Timeout(id)
}

// kindOf tells an API Gateway HTTP API (payload 2.0) request from an event
// source's batch, by its records' eventSource.
func kindOf(raw []byte) string {
	var probe struct {
		Version        string          `json:"version"`
		RequestContext json.RawMessage `json:"requestContext"`
		Records        []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return ""
	}
	if probe.Version == "2.0" && len(probe.RequestContext) > 0 {
		return "http"
	}
	if len(probe.Records) > 0 {
		return probe.Records[0].EventSource
	}
	return ""
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// invokeHTTP invokes an HTTP function, which must never return an error
// to Lambda (that would be an opaque 5xx).
func invokeHTTP(t *testing.T, r *lambdart.Runtime, payload []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	out, fnErr, err := r.Invoke(ctx(t), payload)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if fnErr != nil {
		t.Fatalf("the handler returned an error to Lambda: %v", fnErr)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("response %s: %v, want an API Gateway v2 response", out, err)
	}
	return resp
}

func testHTTP(t *testing.T, r *lambdart.Runtime, fn function, raw []byte, tmpl *samTemplate, st *stacktest.Stack) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("sample: %v", err)
	}
	payload := raw
	// A sample's guest token is a placeholder: a real one comes from a join,
	// through the join function's own binary.
	if key, ok := findHeader(ev.Headers, "x-service-guest-token"); ok {
		ev.Headers[key] = guestToken(t, tmpl, st, ev.PathParameters["room_id"])
		payload = mustJSON(t, ev)
	}
	resp := invokeHTTP(t, r, payload)
	if want, known := sampleStatus[fn.ID]; known && resp.StatusCode != want {
		t.Errorf("sample: got %d %s, want %d", resp.StatusCode, resp.Body, want)
	} else if !known && resp.StatusCode >= 500 {
		t.Errorf("sample: got %d %s, want below 500", resp.StatusCode, resp.Body)
	} else if !known {
		t.Logf("sample: %d (no expected status recorded for %s)", resp.StatusCode, fn.ID)
	}
	if resp.StatusCode == http.StatusNoContent {
		if resp.Body != "" {
			t.Errorf("sample: 204 with body %q", resp.Body)
		}
	} else if !json.Valid([]byte(resp.Body)) {
		t.Errorf("sample: body %q is not JSON", resp.Body)
	}
	if resp.StatusCode >= 400 {
		checkErrorShape(t, resp)
	}

	bad, ok := badRequest(t, fn, ev)
	if !ok {
		t.Logf("no bad request derivable from this sample (no body, no credential, not the $default route)")
		return
	}
	resp = invokeHTTP(t, r, mustJSON(t, bad.ev))
	if !slices.Contains(bad.statuses, resp.StatusCode) {
		t.Fatalf("%s: got %d %s, want one of %v", bad.what, resp.StatusCode, resp.Body, bad.statuses)
	}
	t.Logf("%s: %d %s", bad.what, resp.StatusCode, resp.Body)
	checkErrorShape(t, resp)
	if bad.allow != "" {
		if got, _ := headerValue(resp.Headers, "Allow"); got != bad.allow {
			t.Errorf("%s: Allow %q, want %q", bad.what, got, bad.allow)
		}
	}
}

type badCase struct {
	what     string
	ev       events.APIGatewayV2HTTPRequest
	statuses []int
	allow    string
}

// badRequest derives a request the function must refuse from its sample:
// for the $default route, a known route with the wrong method (405); for a
// request with a body, a body that is not a JSON object (400 invalid_json,
// or 401 where credentials are checked first); else, the sample without
// its credential (401).
func badRequest(t *testing.T, fn function, ev events.APIGatewayV2HTTPRequest) (badCase, bool) {
	t.Helper()
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatal(err)
	}
	routes := tmpl.Routes()
	isDefault := slices.ContainsFunc(routes, func(r samtemplate.Route) bool { return r.Function == fn.ID && r.Path == "$default" })
	if isDefault {
		for _, r := range routes {
			if r.Method != http.MethodPost {
				continue
			}
			path := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(r.Path, "01JD9N1418BBS5R9EJ3SKBVPMA")
			ev.RawPath, ev.RequestContext.HTTP.Path, ev.RequestContext.HTTP.Method = path, path, http.MethodGet
			return badCase{what: "GET " + r.Path, ev: ev, statuses: []int{http.StatusMethodNotAllowed}, allow: http.MethodPost}, true
		}
		return badCase{}, false
	}
	if m := ev.RequestContext.HTTP.Method; ev.Body != "" && (m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch) {
		ev.Body, ev.IsBase64Encoded = "[]", false
		return badCase{what: "body []", ev: ev, statuses: []int{http.StatusBadRequest, http.StatusUnauthorized}}, true
	}
	for _, h := range credentialHeaders {
		if key, ok := findHeader(ev.Headers, h); ok {
			headers := map[string]string{}
			for k, v := range ev.Headers {
				if k != key {
					headers[k] = v
				}
			}
			ev.Headers = headers
			return badCase{what: "without " + h, ev: ev, statuses: []int{http.StatusUnauthorized}}, true
		}
	}
	return badCase{}, false
}

// checkErrorShape holds an error response to the contract: JSON, a
// message, and errors.code naming one code whose status is the response's
// (a 401 unauthenticated and a 422 validation error carry none).
func checkErrorShape(t *testing.T, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	if ct, _ := headerValue(resp.Headers, "Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%d: Content-Type %q, want application/json", resp.StatusCode, ct)
	}
	var body struct {
		Message string              `json:"message"`
		Errors  map[string][]string `json:"errors"`
	}
	dec := json.NewDecoder(strings.NewReader(resp.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Message == "" {
		t.Errorf("%d: error body %s (%v), want {message, errors}", resp.StatusCode, resp.Body, err)
		return
	}
	codes, hasCode := body.Errors["code"]
	switch {
	case hasCode && (len(codes) != 1 || chat.Status(codes[0]) != resp.StatusCode):
		t.Errorf("%d: errors.code %v, want one code of that status", resp.StatusCode, codes)
	case !hasCode && resp.StatusCode == http.StatusUnauthorized && body.Message != "Unauthenticated.":
		t.Errorf("401 without a code: message %q, want Unauthenticated.", body.Message)
	case !hasCode && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusUnprocessableEntity:
		t.Errorf("%d: body %s has no errors.code", resp.StatusCode, resp.Body)
	}
}

// guestToken joins a guest to room through JoinRoomFunction's binary and
// returns the session token.
func guestToken(t *testing.T, tmpl *samTemplate, st *stacktest.Stack, room string) string {
	t.Helper()
	const join = "JoinRoomFunction"
	if _, ok := host.builds[join]; !ok {
		t.Fatalf("a guest token comes from %s, which the Makefile does not build", join)
	}
	bin, _ := host.binary(t, join)
	raw, err := os.ReadFile(filepath.Join(root, "events", "join-room.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	sampleRoom := ev.PathParameters["room_id"]
	ev.PathParameters["room_id"] = room
	ev.RawPath = strings.Replace(ev.RawPath, sampleRoom, room, 1)
	ev.RequestContext.HTTP.Path = ev.RawPath
	r := lambdart.Start(t, bin, demoEnv(t, tmpl, join, st))
	resp := invokeHTTP(t, r, mustJSON(t, ev))
	var body struct {
		Data struct {
			Session struct {
				Token string `json:"token"`
			} `json:"session"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || resp.StatusCode >= 300 || body.Data.Session.Token == "" {
		t.Fatalf("join room %s for a guest token: %d %s", room, resp.StatusCode, resp.Body)
	}
	r.Stop()
	return body.Data.Session.Token
}

// testBatch invokes an event source's batch: the answer must be the
// partial batch response, naming only records of the batch; then an event
// of the wrong shape must be reported as a function error, and the process
// must go on serving.
func testBatch(t *testing.T, r *lambdart.Runtime, fn function, kind string, raw []byte, st *stacktest.Stack) {
	var batch struct {
		Records []struct {
			MessageID string `json:"messageId"`
			DynamoDB  struct {
				SequenceNumber string `json:"SequenceNumber"`
			} `json:"dynamodb"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(raw, &batch); err != nil {
		t.Fatal(err)
	}
	// A failure names an SQS record by messageId, a stream record by its
	// sequence number.
	var ids []string
	for _, rec := range batch.Records {
		if kind == "aws:sqs" {
			ids = append(ids, rec.MessageID)
		} else {
			ids = append(ids, rec.DynamoDB.SequenceNumber)
		}
	}
	failures := invokeBatch(t, r, raw, ids)
	if cleanBatch[fn.ID] && len(failures) != 0 {
		t.Fatalf("sample: batch item failures %v, want none", failures)
	} else if len(failures) != 0 {
		t.Logf("sample: batch item failures %v; output:\n%s", failures, r.Logs())
	}
	if fn.ID == "OutboxRelayFunction" {
		checkRelayed(t, st, raw)
	}

	_, fnErr, err := r.Invoke(ctx(t), []byte(`[]`))
	if err != nil || fnErr == nil || fnErr.Type != "UnmarshalTypeError" {
		t.Fatalf("event [] : %v %v, want an UnmarshalTypeError reported to Lambda", fnErr, err)
	}
	invokeBatch(t, r, raw, ids)
}

// invokeBatch invokes a batch and returns the failed item identifiers,
// failing t unless the response is exactly {"batchItemFailures": [...]}
// naming records of the batch.
func invokeBatch(t *testing.T, r *lambdart.Runtime, raw []byte, ids []string) []string {
	t.Helper()
	out, fnErr, err := r.Invoke(ctx(t), raw)
	if err != nil || fnErr != nil {
		t.Fatalf("invoke: %v %v, want a partial batch response", fnErr, err)
	}
	var resp struct {
		BatchItemFailures *[]events.SQSBatchItemFailure `json:"batchItemFailures"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil || resp.BatchItemFailures == nil && !bytes.Contains(out, []byte(`"batchItemFailures":null`)) {
		t.Fatalf("response %s (%v), want {\"batchItemFailures\": [...]}", out, err)
	}
	var failed []string
	if resp.BatchItemFailures != nil {
		for _, f := range *resp.BatchItemFailures {
			if !slices.Contains(ids, f.ItemIdentifier) {
				t.Fatalf("failure %q names no record of the batch %v", f.ItemIdentifier, ids)
			}
			failed = append(failed, f.ItemIdentifier)
		}
	}
	return failed
}

// checkRelayed checks that the relay queued the sample's message for
// translation.
func checkRelayed(t *testing.T, st *stacktest.Stack, raw []byte) {
	t.Helper()
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	want := ev.Records[0].Change.NewImage["id"].String()
	out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(st.Resources.Queues["TranslationQueue"]), MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("translation queue holds %d jobs (%v), want 1", len(out.Messages), err)
	}
	job, err := messages.DecodeJob(aws.ToString(out.Messages[0].Body))
	if err != nil || job.MessageID != want {
		t.Fatalf("job %+v %v, want the sample's message %s", job, err, want)
	}
}

// TestMissingConfiguration starts each function with no configuration at
// all: it must exit non-zero at init, before polling for an event, with a
// log line saying init failed and naming what is missing.
func TestMissingConfiguration(t *testing.T) {
	tmpl := parseTemplate(t)
	for _, fn := range mk.Functions {
		t.Run(fn.ID, func(t *testing.T) {
			t.Parallel()
			bin, _ := host.binary(t, fn.ID)
			r := lambdart.Start(t, bin, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": fn.ID})
			if needsNoConfig[fn.ID] {
				if err := r.WaitReady(ctx(t)); err != nil {
					t.Fatalf("%s needs no configuration, yet: %v", fn.ID, err)
				}
				return
			}
			code, err := r.Wait(ctx(t))
			if err != nil {
				t.Fatalf("%s runs without configuration (polled /next: %v): %v", fn.ID, r.Polled(), err)
			}
			if code == 0 || r.Polled() {
				t.Fatalf("exit code %d, polled /next %v: want a non-zero exit before polling", code, r.Polled())
			}
			vars := tmpl.variables(fn.ID)
			for _, line := range strings.Split(r.Logs(), "\n") {
				if strings.Contains(line, "init failed") && slices.ContainsFunc(vars, func(v string) bool { return strings.Contains(line, v) }) {
					t.Logf("exit %d: %s", code, line)
					return
				}
			}
			t.Fatalf("no log line says init failed naming one of %v:\n%s", vars, r.Logs())
		})
	}
}

func findHeader(h map[string]string, name string) (string, bool) {
	for k := range h {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

func headerValue(h map[string]string, name string) (string, bool) {
	k, ok := findHeader(h, name)
	return h[k], ok
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
