package inbound_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/signature"
)

// Fixed fuzzing world: a workspace with two channels, a static webhook, a
// signed one and a disabled one. The seeds in testdata/fuzz/FuzzInboundBody
// carry these secrets and signatures made at fuzzNow.
const (
	fuzzWS         = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FW"
	fuzzChannel    = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FC"
	fuzzChannel2   = "01JDZ8Y7K3Q4W5E6R7T8Y9A0F2"
	fuzzStatic     = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FS"
	fuzzSigned     = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FG"
	fuzzDisabled   = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FD"
	fuzzUnknown    = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FU"
	fuzzSecret     = "whsec_fuzz_static_secret_0123456789"
	fuzzSigningKey = "whsig_fuzz_signing_secret_0123456789"
	fuzzQuotaLimit = 600
	fuzzUserAgent  = "fuzz-agent/1.0"
	fuzzSourceIP   = "192.0.2.10"
)

// fuzzNow is 2026-01-01T00:00:00Z, the t of the seeds' signatures.
var fuzzNow = time.Unix(1767225600, 0).UTC()

// contractCodes are the codes an inbound request may be refused with when
// every dependency works.
var contractCodes = map[string]bool{
	chat.EWebhookNotFound: true, chat.EQuotaExceeded: true, chat.EPayloadTooLarge: true,
	chat.EMissingCredentials: true, chat.EInvalidSecret: true, chat.EMissingSignature: true,
	chat.EInvalidSignatureHeader: true, chat.ESignatureExpired: true, chat.EInvalidSignature: true,
	chat.ESignatureReplayed: true, chat.EInvalidJSON: true, chat.EUnsupportedMediaType: true,
	chat.EValidation: true, chat.EInvalidIdempotencyKey: true, chat.EIdempotencyKeyReused: true,
	chat.EIdempotencyKeyInUse: true,
}

func fuzzConfigs() memConfigs {
	ws := chat.Workspace{ID: fuzzWS, Name: "Fuzz", DefaultLanguage: "en", WebhookQuota: fuzzQuotaLimit}
	channels := map[string]bool{fuzzChannel: true, fuzzChannel2: true}
	hook := func(id string, signed, enabled bool) inbound.Config {
		return inbound.Config{Workspace: ws, Channels: channels, Webhook: chat.InboundWebhook{
			ID: id, WorkspaceID: fuzzWS, ChannelID: fuzzChannel, BotName: "Fuzz Bot",
			SecretHash: chat.HashToken(fuzzSecret), SignatureRequired: signed, SigningSecret: fuzzSigningKey, Enabled: enabled,
		}}
	}
	return memConfigs{
		fuzzStatic:   hook(fuzzStatic, false, true),
		fuzzSigned:   hook(fuzzSigned, true, true),
		fuzzDisabled: hook(fuzzDisabled, false, false),
	}
}

// Bits of FuzzInboundBody's flags.
const (
	flagSecretHeader = 1 << iota
	flagKey
	flagBadMediaType
	flagTooLarge
	flagQuotaSpent
	flagSendTwice
	flagReadFails
)

