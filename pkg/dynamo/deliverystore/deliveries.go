package deliverystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

var (
	_ delivery.Store         = (*Store)(nil)
	_ delivery.SlowMarker    = (*Store)(nil)
	_ delivery.MessageStates = (*Store)(nil)
)

// prevSecretExpiryAttrs are the names the previous secret's expiry may be
// stored under by webhook management (RFC 3339; epoch seconds also read).
var prevSecretExpiryAttrs = []string{"previous_expires_at"}

func deliveryPK(ws, webhook string) string { return dynamo.DeliveryPrefix + ws + "#" + webhook }
func deliverySK(id string) string          { return dynamo.DeliveryPrefix + id }

// deliveryItem: pk DLV#<ws>#<webhook>, sk DLV#<delivery>; ttl 30 days.
type deliveryItem struct {
	PK             string    `dynamodbav:"pk"`
	SK             string    `dynamodbav:"sk"`
	ID             string    `dynamodbav:"id"`
	WebhookID      string    `dynamodbav:"webhook_id"`
	Kind           string    `dynamodbav:"webhook_kind"`
	WorkspaceID    string    `dynamodbav:"workspace_id"`
	WebhookKey     string    `dynamodbav:"webhook_key"`
	EventID        string    `dynamodbav:"event_id"`
	EventType      string    `dynamodbav:"event_type"`
	Status         string    `dynamodbav:"status"`
	Attempts       int       `dynamodbav:"attempts"`
	LastAttemptAt  time.Time `dynamodbav:"last_attempt_at"`
	NextAttemptAt  time.Time `dynamodbav:"next_attempt_at,omitempty"`
	ResponseStatus int       `dynamodbav:"response_status,omitempty"`
	Error          string    `dynamodbav:"error,omitempty"`
	DurationMS     int64     `dynamodbav:"duration_ms"`
	CreatedAt      time.Time `dynamodbav:"created_at"`
}

func (it deliveryItem) record() delivery.Record {
	return delivery.Record{ID: it.ID, WebhookID: it.WebhookID, Kind: it.Kind, WorkspaceID: it.WorkspaceID, WebhookKey: it.WebhookKey,
		EventID: it.EventID, EventType: it.EventType, Status: it.Status, Attempts: it.Attempts, LastAttemptAt: it.LastAttemptAt,
		NextAttemptAt: it.NextAttemptAt, ResponseStatus: it.ResponseStatus, Error: it.Error, DurationMS: it.DurationMS, CreatedAt: it.CreatedAt}
}

func webhookKey(kind, ws, sk string) (map[string]types.AttributeValue, error) {
	p, ok := dynamo.WebhookPrefix(kind)
	if !ok || !strings.HasPrefix(sk, p) {
		return nil, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, sk)
	}
	return dynamo.Key(dynamo.WsPK(ws), sk), nil
}

// previousSecret returns the webhook item's previous signing secret while
// it has not expired at now.
func previousSecret(it map[string]types.AttributeValue, now time.Time) string {
	prev := dynamo.GetS(it, dynamo.AttrPrevSigningSecret)
	if prev == "" {
		return ""
	}
	for _, name := range prevSecretExpiryAttrs {
		switch v := it[name].(type) {
		case *types.AttributeValueMemberS:
			if t, err := time.Parse(time.RFC3339Nano, v.Value); err == nil && now.Before(t) {
				return prev
			}
			return ""
		case *types.AttributeValueMemberN:
			if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil && now.Unix() < n {
				return prev
			}
			return ""
		}
	}
	return "" // no expiry: not a rotation this code understands
}

// Webhook implements delivery.Store with one GetItem. Errors: ENotFound;
// EUnavailable.
func (s *Store) Webhook(ctx context.Context, kind, ws, sk string) (delivery.Webhook, error) {
	k, err := webhookKey(kind, ws, sk)
	if err != nil {
		return delivery.Webhook{}, err
	}
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return delivery.Webhook{}, dynamo.Fail("get webhook "+sk, err)
	}
	it := out.Item
	if len(it) == 0 {
		return delivery.Webhook{}, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, sk)
	}
	return webhookOf(it, kind, ws, sk), nil
}

