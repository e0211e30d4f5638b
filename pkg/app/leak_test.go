package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
)

// captureLogs makes the default logger write JSON lines, at every level,
// to the returned buffer until the test ends.
func captureLogs(t *testing.T) *childproc.Output {
	t.Helper()
	buf := &childproc.Output{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return buf
}

// exchange is one request's response as a client sees it.
type exchange struct {
	name   string
	status int
	header string
	body   string
	// issued is the guest token this response issued: the one secret it
	// may carry, in its body.
	issued string
}

// secretSet names every credential of a test by where it came from.
type secretSet map[string]string

func (s secretSet) add(name, value string) {
	if len(value) < 8 {
		panic(fmt.Sprintf("secret %s is too short to search for: %q", name, value))
	}
	s[name] = value
}

// found returns the names of the secrets in text, except allowed ones.
func (s secretSet) found(text string, allowed ...string) []string {
	var out []string
	for name, v := range s {
		ok := false
		for _, a := range allowed {
			ok = ok || v == a
		}
		if !ok && strings.Contains(text, v) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestSecretsNeverLeak runs every endpoint with the fixture's secrets and
// tokens, successes and failures (wrong secret, bad and replayed
// signatures, revoked tokens, failing storage), and asserts that no
// credential appears in any log line, response header or body (a guest
// token only in the body of the join that issued it), request log record,
// or stored item (a signing secret only in its own webhook's item).
func TestSecretsNeverLeak(t *testing.T) {
	logs := captureLogs(t)
	w := newRoomWorld(t)
	ws := w.ws
	secrets := secretSet{}
	for i, u := range append(append(ws.Users[:0:0], ws.Users...), w.other.Users...) {
		secrets.add(fmt.Sprintf("API token %d", i), u.APIToken)
	}
	secrets.add("setup guest token", w.guestToken)
	for _, h := range ws.InboundWebhooks {
		secrets.add("static secret of "+h.ID, h.Secret)
		secrets.add("signing secret of "+h.ID, h.SigningSecret)
	}
	for _, h := range ws.OutboundWebhooks {
		secrets.add("outbound signing secret of "+h.ID, h.SigningSecret)
	}
	wrongSecret := "whsec_WRONG_guess_0123456789abcdefXYZ"
	wrongToken := "wsk_WRONG_guess_0123456789abcdefXYZ"
	secrets.add("wrong static secret", wrongSecret)
	secrets.add("wrong API token", wrongToken)

	var seen []exchange
	record := func(name, issued string, rec *httptest.ResponseRecorder) *httptest.ResponseRecorder {
		var hdr strings.Builder
		for k, vs := range rec.Header() {
			fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(vs, ", "))
		}
		seen = append(seen, exchange{name: name, status: rec.Code, header: hdr.String(), body: rec.Body.String(), issued: issued})
		return rec
	}
	expect := func(rec *httptest.ResponseRecorder, status int) {
		t.Helper()
		if rec.Code != status {
			t.Fatalf("%s: status %d, want %d; body %s", seen[len(seen)-1].name, rec.Code, status, rec.Body)
		}
	}
	do := func(name, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		return record(name, "", w.do(t, method, path, body, hdr))
	}
	join := func(name, body string, status int) string {
		t.Helper()
		rec := w.do(t, "POST", w.joinPath(w.room), body, nil)
		var out struct {
			Data struct {
				Session struct {
					Token string `json:"token"`
				} `json:"session"`
			} `json:"data"`
		}
		json.Unmarshal(rec.Body.Bytes(), &out)
		record(name, out.Data.Session.Token, rec)
		expect(rec, status)
		return out.Data.Session.Token
	}
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	guestHdr := func(token string) map[string]string { return map[string]string{"X-Service-Guest-Token": token} }
	signedHdr := func(name, body string, ts int64, key string, hdr map[string]string) map[string]string {
		v1 := signature.Sign([]byte(key), ts, []byte(body))
		h := map[string]string{signature.Header: signature.Format(ts, v1)}
		secrets.add(name+" signature header", h[signature.Header])
		secrets.add(name+" v1", v1)
		for k, v := range hdr {
			h[k] = v
		}
		return h
	}
	now := time.Now().Unix()

	// Join, re-join (the first token stops working), and a join whose
	// write fails after its token was made.
	const clientID = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	first := join("join", `{"nickname":"Bea","preferred_language":"fr","client_id":"`+clientID+`"}`, 201)
	secrets.add("joined guest token", first)
	second := join("re-join", `{"nickname":"Bea B","preferred_language":"fr-CA","client_id":"`+strings.ToUpper(clientID)+`"}`, 200)
	secrets.add("re-joined guest token", second)
	w.st.Faults.Fail("DynamoDB.TransactWriteItems", 0, stacktest.Before)
	join("join, storage fails", `{"nickname":"Cy","preferred_language":"en"}`, 503)
	w.st.Faults.Clear()

	// Guest messages.
	expect(do("guest post", "POST", w.msgsPath(w.room), `{"content":"Bonjour"}`, guestHdr(second)), 201)
	expect(do("guest list", "GET", w.msgsPath(w.room)+"?limit=1", "", guestHdr(w.guestToken)), 200)
	expect(do("guest list, replaced token", "GET", w.msgsPath(w.room), "", guestHdr(first)), 401)
	expect(do("guest post, replaced token", "POST", w.msgsPath(w.room), `{"content":"x"}`, guestHdr(first)), 401)
	expect(do("guest list, other room", "GET", w.msgsPath(w.room2), "", guestHdr(second)), 403)
	expect(do("guest list, API token", "GET", w.msgsPath(w.room), "", guestHdr(w.token)), 401)
	expect(do("guest post, invalid", "POST", w.msgsPath(w.room), `{"content":""}`, guestHdr(second)), 422)
	w.st.Faults.Fail("DynamoDB.BatchGetItem", 0, stacktest.Before)
	if rec := do("guest list, storage fails", "GET", w.msgsPath(w.room), "", guestHdr(second)); rec.Code < 500 {
		t.Fatalf("guest list with failing storage: %d, want a 5xx", rec.Code)
	}
	w.st.Faults.Clear()

	// Workspace lists.
	for _, list := range []string{"outbound-webhooks", "support-webhooks"} {
		path := w.listPath(ws.ID, list)
		expect(do(list, "GET", path, "", bearer(w.token)), 200)
		expect(do(list+", one a page", "GET", path+"?limit=1", "", bearer(w.token)), 200)
		expect(do(list+", other workspace", "GET", path, "", bearer(w.other.Users[0].APIToken)), 403)
		expect(do(list+", wrong token", "GET", path, "", bearer(wrongToken)), 401)
		expect(do(list+", guest token", "GET", path, "", bearer(second)), 401)
		expect(do(list+", bad limit", "GET", path+"?limit=0", "", bearer(w.token)), 422)
	}
	w.st.Faults.Fail("DynamoDB.GetItem", 0, stacktest.Before)
	if rec := do("list, storage fails", "GET", w.listPath(ws.ID, "outbound-webhooks"), "", bearer(w.token)); rec.Code < 500 {
		t.Fatalf("list with failing storage: %d, want a 5xx", rec.Code)
	}
	w.st.Faults.Clear()

	// Members and rooms: Ana joins general first.
	w.doc.Workspaces[0].Channels[0].Members = []string{ws.Users[0].ID}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	general := ws.Channels[0].ID
	chMsgs := w.listPath(ws.ID, "channels/"+general+"/messages")
	expect(do("channels", "GET", w.listPath(ws.ID, "channels"), "", bearer(w.token)), 200)
	expect(do("channels, guest token", "GET", w.listPath(ws.ID, "channels"), "", bearer(second)), 401)
	expect(do("channels, wrong token", "GET", w.listPath(ws.ID, "channels"), "", bearer(wrongToken)), 401)
	expect(do("member post", "POST", chMsgs, `{"content":"Hello"}`, bearer(w.token)), 201)
	memberKeyed := map[string]string{"Authorization": "Bearer " + w.token, "Idempotency-Key": "reply-1"}
	expect(do("member post, keyed", "POST", chMsgs, `{"content":"Again"}`, memberKeyed), 201)
	expect(do("member post, replay", "POST", chMsgs, `{"content":"Again"}`, memberKeyed), 201)
	expect(do("member post, key reused", "POST", chMsgs, `{"content":"Other"}`, memberKeyed), 422)
	expect(do("member messages", "GET", chMsgs, "", bearer(w.token)), 200)
	expect(do("member messages, other workspace", "GET", chMsgs, "", bearer(w.other.Users[0].APIToken)), 403)
	w.st.Faults.Fail("DynamoDB.TransactWriteItems", 0, stacktest.Before)
	expect(do("member post, storage fails", "POST", chMsgs, `{"content":"x"}`, map[string]string{"Authorization": "Bearer " + w.token, "Idempotency-Key": "reply-2"}), 503)
	w.st.Faults.Clear()
	roomsPath := w.listPath(ws.ID, "rooms")
	rec := do("create room", "POST", roomsPath, `{"channel_id":"`+general+`","name":"Leak check","expires_at":"`+chat.FormatTime(time.Now().Add(time.Hour))+`"}`, bearer(w.token))
	expect(rec, 201)
	var created struct {
		Data struct {
			RoomID string `json:"room_id"`
		} `json:"data"`
	}
	json.Unmarshal(rec.Body.Bytes(), &created)
	expect(do("rooms", "GET", roomsPath, "", bearer(w.token)), 200)
	expect(do("close room", "POST", w.listPath(ws.ID, "rooms/"+created.Data.RoomID+"/close"), "", bearer(w.token)), 200)
	expect(do("close room, guest token", "POST", w.listPath(ws.ID, "rooms/"+w.room+"/close"), "", bearer(second)), 401)

	// Inbound, static scheme.
	static := w.postPath(w.static.ID)
	secretHdr := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	expect(do("static, header secret", "POST", static, `{"content":"one"}`, secretHdr), 202)
	expect(do("static, body secret", "POST", static, `{"content":"two","secret":"`+w.static.Secret+`"}`, nil), 202)
	keyed := map[string]string{"X-Service-Webhook-Secret": w.static.Secret, "Idempotency-Key": "order-7"}
	expect(do("static, keyed", "POST", static, `{"content":"three"}`, keyed), 202)
	expect(do("static, keyed replay", "POST", static, `{"content":"three"}`, keyed), 202)
	expect(do("static, wrong header secret", "POST", static, `{"content":"x"}`, map[string]string{"X-Service-Webhook-Secret": wrongSecret}), 401)
	expect(do("static, wrong body secret", "POST", static, `{"content":"x","secret":"`+wrongSecret+`"}`, nil), 401)
	expect(do("static, wrong header, right body", "POST", static, `{"content":"x","secret":"`+w.static.Secret+`"}`,
		map[string]string{"X-Service-Webhook-Secret": wrongSecret}), 401)
	expect(do("static, right secret, invalid body", "POST", static, `{"content":5,"secret":"`+w.static.Secret+`"}`, nil), 422)
	expect(do("static, signing secret as secret", "POST", static, `{"content":"x"}`, map[string]string{"X-Service-Webhook-Secret": w.static.SigningSecret}), 401)
	w.st.Faults.Fail("DynamoDB.TransactWriteItems", 0, stacktest.Before)
	expect(do("static, storage fails", "POST", static, `{"content":"four"}`, secretHdr), 503)
	w.st.Faults.Clear()

	// Inbound, signature scheme.
	signed := w.postPath(w.signed.ID)
	good := `{"content":"signed"}`
	goodHdr := signedHdr("valid", good, now, w.signed.SigningSecret, nil)
	expect(do("signed", "POST", signed, good, goodHdr), 202)
	expect(do("signed, replayed", "POST", signed, good, goodHdr), 401)
	expect(do("signed, bad signature", "POST", signed, good, map[string]string{signature.Header: signature.Format(now, strings.Repeat("ab", 32))}), 401)
	expect(do("signed, wrong key", "POST", signed, `{"content":"w"}`, signedHdr("wrong key", `{"content":"w"}`, now, w.signed.Secret, nil)), 401)
	expect(do("signed, expired", "POST", signed, `{"content":"e"}`, signedHdr("expired", `{"content":"e"}`, now-600, w.signed.SigningSecret, nil)), 401)
	expect(do("signed, static secret", "POST", signed, `{"content":"s","secret":"`+w.signed.Secret+`"}`,
		map[string]string{"X-Service-Webhook-Secret": w.signed.Secret}), 401)
	expect(do("signed, invalid body", "POST", signed, `{"content":""}`, signedHdr("invalid body", `{"content":""}`, now, w.signed.SigningSecret, nil)), 422)
	expect(do("signed, keyed", "POST", signed, `{"content":"k"}`, signedHdr("keyed", `{"content":"k"}`, now, w.signed.SigningSecret,
		map[string]string{"Idempotency-Key": "deploy-9"})), 202)

	// The request log, through the endpoint.
	logRecords := 0
	for _, h := range ws.InboundWebhooks {
		rec := do("request log of "+h.ID, "GET", w.logPath(ws.ID, h.ID)+"?limit=100", "", bearer(w.token))
		expect(rec, 200)
		var page struct {
			Data []json.RawMessage `json:"data"`
		}
		json.Unmarshal(rec.Body.Bytes(), &page)
		logRecords += len(page.Data)
		expect(do("request log, other workspace", "GET", w.logPath(ws.ID, h.ID), "", bearer(w.other.Users[0].APIToken)), 403)
	}
	if logRecords != 18 {
		t.Errorf("the request log endpoint returned %d records, want the 18 inbound requests sent", logRecords)
	}

	// (b) Responses.
	for _, x := range seen {
		if leaked := secrets.found(x.header); len(leaked) > 0 {
			t.Errorf("%s: response headers carry %v:\n%s", x.name, leaked, x.header)
		}
		if leaked := secrets.found(x.body, x.issued); len(leaked) > 0 {
			t.Errorf("%s: response body carries %v: %s", x.name, leaked, x.body)
		}
		if x.issued != "" && !strings.Contains(x.body, x.issued) {
			t.Errorf("%s: the issued token is not in the join's body", x.name)
		}
	}
	// (a) Logs: a summary line per request, the 5xx errors, nothing secret.
	text := logs.String()
	if n := strings.Count(text, `"msg":"request"`); n < len(seen) {
		t.Errorf("%d request summary lines for %d requests: is the logger captured?", n, len(seen))
	}
	if n := strings.Count(text, `"level":"ERROR"`); n < 5 {
		t.Errorf("%d error lines, want one per 5xx (5)", n)
	}
	if leaked := secrets.found(text); len(leaked) > 0 {
		t.Errorf("the logs carry %v:\n%s", leaked, text)
	}
	// (c) and (d): the table. Request log records hold no credential at
	// all; signing secrets are in their own webhook's item only; nothing
	// else is anywhere.
	snap := w.snapshot(t)
	reqItems := 0
	for k, it := range snap {
		text := it.String()
		var allowed []string
		switch {
		case strings.HasPrefix(it.sk, "REQ#"):
			reqItems++
		case strings.HasPrefix(it.pk, "IWH#") || strings.HasPrefix(it.sk, "IWH#"):
			// Both twins of the webhook (by id and listed).
			for _, h := range ws.InboundWebhooks {
				if it.pk == "IWH#"+h.ID || strings.HasSuffix(it.sk, "#"+h.ID) {
					allowed = append(allowed, h.SigningSecret)
				}
			}
		case strings.HasPrefix(it.pk, "OWH#") || strings.HasPrefix(it.sk, "OWH#"):
			for _, h := range ws.OutboundWebhooks {
				if it.pk == "OWH#"+h.ID || strings.HasSuffix(it.sk, "#"+h.ID) {
					allowed = append(allowed, h.SigningSecret)
				}
			}
		}
		if leaked := secrets.found(text, allowed...); len(leaked) > 0 {
			t.Errorf("stored item %s carries %v:\n%s", k, leaked, text)
		}
	}
	if reqItems != 18 {
		t.Errorf("%d request log items stored, want 18", reqItems)
	}
	t.Logf("%d exchanges, %d log bytes, %d items checked against %d secrets", len(seen), len(text), len(snap), len(secrets))
}
