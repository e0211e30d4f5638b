package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/wsapi"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium that may load nothing but origin: every
// request is intercepted (the fetch domain) and every request and
// WebSocket watched (the network domain); any other origin fails the test.
type browser struct {
	t      *testing.T
	path   string
	origin string
	// also are other origins the pages may load from (the bucket's).
	also    []string
	mu      sync.Mutex
	foreign []string
	// problems are script exceptions and Content-Security-Policy reports.
	problems []string
	// consoleErrors are the console's errors (console.error, a failed
	// request): checkConsole fails a test that expects none.
	consoleErrors []string
}

func newBrowser(t *testing.T, origin string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("SKIPPED: chromium is not installed (scripts/ensure-test-tools installs the Debian package); the guest page's browser test did not run")
	}
	return &browser{t: t, path: path, origin: origin}
}

// allocator starts a Chromium of its own, with a fresh profile: each guest
// is a person with their own browser.
func (b *browser) allocator() context.Context {
	// A fresh profile, removed after the browser has stopped: Chromium's
	// helper processes can still be writing to it for a moment after the
	// browser exits, which t.TempDir's strict cleanup reports as an error.
	profile, err := os.MkdirTemp("", "chatctl-browser-")
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		b.t.Logf("browser profile %s left behind", profile)
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(b.path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(profile),
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	b.t.Cleanup(cancel)
	return alloc
}

// allowed reports whether u is of the test server's origin (http or ws).
func (b *browser) allowed(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	if p.Scheme == "data" || p.Scheme == "about" {
		return true
	}
	for _, a := range b.also {
		if o, _ := url.Parse(a); p.Scheme == o.Scheme && p.Host == o.Host {
			return true
		}
	}
	o, _ := url.Parse(b.origin)
	return (p.Scheme == "http" || p.Scheme == "ws") && p.Host == o.Host
}

func (b *browser) note(u string) {
	if !b.allowed(u) {
		b.mu.Lock()
		b.foreign = append(b.foreign, u)
		b.mu.Unlock()
	}
}

// tab opens a new browser of width by height pixels, intercepting its requests.
func (b *browser) tab(width, height int64) context.Context {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.allocator())
	b.t.Cleanup(cancel)
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				exec := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target)
				if b.allowed(e.Request.URL) {
					_ = fetch.ContinueRequest(e.RequestID).Do(exec)
					return
				}
				b.note(e.Request.URL)
				_ = fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(exec)
			}()
		case *network.EventRequestWillBeSent:
			b.note(e.Request.URL)
		case *network.EventWebSocketCreated:
			b.note(e.URL)
		case *runtime.EventExceptionThrown:
			b.problem("exception: " + e.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if e.Entry.Source == cdplog.SourceSecurity || strings.Contains(e.Entry.Text, "Content Security Policy") {
				b.problem("CSP: " + e.Entry.Text)
			}
			if e.Entry.Level == cdplog.LevelError {
				b.consoleError(string(e.Entry.Source) + ": " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.consoleError("console.error: " + strings.Join(args, " "))
			}
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), fetch.Enable(), cdplog.Enable(), runtime.Enable(), chromedp.EmulateViewport(width, height)); err != nil {
		b.t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func (b *browser) problem(p string) {
	b.mu.Lock()
	b.problems = append(b.problems, p)
	b.mu.Unlock()
}

func (b *browser) consoleError(p string) {
	b.mu.Lock()
	b.consoleErrors = append(b.consoleErrors, p)
	b.mu.Unlock()
}

// checkConsole fails the test if a page logged an error to its console.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.consoleErrors) > 0 {
		b.t.Fatalf("the pages logged errors: %v", b.consoleErrors)
	}
}

func (b *browser) check() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		b.t.Fatalf("the pages reported: %v", b.problems)
	}
	if len(b.foreign) > 0 {
		b.t.Fatalf("the browser tried to load from outside the test server: %v", b.foreign)
	}
}

// runIn runs actions on tab within 10 s.
func runIn(t *testing.T, tab context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits up to 5 s for the JavaScript expression to be true.
func waitFor(t *testing.T, tab context.Context, what, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var body string
		_ = chromedp.Run(tab, chromedp.Text("main", &body, chromedp.ByQuery))
		t.Fatalf("%s: not within 5 s (%v); the page reads:\n%s", what, err, body)
	}
	return time.Since(start)
}

