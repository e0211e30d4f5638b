package apertium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/translation"
)

// Defaults of a Client.
const (
	// DefaultTimeout bounds one APY request. APY's own default per-request
	// timeout is 10 s; a 40,000-character message can take longer. It stays
	// under the translation function's 30 s timeout, so that a stuck call
	// fails its message, not the whole batch.
	DefaultTimeout = 20 * time.Second
	// PairsTTL is how long the list of installed pairs is reused.
	PairsTTL = 5 * time.Minute
	// maxGETQuery is the longest query string sent with GET; longer texts
	// go as a POST form, which APY accepts on the same path.
	maxGETQuery = 2000
	// maxResponse bounds what is read of one answer: a translation of the
	// longest content, JSON-escaped, fits many times over.
	maxResponse = 4 << 20
)

var _ translation.Translator = (*Client)(nil)

// Client is a translation.Translator on an APY server. It is safe for
// concurrent use.
type Client struct {
	base *url.URL
	http *http.Client

	mu      sync.Mutex
	pairs   *pairSet
	fetched time.Time
}

// New returns a Client of the APY server at baseURL (http://127.0.0.1:2737,
// or a URL with a path prefix). hc nil means an http.Client with
// DefaultTimeout.
func New(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("apertium: %q is not an http(s) URL", baseURL)
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{base: u, http: hc}, nil
}

// pairSet is the installed pairs in both namings.
type pairSet struct {
	// sources holds the BCP 47 codes of every source language.
	sources *translation.Languages
	// apy maps a BCP 47 source, and a BCP 47 target under it, to APY codes.
	apySource map[string]string
	targets   map[string]*translation.Languages
	apyTarget map[string]map[string]string
}

// Targets implements translation.Translator: the targets of the pairs
// installed from source's language, none when there is none. Errors:
// EUnavailable when APY cannot be reached, EInternal for an answer that is
// not APY's.
func (c *Client) Targets(ctx context.Context, source string) (*translation.Languages, error) {
	ps, err := c.loadPairs(ctx)
	if err != nil {
		return nil, err
	}
	src, ok := ps.sources.Source(source)
	if !ok {
		return nil, nil
	}
	return ps.targets[src], nil
}

// Form implements translation.Former: Apertium's HTML deformatter keeps
// empty elements in place, so protected spans travel as placeholders.
func (c *Client) Form() translation.Form { return translation.Placeholders }

// Translate implements translation.Translator with GET (or, for long text,
// POST) /translate. Result.SourceLanguage is empty: APY does not detect.
// Errors: translation.ErrUnsupported when no pair from source into target is
// installed; EUnavailable when APY cannot be reached, times out or answers
// 5xx; EInternal otherwise.
func (c *Client) Translate(ctx context.Context, text, source, target string) (translation.Result, error) {
	ps, err := c.loadPairs(ctx)
	if err != nil {
		return translation.Result{}, err
	}
	src, ok := ps.sources.Source(source)
	if !ok {
		return translation.Result{}, fmt.Errorf("apertium: no pair from %q: %w", source, translation.ErrUnsupported)
	}
	tgt := ps.apyTarget[src][target]
	if tgt == "" {
		return translation.Result{}, fmt.Errorf("apertium: no pair from %s into %q: %w", src, target, translation.ErrUnsupported)
	}
	langpair := ps.apySource[src] + "|" + tgt
	// markUnknown=yes: with "no", APY strips every * that precedes a word
	// (**Important:** came back *Importante:**). The marks it adds instead
	// (*unknown, #generation error, @untranslated) are removed by the
	// caller's restore (package protect): no user's *, # or @ is ever sent.
	form := url.Values{"langpair": {langpair}, "q": {text}, "markUnknown": {"yes"}}

	var data struct {
		TranslatedText string `json:"translatedText"`
	}
	if err := c.call(ctx, "translate", form, &data); err != nil {
		if errors.Is(err, errPairNotInstalled) {
			// The server lost the pair since it was listed.
			c.forgetPairs()
			return translation.Result{}, fmt.Errorf("apertium: translate %s: %w", langpair, translation.ErrUnsupported)
		}
		return translation.Result{}, wrap("translate "+langpair, err)
	}
	return translation.Result{Text: data.TranslatedText}, nil
}

