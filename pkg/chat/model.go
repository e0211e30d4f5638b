package chat

import "time"

// Room statuses. Only an active room that has not passed its expiry can be
// joined; any other status is treated like an expired room.
const (
	RoomActive = "active"
	RoomClosed = "closed"
)

// Roles of a workspace user (contract section 1). A user without one is a
// member.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Workspace owns users, channels, rooms and webhooks.
type Workspace struct {
	ID              string
	Name            string
	DefaultLanguage string
	// WebhookQuota is the number of inbound webhook requests allowed per
	// 60-second window.
	WebhookQuota int
}

// DefaultWebhookQuota applies when a workspace sets none.
const DefaultWebhookQuota = 600

// DefaultTranslationCharsPerDay is a workspace's daily translation budget
// (contract section 5, translation_chars_per_day) when it sets none.
const DefaultTranslationCharsPerDay = 2_000_000

// User is a member of a workspace. Its API token is kept only as a hash.
type User struct {
	ID                string
	WorkspaceID       string
	Name              string
	PreferredLanguage string
	TokenHash         string
}

// Channel groups messages; its members and the guests of its active rooms
// are its readers.
type Channel struct {
	ID          string
	WorkspaceID string
	Name        string
	Members     []string
}

// Room is a Temporary Room: a guest-joinable view of one channel.
type Room struct {
	ID          string
	WorkspaceID string
	ChannelID   string
	Name        string
	Status      string
	ExpiresAt   time.Time
}

// Available reports whether the room can be joined or used at now.
func (r Room) Available(now time.Time) bool {
	return r.Status == RoomActive && now.Before(r.ExpiresAt)
}

