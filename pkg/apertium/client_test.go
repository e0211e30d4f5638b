package apertium_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/apertium"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

func newClient(t *testing.T, url string) *apertium.Client {
	t.Helper()
	c, err := apertium.New(url, nil)
	if err != nil {
		t.Fatalf("New(%q): %v", url, err)
	}
	return c
}

func TestBCP47(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"eng", "en"}, {"spa", "es"}, {"eng_US", "en-US"}, {"por_BR", "pt-BR"}, {"cat_valencia", "ca-valencia"},
		{"nob", "nb"}, {"srd", "sc"}, {"hbs_Latn", "sr-Latn"}, {"zho_TRAD", ""}, {"", ""}, {"e", ""},
	} {
		got, ok := apertium.BCP47(tc.code)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("BCP47(%q) = %q, %v; want %q", tc.code, got, ok, tc.want)
		}
	}
}

func TestNewRefusesWhatIsNotAnHTTPURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:2737", "ftp://host", "http://"} {
		if _, err := apertium.New(u, nil); err == nil {
			t.Errorf("New(%q): got no error", u)
		}
	}
}

func TestTargetsAgainstAPY(t *testing.T) {
	c := newClient(t, realAPY(t))
	ctx := context.Background()
	for _, tc := range []struct {
		source string
		want   []string
	}{
		{"en", []string{"es"}},
		{"en-GB", []string{"es"}},
		{"es-MX", []string{"en", "en-US"}},
		{"fr", nil},
		{"gl", nil}, // Galician text is not Spanish text
		{"", nil},
	} {
		langs, err := c.Targets(ctx, tc.source)
		if err != nil {
			t.Fatalf("Targets(%q): %v", tc.source, err)
		}
		got := langs.Codes()
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Targets(%q) = %v, want %v", tc.source, got, tc.want)
		}
	}
}

func TestTranslateAgainstAPY(t *testing.T) {
	c := newClient(t, realAPY(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name, text, source, target, want string
	}{
		{"eng-spa", "Hello world", "en", "es", "hola"},
		{"from a regional tag", "The cat is black.", "en-US", "es", "gato"},
		{"spa-eng", "Hola mundo", "es-ES", "en", "hello"},
		{"spa-eng_US", "Hola mundo", "es", "en-US", "hello"},
		// Past GET's limit: sent as a POST form.
		{"long text", strings.Repeat("The cat is black. ", 400), "en", "es", "el gato es negro."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Translate(ctx, tc.text, tc.source, tc.target)
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			if res.Text == tc.text || !strings.Contains(strings.ToLower(res.Text), tc.want) {
				t.Fatalf("Translate(%q): got %q, want a translation containing %q", tc.text[:min(40, len(tc.text))], res.Text[:min(200, len(res.Text))], tc.want)
			}
			if res.SourceLanguage != "" {
				t.Fatalf("APY cannot detect, but SourceLanguage = %q", res.SourceLanguage)
			}
		})
	}
	// Names and symbols come back as they went, unescaped.
	if res, err := c.Translate(ctx, "Tom & Jerry: 5 > 3", "en", "es"); err != nil || res.Text != "Tom & Jerry: 5 > 3" {
		t.Fatalf("Translate of names and symbols: got %q, %v; want them unchanged", res.Text, err)
	}
	if _, err := c.Translate(ctx, "Hello", "en", "fr"); !errors.Is(err, translation.ErrUnsupported) {
		t.Fatalf("Translate en->fr: got %v, want ErrUnsupported", err)
	}
	if _, err := c.Translate(ctx, "Bonjour", "fr", "es"); !errors.Is(err, translation.ErrUnsupported) {
		t.Fatalf("Translate fr->es: got %v, want ErrUnsupported", err)
	}
}

