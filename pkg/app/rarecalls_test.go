package app_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/dynamo/inboundstore"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// Demo fixture webhooks (fixtures/demo.json).
const (
	demoWS       = "01JD9N0V80G9T6DXN5EAY6K8H4"
	demoOutbound = "01JD9N15ZR836GD73VZ533YQJJ"
	demoSupport  = "01JD9N18XGGQFDKDZKXMRRSFE1"
	demoInbound  = "01JD9N1418BBS5R9EJ3SKBVPMA"
	// demoSupportChannel is the support channel.
	demoSupportChannel = "01JD9N1048PXK951NGC7NEMZX9"
)

// TestRareCallsAsTheirFunctions: the store calls of paths the suites reach
// only on a failure or a rare branch (a webhook disabled, a rate-limited
// delivery, a quota or a translation budget near its limit, a claim
// released after its queue message failed, a
// redelivery's claim that kept colliding, a stream record parked, a stuck
// translation given up, a webhook change re-reading its webhook after
// losing a race) are made as
// each function that links them, on the strict local AWS: none is denied
// by that function's policy, and the IAM record holds their paths
// (e2e's TestEveryLinkedCallAllowed requires every linked path to be seen).
func TestRareCallsAsTheirFunctions(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	admin := deliverystore.New(st.DB, st.Table)
	hooks := webhookstore.New(st.DB, st.Table)
	listed := func(kind webhooks.Kind, id string) delivery.Webhook {
		t.Helper()
		w, err := hooks.Get(ctx, kind, id)
		if err != nil || w == nil {
			t.Fatalf("webhook %s: %v", id, err)
		}
		sk := dynamo.OutboundSK(w.CreatedAt, id)
		if kind == webhooks.Support {
			sk = dynamo.SupportSK(w.CreatedAt, id)
		}
		dw, err := admin.Webhook(ctx, string(kind), demoWS, sk)
		if err != nil {
			t.Fatalf("webhook %s as the deliverer reads it: %v", id, err)
		}
		return dw
	}
	as := func(fn string) *dynamodb.Client { return dynamodb.NewFromConfig(st.As(fn)) }
	denied := func() int {
		if c := stacktest.IAM(); c != nil {
			return len(c.Denied())
		}
		return 0
	}
	now := time.Now().UTC()
	cases := []struct {
		name string
		call func(t *testing.T) error
	}{
		{"the deliverer's rate counter", func(t *testing.T) error {
			n, err := deliverystore.New(as("DeliverWebhooksFunction"), st.Table).Take(ctx, listed(webhooks.Outbound, demoOutbound), now)
			if err == nil && n != 1 {
				t.Errorf("first delivery of the second counted %d, want 1", n)
			}
			return err
		}},
		{"the deliverer disables an outbound webhook", func(t *testing.T) error {
			return deliverystore.New(as("DeliverWebhooksFunction"), st.Table).Disable(ctx, listed(webhooks.Outbound, demoOutbound), delivery.DisabledGone, time.Time{})
		}},
		{"the deliverer disables a support webhook", func(t *testing.T) error {
			return deliverystore.New(as("DeliverWebhooksFunction"), st.Table).Disable(ctx, listed(webhooks.Support, demoSupport), delivery.DisabledGone, time.Time{})
		}},
		{"the outbound recovery releases a claim", func(t *testing.T) error {
			return releaseClaim(ctx, deliverystore.New(as("RecoverOutboundDeliveriesFunction"), st.Table), demoOutbound, events.KindOutbound)
		}},
		{"the support recovery releases a claim", func(t *testing.T) error {
			return releaseClaim(ctx, deliverystore.New(as("RecoverSupportDeliveriesFunction"), st.Table), demoSupport, events.KindSupport)
		}},
		{"the outbound redelivery releases its claim", func(t *testing.T) error {
			return deliverystore.New(as("RedeliverOutboundFunction"), st.Table).ReleaseRedelivery(ctx, demoWS, demoOutbound, "01JD9N1Z0000000000000000DL")
		}},
		{"the support redelivery releases its claim", func(t *testing.T) error {
			return deliverystore.New(as("RedeliverSupportFunction"), st.Table).ReleaseRedelivery(ctx, demoWS, demoSupport, "01JD9N1Z0000000000000000DL")
		}},
		{"a redelivery's claim that keeps colliding reads the mark", func(t *testing.T) error {
			for _, c := range []struct{ fn, hook string }{{"RedeliverOutboundFunction", demoOutbound}, {"RedeliverSupportFunction", demoSupport}} {
				st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 100, stacktest.TransactionConflict(2, 0))
				_, err := deliverystore.New(as(c.fn), st.Table).ClaimRedelivery(ctx, delivery.RedeliveryClaim{WorkspaceID: demoWS, WebhookID: c.hook,
					DeliveryID: "01JD9N1Z0000000000000000DL", Now: now, Until: now.Add(time.Minute), Window: now.Truncate(time.Hour), Limit: 10})
				st.Faults.Clear()
				if err == nil {
					t.Errorf("%s: a claim that always collides succeeded", c.fn)
				}
			}
			return nil
		}},
		{"the relay parks a stream record", func(t *testing.T) error {
			rec := dynamo.StreamRecord{Seq: "4900000000000000000001", EventName: "INSERT", At: now,
				Image: map[string]types.AttributeValue{dynamo.AttrPK: dynamo.Str("CHAN#01JD9N1048PXK951NGC7NEMZX9"), dynamo.AttrSK: dynamo.Str("MSG#01JD9N1Z0000000000000000MS")}}
			return relaystore.New(as("OutboxRelayFunction"), st.Table).ParkStreamRecords(ctx, "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x", []dynamo.StreamRecord{rec}, now)
		}},
		{"the sweep gives up on a stuck message", func(t *testing.T) error {
			return translationstore.New(as("TranslationSweepFunction"), st.Table).GiveUp(ctx, messages.Pending{
				Job:     messages.Job{MessageID: "01JD9N1Z0000000000000000MS", WorkspaceID: demoWS, ChannelID: demoSupportChannel},
				Version: dynamo.PendingDue(now, "01JD9N1Z0000000000000000MS")})
		}},
		{"the translation function saves without a revision", func(t *testing.T) error {
			// translation.Service saves through SaveRevision when its store
			// is a RevisionSaver, as this one is; the older call stays
			// linked, and allowed.
			tr := chat.Translation{MessageID: "01JD9N1Z0000000000000000MS", Language: "es", Content: "hola", SourceLanguage: "en", CreatedAt: now}
			return translationstore.New(as("TranslateFunction"), st.Table).SaveTranslations(ctx, demoSupportChannel, tr.MessageID, []chat.Translation{tr}, true)
		}},
		{"a revision charged before goes on past the day's budget", func(t *testing.T) error {
			tr := translationstore.New(as("TranslateFunction"), st.Table)
			const charge = "01JD9N1Z0000000000000000MS#1"
			if ok, err := tr.SpendTranslationCharsOnce(ctx, demoWS, now, 10, 100, charge); err != nil || !ok {
				t.Fatalf("first charge: %v %v", ok, err)
			}
			// A retry of the revision gives back what it spent again; past
			// the budget, the record says it was charged.
			if ok, err := tr.SpendTranslationCharsOnce(ctx, demoWS, now, 10, 100, charge); err != nil || !ok {
				t.Fatalf("retry: %v %v", ok, err)
			}
			if ok, err := tr.SpendTranslationCharsOnce(ctx, demoWS, now, 500, 100, charge); err != nil || !ok {
				t.Fatalf("past the budget, charged before: %v %v, want true", ok, err)
			}
			return nil
		}},
		{"a webhook request near the quota reads every shard of its window", func(t *testing.T) error {
			// A quota of 1,000 has two shards of 500 (one per 750); both full, each
			// function's request finds its shard full, reads both
			// (BatchGetItem) and is refused.
			window := now.Truncate(time.Minute)
			base := "QUOTA#" + demoWS + "#" + strconv.FormatInt(window.Unix(), 10)
			for _, pk := range []string{base, base + "#1"} {
				seedCount(t, st, pk, "count", 500)
			}
			for _, fn := range []string{"InboundWebhookFunction", "EditWebhookMessageFunction", "DeleteWebhookMessageFunction"} {
				st.Calls.Reset()
				ok, _, err := inboundstore.New(as(fn), st.Table).Take(ctx, demoWS, window, 1000, window.Add(time.Minute))
				if err != nil || ok {
					t.Errorf("%s: Take past the quota: %v, %v; want refused", fn, ok, err)
				}
				if calls := st.Calls.Calls(); !slices.Contains(calls, "DynamoDB.BatchGetItem") {
					t.Errorf("%s: calls %v, want the shards read", fn, calls)
				}
			}
			return nil
		}},
		{"a translation charge no budget shard holds alone is split", func(t *testing.T) error {
			// A budget of 500,000 has two shards of 250,000; with 200,000
			// spent on each, 80,000 fits only over both (one
			// TransactWriteItems), after a read of both (BatchGetItem).
			day := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 3)
			base := "TRBUDGET#" + demoWS + "#" + day.Format(time.DateOnly)
			for _, pk := range []string{base, base + "#1"} {
				seedCount(t, st, pk, "chars", 200_000)
			}
			st.Calls.Reset()
			ok, err := translationstore.New(as("TranslateFunction"), st.Table).SpendTranslationChars(ctx, demoWS, day, 80_000, 500_000)
			if err != nil || !ok {
				t.Errorf("split spend: %v, %v; want spent", ok, err)
			}
			if calls := st.Calls.Calls(); !slices.Contains(calls, "DynamoDB.TransactWriteItems") || !slices.Contains(calls, "DynamoDB.BatchGetItem") {
				t.Errorf("calls %v, want the shards read and a transaction", calls)
			}
			return nil
		}},
		{"each webhook change re-reads its webhook", func(t *testing.T) error {
			for _, c := range []struct {
				kind webhooks.Kind
				id   string
				fns  []string
			}{
				{webhooks.Inbound, demoInbound, []string{"UpdateInboundWebhookFunction", "DeleteInboundWebhookFunction", "RotateInboundWebhookSecretFunction"}},
				{webhooks.Outbound, demoOutbound, []string{"UpdateOutboundWebhookFunction", "DeleteOutboundWebhookFunction", "RotateOutboundWebhookSecretFunction"}},
				{webhooks.Support, demoSupport, []string{"UpdateSupportWebhookFunction", "DeleteSupportWebhookFunction", "RotateSupportWebhookSecretFunction"}},
			} {
				for _, fn := range c.fns {
					if w, err := webhookstore.New(as(fn), st.Table).Get(ctx, c.kind, c.id); err != nil || w == nil {
						t.Errorf("%s: Get %s %s: %v, %v", fn, c.kind, c.id, w, err)
					}
				}
			}
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := denied()
			err := c.call(t)
			if n := denied() - before; n > 0 {
				t.Fatalf("%d calls denied by the function's policy (STACKTEST_IAM_LOG=1 names them); error %v", n, err)
			}
			if err != nil && !expectedRefusal(err) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// seedCount puts a counter item pk/#META counting n in attr.
func seedCount(t *testing.T, st *stacktest.Stack, pk, attr string, n int64) {
	t.Helper()
	item := dynamo.Key(pk, dynamo.MetaSK)
	item[attr] = dynamo.Num(n)
	if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &st.Table, Item: item}); err != nil {
		t.Fatal(err)
	}
}

// releaseClaim releases the claim of a delivery of webhook id that is not
// pending (the release's condition fails: nothing to release).
func releaseClaim(ctx context.Context, s *deliverystore.Store, id, kind string) error {
	return s.ReleaseClaim(ctx, delivery.Record{ID: "01JD9N1Z0000000000000000DL", WebhookID: id, Kind: kind, WorkspaceID: demoWS, Attempts: 1})
}

// expectedRefusal reports whether err is a store's refusal of a call its
// condition did not allow (the call reached the table: IAM allowed it).
func expectedRefusal(err error) bool {
	code := chat.ErrorCode(err)
	return code == chat.EConflict || code == chat.ENotFound
}
