package dynamo_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
)

// inboundStack is one test's table with a store on it.
type inboundStack struct {
	st    *stacktest.Stack
	store *storetest.Stores
	ids   *chat.IDs
	now   time.Time
}

func newInboundStack(t *testing.T) *inboundStack {
	t.Helper()
	st := stacktest.New(t)
	return &inboundStack{st: st, store: storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table), ids: chat.NewIDs(),
		now: time.Now().UTC().Truncate(time.Second)}
}

const (
	testWebhook = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FS"
	testWS      = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FW"
	testChannel = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FC"
)

// acceptance is an accepted request with content, with key and sig when
// not "".
func (s *inboundStack) acceptance(content, key, sig string) inbound.Acceptance {
	msg := chat.Message{ID: s.ids.New(s.now), WorkspaceID: testWS, ChannelID: testChannel, Content: content,
		Author: chat.Author{Type: chat.AuthorBot, ID: testWebhook, Name: "Bot"}, Status: chat.MessageQueued, CreatedAt: s.now}
	body := inbound.AcceptedBody(msg)
	a := inbound.Acceptance{Message: msg, Status: 202, Body: body,
		Log: chat.RequestLog{ID: s.ids.New(s.now), WorkspaceID: testWS, WebhookID: testWebhook, ReceivedAt: s.now,
			Status: 202, Outcome: chat.OutcomeAccepted, MessageID: msg.ID, AuthScheme: chat.SchemeSignature}}
	if key != "" {
		a.Key = &inbound.KeyUse{WebhookID: testWebhook, Key: key, KeyHash: "h-" + key, Fingerprint: "fp-" + strconv.Itoa(len(content)),
			ExpiresAt: s.now.Add(inbound.IdempotencyTTL)}
	}
	if sig != "" {
		a.Signature = &inbound.SignatureUse{WebhookID: testWebhook, Hash: sig, ExpiresAt: s.now.Add(601 * time.Second)}
		if key != "" {
			a.Signature.KeyHash = a.Key.KeyHash
		}
	}
	return a
}

func (s *inboundStack) count(t *testing.T, prefix string) int {
	t.Helper()
	out, err := s.st.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.st.Table),
		FilterExpression:          aws.String("begins_with(pk, :p) OR begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: prefix}}})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return len(out.Items)
}

// One TransactWriteItems stores the message, its log record, the completed
// idempotency record and the signature, at the largest content of every
// kind: the idempotency record holds the 202 body, where '<' and U+2028
// take 6 bytes each.
func TestAcceptWritesEverythingInOneCall(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"40,000 '<'", strings.Repeat("<", 40000)},
		{"40,000 emoji", strings.Repeat("😀", 40000)},
		{"40,000 U+2028", strings.Repeat("\u2028", 40000)},
		{"40,000 U+FFFF", strings.Repeat("\uffff", 40000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newInboundStack(t)
			ctx := context.Background()
			a := s.acceptance(tc.content, "k", "sig-1")
			s.st.Calls.Reset()
			outcome, _, err := s.store.Inbound.Accept(ctx, a, s.now)
			if err != nil || outcome != inbound.Written {
				t.Fatalf("accept: %v %v, want written", outcome, err)
			}
			if got := s.st.Calls.Calls(); len(got) != 1 || got[0] != "DynamoDB.TransactWriteItems" {
				t.Fatalf("calls %v, want one TransactWriteItems", got)
			}
			for _, prefix := range []string{"MSG#", "REQ#", "IDEM#", "SIG#"} {
				if n := s.count(t, prefix); n != 1 {
					t.Fatalf("%d %s items, want 1", n, prefix)
				}
			}
			// The same key again returns the stored record: the very body.
			again := s.acceptance(tc.content, "k", "")
			outcome, rec, err := s.store.Inbound.Accept(ctx, again, s.now)
			if err != nil || outcome != inbound.KeyHeld {
				t.Fatalf("same key: %v %v, want KeyHeld", outcome, err)
			}
			if !bytes.Equal(rec.Body, a.Body) || rec.State != inbound.StateCompleted || rec.Status != 202 ||
				rec.MessageID != a.Message.ID || rec.Fingerprint != a.Key.Fingerprint {
				t.Fatalf("held record %+v (%d body bytes), want the first acceptance's (%d)", rec.State, len(rec.Body), len(a.Body))
			}
			if n := s.count(t, "MSG#"); n != 1 {
				t.Fatalf("%d messages after a held key, want 1", n)
			}
		})
	}
}

