package attachments

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

// Bounds of contract section 17.
const (
	// MaxSize is the largest file, 25 MB counted in decimal as the
	// contract writes it (docs/decisions.md, "Attachments").
	MaxSize int64 = 25_000_000
	// MaxPerMessage is the most attachments one message carries.
	MaxPerMessage = 10
	// MaxFilename is the longest filename, in characters.
	MaxFilename = 255
	// MaxAltText is the longest alt text, in characters.
	MaxAltText = 1000
	// UploadTTL is how long an upload's presigned POST is valid, and how
	// long after its creation an upload can be attached.
	UploadTTL = 15 * time.Minute
	// ViewURLTTL is how long a view's presigned GET stays valid (at least
	// 10 minutes, contract section 17).
	ViewURLTTL = 15 * time.Minute
	// EventURLTTL is how long an event's presigned GET stays valid.
	EventURLTTL = 24 * time.Hour
	// UnattachedTTL is how long the bucket keeps an object never attached
	// (its lifecycle rule, template.yaml).
	UnattachedTTL = 24 * time.Hour
	// PeekBytes is how many first bytes of a file are checked against its
	// declared type.
	PeekBytes = 512
)

// Tag of an object: set to TagUnattached by the upload's form, to
// TagAttached when a message takes it. The bucket's lifecycle expires
// objects still tagged unattached after UnattachedTTL.
const (
	TagKey        = "state"
	TagUnattached = "unattached"
	TagAttached   = "attached"
)

// MetaFilename is the user metadata that holds an upload's filename,
// percent-encoded (url.PathEscape): its form fixes it, so a stored file
// names itself without a read of its upload.
const MetaFilename = "filename"

// KeyPrefix starts every object key; the IAM policies name it.
const KeyPrefix = "a/"

// Key is where upload id of channel ch in workspace ws is stored: scoped by
// workspace and channel, so that an upload of another channel is not
// found under this one's prefix.
func Key(ws, ch, id string) string { return KeyPrefix + ws + "/" + ch + "/" + id }

// Type is an accepted content type: whether it is shown inline, and the
// check of a file's first bytes.
type Type struct {
	// Inline types (images) are served with their type; every other type
	// is served as a download.
	Inline bool
	// Matches reports whether a file's first bytes (at most PeekBytes,
	// all of a shorter file) can start a file of the type.
	Matches func(head []byte, size int64) bool
}

// Types are the accepted content types (contract section 17).
var Types = map[string]Type{
	"image/png":        {Inline: true, Matches: isPNG},
	"image/jpeg":       {Inline: true, Matches: isJPEG},
	"image/gif":        {Inline: true, Matches: isGIF},
	"image/webp":       {Inline: true, Matches: isWEBP},
	"application/pdf":  {Matches: isPDF},
	"text/plain":       {Matches: isText},
	"text/csv":         {Matches: isText},
	"application/json": {Matches: isJSON},
	"application/zip":  {Matches: isZip},
}

// TypeNames lists Types in the order the API documents them.
var TypeNames = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain",
	"text/csv", "application/json", "application/zip"}

// Inline reports whether files of contentType are shown inline.
func Inline(contentType string) bool { return Types[contentType].Inline }

// CheckFilename returns the problem with a filename, or "": 1 to 255
// characters of valid UTF-8, no path separator, no control, format or
// line-separator character (they hide a name's real end, U+202E), not "."
// or "..".
func CheckFilename(name string) string {
	switch {
	case name == "":
		return "The filename field is required."
	case !utf8.ValidString(name):
		return "The filename field must be a valid UTF-8 string."
	case utf8.RuneCountInString(name) > MaxFilename:
		return fmt.Sprintf("The filename field must not be greater than %d characters.", MaxFilename)
	case strings.ContainsAny(name, `/\`):
		return "The filename field must not contain a path separator (/ or \\)."
	case strings.IndexFunc(name, hidden) >= 0:
		return "The filename field must not contain control or invisible formatting characters."
	case strings.Trim(name, ". ") == "":
		return "The filename field must name a file."
	}
	return ""
}

func hidden(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError || r >= 0xFFFE && r <= 0xFFFF
}

// CheckContentType returns the problem with a declared type, or "".
func CheckContentType(ct string) string {
	if _, ok := Types[ct]; !ok {
		return "The content type field must be one of " + strings.Join(TypeNames, ", ") + "."
	}
	return ""
}

// CheckSize returns the problem with a declared size, or "".
func CheckSize(size int64) string {
	if size < 1 || size > MaxSize {
		return fmt.Sprintf("The size field must be a whole number of bytes from 1 to %d (25 MB).", MaxSize)
	}
	return ""
}

// CheckAltText returns the problem with an alt text, or "".
func CheckAltText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be a valid UTF-8 string"
	case utf8.RuneCountInString(s) > MaxAltText:
		return fmt.Sprintf("must not be greater than %d characters", MaxAltText)
	}
	return ""
}

// Owner names who may attach an upload, from the author its message will
// have: "user:<id>", "guest:<id>" or "bot:<webhook id>".
func Owner(a chat.Author) string { return a.Type + ":" + a.ID }

// Upload is a file announced for upload: the form its sender posts to
// storage, and what attaching it checks against.
type Upload struct {
	ID          string
	WorkspaceID string
	ChannelID   string
	Owner       string
	Filename    string
	ContentType string
	Size        int64
	CreatedAt   time.Time
	// ExpiresAt ends the form's validity and the time to attach it.
	ExpiresAt time.Time
	// MessageID is the message it is attached to; "" until then.
	MessageID string
}

// Key is where the upload's file is stored.
func (u Upload) Key() string { return Key(u.WorkspaceID, u.ChannelID, u.ID) }

// Form is a presigned POST: the URL to send the file to and the form
// fields to send with it (the file last).
type Form struct {
	URL       string
	Fields    map[string]string
	ExpiresAt time.Time
}

// Link is a presigned GET of an attachment.
type Link struct {
	URL       string
	ExpiresAt time.Time
}

// Ref is one attachment of a post or an edit as the client names it.
type Ref struct {
	UploadID string
	AltText  string
}
