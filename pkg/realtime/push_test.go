package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/realtime"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

type fakeStore struct {
	mu      sync.Mutex
	conns   []realtime.Connection
	queries int
	deleted []string
	put     []realtime.Connection
}

func (f *fakeStore) Connections(_ context.Context, ch string, now time.Time) ([]realtime.Connection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	var out []realtime.Connection
	for _, c := range f.conns {
		if c.ChannelID == ch && c.Live(now) {
			out = append(out, c)
		}
	}
	return out, nil
}
func (f *fakeStore) PutConnection(_ context.Context, c realtime.Connection) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.put = append(f.put, c)
	return nil
}
func (f *fakeStore) DeleteConnection(_ context.Context, ch, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	return nil
}

type fakeSender struct {
	mu     sync.Mutex
	sent   map[string][]string
	closed []string
	gone   map[string]bool
}

func (f *fakeSender) Send(_ context.Context, id string, b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone[id] {
		return fmt.Errorf("post: %w", realtime.ErrGone)
	}
	if f.sent == nil {
		f.sent = map[string][]string{}
	}
	f.sent[id] = append(f.sent[id], string(b))
	return nil
}
func (f *fakeSender) Close(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = append(f.closed, id)
	return nil
}

type fakeTranslations struct {
	calls, keys int
	stored      map[string]string   // language -> content
	alts        map[string][]string // language -> alt texts
}

func (f *fakeTranslations) Translations(_ context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
	f.calls++
	f.keys += len(ids)
	out := map[string]map[string]chat.Translation{}
	for i, id := range ids {
		if c, ok := f.stored[langs[i]]; ok {
			if out[id] == nil {
				out[id] = map[string]chat.Translation{}
			}
			out[id][langs[i]] = chat.Translation{MessageID: id, Language: langs[i], Content: c, AltTexts: f.alts[langs[i]]}
		}
	}
	return out, nil
}

func encode(v chat.MessageView) ([]byte, error) {
	return json.Marshal(map[string]any{"id": v.Message.ID, "content": v.Content, "language": v.Language, "translated": v.Translated})
}

const chanID = "01JCHAN0000000000000000000"

func message(langs ...string) chat.Message {
	return chat.Message{ID: "01JMSG00000000000000000000", ChannelID: chanID, Content: "hello <b>", SourceLanguage: "en",
		CreatedAt: t0, TranslatedLanguages: langs}
}

// TestFanOutBudget: 100 connections in 5 languages cost one connection
// Query and one translation read of 5 keys, not 100, and each connection
// gets exactly one push per message state, in its language.
func TestFanOutBudget(t *testing.T) {
	langs := []string{"en", "es", "fr", "de", "ja"}
	store := &fakeStore{}
	for i := range 100 {
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%03d", i), ChannelID: chanID,
			Kind: realtime.KindMember, SubjectID: fmt.Sprint(i), Language: langs[i%5], ExpiresAt: t0.Add(time.Hour)})
	}
	tr := &fakeTranslations{stored: map[string]string{"es": "hola", "fr": "salut", "de": "hallo", "ja": "こんにちは"}}
	sender := &fakeSender{}
	p := &realtime.Pusher{Store: store, Translations: tr, Sender: sender, Encode: encode, Now: func() time.Time { return t0 }}
	ctx := context.Background()

	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageStored, Message: message()}); err != nil {
		t.Fatal(err)
	}
	if store.queries != 1 || tr.calls != 0 {
		t.Fatalf("insert: %d queries, %d translation reads, want 1 and 0", store.queries, tr.calls)
	}
	for id, got := range sender.sent {
		if len(got) != 1 || !strings.Contains(got[0], `"type":"message"`) || !strings.Contains(got[0], `"translated":false`) {
			t.Fatalf("insert push to %s: %q, want one original", id, got)
		}
	}
	if len(sender.sent) != 100 {
		t.Fatalf("insert pushed to %d connections, want 100", len(sender.sent))
	}

	before := message()
	after := message("es", "fr", "de", "ja")
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageChanged, Message: after, Before: before}); err != nil {
		t.Fatal(err)
	}
	if store.queries != 2 || tr.calls != 1 || tr.keys != 4 {
		t.Fatalf("update: %d queries, %d translation reads of %d keys, want 2, 1, 4", store.queries, tr.calls, tr.keys)
	}
	for i, c := range store.conns {
		got := sender.sent[c.ID]
		want := 2
		if langs[i%5] == "en" {
			want = 1 // the source language's reader has nothing new
		}
		if len(got) != want {
			t.Fatalf("%s (%s): %d pushes, want %d: %q", c.ID, c.Language, len(got), want, got)
		}
		if want == 2 && (!strings.Contains(got[1], `"type":"message.updated"`) || !strings.Contains(got[1], `"language":"`+c.Language+`"`)) {
			t.Fatalf("%s: update %s, want message.updated in %s", c.ID, got[1], c.Language)
		}
	}
	// The same state again (a MODIFY that adds nothing for anyone) pushes nothing.
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageChanged, Message: after, Before: after}); err != nil {
		t.Fatal(err)
	}
	if n := len(sender.sent["c001"]); n != 2 {
		t.Fatalf("repeated state: c001 has %d pushes, want 2", n)
	}
}

