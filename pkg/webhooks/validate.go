package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/netguard"
)

// EventTypes are the event types an outbound webhook may subscribe to
// (contract section 11), in the contract's order: every type an outbound
// webhook can receive. room.message_created goes to support webhooks only,
// so a subscription to it would never deliver anything and is refused.
var EventTypes = events.OutboundTypes

// Field bounds of contract section 10.
const (
	MaxBotName = 80
	MaxName    = 100
)

// reader reads fields of a create (absent or null: not given) or of a
// patch (absent: not given; null: cleared where a field may be empty, else
// a type error), collecting field errors Laravel style.
type reader struct {
	obj   jsonbody.Object
	v     chat.Validation
	patch bool
}

func (r *reader) present(name string) bool {
	raw, ok := r.obj[name]
	if !ok {
		return false
	}
	return r.patch || !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// str reads a string field; nullable lets a patch clear it with null.
func (r *reader) str(name, label string, nullable bool) (string, bool) {
	if !r.present(name) {
		return "", false
	}
	raw := r.obj[name]
	if isNull(raw) && nullable {
		return "", true
	}
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		r.v.Add(name, "The "+label+" field must be a string.")
		return "", false
	}
	return s, true
}

func (r *reader) boolean(name, label string) (bool, bool) {
	if !r.present(name) {
		return false, false
	}
	var b bool
	if raw := r.obj[name]; isNull(raw) || json.Unmarshal(raw, &b) != nil {
		r.v.Add(name, "The "+label+" field must be true or false.")
		return false, false
	}
	return b, true
}

// text reads a required one-line text of 1 to max characters after
// trimming.
func (r *reader) text(name, label string, max int) (string, bool) {
	s, ok := r.str(name, label, false)
	if !ok {
		if !r.v.Has(name) && !r.patch {
			r.v.Add(name, "The "+label+" field is required.")
		}
		return "", false
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		r.v.Add(name, "The "+label+" field is required.")
	case utf8.RuneCountInString(s) > max:
		r.v.Add(name, "The "+label+" field must not be greater than "+itoa(max)+" characters.")
	case !oneLine(s):
		r.v.Add(name, "The "+label+" field must not contain control characters.")
	default:
		return s, true
	}
	return "", false
}

func itoa(n int) string { return strconv.Itoa(n) }

// oneLine refuses control and format characters (but the emoji joiner),
// line and paragraph separators, and noncharacters such as U+FFFF: a name is
// one line of visible text.
func oneLine(s string) bool {
	for _, c := range s {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' || unicode.Is(unicode.Cf, c) && c != '\u200d' ||
			c&0xfffe == 0xfffe || c >= 0xfdd0 && c <= 0xfdef {
			return false
		}
	}
	return true
}

// asciiURL reports whether s has only printable ASCII without spaces: a
// stored URL is sent as is, so it must already be encoded.
func asciiURL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func (r *reader) avatarURL() (string, bool) {
	s, ok := r.str("bot_avatar_url", "bot avatar url", true)
	if !ok || s == "" {
		return "", ok
	}
	u, err := url.Parse(s)
	if len(s) > netguard.MaxURLLen || !asciiURL(s) || err != nil || !strings.EqualFold(u.Scheme, "https") ||
		u.Host == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		r.v.Add("bot_avatar_url", "The bot avatar url field must be a valid https URL.")
		return "", false
	}
	return s, true
}

func (r *reader) channel() (string, bool) {
	s, ok := r.str("channel_id", "channel id", false)
	if !ok {
		if !r.v.Has("channel_id") && !r.patch {
			r.v.Add("channel_id", "The channel id field is required.")
		}
		return "", false
	}
	if !chat.ValidID(s) {
		r.v.Add("channel_id", ErrChannelMessage)
		return "", false
	}
	return s, true
}

// ErrChannelMessage is the 422 of a channel_id that names no channel of the
// workspace.
const ErrChannelMessage = "The selected channel id is invalid."

