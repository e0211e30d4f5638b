package amazontranslate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/translate"

	"github.com/chatbridge/chat/internal/chatcorpus"
	"github.com/chatbridge/chat/internal/translateserver"
	"github.com/chatbridge/chat/pkg/amazontranslate"
	"github.com/chatbridge/chat/pkg/protect"
)

// standIn starts the TranslateText stand-in configured by set and returns
// an adapter on it.
func standIn(t *testing.T, set func(s *translateserver.Server)) (*amazontranslate.Translator, *translateserver.Server) {
	t.Helper()
	s := &translateserver.Server{Codes: amazontranslate.Codes}
	if set != nil {
		set(s)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")}
	client := translate.NewFromConfig(cfg, amazontranslate.ReadOnlyBodies, func(o *translate.Options) {
		o.BaseEndpoint = aws.String(s.URL())
		o.RetryMaxAttempts = 1
	})
	return amazontranslate.New(client), s
}

// demoNames are the demo workspace's names, as the translation function
// protects them.
var demoNames = protect.Names{Members: []string{"Ana", "Ben", "Chloé"}, Channels: []string{"general", "support"},
	Bots: []string{"CI Bot", "Deploy Bot"}, Keep: []string{"ChatBridge"}}

// roundTrip translates content as the service does with Amazon
// Translate: Parse, HTML, one Translate per unit, RestoreHTML.
func roundTrip(t *testing.T, tr *amazontranslate.Translator, content string) (string, error) {
	t.Helper()
	d := protect.Parse(content, demoNames)
	units := d.HTML()
	out := make([]string, len(units))
	for i, u := range units {
		res, err := tr.Translate(context.Background(), u, "en", "es")
		if err != nil {
			t.Fatalf("%q: Translate(%q): %v", content, u, err)
		}
		out[i] = res.Text
	}
	return d.RestoreHTML(out)
}

// TestEveryClassSurvivesTheStandIn runs the chat corpus through the
// adapter and the stand-in, in each of the behaviours a real service may
// show (entities in another form, elements moved, spaces around them
// dropped): every kept substring comes back byte-identical, the words are
// translated, the structure is the original's, no markup is left.
func TestEveryClassSurvivesTheStandIn(t *testing.T) {
	for name, set := range map[string]func(*translateserver.Server){
		"plain":                 nil,
		"numeric entities":      func(s *translateserver.Server) { s.NumericEntities = true },
		"elements moved":        func(s *translateserver.Server) { s.MoveElements = true },
		"spaces around dropped": func(s *translateserver.Server) { s.TrimAroundElements = true },
	} {
		t.Run(name, func(t *testing.T) {
			tr, srv := standIn(t, set)
			for _, m := range chatcorpus.Messages() {
				got, err := roundTrip(t, tr, m.Content)
				if err != nil {
					t.Errorf("%s: %v", m.ID, err)
					continue
				}
				if name == "elements moved" {
					// Moved, a span still comes back whole (the punctuation
					// beside it is text and stays where the words put it).
					d := protect.Parse(m.Content, demoNames)
					for _, u := range d.Units() {
						for _, sp := range u.Spans {
							if span := m.Content[sp.Start:sp.End]; !strings.Contains(got, span) {
								t.Errorf("%s: lost the span %q in %q", m.ID, span, got)
							}
						}
					}
				} else {
					for _, k := range m.Keep {
						if strings.Count(got, k) < strings.Count(m.Content, k) {
							t.Errorf("%s: lost %q in %q", m.ID, k, got)
						}
					}
				}
				if strings.Count(got, "\n") != strings.Count(m.Content, "\n") || strings.Count(got, "`") != strings.Count(m.Content, "`") {
					t.Errorf("%s: structure changed: %q", m.ID, got)
				}
				for _, leak := range []string{"translate=", "<span", "&lt;", "&#", "&amp;"} {
					if strings.Contains(got, leak) && !strings.Contains(m.Content, leak) {
						t.Errorf("%s: %q leaked into %q", m.ID, leak, got)
					}
				}
				if m.Language != "none" && got == m.Content && name != "elements moved" {
					t.Errorf("%s: nothing translated", m.ID)
				}
			}
			for _, r := range srv.Requests() {
				if len(r.Text) > amazontranslate.MaxTextBytes {
					t.Errorf("a request of %d bytes", len(r.Text))
				}
			}
		})
	}
}

// TestTextThatLooksLikeMarkup: <, &, quotes and apostrophes in text, and
// entities written by the user, come back as written.
func TestTextThatLooksLikeMarkup(t *testing.T) {
	tr, _ := standIn(t, func(s *translateserver.Server) { s.NumericEntities = true })
	for _, content := range []string{
		`if a < b && c > d then "quote" it's done`,
		"Tom & Jerry's house",
		"write &amp; not & in HTML",
	} {
		got, err := roundTrip(t, tr, content)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []string{"<", "&", `"`, "'", "&amp;"} {
			if strings.Count(got, keep) != strings.Count(content, keep) {
				t.Errorf("%q: %q counted %d times in %q, want %d", content, keep, strings.Count(got, keep), got, strings.Count(content, keep))
			}
		}
	}
}

// TestALostElementIsRefused: when an element does not come back, the
// translation cannot be restored, and the caller shows the original.
func TestALostElementIsRefused(t *testing.T) {
	tr, _ := standIn(t, func(s *translateserver.Server) { s.DropElement = true })
	if _, err := roundTrip(t, tr, "Run `make build` before the meeting"); !errors.Is(err, protect.ErrNotRestored) {
		t.Fatalf("got %v, want ErrNotRestored", err)
	}
}

// TestSizeLimitAndLargeSpans: a unit past 10,000 bytes goes in pieces
// within the limit; a 40,000-character protected span is never sent; a
// unit of protected elements alone makes no call.
func TestSizeLimitAndLargeSpans(t *testing.T) {
	tr, srv := standIn(t, nil)
	long := strings.TrimSpace(strings.Repeat("the build is green and the deploy is done ", 600)) // one sentence, 25,000 bytes
	got, err := roundTrip(t, tr, long)
	if err != nil || got != strings.ToUpper(long) {
		t.Fatalf("long unit: %v, %.80q", err, got)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("long unit: %d requests, want 3", n)
	}
	before := len(srv.Requests())
	ticks := "see `" + strings.Repeat("x", 40000) + "` now"
	got, err = roundTrip(t, tr, ticks)
	if err != nil || got != "SEE `"+strings.Repeat("x", 40000)+"` NOW" {
		t.Fatalf("40,000-character span: %v, %.80q", err, got)
	}
	reqs := srv.Requests()[before:]
	for _, r := range reqs {
		if strings.Contains(r.Text, "xxxx") {
			t.Errorf("the protected span was sent (%d bytes)", len(r.Text))
		}
	}
	if len(reqs) != 2 {
		t.Errorf("40,000-character span: %d requests, want 2 (the text on either side)", len(reqs))
	}
	// Sent alone, an element makes no call.
	before = len(srv.Requests())
	res, err := tr.Translate(context.Background(), `<span translate="no" id="p1">x</span>`, "en", "es")
	if err != nil || res.Text != `<span translate="no" id="p1">x</span>` || len(srv.Requests()) != before {
		t.Fatalf("an element alone: %+v %v, %d calls", res, err, len(srv.Requests())-before)
	}
}

// TestTheStandInRefusesWhatAWSRefuses: the stand-in holds its own
// documented limits, so a client that passed them would fail here too.
func TestTheStandInRefusesWhatAWSRefuses(t *testing.T) {
	_, srv := standIn(t, nil)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")}
	client := translate.NewFromConfig(cfg, amazontranslate.ReadOnlyBodies, func(o *translate.Options) { o.BaseEndpoint = aws.String(srv.URL()); o.RetryMaxAttempts = 1 })
	for name, in := range map[string]*translate.TranslateTextInput{
		"10,001 bytes": {Text: aws.String(strings.Repeat("a", 10001)), SourceLanguageCode: aws.String("en"), TargetLanguageCode: aws.String("es")},
		"unknown code": {Text: aws.String("hello"), SourceLanguageCode: aws.String("en"), TargetLanguageCode: aws.String("tlh")},
		"empty text":   {Text: aws.String(""), SourceLanguageCode: aws.String("en"), TargetLanguageCode: aws.String("es")},
	} {
		if _, err := client.TranslateText(context.Background(), in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := client.TranslateText(context.Background(), &translate.TranslateTextInput{Text: aws.String(strings.Repeat("a", 10000)),
		SourceLanguageCode: aws.String("en"), TargetLanguageCode: aws.String("es")}); err != nil {
		t.Errorf("10,000 bytes: %v", err)
	}
}
