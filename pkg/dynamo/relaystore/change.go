package relaystore

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

// Changes the table's stream reports that become events.
const (
	ChangeMessage    = "message"    // a message stored
	ChangeTranslated = "translated" // a message's translations finished
	ChangeRoom       = "room"       // a room created
	ChangeRoomClosed = "room_closed"
	ChangeGuest      = "guest"   // a guest joined or re-joined
	ChangeEdited     = "edited"  // a message's content edited (a new revision)
	ChangeDeleted    = "deleted" // a message deleted
)

// Change is a stream record that reports an event.
type Change struct {
	Kind         string
	Message      chat.Message
	TranslatedAt time.Time
	Room         chat.Room
	RoomCreated  time.Time
	Guest        chat.Guest
	// Disabled, WorkspaceID and At report ChangeWebhookDisabled; At is
	// also when a room closed (ChangeRoomClosed), zero for a room closed
	// before its item recorded it.
	Disabled    events.Disabled
	WorkspaceID string
	At          time.Time
	// Reaction reports ChangeReaction (WorkspaceID is its workspace's).
	Reaction Reaction
}

// ChangeFromImage reads a stream record's event name and new image, and
// false when it reports no event.
func ChangeFromImage(eventName string, image map[string]types.AttributeValue) (Change, bool) {
	pk, sk := dynamo.GetS(image, dynamo.AttrPK), dynamo.GetS(image, dynamo.AttrSK)
	insert, modify := eventName == "INSERT", eventName == "MODIFY"
	switch {
	case strings.HasPrefix(pk, "CHAN#") && strings.HasPrefix(sk, dynamo.MessagePrefix):
		m, ok := dynamo.MessageFromImage(image)
		if !ok {
			return Change{}, false
		}
		if insert {
			return Change{Kind: ChangeMessage, Message: m}, true
		}
		switch {
		case modify && dynamo.OutboxOf(image) == dynamo.OutboxEdited:
			return Change{Kind: ChangeEdited, Message: m}, true
		case modify && dynamo.OutboxOf(image) == dynamo.OutboxDeleted:
			return Change{Kind: ChangeDeleted, Message: m}, true
		}
		at, err := time.Parse(time.RFC3339Nano, dynamo.GetS(image, dynamo.AttrTranslatedAt))
		if modify && err == nil && dynamo.GetS(image, dynamo.AttrPendingShard) == "" {
			return Change{Kind: ChangeTranslated, Message: m, TranslatedAt: at}, true
		}
	case strings.HasPrefix(pk, "ROOM#") && sk == dynamo.MetaSK && (insert || modify):
		var r dynamo.RoomRecord
		if err := attributevalue.UnmarshalMap(image, &r); err != nil || !chat.ValidID(r.ID) {
			return Change{}, false
		}
		if insert {
			// A room stored already closed or past its expiry (a fixture's:
			// the API creates rooms active, expiring later) was never open
			// to a guest, so its creation is no room.created.
			if r.Status != chat.RoomActive || !r.ExpiresAt.After(r.CreatedAt) {
				return Change{}, false
			}
			return Change{Kind: ChangeRoom, Room: r.Room(), RoomCreated: r.CreatedAt}, true
		}
		if r.Status == chat.RoomClosed {
			c := Change{Kind: ChangeRoomClosed, Room: r.Room(), RoomCreated: r.CreatedAt}
			if at, err := time.Parse(time.RFC3339Nano, dynamo.GetS(image, dynamo.AttrClosedAt)); err == nil {
				c.At = at
			}
			return c, true
		}
	case strings.HasPrefix(pk, "AUDIT#") && insert:
		return disabledChange(image)
	case strings.HasPrefix(pk, "ROOM#") && strings.HasPrefix(sk, "GUEST#") && (insert || modify):
		var g dynamo.GuestItem
		if err := attributevalue.UnmarshalMap(image, &g); err != nil || !chat.ValidID(g.ID) {
			return Change{}, false
		}
		return Change{Kind: ChangeGuest, Guest: chat.Guest{ID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID, ChannelID: g.ChannelID,
			Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}}, true
	}
	return Change{}, false
}

// ChangeWebhookDisabled is the stream's report of a webhook the delivery
// function disabled: the audit item written in the same transaction.
const ChangeWebhookDisabled = "webhook_disabled"

// disabledChange reads a webhook.disabled audit entry's stream image.
func disabledChange(image map[string]types.AttributeValue) (Change, bool) {
	if dynamo.GetS(image, "action") != events.WebhookDisabled {
		return Change{}, false
	}
	kind, _ := strings.CutSuffix(dynamo.GetS(image, "target_type"), "_webhook")
	at, err := time.Parse(time.RFC3339Nano, dynamo.GetS(image, "created_at"))
	if err != nil || dynamo.GetS(image, "target_id") == "" {
		return Change{}, false
	}
	return Change{Kind: ChangeWebhookDisabled, WorkspaceID: dynamo.GetS(image, "workspace_id"), At: at,
		Disabled: events.Disabled{WebhookID: dynamo.GetS(image, "target_id"), Kind: kind, Reason: dynamo.GetS(image, "reason")}}, true
}