// loadPairs returns the installed pairs, fetching them at most once per
// PairsTTL.
func (c *Client) loadPairs(ctx context.Context) (*pairSet, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pairs != nil && time.Since(c.fetched) < PairsTTL {
		return c.pairs, nil
	}
	var list []struct {
		Source string `json:"sourceLanguage"`
		Target string `json:"targetLanguage"`
	}
	if err := c.call(ctx, "listPairs", nil, &list); err != nil {
		return nil, wrap("listPairs", err)
	}
	ps := &pairSet{apySource: map[string]string{}, targets: map[string]*translation.Languages{}, apyTarget: map[string]map[string]string{}}
	var sources []string
	targets := map[string][]string{}
	for _, p := range list {
		src, ok1 := BCP47(p.Source)
		tgt, ok2 := BCP47(p.Target)
		if !ok1 || !ok2 {
			continue // a code x/text cannot name is a pair no reader can ask for
		}
		if _, seen := ps.apySource[src]; !seen {
			ps.apySource[src] = p.Source
			ps.apyTarget[src] = map[string]string{}
			sources = append(sources, src)
		}
		if _, seen := ps.apyTarget[src][tgt]; !seen {
			ps.apyTarget[src][tgt] = p.Target
			targets[src] = append(targets[src], tgt)
		}
	}
	ps.sources = translation.NewLanguages(sources...)
	for src, ts := range targets {
		ps.targets[src] = translation.NewLanguages(ts...)
	}
	c.pairs, c.fetched = ps, time.Now()
	return ps, nil
}

func (c *Client) forgetPairs() {
	c.mu.Lock()
	c.pairs = nil
	c.mu.Unlock()
}

// errPairNotInstalled is APY's answer for a langpair it does not have.
var errPairNotInstalled = errors.New("pair not installed")

// statusError is a non-200 answer.
type statusError struct {
	status int
	detail string
}

func (e *statusError) Error() string { return fmt.Sprintf("APY answered %d: %s", e.status, e.detail) }

// call requests path with form (GET, or POST when the query is long) and
// decodes the answer's responseData into out.
func (c *Client) call(ctx context.Context, path string, form url.Values, out any) error {
	u := c.base.JoinPath(path)
	query := form.Encode()
	var req *http.Request
	var err error
	if len(query) <= maxGETQuery {
		u.RawQuery = query
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(query))
		if req != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return err
	}
	if len(body) > maxResponse {
		return &statusError{status: resp.StatusCode, detail: fmt.Sprintf("answer longer than %d bytes", maxResponse)}
	}
	// APY answers success as {"responseData": ..., "responseStatus": 200}
	// and errors either that way with responseDetails, or as Tornado's
	// {"status": "error", "code": 400, "message": ..., "explanation": ...}.
	var env struct {
		ResponseData    json.RawMessage `json:"responseData"`
		ResponseStatus  int             `json:"responseStatus"`
		ResponseDetails any             `json:"responseDetails"`
		Code            int             `json:"code"`
		Message         string          `json:"message"`
		Explanation     string          `json:"explanation"`
	}
	decodeErr := json.Unmarshal(body, &env)
	if resp.StatusCode == http.StatusOK && decodeErr == nil && env.ResponseStatus == http.StatusOK {
		if err := json.Unmarshal(env.ResponseData, out); err != nil {
			return fmt.Errorf("responseData: %w", err)
		}
		return nil
	}
	status := resp.StatusCode
	if status == http.StatusOK {
		status = env.ResponseStatus
	}
	detail := strings.TrimSpace(env.Explanation)
	if detail == "" && env.ResponseDetails != nil {
		detail = fmt.Sprint(env.ResponseDetails)
	}
	if detail == "" {
		detail = strings.TrimSpace(env.Message)
	}
	if detail == "" {
		detail = http.StatusText(status)
	}
	if status == http.StatusBadRequest && strings.Contains(strings.ToLower(detail), "not installed") {
		return fmt.Errorf("%w: %s", errPairNotInstalled, detail)
	}
	if decodeErr != nil && status == http.StatusOK {
		return fmt.Errorf("answer is not APY's JSON: %w", decodeErr)
	}
	return &statusError{status: status, detail: detail}
}

// wrap translates a failed call into the service's codes: what retrying
// later may fix is EUnavailable, the rest EInternal.
func wrap(op string, err error) error {
	wrapped := fmt.Errorf("apertium: %s: %w", op, err)
	var se *statusError
	if errors.As(err, &se) {
		switch {
		case se.status >= 500, se.status == http.StatusTooManyRequests, se.status == http.StatusRequestTimeout:
			return chat.Unavailable(wrapped)
		}
		return chat.Internal(wrapped)
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// No answer: refused, reset, timed out.
		return chat.Unavailable(wrapped)
	}
	return chat.Internal(wrapped)
}

// BCP47 returns the BCP 47 tag of an APY language code (eng -> en,
// eng_US -> en-US, cat_valencia -> ca-valencia), false when x/text cannot
// name it.
func BCP47(code string) (string, bool) {
	parts := strings.Split(code, "_")
	base, err := language.ParseBase(parts[0])
	if err != nil {
		return "", false
	}
	subtags := []any{base}
	for _, p := range parts[1:] {
		if r, err := language.ParseRegion(p); err == nil {
			subtags = append(subtags, r)
		} else if s, err := language.ParseScript(p); err == nil {
			subtags = append(subtags, s)
		} else if v, err := language.ParseVariant(p); err == nil {
			subtags = append(subtags, v)
		} else {
			return "", false
		}
	}
	t, err := language.Compose(subtags...)
	if err != nil {
		return "", false
	}
	return t.String(), true
}
