package dynamo

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Item shapes of docs/data-model.md that are not join's (see rooms.go).
// Field names are the table's attribute names.

// WorkspaceItem: pk WS#<ws>, sk #META.
type WorkspaceItem struct {
	PK              string `dynamodbav:"pk"`
	SK              string `dynamodbav:"sk"`
	ID              string `dynamodbav:"id"`
	Name            string `dynamodbav:"name"`
	DefaultLanguage string `dynamodbav:"default_language"`
	WebhookQuota    int    `dynamodbav:"webhook_quota_per_minute"`
	// TranslationBudget is translation_chars_per_day (budget.go).
	TranslationBudget int64 `dynamodbav:"translation_chars_per_day"`
}

// UserItem: pk WS#<ws>, sk USER#<user>.
type UserItem struct {
	PK                string `dynamodbav:"pk"`
	SK                string `dynamodbav:"sk"`
	ID                string `dynamodbav:"id"`
	WorkspaceID       string `dynamodbav:"workspace_id"`
	Name              string `dynamodbav:"name"`
	PreferredLanguage string `dynamodbav:"preferred_language"`
	TokenHash         string `dynamodbav:"token_hash"`
	Role              string `dynamodbav:"role,omitempty"`
}

// APITokenItem: pk APITOKEN#<sha256(token)>, sk #META. It repeats its
// user's name, role, language and channels, so that a workspace request is
// authenticated and authorized with one GetItem.
type APITokenItem struct {
	PK                string   `dynamodbav:"pk"`
	SK                string   `dynamodbav:"sk"`
	WorkspaceID       string   `dynamodbav:"workspace_id"`
	UserID            string   `dynamodbav:"user_id"`
	Revoked           bool     `dynamodbav:"revoked"`
	Name              string   `dynamodbav:"name,omitempty"`
	Role              string   `dynamodbav:"role,omitempty"`
	PreferredLanguage string   `dynamodbav:"preferred_language,omitempty"`
	Channels          []string `dynamodbav:"channels,stringset,omitempty"`
}

// ChannelItem: pk WS#<ws>, sk CHAN#<channel>.
type ChannelItem struct {
	PK          string   `dynamodbav:"pk"`
	SK          string   `dynamodbav:"sk"`
	ID          string   `dynamodbav:"id"`
	WorkspaceID string   `dynamodbav:"workspace_id"`
	Name        string   `dynamodbav:"name"`
	Members     []string `dynamodbav:"members,omitempty"`
	// CreatedAt orders the members' channel lists; zero on items written
	// before it existed (the next apply sets it).
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// InboundItem: pk IWH#<webhook>, sk #META, and its listed twin pk WS#<ws>,
// sk IWH#<sortTime(created)>#<webhook> (see webhooks.go). A deleted one is
// a tombstone: deleted_at set, enabled false, no secrets, a TTL. An empty
// bot_avatar_url is not stored (a PATCH's null removes it).
type InboundItem struct {
	PK                string    `dynamodbav:"pk"`
	SK                string    `dynamodbav:"sk"`
	ID                string    `dynamodbav:"id"`
	WorkspaceID       string    `dynamodbav:"workspace_id"`
	ChannelID         string    `dynamodbav:"channel_id"`
	BotName           string    `dynamodbav:"bot_name"`
	BotAvatarURL      string    `dynamodbav:"bot_avatar_url,omitempty"`
	SecretHash        string    `dynamodbav:"secret_hash"`
	SignatureRequired bool      `dynamodbav:"signature_required"`
	SigningSecret     string    `dynamodbav:"signing_secret"`
	Enabled           bool      `dynamodbav:"enabled"`
	CreatedAt         time.Time `dynamodbav:"created_at"`
	UpdatedAt         time.Time `dynamodbav:"updated_at"`
	Rotated
	DeletedAt *time.Time `dynamodbav:"deleted_at,omitempty"`
}

// Rotated holds the secrets a rotation replaced, valid until
// previous_expires_at (checked in code, never by TTL).
type Rotated struct {
	PreviousSecretHash    string     `dynamodbav:"previous_secret_hash,omitempty"`
	PreviousSigningSecret string     `dynamodbav:"previous_signing_secret,omitempty"`
	PreviousExpiresAt     *time.Time `dynamodbav:"previous_expires_at,omitempty"`
}

// OutboundItem: pk WS#<ws>, sk OWH#<sortTime(created)>#<id> (listed), and
// its twin pk OWH#<id>, sk #META (found by id).
type OutboundItem struct {
	PK            string    `dynamodbav:"pk"`
	SK            string    `dynamodbav:"sk"`
	ID            string    `dynamodbav:"id"`
	WorkspaceID   string    `dynamodbav:"workspace_id"`
	Name          string    `dynamodbav:"name"`
	URL           string    `dynamodbav:"url"`
	Events        []string  `dynamodbav:"events"`
	Active        bool      `dynamodbav:"active"`
	RateLimit     int       `dynamodbav:"rate_limit,omitempty"`
	SigningSecret string    `dynamodbav:"signing_secret"`
	CreatedAt     time.Time `dynamodbav:"created_at"`
	UpdatedAt     time.Time `dynamodbav:"updated_at"`
	Rotated
}

// SupportItem: pk WS#<ws>, sk SWH#<sortTime(created)>#<id> (listed), and
// its twin pk SWH#<id>, sk #META (found by id).
type SupportItem struct {
	PK            string    `dynamodbav:"pk"`
	SK            string    `dynamodbav:"sk"`
	ID            string    `dynamodbav:"id"`
	WorkspaceID   string    `dynamodbav:"workspace_id"`
	Name          string    `dynamodbav:"name"`
	URL           string    `dynamodbav:"url"`
	Active        bool      `dynamodbav:"active"`
	RateLimit     int       `dynamodbav:"rate_limit,omitempty"`
	SigningSecret string    `dynamodbav:"signing_secret,omitempty"`
	CreatedAt     time.Time `dynamodbav:"created_at"`
	UpdatedAt     time.Time `dynamodbav:"updated_at"`
	Rotated
}

// Delivery log and event items (docs/data-model.md).
const (
	DeliveryPrefix = "DLV#"
	EventPrefix    = "EVENT#"
	// Webhook item attributes this file reads or writes. The webhook
	// management code owns the items; these accessors keep the names in one
	// place.
	AttrSigningSecret     = "signing_secret"
	AttrPrevSigningSecret = "previous_signing_secret"
	AttrFailingSince      = "failing_since"
	AttrFailedAttempts    = "failed_attempts"
	AttrDisabledReason    = "disabled_reason"
	AttrReenabledAt       = "reenabled_at"
	// AttrSlowSince marks a webhook whose attempt was still waiting after
	// a second (docs/delivery.md, "The slow lane").
	AttrSlowSince = "slow_since"
)

// AttrTranslatedAt is set, once, by the translation function when a
// Message's every target language is stored: the stream's MODIFY that
// carries it first is message.translated (docs/decisions.md, "Event
// delivery").
const AttrTranslatedAt = "translated_at"

// Sort-key bounds of a channel's readers and rooms: every READER#... and
// ROOM#... key lies between them, and MSG#... keys sort before both, so the
// readers query never reads a message.
const (
	ReadersFrom = "READER#"
	ReadersTo   = "ROOM$"
)

// RequestLogRetention is how long request log records are kept.
const RequestLogRetention = 30 * 24 * time.Hour

func OutboundPK(id string) string { return "OWH#" + id }

func SupportPK(id string) string { return "SWH#" + id }

func InboundSK(created time.Time, id string) string {
	return "IWH#" + SortTime(created) + "#" + id
}

func (r Rotated) Expires() time.Time {
	if r.PreviousExpiresAt == nil {
		return time.Time{}
	}
	return *r.PreviousExpiresAt
}

// APITokenOf decodes an API token item.
func APITokenOf(av map[string]types.AttributeValue) (workspaces.APIToken, error) {
	var it APITokenItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return workspaces.APIToken{}, chat.Internal(err)
	}
	return workspaces.APIToken{Hash: strings.TrimPrefix(it.PK, "APITOKEN#"), WorkspaceID: it.WorkspaceID, UserID: it.UserID, Revoked: it.Revoked,
		Name: it.Name, Role: it.Role, PreferredLanguage: it.PreferredLanguage, Channels: it.Channels}, nil
}