// Guest is a restricted user created by joining a room.
type Guest struct {
	ID                string
	RoomID            string
	WorkspaceID       string
	ChannelID         string
	Nickname          string
	PreferredLanguage string
	// ClientID is the caller's device identifier, lower-cased, or "".
	ClientID  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// GuestSession is what a guest token resolves to. Stored under the token's
// hash; the token itself is never stored.
type GuestSession struct {
	TokenHash string
	Guest     Guest
	ExpiresAt time.Time
}

// InboundWebhook lets an external system post into a channel.
type InboundWebhook struct {
	ID                string
	WorkspaceID       string
	ChannelID         string
	BotName           string
	BotAvatarURL      string
	SecretHash        string
	SignatureRequired bool
	// SigningSecret is kept in clear: HMAC verification needs the key.
	SigningSecret string
	Enabled       bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// The secrets a rotation replaced stay valid until PreviousExpiresAt
	// (zero when there was no rotation).
	PreviousSecretHash    string
	PreviousSigningSecret string
	PreviousExpiresAt     time.Time
}

// OutboundWebhook is a workspace's subscription to events.
type OutboundWebhook struct {
	ID          string
	WorkspaceID string
	Name        string
	URL         string
	Events      []string
	Active      bool
	// RateLimit is the most deliveries a second; 0 is none.
	RateLimit     int
	SigningSecret string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// PreviousSigningSecret also signs deliveries until PreviousExpiresAt.
	PreviousSigningSecret string
	PreviousExpiresAt     time.Time

	// DisabledReason is why the delivery function disabled it ("gone",
	// "failing"); "" while active or when an admin disabled it.
	DisabledReason string
}

// SupportWebhook is a workspace's support integration endpoint.
type SupportWebhook struct {
	ID          string
	WorkspaceID string
	Name        string
	URL         string
	Active      bool
	// RateLimit is the most deliveries a second; 0 is none.
	RateLimit int
	CreatedAt time.Time
	UpdatedAt time.Time
	// SigningSecret signs deliveries; PreviousSigningSecret too until
	// PreviousExpiresAt.
	SigningSecret         string
	PreviousSigningSecret string
	PreviousExpiresAt     time.Time

	// DisabledReason is as OutboundWebhook's.
	DisabledReason string
}

// Author types of a message.
const (
	AuthorBot   = "bot"
	AuthorUser  = "user"
	AuthorGuest = "guest"
)

// Author is who a message appears under.
type Author struct {
	Type      string
	ID        string
	Name      string
	AvatarURL string
	// Language is the author's preferred language, the source-language
	// fallback for translators that cannot detect.
	Language string
}

// Message statuses.
const (
	MessageQueued = "queued"
)

// Message is a posted message. Translations are stored beside it, one per
// target language.
type Message struct {
	ID              string
	WorkspaceID     string
	ChannelID       string
	Author          Author
	Content         string
	SkipTranslation bool
	// SourceLanguage is the language the content is believed to be in
	// before detection: the author's or the workspace's default.
	SourceLanguage string
	Status         string
	CreatedAt      time.Time
	// TranslatedLanguages are the translator's target codes of the
	// translations stored beside the message, in no particular order. The
	// translation function adds to it after storing them; a new message has
	// none.
	TranslatedLanguages []string
	// Revision is 1 when posted, +1 per edit that changes the content
	// (contract section 13); 0 on items written before edits existed,
	// which Rev reads as 1.
	Revision int
	// EditedAt is zero until the first edit.
	EditedAt time.Time
	// DeletedAt is zero unless the message was deleted: then it is a
	// tombstone with no content, and DeletedBy names who deleted it.
	DeletedAt time.Time
	DeletedBy Author
	// Attachments are the files the message carries (contract section 17),
	// in the order they were attached; nil for none.
	Attachments []Attachment
	// DroppedKeys are the storage keys of files the message no longer
	// carries (an edit removed them, or the message was deleted) whose
	// deletion is not confirmed yet: kept so that a retried edit or
	// deletion finishes it. Never shown to a reader.
	DroppedKeys []string

	// ThreadID is the id of the root message of the thread this message
	// replies in (contract section 18); "" for a root. Threads are one
	// level deep: a reply's ThreadID always names a root.
	ThreadID string
	// ReplyCount and LastReplyAt are a root's thread: how many replies it
	// has had (deleted ones stay in the thread as tombstones and are
	// counted) and when the newest was posted; 0 and zero on a reply and
	// on a root without replies.
	ReplyCount  int
	LastReplyAt time.Time
	// ReactionEmoji are the distinct emoji reacted with on the message, in
	// order of first use (at most MaxReactionEmoji); an emoji whose count
	// fell to zero may still be listed. ReactionShards is how many count
	// shards its reaction counts are spread over (0 reads as 1).
	ReactionEmoji  []string
	ReactionShards int
}

// MaxReactionEmoji is the most distinct emoji a message takes (contract
// section 18).
const MaxReactionEmoji = 50

// Reaction is one emoji's reactions on a message as one reader sees them.
type Reaction struct {
	Emoji string
	Count int
	// Me says whether the reader is one of those who reacted with it.
	Me bool
}

// Attachment is a file a message carries: an upload (package attachments)
// checked and attached when the message was posted or edited. Its object
// in storage is at Key; only the service reads it there.
type Attachment struct {
	// ID is the upload's id.
	ID          string
	Key         string
	Filename    string
	ContentType string
	Size        int64
	// AltText describes the file in the message's language; "" for none.
	AltText string
}

// Rev returns the message's revision: 1 for a message never edited.
func (m Message) Rev() int { return max(1, m.Revision) }

// Deleted reports whether the message is a tombstone.
func (m Message) Deleted() bool { return !m.DeletedAt.IsZero() }

// Translation is a message's content in one target language.
type Translation struct {
	MessageID      string
	Language       string
	Content        string
	SourceLanguage string
	CreatedAt      time.Time
	// Untranslated, when set, says why Content is the original text and
	// not a translation (the translator's answer was too long to store).
	Untranslated string
	// Revision is the revision of the message's content that was
	// translated; 0 (read as 1) when not known.
	Revision int
	// AltTexts are the translations of the message's attachments' alt
	// texts, parallel to Message.Attachments; nil when none was translated.
	AltTexts []string
}

// Request log outcomes.
const (
	OutcomeAccepted = "accepted"
	OutcomeReplayed = "replayed"
	OutcomeRejected = "rejected"
)

// Auth schemes of an inbound webhook.
const (
	SchemeStatic    = "static"
	SchemeSignature = "signature"
)

// RequestLog is one inbound webhook request as recorded for the workspace.
// It never holds a credential.
type RequestLog struct {
	ID             string
	WorkspaceID    string
	WebhookID      string
	ReceivedAt     time.Time
	Status         int
	Outcome        string
	ErrorCode      string
	MessageID      string
	IdempotencyKey string
	AuthScheme     string
	SourceIP       string
	UserAgent      string
	BodyBytes      int
	DurationMS     int64
}

// Page is one page of a list: the items and an opaque position after the
// last one, empty when there is no more.
//
// After holds the position right after each item: listing from After[i]
// starts with the item that follows Items[i]. A reader that can show only
// the first i+1 items (the HTTP layer ends a page before 1 MiB) continues
// from After[i], so no item is skipped or repeated. Next is "" or
// After[len(Items)-1]; a store may set Next with fewer items than asked
// for (its own page ended), never with none.
type Page[T any] struct {
	Items []T
	After []string
	Next  string
}

// Rest returns the position after the first n items of p, n >= 1: the
// start of the following page when a reader shows only those, "" when no
// item follows them. ok is false when p does not record that position.
func (p Page[T]) Rest(n int) (position string, ok bool) {
	switch {
	case n == len(p.Items):
		return p.Next, true
	case n < 1 || n > len(p.Items) || len(p.After) != len(p.Items) || p.After[n-1] == "":
		return "", false
	}
	return p.After[n-1], true
}

// AuditEvent is one entry of a workspace's audit trail: who did what to
// which webhook (or message), and when. Changes names the fields that changed, never
// their values, so that no secret can reach it.
type AuditEvent struct {
	ID          string
	WorkspaceID string
	ActorType   string
	ActorID     string
	Action      string
	TargetType  string
	TargetID    string
	Changes     []string
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// AuditRetention is how long audit events are kept (contract section 10).
const AuditRetention = 365 * 24 * time.Hour

// DeliveryRetention is how long the delivery log and the events it can
// redeliver are kept: the delivery store writes the one, the relay's event
// store the other.
const DeliveryRetention = 30 * 24 * time.Hour

// Prefixes of generated credentials, so that a leaked one is recognisable in
// a secret scanner.
const (
	APITokenPrefix      = "wsk_"
	SecretPrefix        = "whsec_"
	SigningSecretPrefix = "whsig_"
)

// MaxRateLimit bounds an outbound or support webhook's rate_limit (contract
// section 14: 1-1000 deliveries a second, or null); RateLimitMessage is the
// problem with one out of bounds, in the API's and the fixture file's words.
const (
	MaxRateLimit     = 1000
	RateLimitMessage = "The rate limit field must be an integer from 1 to 1000, or null."
)

// QueueSafe reports whether SQS accepts r in a message body: #x9 #xA #xD
// #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF. utf8.RuneError stands for an
// invalid byte here, which is refused as well.
func QueueSafe(r rune) bool {
	switch {
	case r == 0x9 || r == 0xA || r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// WebhookTargetType is an audit event's target_type for a webhook of kind
// (inbound, outbound, support).
func WebhookTargetType(kind string) string { return kind + "_webhook" }

// MessageView is a message as one reader sees it: the rooms', the
// members', the editors' and the realtime pushes' alike.
type MessageView struct {
	Message Message
	// Content is the translation into the reader's language when there is
	// one, else the original content.
	Content string
	// Language is the translation's language, else the message's
	// SourceLanguage.
	Language   string
	Translated bool
	// AltTexts are the attachments' alt texts in the reader's language,
	// parallel to Message.Attachments ("" for one shown as written); nil
	// reads each attachment's own AltText. They may be set while the
	// content is the original (Translated false).
	AltTexts []string
	// Reactions are the message's reactions with a count above zero, in
	// order of first use, Me for this view's reader; nil for none.
	Reactions []Reaction
}

// ShowsTranslation reports whether v shows any translation: of its
// content or of an alt text.
func (v MessageView) ShowsTranslation() bool { return v.Translated || v.AltTexts != nil }

// OriginalView is m as its author reads it: the original content in its
// source language (what rooms.ViewOf shows without translations).
func OriginalView(m Message) MessageView {
	return MessageView{Message: m, Content: m.Content, Language: m.SourceLanguage}
}