func screenshot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	var png []byte
	runIn(t, tab, "screenshot "+name, chromedp.FullScreenshot(&png, 100))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// offline takes tab's network down (true) or up: a WebSocket cannot open
// while it is down.
func offline(t *testing.T, tab context.Context, down bool) {
	t.Helper()
	runIn(t, tab, "network offline="+fmt.Sprint(down), network.EmulateNetworkConditions(down, 0, -1, -1))
}

// waitForWithin is waitFor with a longer patience d (a reconnect's backoff).
func waitForWithin(t *testing.T, tab context.Context, what string, d time.Duration, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(tab, d)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var body string
		_ = chromedp.Run(tab, chromedp.Text("main", &body, chromedp.ByQuery))
		t.Fatalf("%s: not within %v (%v); the page reads:\n%s", what, d, err, body)
	}
	return time.Since(start)
}

// js quotes s as a JavaScript string.
func js(s string) string { return fmt.Sprintf("%q", s) }

// TestGuestPageInChromium: two guests, one reading Spanish on a phone-width
// screen, one reading French, join the same room through its page; a
// webhook post shows in each one's language within 5 s, its original on
// demand; a guest's own post reaches the other; closing the room ends both
// pages' sessions with a notice. Nothing is loaded from outside the test
// server.
func TestGuestPageInChromium(t *testing.T) {
	s := startRealtimeServer(t)
	b := newBrowser(t, s.URL)
	// GUEST_PAGE_SCREENSHOTS keeps the screenshots for review; by default
	// they go to the test's own directory, removed after it.
	shots := os.Getenv("GUEST_PAGE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	page := s.URL + "/rooms/" + demoRoom
	guests := []struct {
		nickname, lang string
		width, height  int64
		tab            context.Context
	}{
		{nickname: "Marta", lang: "es", width: 390, height: 844},
		{nickname: "Élodie", lang: "fr", width: 1280, height: 800},
	}
	for i := range guests {
		g := &guests[i]
		g.tab = b.tab(g.width, g.height)
		var lang string
		runIn(t, g.tab, "open the page", chromedp.Navigate(page), chromedp.WaitVisible("#nickname", chromedp.ByID), chromedp.Value("#language", &lang, chromedp.ByID))
		if lang == "" {
			t.Fatalf("the language field has no default from navigator.language")
		}
		runIn(t, g.tab, "join",
			chromedp.SendKeys("#nickname", g.nickname, chromedp.ByID),
			chromedp.Evaluate(`document.getElementById("language").value = ""`, nil),
			chromedp.SendKeys("#language", g.lang, chromedp.ByID),
			chromedp.Click("#join button", chromedp.ByQuery))
		waitFor(t, g.tab, g.nickname+" is live", `document.getElementById("status").textContent.startsWith("Live")`)
	}

	const english = "The build passed <b>and</b> the new version is ready 🎉"
	status, body := s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", map[string]string{"content": english, "channel_id": demoSupport},
		"X-Service-Webhook-Secret", demoWebhookKey)
	if status != 202 {
		t.Fatalf("webhook post: %d %v", status, body)
	}
	id, _ := body["data"].(map[string]any)["id"].(string)
	if id == "" {
		t.Fatalf("webhook post: no id in %v", body)
	}
	for _, g := range guests {
		d := waitFor(t, g.tab, g.nickname+" sees the post", `(document.getElementById("m-`+id+`")||{}).textContent?.includes(`+js(english)+`)`)
		t.Logf("%s saw the post's original %v after the 202", g.nickname, d)
	}
	// The translations land (TRANSLATOR=none here; the test stores them as
	// the translation function would).
	translated := map[string]string{"es": "La compilación pasó <b>y</b> la nueva versión está lista 🎉", "fr": "La compilation a réussi et la nouvelle version est prête 🎉"}
	var ts []chat.Translation
	for lang, text := range translated {
		ts = append(ts, chat.Translation{MessageID: id, Language: lang, Content: text, SourceLanguage: "en", CreatedAt: time.Now()})
	}
	if err := storetest.New(s.a.DB, s.a.Table).Translation.SaveTranslations(context.Background(), demoSupport, id, ts, true); err != nil {
		t.Fatal(err)
	}
	for _, g := range guests {
		d := waitFor(t, g.tab, g.nickname+" reads the post in "+g.lang,
			`document.querySelector("#m-`+id+` .content")?.textContent === `+js(translated[g.lang]))
		t.Logf("%s read the post in %s %v after its translation landed", g.nickname, g.lang, d)
		runIn(t, g.tab, "show the original", chromedp.Click("#m-"+id+" button.link", chromedp.ByQuery))
		waitFor(t, g.tab, g.nickname+" sees the original", `document.querySelector("#m-`+id+` .original")?.textContent === `+js(english)+
			` && document.querySelector("#m-`+id+` button.link").getAttribute("aria-pressed") === "true"`)
	}

	// Marta posts from her page (Enter sends); Élodie sees it.
	const reply = "Gracias, lo pruebo ahora."
	runIn(t, guests[0].tab, "post", chromedp.SendKeys("#content", reply+"\r", chromedp.ByID))
	waitFor(t, guests[1].tab, "Élodie sees Marta's post", `[...document.querySelectorAll("#messages .content")].some(e => e.textContent === `+js(reply)+`)`)
	waitFor(t, guests[0].tab, "Marta's box is cleared", `document.getElementById("content").value === ""`)

	waitFor(t, guests[0].tab, "Marta's own post is set apart", `[...document.querySelectorAll("#messages li.mine .content")].some(e => e.textContent === `+js(reply)+`)`)
	waitFor(t, guests[1].tab, "the bot's post is marked", `document.querySelector("#m-`+id+` .badge")?.textContent === "bot"`)

	// Marta edits her reply on her page, then deletes it (contract section
	// 13): Élodie reads the edit, marked, live, then no text at all.
	const edited = "Gracias, ya lo probé."
	mine := `[...document.querySelectorAll("#messages li.mine")].find(li => li.querySelector(".content")?.textContent.startsWith(` + js(reply) + `))`
	runIn(t, guests[0].tab, "edit", chromedp.Evaluate(`(() => { const li = `+mine+`; li.querySelector(".actions button").click();
		li.querySelector("form.edit textarea").value = `+js(edited)+`; li.querySelector("form.edit").requestSubmit(); return true; })()`, nil))
	theirs := `[...document.querySelectorAll("#messages li")].find(li => li.querySelector(".content")?.textContent.startsWith(` + js(edited) + `))`
	waitFor(t, guests[1].tab, "Élodie reads the edit, marked edited", `(`+theirs+`)?.textContent.includes("(edited)") === true`)
	var editedID string
	runIn(t, guests[1].tab, "the edited message's id", chromedp.Evaluate(`(`+theirs+`).id`, &editedID))
	runIn(t, guests[0].tab, "delete", chromedp.Evaluate(`document.querySelector("#`+editedID+` .actions button:nth-of-type(2)").click() || true`, nil))
	waitFor(t, guests[1].tab, "Élodie sees it deleted, its text gone",
		`document.querySelector("#`+editedID+`.deleted .content")?.textContent === "This message was deleted." && !document.getElementById("`+editedID+`").textContent.includes("Gracias")`)

	// Typing: Élodie types; Marta's page says so (an aria-live region).
	typed := time.Now()
	runIn(t, guests[1].tab, "type", chromedp.SendKeys("#content", "Je", chromedp.ByID))
	waitFor(t, guests[0].tab, "Marta sees Élodie typing", `document.getElementById("typing").textContent === "Élodie is typing…"`)
	t.Logf("typing: from the keystroke to the other page showing it %v", time.Since(typed))
	runIn(t, guests[1].tab, "clear", chromedp.Evaluate(`document.getElementById("content").value = ""`, nil))
	shownFor := waitForWithin(t, guests[0].tab, "the typing notice ends", 8*time.Second, `document.getElementById("typing").textContent === ""`)
	t.Logf("typing: the notice went after %v more", shownFor)

	// Marta's phone drops its connection (offline, and the server side
	// closed); a message is posted meanwhile; back online, the page
	// reconnects by itself and shows it once.
	offline(t, guests[0].tab, true)
	conns, err := storetest.New(s.a.DB, s.a.Table).Conns.Connections(context.Background(), demoSupport, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sender := wsapi.NewClientFromConfig(s.a.AWS, s.rt.ManagementURL)
	for _, c := range conns {
		if c.Name == "Marta" {
			if err := sender.Close(context.Background(), c.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, guests[0].tab, "Marta's page says it is reconnecting", `!document.getElementById("conn").hidden && document.getElementById("status").textContent.includes("Reconnecting")`)
	screenshot(t, guests[0].tab, shots, "guest-1-es-reconnecting.png")
	const missed = "Sent while Marta was offline"
	status, body = s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", map[string]string{"content": missed, "channel_id": demoSupport},
		"X-Service-Webhook-Secret", demoWebhookKey)
	if status != 202 {
		t.Fatalf("webhook post: %d %v", status, body)
	}
	missedID, _ := body["data"].(map[string]any)["id"].(string)
	waitFor(t, guests[1].tab, "Élodie sees it live", `!!document.getElementById("m-`+missedID+`")`)
	time.Sleep(time.Second) // its push is done while Marta is away
	back := time.Now()
	offline(t, guests[0].tab, false)
	waitForWithin(t, guests[0].tab, "Marta's page reconnects and shows the missed message", 40*time.Second,
		`document.getElementById("conn").hidden && document.querySelectorAll("#m-`+missedID+`").length === 1 && document.getElementById("status").textContent.startsWith("Live")`)
	t.Logf("reconnect: back online to the missed message shown %v", time.Since(back))
	var shown int
	runIn(t, guests[0].tab, "count", chromedp.Evaluate(`[...document.querySelectorAll("#messages .content")].filter(e => e.textContent === `+js(missed)+`).length`, &shown))
	if shown != 1 {
		t.Fatalf("the missed message shows %d times, want once", shown)
	}

	// The list follows the newest message while the reader is at the
	// bottom; scrolled up, a "New messages" marker appears instead.
	ids := chat.NewIDs()
	var last chat.Message
	for i := range 25 {
		last = s.store(t, ids, demoSupport, fmt.Sprint("Line ", i+1))
	}
	const atBottom = `(() => { const l = document.getElementById("messages"); return l.scrollHeight - l.scrollTop - l.clientHeight < 48; })()`
	waitFor(t, guests[0].tab, "Marta's list follows the newest", `!!document.getElementById("m-`+last.ID+`") && `+atBottom+` && document.getElementById("new-marker").hidden`)
	runIn(t, guests[0].tab, "scroll up", chromedp.Evaluate(`document.getElementById("messages").scrollTop = 0`, nil))
	later := s.store(t, ids, demoSupport, "While Marta reads back")
	waitFor(t, guests[0].tab, "the new-messages marker", `!!document.getElementById("m-`+later.ID+`") && !document.getElementById("new-marker").hidden && document.getElementById("messages").scrollTop < 48`)
	screenshot(t, guests[0].tab, shots, "guest-1-es-390px-new-messages.png")
	runIn(t, guests[0].tab, "follow the marker", chromedp.Click("#new-marker", chromedp.ByID))
	waitFor(t, guests[0].tab, "back at the newest", atBottom+` && document.getElementById("new-marker").hidden`)

	for i, g := range guests {
		screenshot(t, g.tab, shots, fmt.Sprintf("guest-%d-%s-%dpx-live.png", i+1, g.lang, g.width))
	}
	if status, body := s.do(t, "POST", "/api/v1/workspaces/"+demoWorkspace+"/rooms/"+demoRoom+"/close", nil, "Authorization", "Bearer wsk_demo_ana_token"); status != 200 {
		t.Fatalf("close: %d %v", status, body)
	}
	for i, g := range guests {
		waitFor(t, g.tab, g.nickname+" is told the room closed",
			`!document.getElementById("closed").hidden && document.getElementById("closed").textContent.includes("closed") && document.getElementById("content").disabled`)
		screenshot(t, g.tab, shots, fmt.Sprintf("guest-%d-%s-closed.png", i+1, g.lang))
	}
	// The token stayed in memory: nothing in storage, cookies or the URL.
	var stored string
	runIn(t, guests[0].tab, "storage", chromedp.Evaluate(`localStorage.length + "/" + sessionStorage.length + "/" + document.cookie + "/" + location.search`, &stored))
	if stored != "0/0//" {
		t.Fatalf("storage/cookies/query: %q, want nothing kept", stored)
	}
	b.check()
	// The policy is enforced, and the watch above sees it: an image from a
	// data: URL (img-src 'self' only) is refused and reported.
	runIn(t, guests[0].tab, "inject an image", chromedp.Evaluate(`document.body.appendChild(Object.assign(document.createElement("img"), {src: "data:image/gif;base64,R0lGODlhAQABAAAAACw="})) && true`, nil))
	deadline := time.Now().Add(3 * time.Second)
	for {
		b.mu.Lock()
		reported := len(b.problems) > 0 && strings.Contains(b.problems[0], "CSP")
		b.mu.Unlock()
		if reported {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a data: image loaded without a Content-Security-Policy report")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
