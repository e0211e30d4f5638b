package inbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/signature"
)

// newService is a Service over fresh fakes in the fuzzing world.
func newService() (*inbound.Service, *memStore) {
	store := newMemStore()
	return &inbound.Service{Configs: fuzzConfigs(), Quota: &memQuota{}, Store: store, IDs: chat.NewIDs(),
		Now: func() time.Time { return fuzzNow }}, store
}

// signedReq is a request to the signed webhook, signed at t (as text) over
// body, with key when key != "".
func signedReq(body, t, key string) inbound.Request {
	req := inbound.Request{WebhookID: fuzzSigned, Body: []byte(body), ReceivedAt: fuzzNow, RequestID: "test",
		SignatureHeader: "t=" + t + ",v1=" + signature.SignText([]byte(fuzzSigningKey), []byte(t), []byte(body))}
	if key != "" {
		req.IdempotencyKey, req.HasKey = key, true
	}
	return req
}

func wantResult(t *testing.T, step string, res inbound.Result, status int, code string) {
	t.Helper()
	got := res.Status
	if res.Err != nil {
		got = chat.Status(chat.ErrorCode(res.Err))
	}
	if got != status || chat.ErrorCode(res.Err) != code {
		t.Fatalf("%s: got %d %q (%v), want %d %q", step, got, chat.ErrorCode(res.Err), res.Err, status, code)
	}
}

// The contract: a signature is accepted once it authenticated any request
// that reached step 6, including one answered as a replay.
func TestResignedRetryRecordsItsSignature(t *testing.T) {
	svc, store := newService()
	ctx := t.Context()
	body := `{"content":"deploy"}`
	wantResult(t, "first", svc.Post(ctx, signedReq(body, "1767225600", "k-1")), 202, "")
	// The retry is signed anew (another t), with the same key.
	retry := signedReq(body, "1767225601", "k-1")
	res := svc.Post(ctx, retry)
	wantResult(t, "re-signed retry", res, 202, "")
	if !res.Replayed {
		t.Fatalf("re-signed retry: not a replay")
	}
	// Its signature, sent again without the key, posts nothing.
	retry.IdempotencyKey, retry.HasKey = "", false
	wantResult(t, "retry's signature without the key", svc.Post(ctx, retry), 401, chat.ESignatureReplayed)
	// Sent again with the key, it is still a retry.
	retry.IdempotencyKey, retry.HasKey = "k-1", true
	if res := svc.Post(ctx, retry); res.Err != nil || !res.Replayed {
		t.Fatalf("retry's signature with its key again: %+v, want a replay", res)
	}
	// With another key it is a replayed signature, not a new message.
	retry.IdempotencyKey = "k-2"
	wantResult(t, "retry's signature with another key", svc.Post(ctx, retry), 401, chat.ESignatureReplayed)
	if len(store.messages) != 1 {
		t.Fatalf("%d messages, want 1", len(store.messages))
	}
}

func TestSignatureUseAtEachStep(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name       string
		req        inbound.Request
		status     int
		code       string
		recorded   bool   // the signature is recorded
		resendCode string // the same request sent again
	}{
		{"invalid body: checked, not recorded", signedReq(`{"content":" "}`, "1767225600", ""), 422, chat.EValidation, false, chat.EValidation},
		{"not JSON: checked, not recorded", signedReq(`nope`, "1767225600", "k"), 400, chat.EInvalidJSON, false, chat.EInvalidJSON},
		{"malformed key: checked, not recorded", signedReq(`{"content":"x"}`, "1767225600", strings.Repeat("k", 256)), 400, chat.EInvalidIdempotencyKey, false, chat.EInvalidIdempotencyKey},
		{"valid key: recorded", signedReq(`{"content":"x"}`, "1767225600", "k"), 202, "", true, ""},
		{"no key: recorded", signedReq(`{"content":"x"}`, "1767225600", ""), 202, "", true, chat.ESignatureReplayed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, store := newService()
			wantResult(t, "first", svc.Post(ctx, tc.req), tc.status, tc.code)
			if got := len(store.sigs) == 1; got != tc.recorded {
				t.Fatalf("signature recorded: %v, want %v", got, tc.recorded)
			}
			res := svc.Post(ctx, tc.req)
			if chat.ErrorCode(res.Err) != tc.resendCode {
				t.Fatalf("resent: %+v, want code %q", res, tc.resendCode)
			}
		})
	}
}

// A used signature is refused at step 4, before the body is judged.
func TestUsedSignatureIsRefusedBeforeTheBody(t *testing.T) {
	svc, store := newService()
	ctx := t.Context()
	req := signedReq(`{"content":"x"}`, "1767225600", "")
	wantResult(t, "first", svc.Post(ctx, req), 202, "")
	req.MediaTypeErr = chat.Errorf(chat.EUnsupportedMediaType, "The request body must be sent as application/json.")
	wantResult(t, "same signature, bad Content-Type", svc.Post(ctx, req), 401, chat.ESignatureReplayed)
	req.MediaTypeErr = nil
	req.IdempotencyKey, req.HasKey = "", true
	wantResult(t, "same signature, malformed key", svc.Post(ctx, req), 401, chat.ESignatureReplayed)
	if last := store.logs[len(store.logs)-1]; last.ErrorCode != chat.ESignatureReplayed || last.Status != 401 {
		t.Fatalf("logged %d %s, want 401 %s", last.Status, last.ErrorCode, chat.ESignatureReplayed)
	}
}