func TestAcceptConditions(t *testing.T) {
	s := newInboundStack(t)
	ctx := context.Background()
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("first", "k1", "sig-a"), s.now); err != nil || o != inbound.Written {
		t.Fatalf("first: %v %v", o, err)
	}
	// A used signature wins over a held key, and writes nothing.
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("first", "k1", "sig-a"), s.now); err != nil || o != inbound.KeyHeld {
		t.Fatalf("same signature and key (a retry): %v %v, want KeyHeld", o, err)
	}
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("first", "k2", "sig-a"), s.now); err != nil || o != inbound.SignatureUsed {
		t.Fatalf("same signature, other key: %v %v, want SignatureUsed", o, err)
	}
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("first", "", "sig-a"), s.now); err != nil || o != inbound.SignatureUsed {
		t.Fatalf("same signature, no key: %v %v, want SignatureUsed", o, err)
	}
	// A signature that is no longer fresh may be recorded again.
	later := s.now.Add(601 * time.Second)
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("later", "", "sig-a"), later); err != nil || o != inbound.Written {
		t.Fatalf("expired signature record: %v %v, want written", o, err)
	}
	// An expired key may be claimed again.
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("next day", "k1", ""), s.now.Add(inbound.IdempotencyTTL)); err != nil || o != inbound.Written {
		t.Fatalf("expired key: %v %v, want written", o, err)
	}
	if n := s.count(t, "MSG#"); n != 3 {
		t.Fatalf("%d messages, want 3", n)
	}
	if n := s.count(t, "REQ#"); n != 3 {
		t.Fatalf("%d log records, want 3 (nothing written by a refused acceptance)", n)
	}
}

// A record in progress is an earlier version's claim: it holds its key
// until its lock expires.
func TestAcceptRespectsAnEarlierVersionsClaim(t *testing.T) {
	s := newInboundStack(t)
	ctx := context.Background()
	put := func(lockedUntil time.Time) {
		_, err := s.st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.st.Table), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "IDEM#" + testWebhook + "#h-k"}, "sk": &types.AttributeValueMemberS{Value: "#META"},
			"state": &types.AttributeValueMemberS{Value: "in_progress"}, "fingerprint": &types.AttributeValueMemberS{Value: "fp-x"},
			"owner":         &types.AttributeValueMemberS{Value: "someone"},
			"locked_until":  &types.AttributeValueMemberN{Value: itoa(lockedUntil.Unix())},
			"expires_epoch": &types.AttributeValueMemberN{Value: itoa(s.now.Add(time.Hour).Unix())},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	put(s.now.Add(10 * time.Second))
	o, rec, err := s.store.Inbound.Accept(ctx, s.acceptance("x", "k", ""), s.now)
	if err != nil || o != inbound.KeyHeld || rec.State != inbound.StateInProgress || !rec.LockedUntil.Equal(s.now.Add(10*time.Second)) {
		t.Fatalf("locked claim: %v %+v %v, want KeyHeld in progress", o, rec, err)
	}
	put(s.now)
	if o, _, err := s.store.Inbound.Accept(ctx, s.acceptance("x", "k", ""), s.now); err != nil || o != inbound.Written {
		t.Fatalf("claim whose lock expired: %v %v, want written", o, err)
	}
}

func TestLogWithSignature(t *testing.T) {
	s := newInboundStack(t)
	ctx := context.Background()
	logRec := func() chat.RequestLog {
		return chat.RequestLog{ID: s.ids.New(s.now), WorkspaceID: testWS, WebhookID: testWebhook, ReceivedAt: s.now,
			Status: 422, Outcome: chat.OutcomeRejected, ErrorCode: chat.EValidation}
	}
	sig := func(hash, keyHash string, checkOnly bool) *inbound.SignatureUse {
		return &inbound.SignatureUse{WebhookID: testWebhook, Hash: hash, KeyHash: keyHash, ExpiresAt: s.now.Add(601 * time.Second), CheckOnly: checkOnly}
	}
	s.st.Calls.Reset()
	if o, err := s.store.Inbound.Log(ctx, logRec(), sig("s1", "", true), s.now); err != nil || o != inbound.Written {
		t.Fatalf("check only: %v %v", o, err)
	}
	if n := s.count(t, "SIG#"); n != 0 {
		t.Fatalf("a check recorded the signature")
	}
	s.st.Calls.Reset()
	if o, err := s.store.Inbound.Log(ctx, logRec(), sig("s1", "kh", false), s.now); err != nil || o != inbound.Written {
		t.Fatalf("record: %v %v", o, err)
	}
	if got := s.st.Calls.Calls(); len(got) != 1 || got[0] != "DynamoDB.TransactWriteItems" {
		t.Fatalf("calls %v, want one TransactWriteItems", got)
	}
	for _, tc := range []struct {
		name string
		sig  *inbound.SignatureUse
		want inbound.Outcome
	}{
		{"check, same key", sig("s1", "kh", true), inbound.Written},
		{"check, no key", sig("s1", "", true), inbound.SignatureUsed},
		{"record, other key", sig("s1", "other", false), inbound.SignatureUsed},
		{"record, same key", sig("s1", "kh", false), inbound.Written},
	} {
		if o, err := s.store.Inbound.Log(ctx, logRec(), tc.sig, s.now); err != nil || o != tc.want {
			t.Fatalf("%s: %v %v, want %v", tc.name, o, err, tc.want)
		}
	}
	if n := s.count(t, "REQ#"); n != 4 {
		t.Fatalf("%d log records, want 4 (none for a used signature)", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