// webhookOf is the delivery's view of webhook item it (either twin), of
// kind in workspace ws, whose listed twin's sort key is sk.
func webhookOf(it map[string]types.AttributeValue, kind, ws, sk string) delivery.Webhook {
	w := delivery.Webhook{ID: dynamo.GetS(it, "id"), Kind: kind, WorkspaceID: ws, Key: sk, URL: dynamo.GetS(it, "url"),
		Active: dynamo.GetBool(it, "active"), FailedAttempts: int(dynamo.GetN(it, dynamo.AttrFailedAttempts)), RateLimit: int(dynamo.GetN(it, "rate_limit"))}
	if sec := dynamo.GetS(it, dynamo.AttrSigningSecret); sec != "" {
		w.Secrets = append(w.Secrets, []byte(sec))
	}
	if prev := previousSecret(it, time.Now()); prev != "" {
		w.Secrets = append(w.Secrets, []byte(prev))
	}
	if t, err := time.Parse(time.RFC3339Nano, dynamo.GetS(it, dynamo.AttrReenabledAt)); err == nil {
		w.ReenabledAt = t
	}
	if t, err := time.Parse(sortTimeLayout, dynamo.GetS(it, dynamo.AttrFailingSince)); err == nil {
		w.FailingSince = t
	}
	if t, err := time.Parse(sortTimeLayout, dynamo.GetS(it, dynamo.AttrSlowSince)); err == nil {
		w.SlowSince = t
	}
	return w
}

const sortTimeLayout = "2006-01-02T15:04:05.000000000Z"

// Attributes of a delivery record that the attempts' reservations use.
const (
	attrAttempts = "attempts"
	// attrLease holds the reservation of the last attempt number until
	// its result is written: "<sortTime(until)>#<token>", so that
	// "lease < :now" (same layout) finds an expired one.
	attrLease  = "lease"
	attrQueued = "queued"
	attrNextAt = "next_attempt_at"
	// attrFailedID holds the delivery's id while its record is failed (a
	// final failure, which only a recovery or a redelivery takes up again)
	// and only then: it is the sort key of FailedDeliveryIndex, so that the
	// index holds a webhook's failed deliveries and nothing else. Every
	// write that sets the status sets or removes it in the same call.
	attrFailedID = "failed_id"
)

// FailedDeliveryIndex is the sparse index of failed delivery records:
// partition key pk (DLV#<ws>#<webhook>, the record's own), sort key
// failed_id (the delivery id, a ULID timed at its event). A recovery
// Queries it for its window, so what it reads grows with the webhook's
// failed deliveries, never with its successful ones.
const FailedDeliveryIndex = "FailedDeliveryIndex"

func leaseValue(l delivery.Lease) string { return dynamo.SortTime(l.Until) + "#" + l.Token }