func TestPushDropsGoneConnectionsAndClosesRooms(t *testing.T) {
	room, other := "01JROOM0000000000000000000", "01JROOM0000000000000000001"
	store := &fakeStore{conns: []realtime.Connection{
		{ID: "g1", ChannelID: chanID, Kind: realtime.KindGuest, RoomID: room, Language: "es", ExpiresAt: t0.Add(time.Hour)},
		{ID: "g2", ChannelID: chanID, Kind: realtime.KindGuest, RoomID: other, Language: "es", ExpiresAt: t0.Add(time.Hour)},
		{ID: "m1", ChannelID: chanID, Kind: realtime.KindMember, Language: "en", ExpiresAt: t0.Add(time.Hour)},
		{ID: "old", ChannelID: chanID, Kind: realtime.KindMember, Language: "en", ExpiresAt: t0},
	}}
	sender := &fakeSender{gone: map[string]bool{"m1": true}}
	p := &realtime.Pusher{Store: store, Translations: &fakeTranslations{}, Sender: sender, Encode: encode, Now: func() time.Time { return t0 }}
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageStored, Message: message()}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(store.deleted) != "[m1]" || sender.sent["old"] != nil {
		t.Fatalf("deleted %v, sent to expired %v; want [m1] and nothing", store.deleted, sender.sent["old"])
	}
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.RoomClosed, ChannelID: chanID, RoomID: room}); err != nil {
		t.Fatal(err)
	}
	if got := sender.sent["g1"]; len(got) != 2 || got[1] != `{"type":"room.closed"}` {
		t.Fatalf("g1 got %q, want the message then room.closed", got)
	}
	if len(sender.sent["g2"]) != 1 || fmt.Sprint(sender.closed) != "[g1]" || fmt.Sprint(store.deleted) != "[m1 g1]" {
		t.Fatalf("g2 %q closed %v deleted %v: want only g1 closed and deleted", sender.sent["g2"], sender.closed, store.deleted)
	}
}

// TestOversizedPushIsANotice: a view past MaxMessageBytes (40,000 '<'
// escape to 6 bytes each, twice) becomes a notice naming the message.
func TestOversizedPushIsANotice(t *testing.T) {
	store := &fakeStore{conns: []realtime.Connection{{ID: "m1", ChannelID: chanID, Language: "en", ExpiresAt: t0.Add(time.Hour)}}}
	sender := &fakeSender{}
	p := &realtime.Pusher{Store: store, Translations: &fakeTranslations{}, Sender: sender, Now: func() time.Time { return t0 },
		Encode: func(v chat.MessageView) ([]byte, error) {
			return json.Marshal(map[string]string{"content": v.Content, "original_content": v.Message.Content})
		}}
	for _, tc := range []struct {
		content string
		want    string
	}{
		{strings.Repeat("<", 10000), `"type":"message","data"`},    // 120 KB: fits
		{strings.Repeat("<", 11000), `"type":"message.too_large"`}, // 132 KB: does not
		{strings.Repeat("\u2028", 40000), `"type":"message.too_large"`},
	} {
		m := message()
		m.Content = tc.content
		sender.sent = nil
		if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageStored, Message: m}); err != nil {
			t.Fatal(err)
		}
		got := sender.sent["m1"][0]
		if !strings.Contains(got, tc.want) || len(got) > realtime.MaxMessageBytes {
			t.Fatalf("%d bytes of content: push of %d bytes %.80q, want %s within %d", len(tc.content), len(got), got, tc.want, realtime.MaxMessageBytes)
		}
	}
}