func (r *reader) target(allow []netip.Prefix) (string, bool) {
	s, ok := r.str("url", "url", false)
	if !ok {
		if !r.v.Has("url") && !r.patch {
			r.v.Add("url", "The url field is required.")
		}
		return "", false
	}
	err := netguard.CheckTarget(s, allow)
	if err == nil && !asciiURL(s) {
		err = netguard.ErrNotAbsolute
	}
	switch {
	case err == nil:
		return s, true
	case errors.Is(err, netguard.ErrURLTooLong):
		r.v.Add("url", "The url field must not be greater than 2048 characters.")
	case errors.Is(err, netguard.ErrScheme):
		r.v.Add("url", "The url field must be an https URL.")
	case errors.Is(err, netguard.ErrUserInfo):
		r.v.Add("url", "The url field must not contain user information.")
	case errors.Is(err, netguard.ErrBlockedRange):
		r.v.Add("url", "The url field must not point to a private or reserved address.")
	default:
		r.v.Add("url", "The url field must be a valid URL.")
	}
	return "", false
}

func (r *reader) events() ([]string, bool) {
	if !r.present("events") {
		if !r.patch {
			r.v.Add("events", "The events field is required.")
		}
		return nil, false
	}
	var evs []string
	if raw := r.obj["events"]; isNull(raw) || json.Unmarshal(raw, &evs) != nil {
		r.v.Add("events", "The events field must be an array of event types.")
		return nil, false
	}
	if len(evs) == 0 {
		r.v.Add("events", "The events field must have at least one event type.")
		return nil, false
	}
	seen := map[string]bool{}
	for _, e := range evs {
		known := false
		for _, t := range EventTypes {
			known = known || e == t
		}
		switch {
		case !known:
			r.v.Add("events", "The events field must only contain: "+strings.Join(EventTypes, ", ")+".")
			return nil, false
		case seen[e]:
			r.v.Add("events", "The events field has a duplicate value.")
			return nil, false
		}
		seen[e] = true
	}
	return evs, true
}

// decode reads the fields of kind from obj onto w and returns the names of
// the fields that were given (create) or that changed (patch).
func decode(kind Kind, obj jsonbody.Object, w *Webhook, patch bool, allow []netip.Prefix) ([]string, error) {
	r := &reader{obj: obj, patch: patch}
	var changed []string
	set := func(name string, differs bool) {
		if differs || !patch {
			changed = append(changed, name)
		}
	}
	switch kind {
	case Inbound:
		if s, ok := r.channel(); ok {
			set("channel_id", s != w.ChannelID)
			w.ChannelID = s
		}
		if s, ok := r.text("bot_name", "bot name", MaxBotName); ok {
			set("bot_name", s != w.BotName)
			w.BotName = s
		}
		if s, ok := r.avatarURL(); ok {
			set("bot_avatar_url", s != w.BotAvatarURL)
			w.BotAvatarURL = s
		}
		if b, ok := r.boolean("signature_required", "signature required"); ok {
			set("signature_required", b != w.SignatureRequired)
			w.SignatureRequired = b
		}
		if b, ok := r.boolean("enabled", "enabled"); ok {
			set("enabled", b != w.Enabled)
			w.Enabled = b
		}
	case Outbound, Support:
		if s, ok := r.text("name", "name", MaxName); ok {
			set("name", s != w.Name)
			w.Name = s
		}
		if s, ok := r.target(allow); ok {
			set("url", s != w.URL)
			w.URL = s
		}
		if kind == Outbound {
			if evs, ok := r.events(); ok {
				set("events", strings.Join(evs, ",") != strings.Join(w.Events, ","))
				w.Events = evs
			}
		}
		if b, ok := r.boolean("active", "active"); ok {
			set("active", b != w.Active)
			if b != w.Active {
				w.DisabledReason = "" // an admin's change ends the delivery function's reason
			}
			w.Active = b
		}
		if n, ok := r.rateLimit(); ok {
			set("rate_limit", n != w.RateLimit)
			w.RateLimit = n
		}
	}
	return changed, r.v.Err()
}
