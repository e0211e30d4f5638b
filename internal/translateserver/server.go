// Package translateserver is a local stand-in of Amazon Translate's
// TranslateText API, for the tests of the Amazon Translate adapter. It
// speaks the protocol (JSON 1.1 over POST /, X-Amz-Target
// AWSShineFrontendService_20170701.TranslateText, a SigV4 Authorization
// header), and behaves as the Amazon Translate Developer Guide documents:
//
//   - Text is 1 to 10,000 bytes of UTF-8, else TextSizeLimitExceededException;
//   - language codes are Amazon Translate's; an unknown one, or a pair it
//     cannot translate, is UnsupportedLanguagePairException; "auto" detects
//     the source (DetectedLanguageLowConfidenceException when unsure);
//   - Text may be HTML: an element with translate="no" (any element, any
//     quoting or case) comes back byte-identical with its content; the text
//     of every other node is translated, and its entities may come back in
//     another form than they went.
//
// What a real service may also do and a client must survive is
// switchable: entities in numeric form, a protected element moved to the
// end of its sentence, spaces around elements dropped, and (a defect to
// test the client's refusal) an element lost.
package translateserver

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxTextBytes is TranslateText's limit on Text.
const MaxTextBytes = 10000

// Request is one TranslateText request as received.
type Request struct {
	Text               string
	SourceLanguageCode string
	TargetLanguageCode string
}

// Server is the stand-in. Set its fields before its first request.
type Server struct {
	// Codes are the language codes it knows.
	Codes []string
	// Translate translates the text of one node (unescaped) from source to
	// target; nil upper-cases it.
	Translate func(text, source, target string) (string, error)
	// Detect names the language of a text for source "auto", "" when it is
	// unsure; nil answers "en".
	Detect func(text string) string
	// NumericEntities answers every escaped character as a numeric entity
	// (&#60; for <), where a plain answer uses &lt;, &amp;, &quot;, &#39;.
	NumericEntities bool
	// MoveElements moves each protected element to the end of the text.
	MoveElements bool
	// TrimAroundElements drops the spaces around protected elements.
	TrimAroundElements bool
	// DropElement loses the first protected element (a defect).
	DropElement bool

	mu   sync.Mutex
	reqs []Request
	srv  *http.Server
	url  string
}

// Start serves on 127.0.0.1 on a free port until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.srv = &http.Server{Handler: s}
	s.url = "http://" + ln.Addr().String()
	go s.srv.Serve(ln)
	return nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Requests returns the requests received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// fail answers an Amazon Translate error.
