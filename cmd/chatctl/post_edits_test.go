package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/signature"
)

// chatctl post --edit and --delete send the change to the message's own
// path, signed over the body sent (empty for a deletion).
func TestPostEditAndDelete(t *testing.T) {
	const secret = "whsig_test_signing_secret"
	type seen struct {
		method, path, body, ifMatch string
		verified                    error
	}
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, err := signature.Verify(signature.FromRequest(r.Header), []byte(secret), body, time.Now())
		got = append(got, seen{r.Method, r.URL.Path, string(body), r.Header.Get("If-Match"), err})
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	base := []string{"post", "--webhook-url", srv.URL + "/webhooks/W/messages", "--signing-secret", secret}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), append(base, "--edit", "M1", "--if-match", "2", "Fixed"), nil, &out, &errOut); err != nil {
		t.Fatalf("edit: %v\n%s", err, errOut.String())
	}
	if err := run(context.Background(), append(base, "--delete", "M1"), nil, &out, &errOut); err != nil {
		t.Fatalf("delete: %v\n%s", err, errOut.String())
	}
	want := []seen{
		{http.MethodPatch, "/webhooks/W/messages/M1", `{"content":"Fixed"}`, "2", nil},
		{http.MethodDelete, "/webhooks/W/messages/M1", "", "", nil},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
	if err := run(context.Background(), append(base, "--delete", "M1", "content"), nil, &out, &errOut); err == nil {
		t.Fatalf("--delete with content: no error")
	}
}