// FuzzInboundBody drives Service.Post with fuzzed bodies and headers over
// in-memory fakes. It never panics; every refusal carries a contract code
// that is not a 5xx; an acceptance stores exactly one message and requires
// the right credential and a valid request; every request past the lookup
// is logged exactly once, without its credentials; and a request sent twice
// is replayed, refused as a replayed signature, or accepted again exactly
// as the contract says.
func FuzzInboundBody(f *testing.F) {
	webhooks := []string{fuzzStatic, fuzzSigned, fuzzDisabled, fuzzUnknown}
	f.Fuzz(func(t *testing.T, which, flags uint8, body []byte, secret, sig, key string) {
		store, quota := newMemStore(), &memQuota{}
		if flags&flagQuotaSpent != 0 {
			quota.hit = func(n int64) int64 { return n + fuzzQuotaLimit }
		}
		svc := &inbound.Service{Configs: fuzzConfigs(), Quota: quota, Store: store, IDs: chat.NewIDs(),
			Now: func() time.Time { return fuzzNow }}
		webhook := webhooks[int(which)%len(webhooks)]
		req := inbound.Request{
			WebhookID: webhook, Body: body, TooLarge: flags&flagTooLarge != 0,
			SignatureHeader: sig, SourceIP: fuzzSourceIP, UserAgent: fuzzUserAgent,
			RequestID: "fuzz", ReceivedAt: fuzzNow,
		}
		if flags&flagSecretHeader != 0 {
			req.SecretHeader, req.HasSecretHeader = secret, true
		}
		if flags&flagKey != 0 {
			req.IdempotencyKey, req.HasKey = key, true
		}
		if flags&flagReadFails != 0 {
			req.ReadErr = errors.New("connection reset by peer")
		}
		if flags&flagBadMediaType != 0 {
			req.MediaTypeErr = chat.Errorf(chat.EUnsupportedMediaType, "The request body must be sent as application/json.")
		}
		first := post(t, svc, store, req, secret)
		if flags&flagSendTwice == 0 {
			return
		}
		msgs := len(store.messages)
		second := post(t, svc, store, req, secret)
		switch {
		case first.Err != nil:
			// A refused request records no signature: the same answer again.
			if chat.ErrorCode(second.Err) != chat.ErrorCode(first.Err) {
				t.Fatalf("sent twice: refused %s, then %v", chat.ErrorCode(first.Err), second.Err)
			}
		case req.HasKey:
			if second.Err != nil || !second.Replayed || !bytes.Equal(second.Body, first.Body) || second.Status != first.Status {
				t.Fatalf("sent twice with key %q: second %+v, want a replay of %s", key, second, first.Body)
			}
			if len(store.messages) != msgs {
				t.Fatalf("a replay stored a message")
			}
		case webhook == fuzzSigned:
			if !chat.IsCode(second.Err, chat.ESignatureReplayed) {
				t.Fatalf("signature sent twice without a key: second %+v, want %s", second, chat.ESignatureReplayed)
			}
		default:
			if second.Err != nil || second.Replayed || len(store.messages) != msgs+1 {
				t.Fatalf("static request sent twice without a key: second %+v, want a second message", second)
			}
		}
		if webhook == fuzzSigned && req.HasKey && first.Err == nil {
			// A signature never posts two messages: not even without the
			// key that made its resend a retry.
			req.IdempotencyKey, req.HasKey = "", false
			if third := post(t, svc, store, req, secret); !chat.IsCode(third.Err, chat.ESignatureReplayed) {
				t.Fatalf("signed request sent again without its key: %+v, want %s", third, chat.ESignatureReplayed)
			}
		}
	})
}