func fail(w http.ResponseWriter, status int, typ, msg string, extra map[string]string) {
	body := map[string]string{"__type": typ, "message": msg}
	for k, v := range extra {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

var authorization = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=[^/]+/\d{8}/[a-z0-9-]+/translate/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		fail(w, http.StatusNotFound, "UnknownOperationException", "POST / only", nil)
		return
	}
	if r.Header.Get("X-Amz-Target") != "AWSShineFrontendService_20170701.TranslateText" {
		fail(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+r.Header.Get("X-Amz-Target"), nil)
		return
	}
	if !authorization.MatchString(r.Header.Get("Authorization")) {
		fail(w, http.StatusForbidden, "MissingAuthenticationTokenException", "Missing Authentication Token", nil)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req Request
	if err := json.Unmarshal(b, &req); err != nil {
		fail(w, http.StatusBadRequest, "SerializationException", err.Error(), nil)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	switch n := len(req.Text); {
	case n == 0:
		fail(w, http.StatusBadRequest, "ValidationException", "1 validation error detected: Value at 'text' failed to satisfy constraint: Member must have length greater than or equal to 1", nil)
		return
	case n > MaxTextBytes || !utf8.ValidString(req.Text):
		fail(w, http.StatusBadRequest, "TextSizeLimitExceededException", fmt.Sprintf("Input text size exceeds limit. Max length of request text allowed is %d bytes while in this request the text size is %d bytes", MaxTextBytes, n), nil)
		return
	}
	src, tgt := req.SourceLanguageCode, req.TargetLanguageCode
	if src == "auto" {
		src = "en"
		if s.Detect != nil {
			src = s.Detect(plainText(req.Text))
		}
		if src == "" {
			fail(w, http.StatusBadRequest, "DetectedLanguageLowConfidenceException", "The language could not be detected with confidence", map[string]string{"DetectedLanguageCode": "en"})
			return
		}
	}
	if !slices.Contains(s.Codes, src) || !slices.Contains(s.Codes, tgt) {
		fail(w, http.StatusBadRequest, "UnsupportedLanguagePairException", "Unsupported language pair: "+src+" to "+tgt,
			map[string]string{"SourceLanguageCode": src, "TargetLanguageCode": tgt})
		return
	}
	out, err := s.translateHTML(req.Text, src, tgt)
	if err != nil {
		fail(w, http.StatusInternalServerError, "InternalServerException", err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(map[string]string{"TranslatedText": out, "SourceLanguageCode": src, "TargetLanguageCode": tgt})
}

var (
	tagRE    = regexp.MustCompile(`<[^<>]*>`)
	noRE     = regexp.MustCompile(`(?i)^<\s*([a-z][a-z0-9]*)\b[^>]*\btranslate\s*=\s*["']?no\b`)
	closeRE  = regexp.MustCompile(`^<\s*/\s*([a-zA-Z][a-zA-Z0-9]*)`)
	openRE   = regexp.MustCompile(`^<\s*([a-zA-Z][a-zA-Z0-9]*)\b`)
	spacesRE = regexp.MustCompile(`\s+$`)
)

// plainText is text's words: tags and protected elements removed.
func plainText(text string) string {
	var b strings.Builder
	for _, n := range nodes(text) {
		if n.kind == textNode {
			b.WriteString(html.UnescapeString(n.s))
		}
	}
	return b.String()
}

const (
	textNode = iota
	tagNode
	keptNode // a translate="no" element, whole
)

type node struct {
	kind int
	s    string
}

// nodes cuts text into text, tags and whole translate="no" elements
// (nested elements of the same name inside one included).
func nodes(text string) []node {
	var out []node
	for text != "" {
		loc := tagRE.FindStringIndex(text)
		if loc == nil {
			out = append(out, node{textNode, text})
			break
		}
		if loc[0] > 0 {
			out = append(out, node{textNode, text[:loc[0]]})
		}
		tag := text[loc[0]:loc[1]]
		rest := text[loc[1]:]
		if m := noRE.FindStringSubmatch(tag); m != nil && !strings.HasSuffix(tag, "/>") {
			name := strings.ToLower(m[1])
			depth, end := 1, -1
			for _, l := range tagRE.FindAllStringIndex(rest, -1) {
				t := rest[l[0]:l[1]]
				if c := closeRE.FindStringSubmatch(t); c != nil && strings.ToLower(c[1]) == name {
					if depth--; depth == 0 {
						end = l[1]
						break
					}
				} else if o := openRE.FindStringSubmatch(t); o != nil && strings.ToLower(o[1]) == name && !strings.HasSuffix(t, "/>") {
					depth++
				}
			}
			if end >= 0 {
				out = append(out, node{keptNode, tag + rest[:end]})
				text = rest[end:]
				continue
			}
		}
		out = append(out, node{tagNode, tag})
		text = rest
	}
	return out
}

// translateHTML translates the text nodes of text, keeping tags and
// protected elements, with the switchable behaviours.
func (s *Server) translateHTML(text, src, tgt string) (string, error) {
	ns := nodes(text)
	var moved []string
	dropped := false
	var b strings.Builder
	for i, n := range ns {
		switch n.kind {
		case tagNode:
			b.WriteString(n.s)
		case keptNode:
			switch {
			case s.DropElement && !dropped:
				dropped = true
			case s.MoveElements:
				moved = append(moved, n.s)
			default:
				if s.TrimAroundElements {
					trimmed := spacesRE.ReplaceAllString(b.String(), "")
					b.Reset()
					b.WriteString(trimmed)
				}
				b.WriteString(n.s)
			}
		case textNode:
			t := html.UnescapeString(n.s)
			if s.TrimAroundElements && i > 0 && ns[i-1].kind == keptNode {
				t = strings.TrimLeft(t, " ")
			}
			out := strings.ToUpper(t)
			if s.Translate != nil && strings.TrimSpace(t) != "" {
				lead := t[:len(t)-len(strings.TrimLeft(t, " "))]
				trail := t[len(strings.TrimRight(t, " ")):]
				tr, err := s.Translate(strings.TrimSpace(t), src, tgt)
				if err != nil {
					return "", err
				}
				out = lead + tr + trail
			}
			b.WriteString(s.escape(out))
		}
	}
	for _, m := range moved {
		b.WriteString(" " + m)
	}
	return b.String(), nil
}

// escape escapes what HTML text needs, in the server's entity form.
func (s *Server) escape(t string) string {
	if !s.NumericEntities {
		return html.EscapeString(t)
	}
	var b strings.Builder
	for _, r := range t {
		switch r {
		case '<', '>', '&', '"', '\'':
			fmt.Fprintf(&b, "&#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
