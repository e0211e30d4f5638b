package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/signature"
)

// roomWorld is a world whose Acme workspace also has Temporary Rooms, two
// outbound and two support webhooks, and one guest who joined the first
// room.
type roomWorld struct {
	*world
	room, room2, closed, expired string
	guestToken                   string
}

// newRoomWorld extends newWorld's fixture by applying it again with rooms
// and list items added: applying is idempotent, so the seed data stays.
func newRoomWorld(t *testing.T) *roomWorld {
	t.Helper()
	w := newWorld(t, 600)
	now := time.Now()
	ws := &w.doc.Workspaces[0]
	later := chat.FormatTime(now.Add(2 * time.Hour))
	ws.TemporaryRooms = append(ws.TemporaryRooms,
		fixture.Room{ChannelID: ws.Channels[0].ID, Name: "Support call", ExpiresAt: later},
		fixture.Room{ChannelID: ws.Channels[1].ID, Name: "Second call", ExpiresAt: later},
		fixture.Room{ChannelID: ws.Channels[0].ID, Name: "Closed call", Status: chat.RoomClosed, ExpiresAt: later},
		fixture.Room{ChannelID: ws.Channels[0].ID, Name: "Old call", ExpiresAt: chat.FormatTime(now.Add(-time.Hour))},
	)
	ws.OutboundWebhooks = append(ws.OutboundWebhooks,
		fixture.OutboundWebhook{Name: "Audit", URL: "https://example.com/audit", Events: []string{"message.created"}},
		fixture.OutboundWebhook{Name: "Search", URL: "https://example.com/search", Events: []string{"message.created", "message.translated"}},
	)
	ws.SupportWebhooks = append(ws.SupportWebhooks,
		fixture.SupportWebhook{Name: "Helpdesk", URL: "https://example.com/helpdesk"},
		fixture.SupportWebhook{Name: "Pager", URL: "https://example.com/pager"},
	)
	if err := w.doc.Complete(chat.NewIDs(), now); err != nil {
		t.Fatalf("complete fixture with rooms: %v", err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, now); err != nil {
		t.Fatalf("apply fixture with rooms: %v", err)
	}
	w.ws = *ws
	rw := &roomWorld{world: w, room: ws.TemporaryRooms[0].RoomID, room2: ws.TemporaryRooms[1].RoomID,
		closed: ws.TemporaryRooms[2].RoomID, expired: ws.TemporaryRooms[3].RoomID}
	rec := w.do(t, "POST", rw.joinPath(rw.room), `{"nickname":"Ana","preferred_language":"es-ES"}`, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("setup join: %d %s", rec.Code, rec.Body)
	}
	var joined struct {
		Data struct {
			Session struct {
				Token string `json:"token"`
			} `json:"session"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &joined); err != nil || joined.Data.Session.Token == "" {
		t.Fatalf("setup join: body %s: %v", rec.Body, err)
	}
	rw.guestToken = joined.Data.Session.Token
	return rw
}

// Paths of the endpoints, for any (even hostile) id.
func (w *roomWorld) joinPath(room string) string {
	return "/api/v1/external/rooms/" + room + "/guests"
}

func (w *roomWorld) msgsPath(room string) string {
	return "/api/v1/external/rooms/" + room + "/messages"
}

func (w *roomWorld) listPath(ws, list string) string {
	return "/api/v1/workspaces/" + ws + "/" + list
}

func (w *roomWorld) logPath(ws, webhook string) string {
	return "/api/v1/workspaces/" + ws + "/inbound-webhooks/" + webhook + "/requests"
}

// nextCursor fetches the first page of path with limit=1 and returns its
// meta.next_cursor.
func (w *roomWorld) nextCursor(t *testing.T, path string, hdr map[string]string) string {
	t.Helper()
	rec := w.do(t, "GET", path+"?limit=1", "", hdr)
	var page struct {
		Meta struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 || page.Meta.NextCursor == nil {
		t.Fatalf("GET %s?limit=1: %d %s, want a page with a next cursor", path, rec.Code, rec.Body)
	}
	return *page.Meta.NextCursor
}

// hostileCase is one hostile request and the contract's answer to it.
type hostileCase struct {
	name   string
	method string
	path   string
	body   string
	hdr    map[string]string
	// mutate, when set, adjusts a request that w.do cannot express (a
	// header with several or empty values, a Content-Length that lies, a
	// body that fails to read).
	mutate func(r *http.Request)
	status int
	// code is the expected error: "" checks only the shape, "field:x" a
	// validation error on x, "unauthenticated" the exact 401 body of the
	// workspace and guest endpoints, anything else errors.code.
	code string
}

const unauthenticatedBody = `{"message":"Unauthenticated."}`

// send runs c through the whole stack: w.do when it can express the
// request, else an equivalent request adjusted by c.mutate, held to
// openapi.yaml like w.do holds its own.
func (w *world) send(t *testing.T, c hostileCase) *httptest.ResponseRecorder {
	t.Helper()
	if c.mutate == nil {
		return w.do(t, c.method, c.path, c.body, c.hdr)
	}
	req, rec := w.serve(c)
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// serve runs c through the whole stack as w.do builds requests, without
// holding the response to openapi.yaml.
func (w *world) serve(c hostileCase) (*http.Request, *httptest.ResponseRecorder) {
	req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if c.mutate != nil {
		c.mutate(req)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return req, rec
}

// isInboundPost reports whether path is the inbound webhook route.
func isInboundPost(method, path string) bool {
	return method == "POST" && strings.HasPrefix(path, "/webhooks/") && strings.HasSuffix(path, "/messages")
}

// checkErrorShape asserts that rec is a 4xx in the contract's error shape,
// and the expected status and code.
func checkErrorShape(t *testing.T, c hostileCase, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("status %d (a 5xx), want %d; body %s", rec.Code, c.status, rec.Body)
	}
	if rec.Code != c.status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, c.status, rec.Body)
	}
	if rec.Code < 400 {
		t.Fatalf("status %d is not a 4xx; body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("no X-Request-Id")
	}
	for name, vals := range rec.Header() {
		for _, v := range vals {
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Errorf("response header %s carries a control character: %q", name, v)
			}
		}
		if strings.Contains(strings.ToLower(name), "evil") {
			t.Errorf("response carries injected header %s", name)
		}
	}
	inbound := isInboundPost(c.method, c.path)
	if rec.Code == http.StatusUnauthorized && !inbound {
		if got := strings.TrimSpace(rec.Body.String()); got != unauthenticatedBody {
			t.Fatalf("401 body %s, want exactly %s", got, unauthenticatedBody)
		}
		if c.code != "" && c.code != "unauthenticated" {
			t.Fatalf("case expects code %q on a 401 that has none", c.code)
		}
		return
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", rec.Body, err)
	}
	var msg string
	if err := json.Unmarshal(body["message"], &msg); err != nil || msg == "" {
		t.Fatalf("body %s has no message sentence", rec.Body)
	}
	var errs map[string][]string
	if err := json.Unmarshal(body["errors"], &errs); err != nil || len(errs) == 0 {
		t.Fatalf("body %s has no errors object of string lists", rec.Body)
	}
	if len(body) != 2 {
		t.Errorf("body %s has fields beyond message and errors", rec.Body)
	}
	for field, list := range errs {
		if len(list) == 0 || list[0] == "" {
			t.Errorf("errors.%s = %v, want non-empty sentences", field, list)
		}
	}
	if codes, ok := errs["code"]; ok {
		if len(errs) != 1 || len(codes) != 1 {
			t.Fatalf("errors %v, want exactly one code", errs)
		}
		if s := chat.Status(codes[0]); s != rec.Code {
			t.Errorf("code %s belongs to status %d, sent with %d", codes[0], s, rec.Code)
		}
		if c.code != "" && codes[0] != c.code {
			t.Fatalf("code %q, want %q; body %s", codes[0], c.code, rec.Body)
		}
		if strings.HasPrefix(c.code, "field:") {
			t.Fatalf("errors %v, want a validation error on %s", errs, c.code)
		}
	} else {
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("status %d with field errors %v", rec.Code, errs)
		}
		first := false
		for _, list := range errs {
			first = first || list[0] == msg
		}
		if !first {
			t.Errorf("message %q is not a field's first error %v", msg, errs)
		}
		if field, ok := strings.CutPrefix(c.code, "field:"); ok {
			if _, has := errs[field]; !has {
				t.Fatalf("errors %v, want one on %s", errs, field)
			}
		} else if c.code != "" {
			t.Fatalf("field errors %v, want code %q", errs, c.code)
		}
	}
	if rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
		t.Errorf("405 without Allow")
	}
	if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
}

// item is one stored item rendered as text, attribute by attribute.
type item struct {
	pk, sk string
	attrs  map[string]string
}

func (it item) String() string {
	names := make([]string, 0, len(it.attrs))
	for n := range it.attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%s\n", n, it.attrs[n])
	}
	return b.String()
}

// renderAV renders any attribute value, nested ones included, as text.
func renderAV(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return string(v.Value)
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(v.Value)
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberSS:
		return "[" + strings.Join(v.Value, ",") + "]"
	case *types.AttributeValueMemberNS:
		return "[" + strings.Join(v.Value, ",") + "]"
	case *types.AttributeValueMemberBS:
		parts := make([]string, len(v.Value))
		for i, b := range v.Value {
			parts[i] = string(b)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = renderAV(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberM:
		names := make([]string, 0, len(v.Value))
		for n := range v.Value {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + ":" + renderAV(v.Value[n])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("%T", v)
}

// snapshot returns every item of the table by "pk sk".
func (w *world) snapshot(t *testing.T) map[string]item {
	t.Helper()
	out := map[string]item{}
	p := dynamodb.NewScanPaginator(w.st.DB, &dynamodb.ScanInput{TableName: aws.String(w.st.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, av := range page.Items {
			it := item{attrs: map[string]string{}}
			for n, v := range av {
				it.attrs[n] = renderAV(v)
			}
			it.pk, it.sk = it.attrs["pk"], it.attrs["sk"]
			out[it.pk+" "+it.sk] = it
		}
	}
	return out
}

// keyPrefixes name the kinds of item, by the prefix of pk or of sk.
var keyPrefixes = []struct{ key, prefix string }{
	{"pk", "WS#"}, {"pk", "APITOKEN#"}, {"pk", "ROOM#"}, {"pk", "CHAN#"}, {"pk", "GSESSION#"}, {"pk", "IWH#"},
	{"pk", "MSG#"}, {"pk", "IDEM#"}, {"pk", "SIG#"}, {"pk", "QUOTA#"}, {"pk", "REQLOG#"},
	{"pk", "OWH#"}, {"pk", "SWH#"}, {"pk", "AUDIT#"},
	{"sk", "GUEST#"}, {"sk", "CLIENT#"}, {"sk", "READER#"}, {"sk", "MSG#"}, {"sk", "TR#"}, {"sk", "REQ#"},
}

// countByPrefix counts the items of snap by each of keyPrefixes.
func countByPrefix(snap map[string]item) map[string]int {
	out := map[string]int{}
	for _, it := range snap {
		for _, kp := range keyPrefixes {
			v := it.pk
			if kp.key == "sk" {
				v = it.sk
			}
			if strings.HasPrefix(v, kp.prefix) {
				out[kp.key+":"+kp.prefix]++
			}
		}
	}
	return out
}

// quotaTotal sums the counts of the quota windows in snap.
func quotaTotal(t *testing.T, snap map[string]item) int {
	t.Helper()
	total := 0
	for _, it := range snap {
		if strings.HasPrefix(it.pk, "QUOTA#") {
			n, err := strconv.Atoi(it.attrs["count"])
			if err != nil {
				t.Fatalf("quota item %s: count %q", it.pk, it.attrs["count"])
			}
			total += n
		}
	}
	return total
}

// failingBody is a request body whose read fails, as when a client goes
// away mid-request.
type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }
func (failingBody) Close() error             { return nil }

// nested returns open and close, each depth times: JSON nested that deep.
func nested(depth int, open, close string) string {
	return strings.Repeat(open, depth) + strings.Repeat(close, depth)
}

// TestHostileInput sends hostile requests to every endpoint: each gets the
// contract's 4xx in its error shape, never a 5xx, and afterwards the table
// holds nothing new but the request log records and quota counts of the
// inbound requests that reached the quota step.
func TestHostileInput(t *testing.T) {
	w := newRoomWorld(t)
	ws, other := w.ws.ID, w.other.ID
	static, signed := w.static.ID, w.signed.ID
	guest := map[string]string{"X-Service-Guest-Token": w.guestToken}
	bearer := map[string]string{"Authorization": "Bearer " + w.token}
	otherBearer := map[string]string{"Authorization": "Bearer " + w.other.Users[0].APIToken}
	with := func(base map[string]string, kv ...string) map[string]string {
		h := map[string]string{}
		for k, v := range base {
			h[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	secretHdr := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	now := time.Now().Unix()
	signedHdr := func(body string, kv ...string) map[string]string {
		return with(w.signedHeaders(body, now, nil), kv...)
	}
	// Cursors of real lists, to be sent where they do not belong.
	supportCursor := w.nextCursor(t, w.listPath(ws, "support-webhooks"), bearer)
	outboundCursor := w.nextCursor(t, w.listPath(ws, "outbound-webhooks"), bearer)

	join, msgs := w.joinPath(w.room), w.msgsPath(w.room)
	outbound, support := w.listPath(ws, "outbound-webhooks"), w.listPath(ws, "support-webhooks")
	reqlog := w.logPath(ws, static)
	in, sg := w.postPath(static), w.postPath(signed)
	kib100 := strings.Repeat("A", 100<<10)
	good := `{"nickname":"Ana","preferred_language":"en"}`
	goodContent := `{"content":"Deploy finished"}`
	huge := `{"content":"` + strings.Repeat("a", 64<<10) + `"}`
	unknownULID := "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"

	cases := []hostileCase{
		// Join: wrong JSON types for every field, huge and negative numbers.
		{name: "join nickname number", method: "POST", path: join, body: `{"nickname":5,"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname 1e999", method: "POST", path: join, body: `{"nickname":1e999,"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname negative", method: "POST", path: join, body: `{"nickname":-1,"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname bool", method: "POST", path: join, body: `{"nickname":true,"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname array", method: "POST", path: join, body: `{"nickname":["Ana"],"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname object", method: "POST", path: join, body: `{"nickname":{"first":"Ana"},"preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join language huge integer", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":99999999999999999999}`, status: 422, code: "field:preferred_language"},
		{name: "join language object", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":{"tag":"en"}}`, status: 422, code: "field:preferred_language"},
		{name: "join language NUL", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en\u0000"}`, status: 422, code: "field:preferred_language"},
		{name: "join language path traversal", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"../../etc/passwd"}`, status: 422, code: "field:preferred_language"},
		{name: "join client id number", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en","client_id":-1e308}`, status: 422, code: "field:client_id"},
		{name: "join client id bool", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en","client_id":false}`, status: 422, code: "field:client_id"},
		{name: "join client id with NUL", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en","client_id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff\u0000"}`, status: 422, code: "field:client_id"},
		// Join: control and format characters in the nickname.
		{name: "join nickname NUL", method: "POST", path: join, body: `{"nickname":"An\u0000a","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname ESC", method: "POST", path: join, body: `{"nickname":"\u001b[31mAna","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname DEL", method: "POST", path: join, body: `{"nickname":"Ana\u007f","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname C1 NEL", method: "POST", path: join, body: `{"nickname":"An\u0085a","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname CRLF", method: "POST", path: join, body: `{"nickname":"Ana\r\nAdmin","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname line separator", method: "POST", path: join, body: `{"nickname":"Ana\u2028Admin","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname bidi override", method: "POST", path: join, body: `{"nickname":"\u202enimdA","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname bidi isolate", method: "POST", path: join, body: `{"nickname":"Ana\u2066x\u2069","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname zero-width space", method: "POST", path: join, body: `{"nickname":"Ad\u200bmin","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname BOM", method: "POST", path: join, body: `{"nickname":"\ufeffAdmin","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		{name: "join nickname 65 characters", method: "POST", path: join, body: `{"nickname":"` + strings.Repeat("Ж", 65) + `","preferred_language":"en"}`, status: 422, code: "field:nickname"},
		// Join: bodies that are not one strict JSON object.
		{name: "join empty body", method: "POST", path: join, body: ``, status: 400, code: "invalid_json"},
		{name: "join whitespace body", method: "POST", path: join, body: " \r\n\t", status: 400, code: "invalid_json"},
		{name: "join null body", method: "POST", path: join, body: `null`, status: 400, code: "invalid_json"},
		{name: "join number body", method: "POST", path: join, body: `1e999`, status: 400, code: "invalid_json"},
		{name: "join deeply nested", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en","x":` + nested(10000, "[", "]") + `}`, status: 400, code: "invalid_json"},
		{name: "join deeply nested objects", method: "POST", path: join, body: nested(40, `{"a":`, "}"), status: 400, code: "invalid_json"},
		{name: "join duplicate key", method: "POST", path: join, body: `{"nickname":"Ana","nickname":"Admin","preferred_language":"en"}`, status: 400, code: "invalid_json"},
		{name: "join duplicate key by escape", method: "POST", path: join, body: `{"nickname":"Ana","nick\u006eame":"Admin","preferred_language":"en"}`, status: 400, code: "invalid_json"},
		{name: "join duplicate key nested", method: "POST", path: join, body: `{"nickname":"Ana","preferred_language":"en","x":{"a":1,"a":2}}`, status: 400, code: "invalid_json"},
		{name: "join invalid UTF-8 in value", method: "POST", path: join, body: "{\"nickname\":\"An\xc3\x28a\",\"preferred_language\":\"en\"}", status: 400, code: "invalid_json"},
		{name: "join invalid UTF-8 in key", method: "POST", path: join, body: "{\"nick\xffname\":\"Ana\",\"preferred_language\":\"en\"}", status: 400, code: "invalid_json"},
		{name: "join overlong UTF-8 slash", method: "POST", path: join, body: "{\"nickname\":\"\xc0\xaf\",\"preferred_language\":\"en\"}", status: 400, code: "invalid_json"},
		{name: "join raw NUL byte", method: "POST", path: join, body: "{\"nickname\":\"An\x00a\",\"preferred_language\":\"en\"}", status: 400, code: "invalid_json"},
		{name: "join byte order mark", method: "POST", path: join, body: "\xef\xbb\xbf" + good, status: 400, code: "invalid_json"},
		{name: "join trailing data", method: "POST", path: join, body: good + `{"nickname":"Admin"}`, status: 400, code: "invalid_json"},
		{name: "join single quotes", method: "POST", path: join, body: `{'nickname':'Ana','preferred_language':'en'}`, status: 400, code: "invalid_json"},
		{name: "join too large", method: "POST", path: join, body: `{"nickname":"` + strings.Repeat("a", 64<<10) + `","preferred_language":"en"}`, status: 413, code: "payload_too_large"},
		{name: "join Content-Length lies", method: "POST", path: join, body: good, mutate: func(r *http.Request) { r.ContentLength = 1 << 40 }, status: 413, code: "payload_too_large"},
		{name: "join chunked too large", method: "POST", path: join, body: huge, mutate: func(r *http.Request) { r.ContentLength = -1 }, status: 413, code: "payload_too_large"},
		{name: "join body read fails", method: "POST", path: join, mutate: func(r *http.Request) { r.Body = failingBody{} }, status: 400, code: "invalid_json"},
		{name: "join text/plain", method: "POST", path: join, body: good, hdr: map[string]string{"Content-Type": "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "join form encoded", method: "POST", path: join, body: `nickname=Ana&preferred_language=en`, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
		{name: "join malformed Content-Type", method: "POST", path: join, body: good, hdr: map[string]string{"Content-Type": ";;;=json"}, status: 415, code: "unsupported_media_type"},
		{name: "join oversized Content-Type", method: "POST", path: join, body: good, hdr: map[string]string{"Content-Type": kib100}, status: 415, code: "unsupported_media_type"},
		// Join: room ids that are not an available room's.
		// An encoded traversal decodes to a non-canonical path: the router
		// refuses it before any handler, so it says nothing about rooms.
		{name: "join room path traversal", method: "POST", path: w.joinPath("..%2F..%2Fetc"), body: good, status: 404, code: "not_found"},
		{name: "join room NUL", method: "POST", path: w.joinPath(url.PathEscape(w.room + "\x00")), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room with #", method: "POST", path: w.joinPath(url.PathEscape(w.room + "#META")), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room lowercase", method: "POST", path: w.joinPath(strings.ToLower(w.room)), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room very long", method: "POST", path: w.joinPath(strings.Repeat("0", 10000)), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room unknown", method: "POST", path: w.joinPath(unknownULID), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room closed", method: "POST", path: w.joinPath(w.closed), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join room expired", method: "POST", path: w.joinPath(w.expired), body: good, status: 410, code: "temporary_room_expired"},
		{name: "join workspace id as room", method: "POST", path: w.joinPath(ws), body: good, status: 410, code: "temporary_room_expired"},

		// Guest messages: tokens.
		{name: "guest GET no token", method: "GET", path: msgs, status: 401, code: "unauthenticated"},
		{name: "guest GET 100 KiB token", method: "GET", path: msgs, hdr: map[string]string{"X-Service-Guest-Token": "gst_" + kib100}, status: 401, code: "unauthenticated"},
		{name: "guest GET token with NUL", method: "GET", path: msgs, hdr: map[string]string{"X-Service-Guest-Token": w.guestToken + "\x00"}, status: 401, code: "unauthenticated"},
		{name: "guest GET token header injection", method: "GET", path: msgs, hdr: map[string]string{"X-Service-Guest-Token": w.guestToken + "\r\nX-Evil: 1"}, status: 401, code: "unauthenticated"},
		{name: "guest GET token invalid UTF-8", method: "GET", path: msgs, hdr: map[string]string{"X-Service-Guest-Token": "gst_\xff\xfe"}, status: 401, code: "unauthenticated"},
		{name: "guest GET token repeated", method: "GET", path: msgs, mutate: func(r *http.Request) {
			r.Header["X-Service-Guest-Token"] = []string{w.guestToken, w.guestToken}
		}, status: 401, code: "unauthenticated"},
		{name: "guest GET empty token", method: "GET", path: msgs, mutate: func(r *http.Request) {
			r.Header["X-Service-Guest-Token"] = []string{""}
		}, status: 401, code: "unauthenticated"},
		{name: "guest GET workspace token", method: "GET", path: msgs, hdr: map[string]string{"X-Service-Guest-Token": w.token}, status: 401, code: "unauthenticated"},
		{name: "guest GET bearer instead of token", method: "GET", path: msgs, hdr: map[string]string{"Authorization": "Bearer " + w.guestToken}, status: 401, code: "unauthenticated"},
		{name: "guest GET token of another room", method: "GET", path: w.msgsPath(w.room2), hdr: guest, status: 403, code: "forbidden"},
		{name: "guest GET unknown room", method: "GET", path: w.msgsPath(unknownULID), hdr: guest, status: 403, code: "forbidden"},
		{name: "guest GET room path traversal", method: "GET", path: w.msgsPath("..%2F..%2Fetc"), hdr: guest, status: 404, code: "not_found"},
		{name: "guest GET room with encoded slash", method: "GET", path: w.msgsPath(w.room + "%2F" + w.room), hdr: guest, status: 410, code: "temporary_room_expired"},
		{name: "guest GET room lowercase", method: "GET", path: w.msgsPath(strings.ToLower(w.room)), hdr: guest, status: 410, code: "temporary_room_expired"},
		{name: "guest GET room %00", method: "GET", path: w.msgsPath("%00"), hdr: guest, status: 410, code: "temporary_room_expired"},
		// Guest messages: paging.
		{name: "guest GET limit -1", method: "GET", path: msgs + "?limit=-1", hdr: guest, status: 422, code: "field:limit"},
		{name: "guest GET limit huge", method: "GET", path: msgs + "?limit=99999999999999999999", hdr: guest, status: 422, code: "field:limit"},
		{name: "guest GET limit float", method: "GET", path: msgs + "?limit=1e2", hdr: guest, status: 422, code: "field:limit"},
		{name: "guest GET limit NUL", method: "GET", path: msgs + "?limit=5%00", hdr: guest, status: 422, code: "field:limit"},
		{name: "guest GET cursor garbage", method: "GET", path: msgs + "?cursor=..%2F..%2Fetc", hdr: guest, status: 422, code: "field:cursor"},
		{name: "guest GET cursor of a workspace list", method: "GET", path: msgs + "?cursor=" + url.QueryEscape(supportCursor), hdr: guest, status: 422, code: "field:cursor"},
		{name: "guest GET cursor 100 KiB", method: "GET", path: msgs + "?cursor=" + kib100, hdr: guest, status: 422, code: "field:cursor"},
		// Guest messages: posts.
		{name: "guest POST no token, valid body", method: "POST", path: msgs, body: goodContent, status: 401, code: "unauthenticated"},
		{name: "guest POST 100 KiB token", method: "POST", path: msgs, body: goodContent, hdr: map[string]string{"X-Service-Guest-Token": kib100}, status: 401, code: "unauthenticated"},
		{name: "guest POST content number", method: "POST", path: msgs, body: `{"content":42}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST content 1e999", method: "POST", path: msgs, body: `{"content":1e999}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST content null", method: "POST", path: msgs, body: `{"content":null}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST content array", method: "POST", path: msgs, body: `{"content":["hi"]}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST content blank", method: "POST", path: msgs, body: `{"content":" \t\r\n"}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST content too long", method: "POST", path: msgs, body: `{"content":"` + strings.Repeat("ж", 20000) + strings.Repeat("a", 20001) + `"}`, hdr: guest, status: 422, code: "field:content"},
		{name: "guest POST empty body", method: "POST", path: msgs, hdr: guest, status: 400, code: "invalid_json"},
		{name: "guest POST array", method: "POST", path: msgs, body: `[{"content":"hi"}]`, hdr: guest, status: 400, code: "invalid_json"},
		{name: "guest POST duplicate content", method: "POST", path: msgs, body: `{"content":"hi","content":"bye"}`, hdr: guest, status: 400, code: "invalid_json"},
		{name: "guest POST invalid UTF-8", method: "POST", path: msgs, body: "{\"content\":\"\xed\xa0\x80\"}", hdr: guest, status: 400, code: "invalid_json"},
		{name: "guest POST deeply nested", method: "POST", path: msgs, body: `{"content":"hi","x":` + nested(33, "[", "]") + `}`, hdr: guest, status: 400, code: "invalid_json"},
		{name: "guest POST text/html", method: "POST", path: msgs, body: goodContent, hdr: with(guest, "Content-Type", "text/html"), status: 415, code: "unsupported_media_type"},
		{name: "guest POST too large", method: "POST", path: msgs, body: huge, hdr: guest, status: 413, code: "payload_too_large"},
		{name: "guest POST other room", method: "POST", path: w.msgsPath(w.room2), body: goodContent, hdr: guest, status: 403, code: "forbidden"},

		// Workspace lists.
		{name: "outbound no token", method: "GET", path: outbound, status: 401, code: "unauthenticated"},
		{name: "outbound bad limit without token", method: "GET", path: outbound + "?limit=-1", status: 401, code: "unauthenticated"},
		{name: "outbound 100 KiB bearer", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Bearer " + kib100}, status: 401, code: "unauthenticated"},
		{name: "outbound bearer header injection", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Bearer " + w.token + "\r\nX-Evil: 1"}, status: 401, code: "unauthenticated"},
		{name: "outbound bearer NUL", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Bearer \x00" + w.token}, status: 401, code: "unauthenticated"},
		{name: "outbound bearer invalid UTF-8", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Bearer wsk_\xc3\x28"}, status: 401, code: "unauthenticated"},
		{name: "outbound basic auth", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Basic d3NrOnNlY3JldA=="}, status: 401, code: "unauthenticated"},
		{name: "outbound guest token", method: "GET", path: outbound, hdr: map[string]string{"Authorization": "Bearer " + w.guestToken}, status: 401, code: "unauthenticated"},
		{name: "outbound other workspace token", method: "GET", path: outbound, hdr: otherBearer, status: 403, code: "forbidden"},
		{name: "outbound workspace traversal", method: "GET", path: w.listPath("..%2F"+ws, "outbound-webhooks"), hdr: bearer, status: 404, code: "not_found"},
		{name: "outbound workspace lowercase", method: "GET", path: w.listPath(strings.ToLower(ws), "outbound-webhooks"), hdr: bearer, status: 403, code: "forbidden"},
		{name: "outbound limit -1", method: "GET", path: outbound + "?limit=-1", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit huge", method: "GET", path: outbound + "?limit=99999999999999999999", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit 0", method: "GET", path: outbound + "?limit=0", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit 101", method: "GET", path: outbound + "?limit=101", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit hex", method: "GET", path: outbound + "?limit=0x10", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit empty", method: "GET", path: outbound + "?limit=", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound limit twice", method: "GET", path: outbound + "?limit=5&limit=6", hdr: bearer, status: 422, code: "field:limit"},
		{name: "outbound cursor of support list", method: "GET", path: outbound + "?cursor=" + url.QueryEscape(supportCursor), hdr: bearer, status: 422, code: "field:cursor"},
		{name: "outbound cursor twice", method: "GET", path: outbound + "?cursor=" + url.QueryEscape(outboundCursor) + "&cursor=" + url.QueryEscape(outboundCursor), hdr: bearer, status: 422, code: "field:cursor"},
		{name: "outbound cursor tampered", method: "GET", path: outbound + "?cursor=" + url.QueryEscape(outboundCursor[:len(outboundCursor)-2]+"AA"), hdr: bearer, status: 422, code: "field:cursor"},
		{name: "support cursor control chars", method: "GET", path: support + "?cursor=%0d%0aX-Evil:%201", hdr: bearer, status: 422, code: "field:cursor"},
		{name: "support cursor of another workspace", method: "GET", path: w.listPath(other, "support-webhooks") + "?cursor=" + url.QueryEscape(supportCursor), hdr: otherBearer, status: 422, code: "field:cursor"},
		{name: "support limit negative zero", method: "GET", path: support + "?limit=-0", hdr: bearer, status: 422, code: "field:limit"},
		{name: "support no token", method: "GET", path: support, status: 401, code: "unauthenticated"},
		{name: "support unknown workspace", method: "GET", path: w.listPath(unknownULID, "support-webhooks"), hdr: bearer, status: 403, code: "forbidden"},

		// Request log.
		{name: "request log no token", method: "GET", path: reqlog, status: 401, code: "unauthenticated"},
		{name: "request log other workspace token", method: "GET", path: reqlog, hdr: otherBearer, status: 403, code: "forbidden"},
		{name: "request log webhook traversal", method: "GET", path: w.logPath(ws, "..%2F..%2Fetc"), hdr: bearer, status: 404, code: "not_found"},
		{name: "request log webhook lowercase", method: "GET", path: w.logPath(ws, strings.ToLower(static)), hdr: bearer, status: 404, code: "not_found"},
		{name: "request log webhook with #", method: "GET", path: w.logPath(ws, url.PathEscape(static+"#REQ#")), hdr: bearer, status: 404, code: "not_found"},
		{name: "request log unknown webhook", method: "GET", path: w.logPath(ws, unknownULID), hdr: bearer, status: 404, code: "not_found"},
		{name: "request log webhook of another workspace path", method: "GET", path: w.logPath(other, static), hdr: otherBearer, status: 404, code: "not_found"},
		{name: "request log limit huge", method: "GET", path: reqlog + "?limit=99999999999999999999", hdr: bearer, status: 422, code: "field:limit"},
		{name: "request log cursor of outbound list", method: "GET", path: reqlog + "?cursor=" + url.QueryEscape(outboundCursor), hdr: bearer, status: 422, code: "field:cursor"},

		// Inbound webhook, static scheme, valid credentials: the body is judged.
		{name: "inbound content number", method: "POST", path: in, body: `{"content":5}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound content 1e999", method: "POST", path: in, body: `{"content":1e999}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound content negative", method: "POST", path: in, body: `{"content":-99999999999999999999}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound content object", method: "POST", path: in, body: `{"content":{"text":"hi"}}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound content null", method: "POST", path: in, body: `{"content":null}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound content blank unicode", method: "POST", path: in, body: `{"content":"\u00a0\u2003\u3000"}`, hdr: secretHdr, status: 422, code: "field:content"},
		{name: "inbound channel number", method: "POST", path: in, body: `{"content":"hi","channel_id":1}`, hdr: secretHdr, status: 422, code: "field:channel_id"},
		{name: "inbound channel traversal", method: "POST", path: in, body: `{"content":"hi","channel_id":"../../` + w.general + `"}`, hdr: secretHdr, status: 422, code: "field:channel_id"},
		{name: "inbound channel lowercase", method: "POST", path: in, body: `{"content":"hi","channel_id":"` + strings.ToLower(w.general) + `"}`, hdr: secretHdr, status: 422, code: "field:channel_id"},
		{name: "inbound channel key injection", method: "POST", path: in, body: `{"content":"hi","channel_id":"` + w.general + `#MSG#x"}`, hdr: secretHdr, status: 422, code: "field:channel_id"},
		{name: "inbound skip_translation string", method: "POST", path: in, body: `{"content":"hi","skip_translation":"true"}`, hdr: secretHdr, status: 422, code: "field:skip_translation"},
		{name: "inbound skip_translation number", method: "POST", path: in, body: `{"content":"hi","skip_translation":1}`, hdr: secretHdr, status: 422, code: "field:skip_translation"},
		{name: "inbound body secret number", method: "POST", path: in, body: `{"content":"hi","secret":12345}`, hdr: secretHdr, status: 422, code: "field:secret"},
		{name: "inbound deeply nested", method: "POST", path: in, body: `{"content":"hi","x":` + nested(5000, `{"a":`, "}") + `}`, hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound duplicate content", method: "POST", path: in, body: `{"content":"hi","content":"bye"}`, hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound invalid UTF-8", method: "POST", path: in, body: "{\"content\":\"caf\xe9\"}", hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound raw control byte", method: "POST", path: in, body: "{\"content\":\"a\x01b\"}", hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound empty body", method: "POST", path: in, hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound null body", method: "POST", path: in, body: `null`, hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound string body", method: "POST", path: in, body: `"Deploy finished"`, hdr: secretHdr, status: 400, code: "invalid_json"},
		{name: "inbound text/plain", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Content-Type", "text/plain; charset=utf-8"), status: 415, code: "unsupported_media_type"},
		{name: "inbound too large", method: "POST", path: in, body: huge, hdr: secretHdr, status: 413, code: "payload_too_large"},
		{name: "inbound body read fails", method: "POST", path: in, hdr: secretHdr, mutate: func(r *http.Request) { r.Body = failingBody{} }, status: 400, code: "invalid_json"},
		{name: "inbound Content-Length lies", method: "POST", path: in, body: goodContent, hdr: secretHdr, mutate: func(r *http.Request) { r.ContentLength = 1 << 40 }, status: 413, code: "payload_too_large"},
		{name: "inbound key NUL", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", "k\x00ey"), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key tab", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", "k\tey"), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key DEL", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", "key\x7f"), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key header injection", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", "key\r\nX-Evil: 1"), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key invalid UTF-8", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", "key\xff"), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key 100 KiB", method: "POST", path: in, body: goodContent, hdr: with(secretHdr, "Idempotency-Key", kib100), status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key empty", method: "POST", path: in, body: goodContent, hdr: secretHdr, mutate: func(r *http.Request) {
			r.Header["Idempotency-Key"] = []string{""}
		}, status: 400, code: "invalid_idempotency_key"},
		{name: "inbound key with invalid body", method: "POST", path: in, body: `{"content":""}`, hdr: with(secretHdr, "Idempotency-Key", "k\x00"), status: 422, code: "field:content"},
		{name: "inbound 100 KiB user agent", method: "POST", path: in, body: `{"content":7}`, hdr: with(secretHdr, "User-Agent", kib100), status: 422, code: "field:content"},
		{name: "inbound user agent NUL and invalid UTF-8", method: "POST", path: in, body: `{"content":7}`, hdr: with(secretHdr, "User-Agent", "curl\x00/\xff\xfe"), status: 422, code: "field:content"},
		// Inbound webhook, static scheme: credentials.
		{name: "inbound 100 KiB secret", method: "POST", path: in, body: goodContent, hdr: map[string]string{"X-Service-Webhook-Secret": kib100}, status: 401, code: "invalid_secret"},
		{name: "inbound secret NUL suffix", method: "POST", path: in, body: goodContent, hdr: map[string]string{"X-Service-Webhook-Secret": w.static.Secret + "\x00"}, status: 401, code: "invalid_secret"},
		{name: "inbound secret header injection", method: "POST", path: in, body: goodContent, hdr: map[string]string{"X-Service-Webhook-Secret": w.static.Secret + "\r\nX-Evil: 1"}, status: 401, code: "invalid_secret"},
		{name: "inbound secret invalid UTF-8", method: "POST", path: in, body: goodContent, hdr: map[string]string{"X-Service-Webhook-Secret": "\xff" + w.static.Secret}, status: 401, code: "invalid_secret"},
		{name: "inbound empty secret header", method: "POST", path: in, body: goodContent, mutate: func(r *http.Request) {
			r.Header["X-Service-Webhook-Secret"] = []string{""}
		}, status: 401, code: "missing_credentials"},
		{name: "inbound body secret of wrong type only", method: "POST", path: in, body: `{"content":"hi","secret":["` + w.static.Secret + `"]}`, status: 401, code: "missing_credentials"},
		// Inbound webhook, signature scheme, with a valid signature: the body is judged.
		{name: "signed deeply nested", method: "POST", path: sg, body: `{"content":"hi","x":` + nested(100, "[", "]") + `}`, hdr: signedHdr(`{"content":"hi","x":` + nested(100, "[", "]") + `}`), status: 400, code: "invalid_json"},
		{name: "signed invalid UTF-8", method: "POST", path: sg, body: "{\"content\":\"\xf8\x88\x80\x80\x80\"}", hdr: signedHdr("{\"content\":\"\xf8\x88\x80\x80\x80\"}"), status: 400, code: "invalid_json"},
		{name: "signed duplicate key", method: "POST", path: sg, body: `{"content":"a","skip_translation":true,"skip_translation":false}`, hdr: signedHdr(`{"content":"a","skip_translation":true,"skip_translation":false}`), status: 400, code: "invalid_json"},
		{name: "signed content bool", method: "POST", path: sg, body: `{"content":false}`, hdr: signedHdr(`{"content":false}`), status: 422, code: "field:content"},
		{name: "signed key control char", method: "POST", path: sg, body: goodContent, hdr: signedHdr(goodContent, "Idempotency-Key", "\x01"), status: 400, code: "invalid_idempotency_key"},
		{name: "signed wrong content type", method: "POST", path: sg, body: goodContent, hdr: signedHdr(goodContent, "Content-Type", "multipart/form-data; boundary=x"), status: 415, code: "unsupported_media_type"},
		// Inbound webhook, signature scheme: hostile signature headers.
		{name: "signed 100 KiB signature header", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: "t=1,v1=" + kib100}, status: 401, code: "invalid_signature_header"},
		{name: "signed huge timestamp", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: "t=99999999999999999999,v1=" + strings.Repeat("0", 64)}, status: 401, code: "invalid_signature_header"},
		{name: "signed negative timestamp", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: "t=-1,v1=" + strings.Repeat("0", 64)}, status: 401, code: "invalid_signature_header"},
		{name: "signed signature NUL", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: "t=\x00,v1=\x00"}, status: 401, code: "invalid_signature_header"},
		{name: "signed uppercase hex", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: signature.Format(now, strings.ToUpper(signature.Sign([]byte(w.signed.SigningSecret), now, []byte(goodContent))))}, status: 401, code: "invalid_signature"},
		{name: "signed static secret only", method: "POST", path: sg, body: `{"content":"hi","secret":"` + w.signed.Secret + `"}`, status: 401, code: "missing_signature"},
		{name: "signed header injection", method: "POST", path: sg, body: goodContent, hdr: map[string]string{signature.Header: "t=1\r\nX-Evil: 1,v1=00"}, status: 401, code: "invalid_signature_header"},

		// Inbound webhook ids that are not an enabled webhook's.
		{name: "inbound webhook traversal", method: "POST", path: w.postPath("..%2F..%2Fetc"), body: goodContent, hdr: secretHdr, status: 404, code: "not_found"},
		{name: "inbound webhook encoded dot-dot", method: "POST", path: w.postPath("%2e%2e"), body: goodContent, hdr: secretHdr, status: 404, code: "not_found"},
		{name: "inbound webhook NUL", method: "POST", path: w.postPath(url.PathEscape(static + "\x00")), body: goodContent, hdr: secretHdr, status: 404, code: "webhook_not_found"},
		{name: "inbound webhook with #", method: "POST", path: w.postPath(url.PathEscape(static + "#META")), body: goodContent, hdr: secretHdr, status: 404, code: "webhook_not_found"},
		{name: "inbound webhook lowercase", method: "POST", path: w.postPath(strings.ToLower(static)), body: goodContent, hdr: secretHdr, status: 404, code: "webhook_not_found"},
		{name: "inbound webhook very long", method: "POST", path: w.postPath(strings.Repeat("7", 10000)), body: goodContent, hdr: secretHdr, status: 404, code: "webhook_not_found"},
		{name: "inbound webhook is a room id", method: "POST", path: w.postPath(w.room), body: goodContent, hdr: secretHdr, status: 404, code: "webhook_not_found"},

		// Unknown routes and methods.
		{name: "PUT join", method: "PUT", path: join, body: good, status: 405, code: "method_not_allowed"},
		{name: "DELETE guest messages", method: "DELETE", path: msgs, hdr: guest, status: 405, code: "method_not_allowed"},
		{name: "PATCH outbound", method: "PATCH", path: outbound, hdr: bearer, status: 405, code: "method_not_allowed"},
		{name: "PUT support", method: "PUT", path: support, body: `{}`, hdr: bearer, status: 405, code: "method_not_allowed"},
		{name: "POST support as a member", method: "POST", path: support, body: `{}`, hdr: bearer, status: 403, code: "forbidden"},
		{name: "DELETE request log", method: "DELETE", path: reqlog, hdr: bearer, status: 405, code: "method_not_allowed"},
		{name: "GET inbound", method: "GET", path: in, status: 405, code: "method_not_allowed"},
		{name: "OPTIONS inbound", method: "OPTIONS", path: in, status: 405, code: "method_not_allowed"},
		{name: "TRACE join", method: "TRACE", path: join, status: 405, code: "method_not_allowed"},
		{name: "HEAD outbound", method: "HEAD", path: outbound, hdr: bearer, status: 405, code: "method_not_allowed"},
		{name: "HEAD guest messages", method: "HEAD", path: msgs, hdr: guest, status: 405, code: "method_not_allowed"},
		{name: "made-up method", method: "BREW", path: outbound, status: 405, code: "method_not_allowed"},
		{name: "lowercase method", method: "post", path: in, body: goodContent, hdr: secretHdr, status: 405, code: "method_not_allowed"},
		{name: "unknown root", method: "GET", path: "/", status: 404, code: "not_found"},
		{name: "unknown api path", method: "GET", path: "/api/v1/workspaces", hdr: bearer, status: 404, code: "not_found"},
		{name: "GET of a webhook path", method: "GET", path: outbound + "/" + unknownULID, hdr: bearer, status: 405, code: "method_not_allowed"},
		{name: "extra path segment", method: "GET", path: outbound + "/" + unknownULID + "/x", hdr: bearer, status: 404, code: "not_found"},
		{name: "trailing slash", method: "POST", path: in + "/", body: goodContent, hdr: secretHdr, status: 404, code: "not_found"},
		{name: "encoded slash in workspace", method: "GET", path: "/api/v1/workspaces/a%2Fb/outbound-webhooks", hdr: bearer, status: 403, code: "forbidden"},
		{name: "NUL in path", method: "GET", path: "/api/v1/%00", status: 404, code: "not_found"},
		{name: "very long unknown path", method: "GET", path: "/" + strings.Repeat("x/", 20000), status: 404, code: "not_found"},
		{name: "dot-dot path", method: "POST", path: "/webhooks/../../etc/messages", body: `{}`, status: 404, code: "not_found"},
		{name: "dot-dot into a real route", method: "POST", path: "/webhooks/x/../" + static + "/messages", body: goodContent, hdr: secretHdr, status: 404, code: "not_found"},
		{name: "double slash", method: "GET", path: w.listPath(ws, "/outbound-webhooks"), hdr: bearer, status: 404, code: "not_found"},
		{name: "dot segment", method: "GET", path: "/api/v1/./external/rooms/" + w.room + "/messages", hdr: guest, status: 404, code: "not_found"},
		{name: "protocol-relative path", method: "GET", path: "//evil.example/..", status: 404, code: "not_found"},
		{name: "etc passwd", method: "GET", path: "/etc/passwd", status: 404, code: "not_found"},
	}
	if len(cases) < 80 {
		t.Fatalf("%d hostile cases, want at least 80", len(cases))
	}
	before := w.snapshot(t)
	reachedQuota := 0
	for _, c := range cases {
		// A request to an existing, enabled webhook reaches the quota step.
		counted := isInboundPost(c.method, c.path) && (c.path == in || c.path == sg)
		if counted {
			reachedQuota++
		}
		t.Run(c.name, func(t *testing.T) {
			rec := w.send(t, c)
			checkErrorShape(t, c, rec)
			if isInboundPost(c.method, c.path) {
				limited := rec.Header().Get("X-RateLimit-Limit") != ""
				if c.status == 404 && limited {
					t.Errorf("a 404 carries rate-limit headers: it must not count")
				}
				if counted && !limited {
					t.Errorf("no X-RateLimit-Limit on a request that reached the quota step")
				}
			}
		})
	}
	after := w.snapshot(t)

	// Nothing but request log records and quota counts changed.
	newLogs := 0
	for k, it := range after {
		old, existed := before[k]
		switch {
		case strings.HasPrefix(it.pk, "QUOTA#"):
		case existed && old.String() == it.String():
		case !existed && strings.HasPrefix(it.pk, "REQLOG#") && strings.HasPrefix(it.sk, "REQ#"):
			newLogs++
			if it.attrs["outcome"] != chat.OutcomeRejected {
				t.Errorf("new request log record %s has outcome %q, want rejected", k, it.attrs["outcome"])
			}
			if n := len(it.attrs["user_agent"]); n > 512 {
				t.Errorf("request log record %s keeps a %d-byte user agent, want at most 512", k, n)
			}
		case existed:
			t.Errorf("item %s changed:\nbefore:\n%s\nafter:\n%s", k, old, it)
		default:
			t.Errorf("item %s written:\n%s", k, it)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("item %s deleted", k)
		}
	}
	if newLogs != reachedQuota {
		t.Errorf("%d request log records written, want %d (one per request that reached the quota step)", newLogs, reachedQuota)
	}
	if got, want := quotaTotal(t, after)-quotaTotal(t, before), reachedQuota; got != want {
		t.Errorf("quota counted %d requests, want %d", got, want)
	}
	cb, ca := countByPrefix(before), countByPrefix(after)
	for _, kp := range keyPrefixes {
		k := kp.key + ":" + kp.prefix
		delta := ca[k] - cb[k]
		switch k {
		case "pk:REQLOG#", "sk:REQ#":
			if delta != reachedQuota {
				t.Errorf("%s items: %d -> %d, want %d more", k, cb[k], ca[k], reachedQuota)
			}
		case "pk:QUOTA#":
			if delta > 2 {
				t.Errorf("%s items: %d -> %d, want at most the windows the run spanned", k, cb[k], ca[k])
			}
		default:
			if delta != 0 {
				t.Errorf("%s items: %d -> %d, want no change", k, cb[k], ca[k])
			}
		}
	}
	t.Logf("%d hostile requests; %d reached the inbound quota step; items by prefix %v", len(cases), reachedQuota, ca)
}

// TestHostileLookalikesAreText holds the line docs/decisions.md draws for
// nicknames: letters of any script are text, however much they resemble
// others (201), while control and format characters are refused (in
// TestHostileInput). Each join writes exactly one guest.
func TestHostileLookalikesAreText(t *testing.T) {
	w := newRoomWorld(t)
	join := w.joinPath(w.room)
	for _, c := range []struct {
		name, body, nickname string
	}{
		{"Cyrillic lookalike of Ana", `{"nickname":"Аnа","preferred_language":"en"}`, "Аnа"},
		{"Cyrillic lookalike of admin", `{"nickname":"аdmin","preferred_language":"en"}`, "аdmin"},
		{"Greek capital alpha", `{"nickname":"Αdmin","preferred_language":"el"}`, "Αdmin"},
		{"fullwidth letters", `{"nickname":"Ａｎａ","preferred_language":"ja"}`, "Ａｎａ"},
		{"mathematical bold letters", `{"nickname":"𝐀𝐧𝐚","preferred_language":"en"}`, "𝐀𝐧𝐚"},
		{"emoji sequence with ZWJ", `{"nickname":"👩‍💻 Ana","preferred_language":"en"}`, "👩‍💻 Ana"},
		{"combining marks", `{"nickname":"Ana\u0301\u0308","preferred_language":"en"}`, "Ana\u0301\u0308"},
		{"right-to-left script", `{"nickname":"עדי","preferred_language":"he"}`, "עדי"},
		{"markup is text", `{"nickname":"<script>alert(1)</script>","preferred_language":"en"}`, "<script>alert(1)</script>"},
		{"padded with spaces", `{"nickname":"  Ana  ","preferred_language":"en"}`, "Ana"},
		{"64 four-byte characters", `{"nickname":"` + strings.Repeat("😀", 64) + `","preferred_language":"en"}`, strings.Repeat("😀", 64)},
		{"huge number in an unknown field", `{"nickname":"Ana","preferred_language":"en","age":1e999999}`, "Ana"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := countByPrefix(w.snapshot(t))
			rec := w.do(t, "POST", join, c.body, nil)
			if rec.Code != http.StatusCreated {
				t.Fatalf("status %d, want 201; body %s", rec.Code, rec.Body)
			}
			if strings.Contains(rec.Body.String(), "<script>") {
				t.Errorf("markup echoed unescaped: %s", rec.Body)
			}
			var b struct {
				Data struct {
					Guest struct {
						Nickname string `json:"nickname"`
					} `json:"guest"`
				} `json:"data"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if b.Data.Guest.Nickname != c.nickname {
				t.Errorf("nickname %q, want %q", b.Data.Guest.Nickname, c.nickname)
			}
			after := countByPrefix(w.snapshot(t))
			for _, k := range []string{"sk:GUEST#", "pk:GSESSION#", "sk:READER#"} {
				if after[k]-before[k] != 1 {
					t.Errorf("%s items %d -> %d, want one more", k, before[k], after[k])
				}
			}
		})
	}
}

// TestHostileFormerDeviations holds the answers to hostile requests that
// once deviated from the contract (lone surrogate escapes, query pieces that
// url.ParseQuery drops); each reason says what used to happen.
func TestHostileFormerDeviations(t *testing.T) {
	w := newRoomWorld(t)
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	guest := map[string]string{"X-Service-Guest-Token": w.guestToken}
	for _, c := range []struct {
		hostileCase
		why string
	}{
		// docs/decisions.md refuses what encoding/json would silently turn
		// into U+FFFD; a lone surrogate escape is exactly that.
		{hostileCase{name: "join nickname lone high surrogate", method: "POST", path: w.joinPath(w.room),
			body: `{"nickname":"\ud800","preferred_language":"en"}`, status: 400, code: "invalid_json"},
			"pkg/jsonbody accepts a lone UTF-16 surrogate escape; encoding/json stores it as U+FFFD"},
		{hostileCase{name: "guest content lone low surrogate", method: "POST", path: w.msgsPath(w.room), hdr: guest,
			body: `{"content":"\udfff"}`, status: 400, code: "invalid_json"},
			"pkg/jsonbody accepts a lone UTF-16 surrogate escape; encoding/json stores it as U+FFFD"},
		{hostileCase{name: "inbound content lone surrogate", method: "POST", path: w.postPath(w.static.ID), hdr: secret,
			body: `{"content":"x\udc00"}`, status: 400, code: "invalid_json"},
			"pkg/jsonbody accepts a lone UTF-16 surrogate escape; encoding/json stores it as U+FFFD"},
		// docs/decisions.md: limit must be a decimal integer given once;
		// a query that does not parse must not silently mean "no limit".
		{hostileCase{name: "limit with a bad escape", method: "GET", path: w.listPath(w.ws.ID, "outbound-webhooks") + "?limit=%zz",
			hdr: map[string]string{"Authorization": "Bearer " + w.token}, status: 422, code: "field:limit"},
			"url.Values drops a pair with a bad escape, so limit=%zz reads as no limit (200)"},
		{hostileCase{name: "limit after a semicolon", method: "GET", path: w.listPath(w.ws.ID, "outbound-webhooks") + "?limit=1;limit=500",
			hdr: map[string]string{"Authorization": "Bearer " + w.token}, status: 422, code: "field:limit"},
			"url.Values drops a pair containing ';', so limit=1;limit=500 reads as no limit (200)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, rec := w.serve(c.hostileCase)
			if rec.Code >= 500 {
				t.Fatalf("status %d, a 5xx; body %s", rec.Code, rec.Body)
			}
			if loc := rec.Header().Get("Location"); loc != "" && (!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//")) {
				t.Fatalf("redirect off-site to %q", loc)
			}
			v, err := openapitest.Default()
			if err != nil {
				t.Fatal(err)
			}
			if rec.Code != c.status {
				t.Fatalf("REGRESSION: %s %q answers %d (%s), want %d %s; it used to because %s",
					c.method, c.path, rec.Code, rec.Header().Get("Content-Type"), c.status, c.code, c.why)
			}
			if err := v.Validate(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Fatalf("%s %q answers %d, which openapi.yaml does not describe: %v", c.method, c.path, rec.Code, err)
			}
			checkErrorShape(t, c.hostileCase, rec)
		})
	}
}