// post sends req once and checks the invariants of one decision.
func post(t *testing.T, svc *inbound.Service, store *memStore, req inbound.Request, secret string) inbound.Result {
	t.Helper()
	msgs, logs := len(store.messages), len(store.logs)
	res := svc.Post(context.Background(), req)
	if res.Err != nil {
		code := chat.ErrorCode(res.Err)
		if !contractCodes[code] || chat.Status(code) >= 500 {
			t.Fatalf("refused with %v (code %s, status %d), outside the contract's set", res.Err, code, chat.Status(code))
		}
		if len(store.messages) != msgs {
			t.Fatalf("refused with %s, yet a message was stored", code)
		}
	}
	// Step 1: unknown and disabled webhooks are neither counted nor logged.
	if req.WebhookID == fuzzUnknown || req.WebhookID == fuzzDisabled {
		if !chat.IsCode(res.Err, chat.EWebhookNotFound) || res.Quota != nil || len(store.logs) != logs {
			t.Fatalf("webhook %s: %+v with %d new log records, want an uncounted, unlogged %s", req.WebhookID, res, len(store.logs)-logs, chat.EWebhookNotFound)
		}
		return res
	}
	if res.Quota == nil || res.Quota.Limit != fuzzQuotaLimit || res.Quota.Remaining < 0 {
		t.Fatalf("quota state %+v past the quota step", res.Quota)
	}
	if len(store.logs) != logs+1 {
		t.Fatalf("%d request log records written, want exactly 1", len(store.logs)-logs)
	}
	checkLog(t, store.logs[len(store.logs)-1], req, res)
	if res.Err != nil {
		return res
	}
	if res.Replayed {
		return res
	}
	// An acceptance: exactly one message, for a request that deserved it.
	if res.Status != 202 || len(store.messages) != msgs+1 {
		t.Fatalf("accepted with status %d and %d new messages", res.Status, len(store.messages)-msgs)
	}
	if req.TooLarge || req.MediaTypeErr != nil || req.ReadErr != nil || len(req.Body) > inbound.MaxBodyBytes {
		t.Fatalf("accepted a request refused by size, Content-Type or a failed read")
	}
	if req.HasKey && (len(req.IdempotencyKey) == 0 || len(req.IdempotencyKey) > inbound.MaxIdempotencyKey ||
		strings.IndexFunc(req.IdempotencyKey, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0) {
		t.Fatalf("accepted with Idempotency-Key %q", req.IdempotencyKey)
	}
	obj, err := jsonbody.ParseObject(req.Body)
	if err != nil {
		t.Fatalf("accepted body %q that is not a JSON object", req.Body)
	}
	if req.WebhookID == fuzzSigned {
		if _, err := signature.Verify(req.SignatureHeader, []byte(fuzzSigningKey), req.Body, fuzzNow); err != nil {
			t.Fatalf("accepted signature header %q: %v", req.SignatureHeader, err)
		}
	} else {
		used := secret
		if !req.HasSecretHeader {
			var v chat.Validation
			used, _ = obj.String(&v, "secret", "secret")
		}
		if used != fuzzSecret {
			t.Fatalf("accepted static credential %q", used)
		}
	}
	m := store.messages[len(store.messages)-1]
	if strings.TrimSpace(m.Content) == "" || !m.CreatedAt.Equal(fuzzNow) || (m.ChannelID != fuzzChannel && m.ChannelID != fuzzChannel2) {
		t.Fatalf("stored message %+v", m)
	}
	var out struct {
		Data struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil || out.Data.ID != m.ID || out.Data.Content != m.Content {
		t.Fatalf("accepted body %s does not describe the stored message %+v", res.Body, m)
	}
	return res
}

// checkLog asserts that a request log record matches its result and holds
// no credential.
func checkLog(t *testing.T, l chat.RequestLog, req inbound.Request, res inbound.Result) {
	t.Helper()
	wantStatus, wantOutcome := res.Status, chat.OutcomeAccepted
	switch {
	case res.Err != nil:
		wantStatus, wantOutcome = chat.Status(chat.ErrorCode(res.Err)), chat.OutcomeRejected
	case res.Replayed:
		wantOutcome = chat.OutcomeReplayed
	}
	if l.Status != wantStatus || l.Outcome != wantOutcome || l.ErrorCode != chat.ErrorCode(res.Err) {
		t.Fatalf("log record %d %s %q, want %d %s %q", l.Status, l.Outcome, l.ErrorCode, wantStatus, wantOutcome, chat.ErrorCode(res.Err))
	}
	if l.WebhookID != req.WebhookID || l.WorkspaceID != fuzzWS || l.BodyBytes != len(req.Body) || l.UserAgent != fuzzUserAgent || l.SourceIP != fuzzSourceIP {
		t.Fatalf("log record %+v does not describe the request", l)
	}
	validKey := req.HasKey && len(req.IdempotencyKey) >= 1 && len(req.IdempotencyKey) <= inbound.MaxIdempotencyKey &&
		strings.IndexFunc(req.IdempotencyKey, func(r rune) bool { return r < 0x20 || r > 0x7e }) < 0
	if validKey && l.IdempotencyKey != req.IdempotencyKey || !validKey && l.IdempotencyKey != "" {
		t.Fatalf("log record keeps Idempotency-Key %q, sent %q (present %v)", l.IdempotencyKey, req.IdempotencyKey, req.HasKey)
	}
	// The record holds no credential: every field is a server-made id, a
	// fixed word, a number, or the client's own valid key (checked above),
	// so no secret, body secret, signature header or v1 value fits in.
	scheme := chat.SchemeStatic
	if req.WebhookID == fuzzSigned {
		scheme = chat.SchemeSignature
	}
	if !chat.ValidID(l.ID) || (l.MessageID != "" && !chat.ValidID(l.MessageID)) || l.AuthScheme != scheme || !l.ReceivedAt.Equal(fuzzNow) {
		t.Fatalf("log record %+v has a field that is not the server's", l)
	}
}
