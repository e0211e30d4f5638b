package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/signature"
)

// TestPostSignsWhatTheServiceVerifies checks chatctl post against the
// verifier the service runs.
func TestPostSignsWhatTheServiceVerifies(t *testing.T) {
	const secret = "whsig_test_signing_secret"
	var verified error
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, verified = signature.Verify(signature.FromRequest(r.Header), []byte(secret), body, time.Now())
		gotKey = r.Header.Get("Idempotency-Key")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"data":{}}`))
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"post", "--webhook-url", srv.URL + "/webhooks/X/messages", "--signing-secret", secret, "--idempotency-key", "k1", "Hello"}, nil, &out, &errOut)
	if err != nil {
		t.Fatalf("post: %v\n%s", err, errOut.String())
	}
	if verified != nil {
		t.Fatalf("the service's verifier refused chatctl's signature: %v", verified)
	}
	if gotKey != "k1" || !strings.Contains(out.String(), "202 Accepted") {
		t.Fatalf("key %q, output %q", gotKey, out.String())
	}
}

func TestPostStaticSecretIsNotPrinted(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("X-Service-Webhook-Secret")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"post", "--webhook-url", srv.URL, "--secret", "whsec_do_not_print", "Hi"}, nil, &out, &errOut)
	if err == nil {
		t.Fatalf("a 401 answer is not an error")
	}
	if got != "whsec_do_not_print" {
		t.Fatalf("secret header %q", got)
	}
	if strings.Contains(out.String()+errOut.String(), "whsec_do_not_print") {
		t.Fatalf("the static secret was printed")
	}
}

func TestPostNeedsExactlyOneCredential(t *testing.T) {
	for _, args := range [][]string{
		{"post", "--webhook-url", "http://127.0.0.1:1/x", "Hi"},
		{"post", "--webhook-url", "http://127.0.0.1:1/x", "--secret", "a", "--signing-secret", "b", "Hi"},
		{"post", "--secret", "a", "Hi"},
		{"post", "--webhook-url", "ftp://x", "--secret", "a", "Hi"},
	} {
		if err := run(context.Background(), args, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestPostThread sends --thread as the body's thread_id, and refuses it
// beside --edit or --delete.
func TestPostThread(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = string(body)
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"data":{}}`))
	}))
	defer srv.Close()
	const root = "01JD0000000000000000000000"
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"post", "--webhook-url", srv.URL + "/webhooks/X/messages", "--secret", "s", "--thread", root, "Hi"}, nil, &out, &errOut); err != nil {
		t.Fatalf("post: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(got, `"thread_id":"`+root+`"`) || !strings.Contains(got, `"content":"Hi"`) {
		t.Fatalf("body %s, want thread_id %s", got, root)
	}
	got = ""
	if err := run(context.Background(), []string{"post", "--webhook-url", srv.URL + "/webhooks/X/messages", "--secret", "s", "--thread", root, "--edit", root, "Hi"}, nil, &out, &errOut); err == nil || got != "" {
		t.Fatalf("--thread with --edit: err %v, sent %q; want refused before any request", err, got)
	}
}
