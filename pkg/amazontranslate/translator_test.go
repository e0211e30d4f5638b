package amazontranslate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/translate"

	"github.com/chatbridge/chat/pkg/amazontranslate"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/translation"
)

// request is one TranslateText request as the server received it.
type request struct {
	Text               string
	SourceLanguageCode string
	TargetLanguageCode string
}

// service is a local server that checks each request against the Amazon
// Translate protocol (JSON 1.1 over POST, SigV4-signed) and answers with
// answer.
type service struct {
	t      *testing.T
	answer func(req request) (status int, body string)

	mu   sync.Mutex
	reqs []request
	seen map[string]bool
}

var authorization = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDLOCAL/\d{8}/us-east-1/translate/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$`)

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	problems := []string{}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		problems = append(problems, "request "+r.Method+" "+r.URL.Path+", want POST /")
	}
	if got := r.Header.Get("X-Amz-Target"); got != "AWSShineFrontendService_20170701.TranslateText" {
		problems = append(problems, "X-Amz-Target "+got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/x-amz-json-1.1" {
		problems = append(problems, "Content-Type "+got)
	}
	if got := r.Header.Get("Authorization"); !authorization.MatchString(got) {
		problems = append(problems, "Authorization "+got)
	}
	if r.Header.Get("X-Amz-Date") == "" {
		problems = append(problems, "no X-Amz-Date")
	}
	body, _ := io.ReadAll(r.Body)
	var raw map[string]any
	var req request
	if err := json.Unmarshal(body, &raw); err != nil {
		problems = append(problems, "body is not JSON: "+string(body))
	}
	json.Unmarshal(body, &req)
	for k := range raw {
		if k != "Text" && k != "SourceLanguageCode" && k != "TargetLanguageCode" {
			problems = append(problems, "unexpected body field "+k)
		}
	}
	if len(req.Text) > amazontranslate.MaxTextBytes || req.Text == "" {
		problems = append(problems, fmt.Sprintf("Text of %d bytes", len(req.Text)))
	}
	if len(problems) > 0 {
		s.t.Errorf("not a TranslateText request: %s", strings.Join(problems, "; "))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	// One request per SDK invocation: a retried attempt of the same call
	// (after a connection fault) is not another request.
	if id := r.Header.Get("Amz-Sdk-Invocation-Id"); id == "" || !s.seen[id] {
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[id] = true
		s.reqs = append(s.reqs, req)
	}
	s.mu.Unlock()
	status, answer := s.answer(req)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(status)
	io.WriteString(w, answer)
}

func (s *service) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

// newTranslator returns a Translator whose client talks to a local service
// answering with answer.
func newTranslator(t *testing.T, answer func(request) (int, string)) (*amazontranslate.Translator, *service) {
	t.Helper()
	svc := &service{t: t, answer: answer}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")}
	client := translate.NewFromConfig(cfg, amazontranslate.ReadOnlyBodies, func(o *translate.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		// One attempt per call: what the adapter makes of an answer is
		// under test, not the SDK's retries, which would also hide a
		// connection broken under a call (see ReadOnlyBodies).
		o.RetryMaxAttempts = 1
	})
	return amazontranslate.New(client), svc
}

func ok(text, source, target string) (int, string) {
	b, _ := json.Marshal(map[string]string{"TranslatedText": text, "SourceLanguageCode": source, "TargetLanguageCode": target})
	return http.StatusOK, string(b)
}

func TestTranslateSpeaksTheProtocol(t *testing.T) {
	tr, svc := newTranslator(t, func(req request) (int, string) { return ok("Hola mundo", "en", req.TargetLanguageCode) })
	res, err := tr.Translate(context.Background(), "Hello world", "en", "es")
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if res != (translation.Result{Text: "Hola mundo", SourceLanguage: "en"}) {
		t.Fatalf("got %+v, want Hola mundo detected from en", res)
	}
	want := []request{{Text: "Hello world", SourceLanguageCode: "auto", TargetLanguageCode: "es"}}
	if got := svc.requests(); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
}

func TestTranslateErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string // a chat code, or "unsupported"
	}{
		{"throttled", 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`, chat.EUnavailable},
		{"too many requests", 400, `{"__type":"TooManyRequestsException","Message":"slow down"}`, chat.EUnavailable},
		{"service unavailable", 503, `{"__type":"ServiceUnavailableException","Message":"try later"}`, chat.EUnavailable},
		{"internal", 500, `{"__type":"InternalServerException","Message":"oops"}`, chat.EUnavailable},
		{"access denied", 400, `{"__type":"AccessDeniedException","Message":"not allowed"}`, chat.EInternal},
		{"unsupported pair", 400, `{"__type":"UnsupportedLanguagePairException","Message":"no","SourceLanguageCode":"xh","TargetLanguageCode":"es"}`, "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTranslator(t, func(request) (int, string) { return tc.status, tc.body })
			_, err := tr.Translate(context.Background(), "Hello", "en", "es")
			if tc.want == "unsupported" {
				if !errors.Is(err, translation.ErrUnsupported) {
					t.Fatalf("got %v, want ErrUnsupported", err)
				}
				return
			}
			if !chat.IsCode(err, tc.want) || errors.Is(err, translation.ErrUnsupported) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestTextAlreadyInTheTarget(t *testing.T) {
	for name, answer := range map[string]func(request) (int, string){
		"answered as a translation": func(req request) (int, string) { return ok(req.Text, "es", "es") },
		"answered as an unsupported pair": func(request) (int, string) {
			return 400, `{"__type":"UnsupportedLanguagePairException","Message":"same","SourceLanguageCode":"es","TargetLanguageCode":"es"}`
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr, svc := newTranslator(t, answer)
			long := strings.Repeat("Hola a todos. ", 2000) // several pieces: one call is enough
			res, err := tr.Translate(context.Background(), long, "en", "es")
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			if res.Text != long || res.SourceLanguage != "es" {
				t.Fatalf("got %q… from %q, want the text unchanged from es", res.Text[:20], res.SourceLanguage)
			}
			if n := len(svc.requests()); n != 1 {
				t.Fatalf("made %d calls, want 1", n)
			}
		})
	}
}

