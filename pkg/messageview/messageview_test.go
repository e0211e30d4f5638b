package messageview_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// worstMessage is a message with every field of its view at its longest,
// in the character whose JSON is longest (6 bytes: \u003c, \u2028, \u0001).
func worstMessage(char string) chat.Message {
	id := "01JDZ8Y7K3Q4W5E6R7T8Y9A0MM"
	return chat.Message{
		ID: id, ChannelID: id, WorkspaceID: id,
		Author: chat.Author{Type: chat.AuthorGuest, ID: id, Name: strings.Repeat(char, fixture.MaxNameLen),
			AvatarURL: "https://a.invalid/?" + strings.Repeat("&", fixture.MaxURLLen-len("https://a.invalid/?"))},
		Content:        strings.Repeat(char, messages.MaxContentLen),
		SourceLanguage: "x-" + strings.Repeat("a", chat.MaxLanguageTagLen-2),
		CreatedAt:      time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}
}

// TestWorstMessageViewFitsAPageAlone proves the guest list's item bound:
// content and original_content of 40,000 characters of 6 bytes of JSON
// each (480,000 bytes), a name of 100 such characters (the longest bot
// name; a nickname is at most 64), an avatar URL of 2,048 '&' (6 bytes
// each), ULIDs and language tags of 35 characters come to less than half
// of httpapi.MaxItemBytes: two always fit a page, one always fits alone.
func TestWorstMessageViewFitsAPageAlone(t *testing.T) {
	if workspaces.MaxLimit > 999 {
		t.Fatalf("httpapi.MaxItemBytes assumes a limit of at most three digits, MaxLimit is %d", workspaces.MaxLimit)
	}
	for _, char := range []string{"<", "\u2028", "\x01", "\U0001F600", "\uffff"} {
		m := worstMessage(char)
		v := rooms.ViewOf(m, nil, "en")
		b, err := messageview.Renderer{}.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > httpapi.MaxItemBytes/2 {
			t.Fatalf("%+q: the worst view takes %d bytes, want at most %d (half of httpapi.MaxItemBytes)", char, len(b), httpapi.MaxItemBytes/2)
		}
		t.Logf("%+q: worst view %d bytes (httpapi.MaxItemBytes %d)", char, len(b), httpapi.MaxItemBytes)
	}
}

// TestOversizedTranslationShowsTheOriginal: a translation is stored as the
// translator returned it, up to DynamoDB's 400 KB item; 400,000 '<' would
// make a view of 2.4 MB. That view shows the original instead, which fits;
// a translation that fits is shown.
func TestOversizedTranslationShowsTheOriginal(t *testing.T) {
	m := worstMessage("<")
	m.TranslatedLanguages = []string{"es"}
	for _, tc := range []struct {
		name       string
		text       string
		translated bool
	}{
		{"40,000 '&'", strings.Repeat("&", messages.MaxContentLen), true},
		{"just over", strings.Repeat("<", (httpapi.MaxItemBytes-240_000)/6), false},
		{"400 KB of '<'", strings.Repeat("<", 400_000), false},
	} {
		v := rooms.ViewOf(m, map[string]chat.Translation{"es": {Language: "es", Content: tc.text}}, "es-ES")
		if !v.Translated {
			t.Fatalf("%s: the view builder did not pick the translation", tc.name)
		}
		b, err := messageview.Renderer{}.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		var got messageview.View
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if len(b) > httpapi.MaxItemBytes || got.Translated != tc.translated {
			t.Fatalf("%s: %d bytes, translated %v; want at most %d, translated %v", tc.name, len(b), got.Translated, httpapi.MaxItemBytes, tc.translated)
		}
		if !tc.translated && (got.Content != m.Content || got.Language != m.SourceLanguage) {
			t.Fatalf("%s: content of %d bytes in %s, want the original", tc.name, len(got.Content), got.Language)
		}
	}
}

// TestMaxBytesIsAPagesItem: the bound Encode keeps is the longest item a
// list page holds alone.
func TestMaxBytesIsAPagesItem(t *testing.T) {
	if messageview.MaxBytes != httpapi.MaxItemBytes {
		t.Fatalf("messageview.MaxBytes %d, httpapi.MaxItemBytes %d: want them equal", messageview.MaxBytes, httpapi.MaxItemBytes)
	}
}

// TestOversizedAltTextsShowTheOriginal: translated alt texts that would
// take the view past a page's item show the original, content and alt
// texts alike, as an oversized translated content does; ones that fit are
// shown, the content being the original.
func TestOversizedAltTextsShowTheOriginal(t *testing.T) {
	m := worstMessage("<")
	m.TranslatedLanguages = []string{"es"}
	for i := range 10 {
		m.Attachments = append(m.Attachments, chat.Attachment{ID: "U" + string(rune('0'+i)), Filename: "shot.png",
			ContentType: "image/png", AltText: strings.Repeat("<", 1000)})
	}
	for _, tc := range []struct {
		name  string
		alt   string
		shown bool
	}{
		{"10 × 1,000 '<'", strings.Repeat("&", 1000), true},
		// 10 × 38,000 bytes: the most a stored translation holds
		// (translation.MaxTranslationBytes), 2,280,000 bytes of JSON.
		{"10 × 38,000 '<'", strings.Repeat("<", 38_000), false},
	} {
		alts := make([]string, len(m.Attachments))
		for i := range alts {
			alts[i] = tc.alt
		}
		v := rooms.ViewOf(m, map[string]chat.Translation{"es": {Language: "es", Content: m.Content, AltTexts: alts}}, "es-ES")
		if v.Translated || v.AltTexts == nil {
			t.Fatalf("%s: the view builder did not pick the alt texts (translated %v)", tc.name, v.Translated)
		}
		b, err := messageview.Renderer{}.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		var got messageview.View
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want := m.Attachments[0].AltText
		if tc.shown {
			want = tc.alt
		}
		if len(b) > httpapi.MaxItemBytes || len(got.Attachments) != 10 || *got.Attachments[9].AltText != want ||
			*got.Attachments[9].OriginalAltText != m.Attachments[9].AltText {
			t.Fatalf("%s: %d bytes, alt text of %d bytes; want at most %d, %d", tc.name, len(b), len(*got.Attachments[9].AltText), httpapi.MaxItemBytes, len(want))
		}
	}
}