// An edit pushes the new original to every reader, in place of any
// translation of the earlier revision; its translation then lands as a
// message.updated; a deletion pushes message.deleted with the id only.
func TestPushEditsAndDeletions(t *testing.T) {
	store := &fakeStore{}
	for i, lang := range []string{"en", "es"} {
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%d", i), ChannelID: chanID,
			Kind: realtime.KindMember, SubjectID: fmt.Sprint(i), Language: lang, ExpiresAt: t0.Add(time.Hour)})
	}
	tr := &fakeTranslations{stored: map[string]string{"es": "hola otra vez"}}
	sender := &fakeSender{}
	p := &realtime.Pusher{Store: store, Translations: tr, Sender: sender, Encode: encode, Now: func() time.Time { return t0 }}
	ctx := context.Background()
	before := message("es")
	edited := message()
	edited.Content, edited.Revision, edited.EditedAt = "hello again", 2, t0.Add(time.Minute)
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageEdited, Message: edited, Before: before}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c0", "c1"} {
		got := sender.sent[id]
		if len(got) != 1 || !strings.Contains(got[0], `"type":"message.updated"`) || !strings.Contains(got[0], `"content":"hello again"`) ||
			!strings.Contains(got[0], `"translated":false`) {
			t.Fatalf("%s after the edit: %q, want the new original", id, got)
		}
	}
	translated := edited
	translated.TranslatedLanguages = []string{"es"}
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageChanged, Message: translated, Before: edited}); err != nil {
		t.Fatal(err)
	}
	if got := sender.sent["c1"]; len(got) != 2 || !strings.Contains(got[1], `"content":"hola otra vez"`) {
		t.Fatalf("es reader after the translation: %q, want the new translation", got)
	}
	gone := edited
	gone.Content, gone.DeletedAt = "", t0.Add(2*time.Minute)
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageDeleted, Message: gone, Before: translated}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c0", "c1"} {
		got := sender.sent[id]
		if last := got[len(got)-1]; last != `{"type":"message.deleted","data":{"id":"`+gone.ID+`"}}` {
			t.Fatalf("%s after the deletion: %s", id, last)
		}
	}
}

// TestPushCarriesAltTexts: the translation of a message that is only an
// attachment lands as a message.updated whose alt text is in the reader's
// language, as the API renders it (its content, the original, is not
// translated); the source language's reader gets nothing new.
func TestPushCarriesAltTexts(t *testing.T) {
	store := &fakeStore{}
	for i, lang := range []string{"en", "es"} {
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%d", i), ChannelID: chanID,
			Kind: realtime.KindMember, SubjectID: fmt.Sprint(i), Language: lang, ExpiresAt: t0.Add(time.Hour)})
	}
	tr := &fakeTranslations{stored: map[string]string{"es": ""}, alts: map[string][]string{"es": {"Captura de config.yaml"}}}
	sender := &fakeSender{}
	p := &realtime.Pusher{Store: store, Translations: tr, Sender: sender, Encode: messageview.Renderer{}.Encode, Now: func() time.Time { return t0 }}
	before := message()
	before.Content, before.Attachments = "", []chat.Attachment{{ID: "U1", Filename: "shot.png", ContentType: "image/png", AltText: "Screenshot of config.yaml"}}
	after := before
	after.TranslatedLanguages = []string{"es"}
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageChanged, Message: after, Before: before}); err != nil {
		t.Fatal(err)
	}
	if got := sender.sent["c0"]; len(got) != 0 {
		t.Fatalf("en reader: %q, want nothing new", got)
	}
	got := sender.sent["c1"]
	if len(got) != 1 || !strings.Contains(got[0], `"type":"message.updated"`) || !strings.Contains(got[0], `"translated":false`) ||
		!strings.Contains(got[0], `"alt_text":"Captura de config.yaml","original_alt_text":"Screenshot of config.yaml"`) {
		t.Fatalf("es reader: %q, want message.updated with the Spanish alt text", got)
	}
}