// Reserve implements delivery.Store with one conditional UpdateItem of the
// delivery record, which creates it on the first attempt and shows the
// attempt as pending (out of FailedDeliveryIndex). A refusal returns the
// record as it was (ReturnValuesOnConditionCheckFailure), so it costs no
// read.
// Errors: EUnavailable, EInternal.
func (s *Store) Reserve(ctx context.Context, r delivery.Reservation) (int, bool, delivery.State, error) {
	d := r.Delivery
	names := map[string]string{"#st": "status", "#err": "error", "#ttl": "ttl", "#a": attrAttempts, "#l": attrLease, "#next": attrNextAt}
	vals := map[string]types.AttributeValue{
		":id": dynamo.Str(d.ID), ":wh": dynamo.Str(d.WebhookID), ":kind": dynamo.Str(d.Kind), ":ws": dynamo.Str(d.WorkspaceID), ":key": dynamo.Str(d.WebhookKey),
		":ev": dynamo.Str(d.EventID), ":et": dynamo.Str(d.EventType), ":st": dynamo.Str(delivery.StatusPending), ":at": dynamo.Str(r.At.UTC().Format(time.RFC3339Nano)),
		":ttl": dynamo.Num(dynamo.Epoch(r.At.Add(chat.DeliveryRetention))), ":lease": dynamo.Str(leaseValue(r.Lease)), ":now": dynamo.Str(dynamo.SortTime(r.At)),
	}
	set := []string{"id = :id", "webhook_id = :wh", "webhook_kind = :kind", "workspace_id = :ws", "webhook_key = :key",
		"event_id = :ev", "event_type = :et", "#st = :st", "last_attempt_at = :at", "#l = :lease",
		"created_at = if_not_exists(created_at, :at)", "#ttl = if_not_exists(#ttl, :ttl)"}
	var cond string
	// An attempt under way is not a failure: the record leaves the
	// failed index (a redelivery's or a recovery's attempt).
	remove := "REMOVE response_status, #err, duration_ms, #next, " + attrFailedID
	switch {
	case r.Number == 0: // the next number, once no attempt holds the record
		// A redelivery: taking its number ends its pending mark.
		remove += ", " + attrRedeliverUntil
		set = append(set, "#a = if_not_exists(#a, :zero) + :one")
		vals[":zero"], vals[":one"] = dynamo.Num(0), dynamo.Num(1)
		cond = "attribute_not_exists(#l) OR #l < :now"
	case r.Number == 1:
		set = append(set, "#a = :n")
		vals[":n"] = dynamo.Num(1)
		cond = "(attribute_not_exists(#a) AND attribute_not_exists(#l)) OR (#a = :n AND #l < :now)"
	default:
		set = append(set, "#a = :n")
		vals[":n"], vals[":prev"] = dynamo.Num(int64(r.Number)), dynamo.Num(int64(r.Number-1))
		// A message of attempt n exists only once attempt n-1 was posted,
		// so n-1's lease (which guards its own number) does not hold n back.
		cond = "#a = :prev OR (#a = :n AND #l < :now)"
	}
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(d.WorkspaceID, d.WebhookID), deliverySK(d.ID)),
		UpdateExpression:    aws.String("SET " + strings.Join(set, ", ") + " " + remove),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
		ReturnValues: types.ReturnValueUpdatedNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return 0, false, stateOf(ccf.Item), nil
	}
	if err != nil {
		return 0, false, delivery.State{}, dynamo.Fail("reserve attempt of delivery "+d.ID, err)
	}
	n := int(dynamo.GetN(out.Attributes, attrAttempts))
	if n < 1 {
		return 0, false, delivery.State{}, chat.Internal(fmt.Errorf("dynamo: delivery %s: reserved attempt %d", d.ID, n))
	}
	return n, true, delivery.State{}, nil
}

// stateOf reads a delivery record as a refused reservation found it.
func stateOf(it map[string]types.AttributeValue) delivery.State {
	st := delivery.State{Attempts: int(dynamo.GetN(it, attrAttempts)), Status: dynamo.GetS(it, "status"), Queued: int(dynamo.GetN(it, attrQueued))}
	if l := dynamo.GetS(it, attrLease); l != "" {
		until, _, _ := strings.Cut(l, "#")
		if t, err := time.Parse(sortTimeLayout, until); err == nil {
			st.LeaseUntil = t
		} else {
			st.LeaseUntil = time.Unix(0, 1) // unreadable: expired, never zero
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, dynamo.GetS(it, attrNextAt)); err == nil {
		st.NextAt = t
	}
	return st
}

// RecordAttempt implements delivery.Store with one UpdateItem of the
// delivery record, on the condition that a's lease still holds it; it
// touches no other item, so concurrent attempts to one webhook never
// collide. A final failure (status failed) puts the record in
// FailedDeliveryIndex; any other status takes it out. Errors: EConflict when another reservation took the number
// over; EUnavailable.
func (s *Store) RecordAttempt(ctx context.Context, a delivery.Attempt) error {
	d := a.Delivery
	names := map[string]string{"#st": "status", "#err": "error", "#l": attrLease}
	vals := map[string]types.AttributeValue{":st": dynamo.Str(a.Status), ":dur": dynamo.Num(a.DurationMS), ":lease": dynamo.Str(leaseValue(a.Lease))}
	set := []string{"#st = :st", "duration_ms = :dur"}
	remove := []string{"#l"}
	if a.Status == delivery.StatusFailed {
		vals[":fid"] = dynamo.Str(d.ID)
		set = append(set, attrFailedID+" = :fid")
	} else {
		remove = append(remove, attrFailedID)
	}
	if a.ResponseStatus != 0 {
		vals[":rs"] = dynamo.Num(int64(a.ResponseStatus))
		set = append(set, "response_status = :rs")
	} else {
		remove = append(remove, "response_status")
	}
	if a.Error != "" {
		vals[":err"] = dynamo.Str(a.Error)
		set = append(set, "#err = :err")
	} else {
		remove = append(remove, "#err")
	}
	if !a.NextAt.IsZero() {
		vals[":next"] = dynamo.Str(a.NextAt.UTC().Format(time.RFC3339Nano))
		set = append(set, attrNextAt+" = :next")
	}
	if a.Queued > 0 {
		names["#q"] = attrQueued
		vals[":q"] = dynamo.Num(int64(a.Queued))
		set = append(set, "#q = :q")
	}
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(d.WorkspaceID, d.WebhookID), deliverySK(d.ID)),
		UpdateExpression:    aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression: aws.String("#l = :lease"), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return chat.Errorf(chat.EConflict, "delivery %s attempt %d was taken over", d.ID, a.Number)
	}
	return dynamo.Fail("record delivery "+d.ID, err)
}