func TestLowConfidenceFallsBackToTheJobsSource(t *testing.T) {
	tr, svc := newTranslator(t, func(req request) (int, string) {
		if req.SourceLanguageCode == "auto" {
			return 400, `{"__type":"DetectedLanguageLowConfidenceException","Message":"unsure","DetectedLanguageCode":"it"}`
		}
		return ok("Hola", req.SourceLanguageCode, req.TargetLanguageCode)
	})
	res, err := tr.Translate(context.Background(), "Hi", "en-US", "es")
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	reqs := svc.requests()
	if len(reqs) != 2 || reqs[1].SourceLanguageCode != "en" || res.SourceLanguage != "en" {
		t.Fatalf("requests %+v, result %+v; want a second call from en", reqs, res)
	}

	// Without a usable source, Comprehend's guess is taken.
	if _, err := tr.Translate(context.Background(), "Ciao", "", "es"); err != nil {
		t.Fatalf("Translate: %v", err)
	}
	if reqs = svc.requests(); reqs[len(reqs)-1].SourceLanguageCode != "it" {
		t.Fatalf("fallback from %q, want Comprehend's it", reqs[len(reqs)-1].SourceLanguageCode)
	}
}

func TestLongTextGoesInPieces(t *testing.T) {
	// Each piece is answered with a marker of its size and last word, so
	// that the reassembly shows which piece went where.
	tr, svc := newTranslator(t, func(req request) (int, string) {
		words := strings.Fields(req.Text)
		return ok(fmt.Sprintf("<%d %s>", len(req.Text), words[len(words)-1]), "en", req.TargetLanguageCode)
	})
	para := strings.TrimSpace(strings.Repeat("word ", 1500)) // 7,499 bytes
	text := para + "\n" + para + "\n" + para + " ünïcödé"
	res, err := tr.Translate(context.Background(), text, "", "es")
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	// Cut between words, each piece at most 10,000 bytes and sent without
	// the white space at its ends, which the reassembly puts back.
	if want := "<9999 word> <9999 word> <2511 ünïcödé>"; res.Text != want {
		t.Fatalf("reassembled text %q, want %q", res.Text, want)
	}
	reqs := svc.requests()
	if len(reqs) != 3 {
		t.Fatalf("made %d calls, want 3", len(reqs))
	}
	if reqs[0].SourceLanguageCode != "auto" || reqs[1].SourceLanguageCode != "en" || reqs[2].SourceLanguageCode != "en" {
		t.Fatalf("sources %q %q %q, want auto then the detected en", reqs[0].SourceLanguageCode, reqs[1].SourceLanguageCode, reqs[2].SourceLanguageCode)
	}
}

func TestTargetsAreTheDocumentedLanguages(t *testing.T) {
	tr, _ := newTranslator(t, nil)
	langs, err := tr.Targets(context.Background(), "")
	if err != nil {
		t.Fatalf("Targets: %v", err)
	}
	if got := langs.Len(); got != len(amazontranslate.Codes) || got != 75 {
		t.Fatalf("Targets has %d languages, Codes %d; want all 75 documented", got, len(amazontranslate.Codes))
	}
	var pairs []string
	for _, tag := range []string{"es-ES", "es-MX", "es", "fr-CA", "fr-FR", "pt-BR", "pt-PT", "zh-CN", "zh-HK", "nb-NO", "fil"} {
		code, _ := langs.Target(tag)
		pairs = append(pairs, tag+"="+code)
	}
	sort.Strings(pairs)
	want := "es-ES=es es-MX=es-MX es=es fil=tl fr-CA=fr-CA fr-FR=fr nb-NO=no pt-BR=pt pt-PT=pt-PT zh-CN=zh zh-HK=zh-TW"
	if got := strings.Join(pairs, " "); got != want {
		t.Fatalf("reader mapping:\ngot  %s\nwant %s", got, want)
	}
}

// TestLargeRequestsKeepTheirConnection: calls whose requests pass the
// transport's buffer, one after another on a reused connection, each get
// their whole answer with a single attempt. Without ReadOnlyBodies about
// one run in four of 100 breaks a connection under its answer ("use of
// closed network connection").
func TestLargeRequestsKeepTheirConnection(t *testing.T) {
	tr, svc := newTranslator(t, func(req request) (int, string) {
		return ok(strings.ReplaceAll(req.Text, "word", "palabra"), "en", req.TargetLanguageCode)
	})
	text := strings.TrimSpace(strings.Repeat("word ", 1900)) // 9,499 bytes: one piece
	for i := 0; i < 20; i++ {
		res, err := tr.Translate(context.Background(), text, "en", "es")
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if want := strings.ReplaceAll(text, "word", "palabra"); res.Text != want {
			t.Fatalf("call %d: got %d bytes, want %d", i, len(res.Text), len(want))
		}
	}
	if n := len(svc.requests()); n != 20 {
		t.Fatalf("got %d requests, want 20", n)
	}
}
