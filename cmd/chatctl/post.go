package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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
	thread := fs.String("thread", "", "post a reply in the thread of message `ID` (a reply's id joins its root's thread)")
	ifMatch := fs.String("if-match", "", "with --edit: the revision the edit expects (If-Match)")
	var files, alts []string
	fs.Func("attach", "attach `FILE` (repeatable): it is uploaded first (POST .../uploads, then the presigned POST)", func(v string) error {
		files = append(files, v)
		return nil
	})
	fs.Func("alt", "alt `TEXT` of the --attach at the same position (repeatable)", func(v string) error {
		alts = append(alts, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	wantArgs := 1
	if *del != "" {
		wantArgs = 0
	}
	if len(files) > 0 && fs.NArg() == 0 && *del == "" {
		wantArgs = 0 // a post of files alone
	}
	if *webhookURL == "" || fs.NArg() != wantArgs || (*secret == "") == (*signing == "") || (*edit != "" && *del != "") ||
		*thread != "" && *edit+*del != "" ||
		len(alts) > len(files) || len(files) > 0 && *del != "" {
		fs.Usage()
		return errors.New("post: want --webhook-url, exactly one of --secret and --signing-secret, and the content (none with --delete; not both --edit and --delete; --thread only on a post)")
	}
	u, err := url.Parse(*webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("post: --webhook-url %q is not an http(s) URL", *webhookURL)
	}
	auth := webhookAuth{secret: *secret, signing: *signing}
	method := http.MethodPost
	payload := map[string]any{}
	if *del == "" && fs.NArg() > 0 {
		payload["content"] = fs.Arg(0)
	}
	if len(files) > 0 {
		refs := make([]map[string]string, len(files))
		for i, f := range files {
			id, err := uploadFile(ctx, u, auth, *channel, f, stderr)
			if err != nil {
				return err
			}
			refs[i] = map[string]string{"upload_id": id}
			if i < len(alts) {
				refs[i]["alt_text"] = alts[i]
			}
		}
		payload["attachments"] = refs
	}
	if *channel != "" {
		payload["channel_id"] = *channel
	}
	if *skip {
		payload["skip_translation"] = true
	}
	if *thread != "" {
		payload["thread_id"] = *thread
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
	auth.apply(req, body, stderr)
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

// webhookAuth is a webhook's credentials: a static secret, or a signing
// secret.
type webhookAuth struct{ secret, signing string }

// apply authenticates req, whose body is body, and prints what it sent (a
// secret never).
func (a webhookAuth) apply(req *http.Request, body []byte, stderr io.Writer) {
	if a.secret != "" {
		req.Header.Set("X-Service-Webhook-Secret", a.secret)
		fmt.Fprintln(stderr, "X-Service-Webhook-Secret: <the secret you gave>")
		return
	}
	t := time.Now().Unix()
	sig := signature.Sign([]byte(a.signing), t, body)
	req.Header.Set(signature.Header, signature.Format(t, sig))
	fmt.Fprintf(stderr, "signed string: %d.%s\nHMAC-SHA256 (hex): %s\n%s: %s\n", t, body, sig, signature.Header, req.Header.Get(signature.Header))
}

// uploadFile uploads path for the webhook whose messages URL is posts: it
// asks POST <webhook>/uploads for a presigned POST (its type read from
// the file's name, or its first bytes), sends the file to storage with it,
// and returns the upload's id.
func uploadFile(ctx context.Context, posts *url.URL, auth webhookAuth, channel, path string, stderr io.Writer) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("post: --attach: %w", err)
	}
	ct, _, _ := mime.ParseMediaType(mime.TypeByExtension(filepath.Ext(path)))
	if ct == "" {
		ct, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	announce := map[string]any{"filename": filepath.Base(path), "content_type": ct, "size": len(data)}
	if channel != "" {
		announce["channel_id"] = channel
	}
	body, _ := json.Marshal(announce)
	uploads := *posts
	uploads.Path = strings.TrimSuffix(strings.TrimSuffix(uploads.Path, "/"), "/messages") + "/uploads"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uploads.String(), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	fmt.Fprintf(stderr, "POST %s\nbody: %s\n", uploads.Redacted(), body)
	auth.apply(req, body, stderr)
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("post: upload %s: %w", path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("post: upload %s: the service answered %s: %s", path, resp.Status, out)
	}
	var form struct {
		Data struct {
			UploadID string            `json:"upload_id"`
			URL      string            `json:"url"`
			Fields   map[string]string `json:"fields"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &form); err != nil {
		return "", fmt.Errorf("post: upload %s: %w", path, err)
	}
	// The form's fields, then the file, last: S3 ignores what follows it.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	names := make([]string, 0, len(form.Data.Fields))
	for k := range form.Data.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		_ = w.WriteField(k, form.Data.Fields[k])
	}
	fw, err := w.CreateFormFile("file", filepath.Base(path))
	if err != nil {
		return "", err
	}
	fw.Write(data)
	w.Close()
	send, err := http.NewRequestWithContext(ctx, http.MethodPost, form.Data.URL, &mp)
	if err != nil {
		return "", err
	}
	send.Header.Set("Content-Type", w.FormDataContentType())
	fmt.Fprintf(stderr, "POST %s (the presigned form, %d bytes of %s)\n", form.Data.URL, len(data), ct)
	sent, err := client.Do(send)
	if err != nil {
		return "", fmt.Errorf("post: send %s: %w", path, err)
	}
	defer sent.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(sent.Body, 64<<10))
	if sent.StatusCode/100 != 2 {
		return "", fmt.Errorf("post: storage refused %s: %s %s", path, sent.Status, answer)
	}
	return form.Data.UploadID, nil
}
