package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/signature"
)

// runPost implements `chatctl post`: it sends one correctly authenticated
// inbound webhook request (a post, or with --edit or --delete a change of
// a message the webhook posted) and prints what it sent (the string it signed
// and the signature, so that a sender's author can compare) on stderr and
// the response on stdout.
func runPost(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("post", flag.ContinueOnError)
	fs.SetOutput(stderr)
	webhookURL := fs.String("webhook-url", "", "the webhook's URL, e.g. http://127.0.0.1:3000/webhooks/<id>/messages")
	secret := fs.String("secret", "", "the webhook's static secret (sent in X-Service-Webhook-Secret)")
	signing := fs.String("signing-secret", "", "the webhook's signing secret (signs the request with X-Service-Signature)")
	key := fs.String("idempotency-key", "", "an Idempotency-Key for safe retries")
	channel := fs.String("channel", "", "post to this channel of the webhook's workspace instead of its own")
	skip := fs.Bool("skip-translation", false, "deliver the content as it is, untranslated")
	edit := fs.String("edit", "", "edit message `ID` (one the webhook posted) to the content instead of posting")
	del := fs.String("delete", "", "delete message `ID` (one the webhook posted) instead of posting; takes no content")
	ifMatch := fs.String("if-match", "", "with --edit: the revision the edit expects (If-Match)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	wantArgs := 1
	if *del != "" {
		wantArgs = 0
	}
	if *webhookURL == "" || fs.NArg() != wantArgs || (*secret == "") == (*signing == "") || (*edit != "" && *del != "") {
		fs.Usage()
		return errors.New("post: want --webhook-url, exactly one of --secret and --signing-secret, and the content (none with --delete; not both --edit and --delete)")
	}
	u, err := url.Parse(*webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("post: --webhook-url %q is not an http(s) URL", *webhookURL)
	}
	method := http.MethodPost
	payload := map[string]any{}
	if *del == "" {
		payload["content"] = fs.Arg(0)
	}
	if *channel != "" {
		payload["channel_id"] = *channel
	}
	if *skip {
		payload["skip_translation"] = true
	}
	if id := *edit + *del; id != "" {
		// Contract section 13: the message's own path under the webhook's.
		method = http.MethodPatch
		if *del != "" {
			method = http.MethodDelete
		}
		u = u.JoinPath(url.PathEscape(id))
	}
	var body []byte
	if len(payload) > 0 {
		if body, err = json.Marshal(payload); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "chatctl-post/1")
	if *key != "" {
		req.Header.Set("Idempotency-Key", *key)
	}
	if *ifMatch != "" {
		req.Header.Set("If-Match", *ifMatch)
	}
	fmt.Fprintf(stderr, "%s %s\nbody: %s\n", method, u.Redacted(), body)
	if *secret != "" {
		req.Header.Set("X-Service-Webhook-Secret", *secret)
		fmt.Fprintln(stderr, "X-Service-Webhook-Secret: <the secret you gave>")
	} else {
		t := time.Now().Unix()
		sig := signature.Sign([]byte(*signing), t, body)
		req.Header.Set(signature.Header, signature.Format(t, sig))
		fmt.Fprintf(stderr, "signed string: %d.%s\nHMAC-SHA256 (hex): %s\n%s: %s\n", t, body, sig, signature.Header, req.Header.Get(signature.Header))
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("post: read response: %w", err)
	}
	fmt.Fprintf(stdout, "%s %s\n", resp.Proto, resp.Status)
	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(stdout, "%s: %s\n", k, strings.Join(resp.Header[k], ", "))
	}
	fmt.Fprintf(stdout, "\n%s\n", out)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("post: the service answered %s", resp.Status)
	}
	return nil
}