// ExtendFailing implements delivery.Store with one UpdateItem of the
// webhook's listed item (ADD: concurrent ones never conflict), only while
// the webhook exists.
func (s *Store) ExtendFailing(ctx context.Context, w delivery.Webhook, at time.Time) error {
	k, err := webhookKey(w.Kind, w.WorkspaceID, w.Key)
	if err != nil {
		return err
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: k,
		UpdateExpression:          aws.String("SET #fs = if_not_exists(#fs, :at) ADD #fa :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#fs": dynamo.AttrFailingSince, "#fa": dynamo.AttrFailedAttempts},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": dynamo.Str(dynamo.SortTime(at)), ":one": dynamo.Num(1)}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("extend failure streak of webhook "+w.ID, err)
}

// MarkSlow implements delivery.SlowMarker with one UpdateItem of the
// webhook item (its listed twin, which the delivery function reads), which
// keeps an earlier mark. A deleted webhook is not an error.
func (s *Store) MarkSlow(ctx context.Context, w delivery.Webhook, at time.Time) error {
	k, err := webhookKey(w.Kind, w.WorkspaceID, w.Key)
	if err != nil {
		return err
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: k,
		UpdateExpression:          aws.String("SET #ss = if_not_exists(#ss, :at)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#ss": dynamo.AttrSlowSince},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": dynamo.Str(dynamo.SortTime(at))}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("mark webhook "+w.ID+" slow", err)
}

// Disable implements delivery.Store with one TransactWriteItems that
// disables both of the webhook's twins.
// Errors: EConflict when the webhook is gone, already inactive, or (for
// "failing") its streak no longer qualifies; EUnavailable.
func (s *Store) Disable(ctx context.Context, w delivery.Webhook, reason string, failingBefore time.Time) error {
	k, err := webhookKey(w.Kind, w.WorkspaceID, w.Key)
	if err != nil {
		return err
	}
	cond := "attribute_exists(pk) AND active = :t"
	vals := map[string]types.AttributeValue{":f": &types.AttributeValueMemberBOOL{Value: false},
		":t": &types.AttributeValueMemberBOOL{Value: true}, ":r": dynamo.Str(reason), ":now": dynamo.Str(time.Now().UTC().Format(time.RFC3339Nano))}
	names := map[string]string{"#dr": dynamo.AttrDisabledReason}
	if reason == delivery.DisabledFailing {
		cond += " AND #fs <= :before AND #fa >= :n"
		vals[":before"], vals[":n"] = dynamo.Str(dynamo.SortTime(failingBefore)), dynamo.Num(10)
		names["#fs"], names["#fa"] = dynamo.AttrFailingSince, dynamo.AttrFailedAttempts
	}
	// Both twins (webhooks.go): the listed one the delivery function reads,
	// on the streak's condition, and the by-id one management reads.
	byID := dynamo.Key(dynamo.SupportPK(w.ID), dynamo.MetaSK)
	if w.Kind == events.KindOutbound {
		byID = dynamo.Key(dynamo.OutboundPK(w.ID), dynamo.MetaSK)
	}
	set := aws.String("SET active = :f, #dr = :r, updated_at = :now")
	_, err = s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &s.Name, Key: k, UpdateExpression: set, ConditionExpression: aws.String(cond),
			ExpressionAttributeNames: names, ExpressionAttributeValues: vals}},
		{Update: &types.Update{TableName: &s.Name, Key: byID, UpdateExpression: set, ConditionExpression: aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames:  map[string]string{"#dr": dynamo.AttrDisabledReason},
			ExpressionAttributeValues: map[string]types.AttributeValue{":f": vals[":f"], ":r": vals[":r"], ":now": vals[":now"]}}},
		s.disabledAudit(w, reason, time.Now().UTC()),
	}})
	if dynamo.Cancellation(err) != nil {
		return chat.Errorf(chat.EConflict, "webhook %s not disabled", w.ID)
	}
	return dynamo.Fail("disable webhook "+w.ID, err)
}

