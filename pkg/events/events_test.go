package events_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

func TestRecipients(t *testing.T) {
	out := func(id string, active bool, evs ...string) events.Webhook {
		return events.Webhook{ID: id, Kind: events.KindOutbound, Active: active, Events: evs}
	}
	sup := func(id string, active bool) events.Webhook {
		return events.Webhook{ID: id, Kind: events.KindSupport, Active: active}
	}
	hooks := []events.Webhook{
		out("o-msg", true, events.MessageCreated),
		out("o-all", true, events.Types...),
		out("o-off", false, events.Types...),
		out("o-room", true, events.RoomCreated, events.RoomClosed),
		sup("s-on", true),
		sup("s-off", false),
		{ID: "odd", Kind: "inbound", Active: true, Events: events.Types},
	}
	cases := map[string][]string{
		events.MessageCreated:         {"o-msg", "o-all"},
		events.MessageTranslated:      {"o-all"},
		events.RoomCreated:            {"o-all", "o-room", "s-on"},
		events.RoomGuestJoined:        {"o-all", "s-on"},
		events.RoomMessageCreated:     {"s-on"},
		events.RoomClosed:             {"o-all", "o-room", "s-on"},
		events.MessageDeleted:         {"o-all"},
		events.RoomMessageUpdated:     {"s-on"},
		events.MessageReactionAdded:   {"o-all"},
		events.MessageReactionRemoved: {"o-all"},
		"message.unknown":             nil,
	}
	for typ, want := range cases {
		var got []string
		for _, w := range events.Recipients(typ, hooks) {
			got = append(got, w.ID)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("Recipients(%s) = %v, want %v", typ, got, want)
		}
	}
}

func TestDeriveIDStable(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a, b := events.DeriveID(at, "x", "y"), events.DeriveID(at, "x", "y")
	if a != b || !chat.ValidID(a) {
		t.Fatalf("DeriveID: got %s and %s, want the same valid ULID", a, b)
	}
	if c := events.DeriveID(at, "xy"); c == a {
		t.Fatalf("DeriveID(xy) = DeriveID(x, y) = %s, want different", c)
	}
	ev := events.Event{ID: a, CreatedAt: at}
	if events.DeliveryID(ev, "w1") == events.DeliveryID(ev, "w2") {
		t.Fatal("DeliveryID: same id for two webhooks")
	}
	if !strings.HasPrefix(events.DeliveryID(ev, "w1"), a[:10]) {
		t.Fatalf("DeliveryID %s not timed like its event %s", events.DeliveryID(ev, "w1"), a)
	}
}

func message(content string) chat.Message {
	return chat.Message{ID: "01JD0000000000000000000000", WorkspaceID: "01JD0000000000000000000001", ChannelID: "01JD0000000000000000000002",
		Author:  chat.Author{Type: chat.AuthorGuest, ID: "01JD0000000000000000000003", Name: "Ana"},
		Content: content, SourceLanguage: "es", CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func TestEncodeSmall(t *testing.T) {
	m := events.MessageOf(message("hola <b>\u2028 😀 \uffff"))
	b, err := events.Encode(events.Event{ID: "E", Type: events.MessageCreated, WorkspaceID: "W", CreatedAt: time.Unix(0, 0), Data: m})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID, Type, WorkspaceID, CreatedAt string
		Data                             map[string]any
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("envelope is not JSON: %v", err)
	}
	if got.Data["content"] != m.Content || got.Data["truncated"] != nil || got.Data["author"].(map[string]any)["avatar_url"] != nil {
		t.Fatalf("data = %v", got.Data)
	}
	if !strings.Contains(string(b), `\uffff`) || !strings.Contains(string(b), `\u003c`) {
		t.Fatalf("envelope %s: want U+FFFF and '<' escaped", b)
	}
	if !strings.Contains(string(b), `"created_at":"1970-01-01T00:00:00.000Z"`) {
		t.Fatalf("envelope %s: want created_at in RFC 3339 with milliseconds", b)
	}
}

// TestEnvelopeTimeToTheMillisecond: every event type's created_at carries
// three digits of milliseconds, a whole second's too, and says the moment
// its id's time part does. Before, created_at was cut to the second, so
// the events of one room within a second could not be ordered.
func TestEnvelopeTimeToTheMillisecond(t *testing.T) {
	layout := regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)
	for _, at := range []time.Time{
		time.Date(2026, 11, 22, 10, 0, 0, 123_456_789, time.UTC),
		time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("CET", 3600)),
		time.Date(2026, 11, 22, 10, 0, 0, 999_999_999, time.UTC),
	} {
		for _, typ := range append(slices.Clone(events.Types), events.WebhookTest) {
			id := events.DeriveID(at, typ, "x")
			b, err := events.Encode(events.Event{ID: id, Type: typ, WorkspaceID: "W", CreatedAt: at, Data: events.WebhookRef{WebhookID: "x"}})
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				CreatedAt string `json:"created_at"`
			}
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatal(err)
			}
			if !layout.MatchString(env.CreatedAt) {
				t.Fatalf("%s at %v: created_at %q, want RFC 3339 in UTC with three digits of milliseconds", typ, at, env.CreatedAt)
			}
			got, _ := time.Parse(time.RFC3339Nano, env.CreatedAt)
			idAt, ok := events.IDTime(id)
			if !ok || !got.Equal(idAt) || !got.Equal(at.Truncate(time.Millisecond)) {
				t.Fatalf("%s: created_at %s, id time %v, want both %v", typ, env.CreatedAt, idAt, at.Truncate(time.Millisecond))
			}
		}
	}
}