func TestTranslateRespectsContext(t *testing.T) {
	c := newClient(t, realAPY(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Translate(ctx, "Hello", "en", "es"); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("Translate with a cancelled context: got %v, want EUnavailable", err)
	}
}

// TestServiceWithAPY is the fan-out with the real translator: an English
// message reaches Spanish readers in Spanish with one call, and English
// readers are left with the original.
func TestServiceWithAPY(t *testing.T) {
	c := newClient(t, realAPY(t))
	store := &memStore{content: "Hello world", readers: []translation.Reader{
		{Kind: chat.AuthorGuest, ID: "a", Language: "es-ES"}, {Kind: chat.AuthorGuest, ID: "b", Language: "es-MX"},
		{Kind: chat.AuthorGuest, ID: "c", Language: "en"}, {Kind: chat.AuthorUser, ID: "d", Language: "en-GB"},
	}}
	svc := &translation.Service{Store: store, Translator: c}
	job := messages.Job{MessageID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0MM", ChannelID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0CC",
		Content: "Hello world", SourceLanguage: "en", CreatedAt: time.Now()}
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if len(store.saved) != 1 || store.saved[0].Language != "es" || !strings.Contains(strings.ToLower(store.saved[0].Content), "hola") {
		t.Fatalf("stored %+v, want one es translation saying hola", store.saved)
	}
}

// The errors below are ones a healthy APY does not produce on demand, so a
// local server answers as APY does when they happen.

func TestTranslateErrors(t *testing.T) {
	const pairs = `{"responseData": [{"sourceLanguage": "eng", "targetLanguage": "spa"}], "responseDetails": null, "responseStatus": 200}`
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		want      string // a chat code, or "unsupported"
		forgotten bool   // the pairs are fetched again afterwards
	}{
		{"pair gone since it was listed", 400, `{"status": "error", "code": 400, "message": "Bad Request", "explanation": "That pair is not installed"}`, "unsupported", true},
		{"overloaded", 503, `{"status": "error", "code": 503, "message": "Service Unavailable", "explanation": "Too many requests"}`, chat.EUnavailable, false},
		{"pipeline timeout", 200, `{"responseData": null, "responseDetails": "timeout", "responseStatus": 408}`, chat.EUnavailable, false},
		{"not APY", 200, `<html>proxy login</html>`, chat.EInternal, false},
		{"bad request", 400, `{"status": "error", "code": 400, "message": "Bad Request", "explanation": "Missing argument q"}`, chat.EInternal, false},
		{"answer too long", 200, `{"responseData": {"translatedText": "` + strings.Repeat("x", 5<<20) + `"}, "responseStatus": 200}`, chat.EInternal, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			listed := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				if r.URL.Path == "/listPairs" {
					mu.Lock()
					listed++
					mu.Unlock()
					w.Write([]byte(pairs))
					return
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := newClient(t, srv.URL)
			_, err := c.Translate(context.Background(), "Hello", "en", "es")
			switch tc.want {
			case "unsupported":
				if !errors.Is(err, translation.ErrUnsupported) {
					t.Fatalf("got %v, want ErrUnsupported", err)
				}
			default:
				if !chat.IsCode(err, tc.want) || errors.Is(err, translation.ErrUnsupported) {
					t.Fatalf("got %v, want %s", err, tc.want)
				}
			}
			c.Targets(context.Background(), "en")
			mu.Lock()
			defer mu.Unlock()
			if want := map[bool]int{true: 2, false: 1}[tc.forgotten]; listed != want {
				t.Fatalf("listPairs fetched %d times, want %d", listed, want)
			}
		})
	}
}

func TestUnreachableAPYIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newClient(t, url)
	if _, err := c.Targets(context.Background(), "en"); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("Targets with nothing listening: got %v, want EUnavailable", err)
	}
}

// memStore is an in-memory translation.Store of one message.
type memStore struct {
	readers []translation.Reader
	content string
	saved   []chat.Translation
}

func (m *memStore) Readers(context.Context, string, time.Time) ([]translation.Reader, error) {
	return m.readers, nil
}

func (m *memStore) Message(context.Context, string, string) (translation.Stored, error) {
	done := map[string]bool{}
	for _, s := range m.saved {
		done[s.Language] = true
	}
	return translation.Stored{Content: m.content, Done: done}, nil
}

func (m *memStore) SaveTranslations(_ context.Context, _, _ string, ts []chat.Translation, _ bool) error {
	m.saved = append(m.saved, ts...)
	return nil
}
