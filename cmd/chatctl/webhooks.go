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
	"os"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// EnvAPIToken is where `chatctl webhooks` reads the admin's API token when
// --token is not given, so that it stays out of the shell's history.
const EnvAPIToken = "CHAT_API_TOKEN"

// runWebhooks implements `chatctl webhooks test|recover`: it calls the
// webhook's test or recover endpoint (docs/api.md section 11) as an admin
// and prints the response body on stdout; a refusal is an error with the
// API's message.
func runWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "test" && args[0] != "recover") {
		fmt.Fprint(stderr, usage)
		return errors.New("webhooks: want test or recover")
	}
	action := args[0]
	fs := flag.NewFlagSet("webhooks "+action, flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := fs.String("api", "http://"+defaultAddr, "the API's base URL")
	ws := fs.String("workspace", "", "the workspace id")
	kind := fs.String("kind", "outbound", "outbound or support")
	token := fs.String("token", "", "an admin's API token (default $"+EnvAPIToken+")")
	var since, until *string
	if action == "recover" {
		since = fs.String("since", "", "queue the failed deliveries of events from this time on (RFC 3339, or a Go duration ago such as 6h)")
		until = fs.String("until", "", "... up to this time (RFC 3339 or a duration ago; default now)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *token == "" {
		*token = os.Getenv(EnvAPIToken)
	}
	if fs.NArg() != 1 || *ws == "" || *token == "" || (*kind != "outbound" && *kind != "support") {
		fs.Usage()
		return fmt.Errorf("webhooks %s: want --workspace, --token (or $%s), --kind outbound|support and the webhook id", action, EnvAPIToken)
	}
	base, err := url.Parse(*api)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("webhooks: --api %q is not an http(s) URL", *api)
	}
	var body []byte
	if action == "recover" {
		window := map[string]string{}
		for name, v := range map[string]string{"since": *since, "until": *until} {
			if v == "" {
				continue
			}
			t, err := whenFlag(v, time.Now())
			if err != nil {
				return fmt.Errorf("webhooks recover: --%s: %w", name, err)
			}
			window[name] = t
		}
		if window["since"] == "" {
			return errors.New("webhooks recover: --since is required")
		}
		if body, err = json.Marshal(window); err != nil {
			return err
		}
	}
	target := strings.TrimRight(base.String(), "/") + "/api/v1/workspaces/" + url.PathEscape(*ws) + "/" + *kind + "-webhooks/" +
		url.PathEscape(fs.Arg(0)) + "/" + action
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*token)
	req.Header.Set("User-Agent", "chatctl-webhooks/1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// The test endpoint waits for the receiver (at most 10 s).
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("webhooks %s: %w", action, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("webhooks %s: read the response: %w", action, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(out, &e)
		return fmt.Errorf("webhooks %s: %s: %s", action, resp.Status, orUnknown(e.Message))
	}
	_, err = fmt.Fprintf(stdout, "%s\n", bytes.TrimSpace(out))
	return err
}

// whenFlag reads a time as RFC 3339, or as a Go duration before now.
func whenFlag(v string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return chat.FormatTime(t), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return "", fmt.Errorf("%q is neither an RFC 3339 time nor a duration ago (6h, 90m)", v)
	}
	return chat.FormatTime(now.Add(-d)), nil
}