// TestEncodeCaps fills the envelope with the worst content: '<' escapes to
// six bytes, U+FFFF to six, U+2028 to six, emoji are four.
func TestEncodeCaps(t *testing.T) {
	worst := strings.Repeat("<\u2028😀\uffff", 10_000) // 40,000 characters
	for _, tc := range []struct {
		name string
		data func() any
	}{
		{"message.translated", func() any {
			m := events.MessageOf(message(worst))
			m.Translations = map[string]string{"en": worst, "fr": worst, "de": strings.Repeat("a", 40_000)}
			return m
		}},
		{"room.message_created", func() any {
			m := events.MessageOf(message(worst))
			m.Translations = map[string]string{"en": worst} // a message's data never holds them; the cut still covers it
			return events.RoomMessage{Room: events.RoomOf(chat.Room{ID: "R"}, time.Time{}, time.Time{}), Message: m}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := events.Encode(events.Event{ID: "E", Type: tc.name, WorkspaceID: "W", Data: tc.data()})
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > events.MaxBytes || len(b) < events.MaxBytes-64 {
				t.Fatalf("got %d bytes, want at most %d and close to it", len(b), events.MaxBytes)
			}
			for _, r := range string(b) {
				if !chat.QueueSafe(r) {
					t.Fatalf("envelope holds U+%04X, which SQS refuses", r)
				}
			}
			var env struct {
				Data struct {
					Truncated bool `json:"truncated"`
					Message   *struct {
						Truncated bool `json:"truncated"`
					} `json:"message"`
				} `json:"data"`
			}
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			truncated := env.Data.Truncated
			if env.Data.Message != nil {
				truncated = env.Data.Message.Truncated
			}
			if !truncated {
				t.Fatal("got no truncated flag, want true")
			}
		})
	}
}

// TestEncodeTruncates: the worst 40,000 characters (220,000 bytes) fit
// whole; a message with its translations does not, and is cut.
func TestEncodeTruncates(t *testing.T) {
	worst := strings.Repeat("<\u2028😀\uffff", 10_000)
	b, err := events.Encode(events.Event{ID: "E", Type: events.MessageCreated, Data: events.MessageOf(message(worst))})
	if err != nil || strings.Contains(string(b), "truncated") || !strings.Contains(string(b), strings.Repeat(`\u003c\u2028😀\uffff`, 10_000)) {
		t.Fatalf("message.created of the worst 40,000 characters: %d bytes, %v; want whole, not truncated", len(b), err)
	}
	tm := events.MessageOf(message(worst))
	tm.Translations = map[string]string{"fr": worst}
	b, err = events.Encode(events.Event{ID: "E", Type: events.MessageTranslated, Data: tm})
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Data events.Message }
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	if !env.Data.Truncated || !strings.HasPrefix(worst, env.Data.Content) || !strings.HasPrefix(worst, env.Data.Translations["fr"]) || !utf8.ValidString(env.Data.Content) {
		t.Fatalf("truncated=%v, content of %d bytes not a prefix of the original", env.Data.Truncated, len(env.Data.Content))
	}
	if n := utf8.RuneCountInString(env.Data.Content); n < 20_000 || n >= 40_000 {
		t.Fatalf("kept %d characters, want most of what fits", n)
	}
	// Translated alt texts are cut with the translations.
	tm.AltTexts = map[string][]string{"fr": {worst, "", "config.yaml"}}
	b, err = events.Encode(events.Event{ID: "E", Type: events.MessageTranslated, Data: tm})
	if err != nil || len(b) > events.MaxBytes {
		t.Fatalf("with alt texts: %d bytes, %v", len(b), err)
	}
	env.Data = events.Message{}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	alts := env.Data.AltTexts["fr"]
	if !env.Data.Truncated || len(alts) != 3 || !strings.HasPrefix(worst, alts[0]) || !utf8.ValidString(alts[0]) || alts[0] == "" ||
		alts[1] != "" || alts[2] != "config.yaml" {
		t.Fatalf("with alt texts: truncated=%v, alt texts of %d, %q, %q", env.Data.Truncated, len(alts[0]), alts[1], alts[2])
	}
	// At the edge: content that fits exactly is kept whole.
	fits := strings.Repeat("a", 40_000)
	b, _ = events.Encode(events.Event{ID: "E", Type: events.MessageCreated, Data: events.MessageOf(message(fits))})
	if strings.Contains(string(b), "truncated") {
		t.Fatal("40,000 ASCII characters were truncated, want whole")
	}
}

func TestDeliveriesInlineOrRefer(t *testing.T) {
	hooks := []events.Webhook{{ID: "W", Kind: events.KindOutbound, Key: "OWH#k", Active: true, Events: []string{events.RoomClosed}}}
	ev := events.Event{ID: "E", Type: events.RoomClosed, WorkspaceID: "WS"}
	for _, n := range []int{10, events.InlineMax, events.InlineMax + 1} {
		body := []byte(`{"x":"` + strings.Repeat("a", n-8) + `"}`)
		ds := events.Deliveries(ev, body, hooks, "WS")
		if len(ds) != 1 {
			t.Fatalf("%d deliveries", len(ds))
		}
		q, err := ds[0].MarshalQueue()
		if err != nil {
			t.Fatal(err)
		}
		back, err := events.UnmarshalQueue(q)
		if err != nil || back.ID != ds[0].ID || back.WebhookKey != "OWH#k" || back.EventID != "E" {
			t.Fatalf("round trip %+v %v", back, err)
		}
		inline := len(body) <= events.InlineMax
		if inline != (back.Body != nil) || (inline && string(back.Body) != string(body)) {
			t.Fatalf("envelope of %d bytes: carried %v, want %v", len(body), back.Body != nil, inline)
		}
	}
	if _, err := events.UnmarshalQueue(`{"d":{"id":"D"}}`); err == nil {
		t.Fatal("UnmarshalQueue without webhook and event: got nil error")
	}
}