func TestReusedAndBusyKeysRecordTheSignature(t *testing.T) {
	ctx := t.Context()
	svc, store := newService()
	wantResult(t, "first", svc.Post(ctx, signedReq(`{"content":"a"}`, "1767225600", "k")), 202, "")
	other := signedReq(`{"content":"b"}`, "1767225600", "k")
	wantResult(t, "other body, same key", svc.Post(ctx, other), 422, chat.EIdempotencyKeyReused)
	other.IdempotencyKey, other.HasKey = "", false
	wantResult(t, "its signature without the key", svc.Post(ctx, other), 401, chat.ESignatureReplayed)

	// A record in progress (written by an earlier version's claim) holds
	// its key until its lock expires.
	store.records[fuzzSigned+"#"+hashOf("busy")] = inbound.Record{State: inbound.StateInProgress,
		LockedUntil: fuzzNow.Add(5 * time.Second), ExpiresAt: fuzzNow.Add(time.Hour), Fingerprint: "whatever"}
	busy := signedReq(`{"content":"c"}`, "1767225600", "busy")
	res := svc.Post(ctx, busy)
	wantResult(t, "busy key, other fingerprint", res, 422, chat.EIdempotencyKeyReused)

	// The store reports a key in use (its transaction kept colliding).
	store.acceptErr = chat.Errorf(chat.EIdempotencyKeyInUse, "in use")
	inUse := signedReq(`{"content":"d"}`, "1767225600", "k-d")
	wantResult(t, "in use", svc.Post(ctx, inUse), 409, chat.EIdempotencyKeyInUse)
	store.acceptErr = nil
	inUse.IdempotencyKey, inUse.HasKey = "", false
	wantResult(t, "in-use request's signature without the key", svc.Post(ctx, inUse), 401, chat.ESignatureReplayed)
	inUse.IdempotencyKey, inUse.HasKey = "k-d", true
	wantResult(t, "in-use request retried", svc.Post(ctx, inUse), 202, "")
	if len(store.messages) != 2 {
		t.Fatalf("%d messages, want 2", len(store.messages))
	}
}

func TestInProgressRecordAnswersInUse(t *testing.T) {
	svc, store := newService()
	body := `{"content":"x"}`
	req := inbound.Request{WebhookID: fuzzStatic, Body: []byte(body), SecretHeader: fuzzSecret, HasSecretHeader: true,
		HasKey: true, ReceivedAt: fuzzNow}
	// A record in progress as an earlier version's claim left it: accept
	// under a fresh key, then turn its record back into a claim.
	req.IdempotencyKey = "fresh"
	wantResult(t, "fresh key", svc.Post(t.Context(), req), 202, "")
	rec := store.records[fuzzStatic+"#"+hashOf("fresh")]
	rec.State, rec.LockedUntil = inbound.StateInProgress, fuzzNow.Add(4500*time.Millisecond)
	store.records[fuzzStatic+"#"+hashOf("fresh")] = rec
	res := svc.Post(t.Context(), req)
	wantResult(t, "in progress", res, 409, chat.EIdempotencyKeyInUse)
	var ce *chat.Error
	if !asError(res.Err, &ce) || ce.RetryAfter != 5 {
		t.Fatalf("Retry-After %+v, want 5 (the lock's end, rounded up)", res.Err)
	}
}

// A replay whose signature cannot be recorded is not answered as one: the
// signature would stay usable.
func TestReplayWhoseSignatureCannotBeRecorded(t *testing.T) {
	svc, store := newService()
	ctx := t.Context()
	body := `{"content":"x"}`
	wantResult(t, "first", svc.Post(ctx, signedReq(body, "1767225600", "k")), 202, "")
	store.logErr = chat.Unavailable(nil)
	wantResult(t, "replay, store down", svc.Post(ctx, signedReq(body, "1767225601", "k")), 503, chat.EUnavailable)
	// A refusal whose signature could not be checked was not judged at
	// step 4: it is answered with the store's error, never as if the
	// signature were unused.
	wantResult(t, "invalid body, store down", svc.Post(ctx, signedReq(`{}`, "1767225601", "")), 503, chat.EUnavailable)
}

// A refused signed request whose log write with the signature check fails
// is still logged, by the plain write, with the answer it got.
func TestRefusedSignedRequestLoggedWhenItsCheckFails(t *testing.T) {
	svc, store := newService()
	store.sigLogErr = chat.Unavailable(nil)
	wantResult(t, "invalid body, check failing", svc.Post(t.Context(), signedReq(`{}`, "1767225601", "")), 503, chat.EUnavailable)
	if len(store.logs) != 1 {
		t.Fatalf("got %d log records, want 1", len(store.logs))
	}
	if got := store.logs[0]; got.Outcome != chat.OutcomeRejected || got.Status != 503 || got.ErrorCode != chat.EUnavailable {
		t.Fatalf("got log record %s %d %s, want rejected 503 %s", got.Outcome, got.Status, got.ErrorCode, chat.EUnavailable)
	}
}

func TestLogKeepsTheWholeBodySize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     int
		received int
		want     int
	}{
		{"small", 10, 10, 10},
		{"at the limit", inbound.MaxBodyBytes, inbound.MaxBodyBytes, inbound.MaxBodyBytes},
		{"one past", inbound.MaxBodyBytes + 1, inbound.MaxBodyBytes + 1, inbound.MaxBodyBytes + 1},
		{"10 MB", inbound.MaxBodyBytes + 1, 10 << 20, 10 << 20},
		{"size unknown to the caller", 7, 0, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, store := newService()
			req := inbound.Request{WebhookID: fuzzStatic, Body: make([]byte, tc.body), BodyBytes: tc.received,
				TooLarge: tc.received > inbound.MaxBodyBytes, ReceivedAt: fuzzNow}
			svc.Post(t.Context(), req)
			if got := store.logs[len(store.logs)-1].BodyBytes; got != tc.want {
				t.Fatalf("body_bytes %d, want %d", got, tc.want)
			}
		})
	}
}
