package attempt_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/signature"
)

// changeWebhook sets attributes of w's listed item, as a management write
// does (it writes both twins; the delivery function reads the listed one).
func (e *env) changeWebhook(t *testing.T, w evs.Webhook, set map[string]types.AttributeValue) {
	t.Helper()
	expr, names, vals := "SET ", map[string]string{}, map[string]types.AttributeValue{}
	i := 0
	for k, v := range set {
		if i > 0 {
			expr += ", "
		}
		n, p := "#n"+string(rune('a'+i)), ":v"+string(rune('a'+i))
		names[n], vals[p] = k, v
		expr += n + " = " + p
		i++
	}
	_, err := e.st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &e.st.Table,
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "WS#" + wsID}, "sk": &types.AttributeValueMemberS{Value: w.Key}},
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
	if err != nil {
		t.Fatalf("change webhook: %v", err)
	}
}

// TestChangesApplyToNextAttempt: a changed url and a rotated secret apply
// to the very next attempt of a delivery already under way, and a deleted
// webhook's queued retry is dropped without a POST (contract section 10,
// "Changes take effect at once"). Before the delivery function read the
// webhook per attempt, it kept its settings for WEBHOOK_CACHE_TTL and the
// retry went to the old url with the old secret.
func TestChangesApplyToNextAttempt(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5))
	old := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	next := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", old.URL, nil)

	_, ds := event(t, "changes", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.handle(t, e.receiveOne(t)) // attempt 1 fails at the old url; its retry is queued
	if got := len(old.all()); got != 1 {
		t.Fatalf("old url got %d requests, want 1", got)
	}
	const rotated = "whsig_test_rotated"
	e.changeWebhook(t, w, map[string]types.AttributeValue{
		"url": &types.AttributeValueMemberS{Value: next.URL}, "signing_secret": &types.AttributeValueMemberS{Value: rotated}})
	e.handle(t, e.receiveOne(t))
	if got := len(old.all()); got != 1 {
		t.Fatalf("old url got %d requests after the change, want still 1", got)
	}
	hits := next.all()
	if len(hits) != 1 {
		t.Fatalf("new url got %d requests, want 1 (the retry)", len(hits))
	}
	if got := hits[0].header.Get(attempt.HeaderAttempt); got != "2" {
		t.Fatalf("retry's attempt %q, want 2", got)
	}
	if _, err := signature.Verify(hits[0].header.Get(signature.Header), []byte(rotated), hits[0].body, time.Now()); err != nil {
		t.Fatalf("retry not signed with the rotated secret: %v", err)
	}
	if _, err := signature.Verify(hits[0].header.Get(signature.Header), []byte(secret), hits[0].body, time.Now()); err == nil {
		t.Fatal("retry still signed with the replaced secret, want only the rotated one (no previous secret kept)")
	}

	// A retry queued before the webhook was deleted makes no POST.
	e.changeWebhook(t, w, map[string]types.AttributeValue{"url": &types.AttributeValueMemberS{Value: old.URL}})
	_, ds = event(t, "deleted", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.handle(t, e.receiveOne(t))
	if got := len(old.all()); got != 2 {
		t.Fatalf("old url got %d requests, want 2", got)
	}
	for _, pk := range []string{"WS#" + wsID, "OWH#" + w.ID} {
		sk := w.Key
		if pk != "WS#"+wsID {
			sk = "#META"
		}
		if _, err := e.st.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &e.st.Table,
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
			t.Fatal(err)
		}
	}
	if failed, _ := e.handle(t, e.receiveOne(t)); len(failed) != 0 {
		t.Fatalf("retry of a deleted webhook reported as failure %v, want dropped", failed)
	}
	if got := len(old.all()); got != 2 {
		t.Fatalf("deleted webhook's url got %d requests, want still 2", got)
	}
	if r := e.record(t, ds[0]); r.Attempts != 1 {
		t.Fatalf("deleted webhook's delivery has %d attempts, want 1", r.Attempts)
	}
	if !queueEmpty(t, e) {
		t.Fatal("queue not empty after the deleted webhook's retry, want it dropped")
	}
}