func GetBool(it map[string]types.AttributeValue, name string) bool {
	v, ok := it[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func GetN(it map[string]types.AttributeValue, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

// WebhookPrefix is the sort-key prefix of a kind's webhook items: kind is
// events.KindOutbound ("outbound") or events.KindSupport ("support"),
// spelled out so that the table's helpers link no event code.
func WebhookPrefix(kind string) (string, bool) {
	switch kind {
	case "outbound":
		return "OWH#", true
	case "support":
		return "SWH#", true
	}
	return "", false
}

// MemberPK is the partition of one user's channel list.
func MemberPK(ws, user string) string { return "MEMBER#" + ws + "#" + user }

// MemberChannelSK orders a user's channels oldest first.
func MemberChannelSK(created time.Time, channel string) string {
	return "CHAN#" + SortTime(created) + "#" + channel
}

// MemberChannelItem lists a channel in the channel list of one of its
// members: pk MEMBER#<ws>#<user>, sk CHAN#<sortTime(created)>#<channel>.
// chatctl apply writes it with the channel and deletes it with the
// membership.
type MemberChannelItem struct {
	PK          string    `dynamodbav:"pk"`
	SK          string    `dynamodbav:"sk"`
	ID          string    `dynamodbav:"id"`
	WorkspaceID string    `dynamodbav:"workspace_id"`
	Name        string    `dynamodbav:"name"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
}

// Keys is the item's key.
func (it OutboundItem) Keys() (string, string) { return it.PK, it.SK }

// Created is when the webhook was created.
func (it OutboundItem) Created() time.Time { return it.CreatedAt }

// Keys is the item's key.
func (it SupportItem) Keys() (string, string) { return it.PK, it.SK }

// Created is when the webhook was created.
func (it SupportItem) Created() time.Time { return it.CreatedAt }

func EventPK(id string) string { return EventPrefix + id }

// EventItem: pk EVENT#<event>, sk #META: the envelope as sent, kept 30 days
// for redelivery.
type EventItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	ID          string `dynamodbav:"id"`
	WorkspaceID string `dynamodbav:"workspace_id"`
	Type        string `dynamodbav:"type"`
	Body        string `dynamodbav:"body"`
	TTL         int64  `dynamodbav:"ttl"`
}