// ClearFailing implements delivery.Store with one UpdateItem.
func (s *Store) ClearFailing(ctx context.Context, w delivery.Webhook) error {
	k, err := webhookKey(w.Kind, w.WorkspaceID, w.Key)
	if err != nil {
		return err
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: k,
		UpdateExpression:         aws.String("REMOVE #fs, #fa, #ss"),
		ConditionExpression:      aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames: map[string]string{"#fs": dynamo.AttrFailingSince, "#fa": dynamo.AttrFailedAttempts, "#ss": dynamo.AttrSlowSince},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("clear failing webhook "+w.ID, err)
}

// Event returns an event's stored envelope. Errors: ENotFound.
func (s *Store) Event(ctx context.Context, id string) ([]byte, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.EventPK(id), dynamo.MetaSK),
		ProjectionExpression: aws.String("body")})
	if err != nil {
		return nil, dynamo.Fail("get event "+id, err)
	}
	b := dynamo.GetS(out.Item, "body")
	if b == "" {
		return nil, chat.Errorf(chat.ENotFound, "no event %s", id)
	}
	return []byte(b), nil
}

// DeletedAt implements delivery.MessageStates with one strongly consistent
// GetItem of the message item, projecting deleted_at (read capacity is
// counted on the item's size, content included). Errors: EUnavailable.
func (s *Store) DeletedAt(ctx context.Context, channelID, messageID string) (time.Time, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID)),
		ProjectionExpression: aws.String("#d"), ExpressionAttributeNames: map[string]string{"#d": dynamo.AttrDeletedAt}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return time.Time{}, dynamo.Fail("deletion of message "+messageID, err)
	}
	v := dynamo.GetS(out.Item, dynamo.AttrDeletedAt)
	if v == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		// Deleted, when unreadable: gone is what matters.
		return time.Unix(0, 0).UTC(), nil
	}
	return at, nil
}

// Delivery returns a webhook's delivery record. Errors: ENotFound.
func (s *Store) Delivery(ctx context.Context, ws, webhookID, id string) (delivery.Record, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(ws, webhookID), deliverySK(id)),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return delivery.Record{}, dynamo.Fail("get delivery "+id, err)
	}
	if len(out.Item) == 0 {
		return delivery.Record{}, chat.Errorf(chat.ENotFound, "no delivery %s", id)
	}
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return delivery.Record{}, chat.Internal(fmt.Errorf("dynamo: delivery %s: %w", id, err))
	}
	return it.record(), nil
}

// ListDeliveries returns a page of a webhook's delivery log, newest first.
func (s *Store) ListDeliveries(ctx context.Context, ws, webhookID, after string, limit int) (chat.Page[delivery.Record], error) {
	q := dynamo.ListQuery{Op: "list deliveries of " + webhookID, PK: deliveryPK(ws, webhookID), Prefix: dynamo.DeliveryPrefix}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, deliveryItem.record)
}

// PointWebhook sets the URL of a workspace's webhook of kind (and its
// signing secret when it has none), for local runs: chatctl serve --demo
// points the demo's webhooks at its local receiver. Errors: ENotFound.
func (s *Store) PointWebhook(ctx context.Context, ws, kind, sk, url, secret string) error {
	k, err := webhookKey(kind, ws, sk)
	if err != nil {
		return err
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: k,
		UpdateExpression:          aws.String("SET #u = :u, #s = if_not_exists(#s, :s)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#u": "url", "#s": dynamo.AttrSigningSecret},
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": dynamo.Str(url), ":s": dynamo.Str(secret)}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, sk)
	}
	return dynamo.Fail("point webhook "+sk, err)
}
