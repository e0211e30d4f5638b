package dynamo

import "time"

// Item shapes of docs/data-model.md that are not join's (see rooms.go).
// Field names are the table's attribute names.

// workspaceItem: pk WS#<ws>, sk #META.
type workspaceItem struct {
	PK              string `dynamodbav:"pk"`
	SK              string `dynamodbav:"sk"`
	ID              string `dynamodbav:"id"`
	Name            string `dynamodbav:"name"`
	DefaultLanguage string `dynamodbav:"default_language"`
	WebhookQuota    int    `dynamodbav:"webhook_quota_per_minute"`
	// TranslationBudget is translation_chars_per_day (budget.go).
	TranslationBudget int64 `dynamodbav:"translation_chars_per_day"`
}

// userItem: pk WS#<ws>, sk USER#<user>.
type userItem struct {
	PK                string `dynamodbav:"pk"`
	SK                string `dynamodbav:"sk"`
	ID                string `dynamodbav:"id"`
	WorkspaceID       string `dynamodbav:"workspace_id"`
	Name              string `dynamodbav:"name"`
	PreferredLanguage string `dynamodbav:"preferred_language"`
	TokenHash         string `dynamodbav:"token_hash"`
	Role              string `dynamodbav:"role,omitempty"`
}

// apiTokenItem: pk APITOKEN#<sha256(token)>, sk #META. It repeats its
// user's name, role, language and channels, so that a workspace request is
// authenticated and authorized with one GetItem.
type apiTokenItem struct {
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

// channelItem: pk WS#<ws>, sk CHAN#<channel>.
type channelItem struct {
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

// inboundItem: pk IWH#<webhook>, sk #META, and its listed twin pk WS#<ws>,
// sk IWH#<sortTime(created)>#<webhook> (see webhooks.go). A deleted one is
// a tombstone: deleted_at set, enabled false, no secrets, a TTL.
type inboundItem struct {
	PK                string    `dynamodbav:"pk"`
	SK                string    `dynamodbav:"sk"`
	ID                string    `dynamodbav:"id"`
	WorkspaceID       string    `dynamodbav:"workspace_id"`
	ChannelID         string    `dynamodbav:"channel_id"`
	BotName           string    `dynamodbav:"bot_name"`
	BotAvatarURL      string    `dynamodbav:"bot_avatar_url"`
	SecretHash        string    `dynamodbav:"secret_hash"`
	SignatureRequired bool      `dynamodbav:"signature_required"`
	SigningSecret     string    `dynamodbav:"signing_secret"`
	Enabled           bool      `dynamodbav:"enabled"`
	CreatedAt         time.Time `dynamodbav:"created_at"`
	UpdatedAt         time.Time `dynamodbav:"updated_at"`
	rotated
	DeletedAt *time.Time `dynamodbav:"deleted_at,omitempty"`
}

// rotated holds the secrets a rotation replaced, valid until
// previous_expires_at (checked in code, never by TTL).
type rotated struct {
	PreviousSecretHash    string     `dynamodbav:"previous_secret_hash,omitempty"`
	PreviousSigningSecret string     `dynamodbav:"previous_signing_secret,omitempty"`
	PreviousExpiresAt     *time.Time `dynamodbav:"previous_expires_at,omitempty"`
}

// outboundItem: pk WS#<ws>, sk OWH#<sortTime(created)>#<id> (listed), and
// its twin pk OWH#<id>, sk #META (found by id).
type outboundItem struct {
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
	rotated
}

// supportItem: pk WS#<ws>, sk SWH#<sortTime(created)>#<id> (listed), and
// its twin pk SWH#<id>, sk #META (found by id).
type supportItem struct {
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
	rotated
}
