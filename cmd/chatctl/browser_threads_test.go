package main

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// key presses k in tab (with modifiers, e.g. Shift), as a person does.
func key(t *testing.T, tab context.Context, what, k string, mods ...input.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	if len(mods) > 0 {
		opts = append(opts, chromedp.KeyModifiers(mods...))
	}
	runIn(t, tab, what, chromedp.KeyEvent(k, opts...))
}

// focused is a JavaScript expression true when the focused element is the
// one of selector.
func focused(selector string) string {
	return `document.activeElement === document.querySelector(` + js(selector) + `)`
}

// TestGuestPageThreadsAndReactionsInChromium (contract section 18): a guest
// reading Spanish on a phone-width screen opens the thread of a member's
// message (its translation shown in the thread's head, focus moved into the
// panel), replies, and sees the reply in the thread and the root's count go
// to 1 without a reload, the reply kept out of the main list; the member's
// reply over HTTP arrives by push into the open thread, then its
// translation (message.updated), then its deletion; Escape closes the
// thread and puts the focus back on its button (the room, inert behind
// the panel on a phone, usable again). With the keyboard only,
// the guest opens the reaction picker (Escape closes it, back on its
// button), moves in it with Tab, and adds 👍: "1", pressed, named for
// screen readers; a member's 🎉 over HTTP shows up live, not pressed, and
// is announced politely; the guest removes its 👍 and the button goes. A
// second guest reading French on a wide screen sees the counts and
// reactions live and the thread beside the list, both usable. No page reloads, nothing
// is refused by the Content-Security-Policy, nothing loads from elsewhere,
// and the consoles log no error.
func TestGuestPageThreadsAndReactionsInChromium(t *testing.T) {
	s := startRealtimeServer(t)
	b := newBrowser(t, s.URL)
	shots := os.Getenv("GUEST_PAGE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	page := s.URL + "/rooms/" + demoRoom
	marta, elodie := b.tab(390, 844), b.tab(1280, 800)
	joinGuest(t, marta, page, "Marta", "es")
	joinGuest(t, elodie, page, "Élodie", "fr")
	for _, tab := range []context.Context{marta, elodie} {
		runIn(t, tab, "mark the page", chromedp.Evaluate(`window.notReloaded = true`, nil))
	}

	// Ben (a member, en-US) asks; its Spanish translation lands.
	const question = "Who can review the release notes?"
	root := s.postAsBenUntranslated(t, question, false)
	s.translate(t, root, 1, question)
	m := "#m-" + root
	waitFor(t, marta, "Marta reads Ben's question in Spanish, with a Reply button and no count",
		`document.querySelector("`+m+` .content")?.textContent === `+js("[es] "+question)+
			` && !document.querySelector("`+m+` .reply-count") && document.querySelector("`+m+` .thread-bar button")?.textContent === "Reply"`+
			` && document.querySelector("`+m+` .thread-bar button").getAttribute("aria-label") === "Reply in a thread"`)

	// Marta opens the thread: a labelled dialog, the focus in its composer,
	// the root at its head in her language.
	runIn(t, marta, "open the thread", chromedp.Click(m+` .thread-bar button`, chromedp.ByQuery))
	waitFor(t, marta, "the thread panel opens on the root, focus inside",
		`(() => { const p = document.getElementById("thread"); if (p.hidden) return false;
			const title = document.getElementById(p.getAttribute("aria-labelledby"));
			return p.getAttribute("role") === "dialog" && title.textContent === "Thread: Ben's message" &&
				p.contains(document.activeElement) && document.activeElement.id === "thread-content" &&
				document.querySelector("#t-`+root+` .content")?.textContent === `+js("[es] "+question)+` &&
				document.getElementById("thread-count").textContent === "No replies yet." &&
				document.querySelectorAll("#thread-replies li").length === 0; })()`)
	waitFor(t, marta, "on a phone the panel covers the screen, nothing wider than it",
		`(() => { const r = document.getElementById("thread").getBoundingClientRect();
			return r.left >= 0 && r.right <= window.innerWidth + 0.5 && r.width > 350 && document.documentElement.scrollWidth <= window.innerWidth &&
				document.getElementById("room").inert === true && document.getElementById("thread").getAttribute("aria-modal") === "true"; })()`)

	// Marta replies (Enter sends): the reply is in the thread, the root's
	// count is 1, in the list and the panel, for her and for Élodie, and
	// the reply is not in the main list.
	const reply = "Yo las reviso esta tarde."
	runIn(t, marta, "reply", chromedp.SendKeys("#thread-content", reply+"\r", chromedp.ByID))
	waitFor(t, marta, "Marta's reply shows in the thread, hers, and the count is 1",
		`(() => { const lis = document.querySelectorAll("#thread-replies li"); return lis.length === 1 && lis[0].classList.contains("mine") &&
			lis[0].querySelector(".content").textContent === `+js(reply)+` && document.getElementById("thread-content").value === "" &&
			document.querySelector("`+m+` .reply-count")?.textContent === "1 reply" && document.getElementById("thread-count").textContent === "1 reply" &&
			document.querySelector("`+m+` .thread-bar button").textContent === "View thread"; })()`)
	var martaReply string
	runIn(t, marta, "the reply's id", chromedp.Evaluate(`document.querySelector("#thread-replies li").id.slice(2)`, &martaReply))
	notInList := `![...document.querySelectorAll("#messages .content")].some(e => e.textContent.includes(` + js(reply) + `)) && !document.getElementById("m-` + martaReply + `")`
	waitFor(t, marta, "the reply is not in Marta's main list", notInList)
	waitFor(t, elodie, "Élodie sees the count go to 1, the reply not in her list",
		`document.querySelector("`+m+` .reply-count")?.textContent === "1 reply" && document.querySelector("`+m+` .thread-bar time")?.dateTime !== "" && `+notInList)

	// Ben replies over HTTP: pushed into Marta's open thread, after hers;
	// its translation lands; the count is 2 everywhere.
	const benReply = "Thanks! I'll merge after your review."
	status, body := s.do(t, "POST", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages",
		map[string]any{"content": benReply, "thread_id": root}, "Authorization", "Bearer "+demoBenToken)
	data, _ := body["data"].(map[string]any)
	benID, _ := data["id"].(string)
	if status != 201 || benID == "" || data["thread_id"] != root {
		t.Fatalf("Ben's reply: %d %v", status, body)
	}
	waitFor(t, marta, "Ben's reply arrives in the open thread, after Marta's",
		`(() => { const lis = [...document.querySelectorAll("#thread-replies li")]; return lis.length === 2 && lis[1].id === "t-`+benID+`" &&
			lis[0].id === "t-`+martaReply+`" && document.querySelector("`+m+` .reply-count")?.textContent === "2 replies" &&
			document.getElementById("thread-count").textContent === "2 replies"; })()`)
	s.translate(t, benID, 1, benReply)
	waitFor(t, marta, "Ben's reply is shown in Spanish in the thread", `document.querySelector("#t-`+benID+` .content")?.textContent === `+js("[es] "+benReply)+
		` && !document.getElementById("m-`+benID+`")`)
	waitFor(t, elodie, "Élodie's count is 2", `document.querySelector("`+m+` .reply-count")?.textContent === "2 replies" && !document.getElementById("m-`+benID+`")`)
	screenshot(t, marta, shots, "guest-thread-es-390px.png")

	// Élodie, on a wide screen, opens the thread: beside the list, both usable.
	runIn(t, elodie, "Élodie opens the thread", chromedp.Click(m+` .thread-bar button`, chromedp.ByQuery))
	waitFor(t, elodie, "the thread is beside the list, with both replies",
		`(() => { const p = document.getElementById("thread"), l = document.getElementById("messages"); if (p.hidden) return false;
			const pr = p.getBoundingClientRect(), lr = l.getBoundingClientRect();
			return lr.right <= pr.left && lr.width > 400 && pr.width > 300 && pr.right <= window.innerWidth + 0.5 &&
				document.querySelectorAll("#thread-replies li").length === 2 && document.documentElement.scrollWidth <= window.innerWidth &&
				document.getElementById("room").inert === false && document.getElementById("thread").getAttribute("aria-modal") === "false"; })()`)
	screenshot(t, elodie, shots, "guest-thread-fr-1280px.png")

	// Ben deletes his reply: a tombstone in Marta's thread, still counted.
	if status, body := s.do(t, "DELETE", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+benID, nil,
		"Authorization", "Bearer "+demoBenToken); status != 204 {
		t.Fatalf("delete Ben's reply: %d %v", status, body)
	}
	waitFor(t, marta, "the deleted reply is a tombstone in the thread", `document.querySelector("#t-`+benID+`.deleted .content")?.textContent === "This message was deleted."`+
		` && !document.getElementById("t-`+benID+`").textContent.includes("merge") && document.querySelector("`+m+` .reply-count")?.textContent === "2 replies"`)

	// Escape closes the thread; the focus is back on its button.
	runIn(t, marta, "focus the reply box", chromedp.Focus("#thread-content", chromedp.ByID))
	key(t, marta, "Escape in the thread", kb.Escape)
	open := m + ` .thread-bar button`
	waitFor(t, marta, "the thread is closed, the focus back on its button",
		`document.getElementById("thread").hidden && !document.getElementById("room").inert && `+focused(open)+
			` && document.activeElement.getAttribute("aria-label") === "View thread, 2 replies" && !document.getElementById("t-`+root+`")`)

	// Reactions by keyboard only: Shift+Tab reaches "Add reaction", Enter
	// opens the picker on its first emoji, Escape closes it (focus back),
	// Tab moves in it, Enter reacts.
	add := m + ` .reactions .add-reaction`
	key(t, marta, "Shift+Tab", kb.Tab, input.ModifierShift)
	waitFor(t, marta, "the focus is on Add reaction", focused(add)+` && document.activeElement.getAttribute("aria-label") === "Add reaction"`)
	key(t, marta, "Enter opens the picker", kb.Enter)
	waitFor(t, marta, "the picker is open, its first emoji focused",
		`document.querySelectorAll("#picker button").length === 12 && document.activeElement.getAttribute("aria-label") === "React with 👍" &&
			document.querySelector("`+add+`").getAttribute("aria-expanded") === "true" &&
			document.querySelector("#picker").getBoundingClientRect().right <= window.innerWidth + 0.5`)
	key(t, marta, "Escape closes the picker", kb.Escape)
	waitFor(t, marta, "the picker is closed, the focus back on its button, the thread still closed",
		`!document.getElementById("picker") && `+focused(add)+` && document.querySelector("`+add+`").getAttribute("aria-expanded") === "false"`)
	key(t, marta, "Enter opens the picker again", kb.Enter)
	waitFor(t, marta, "picker open", `document.activeElement.getAttribute("aria-label") === "React with 👍"`)
	key(t, marta, "Tab in the picker", kb.Tab)
	waitFor(t, marta, "Tab moves to the next emoji", `document.activeElement.getAttribute("aria-label") === "React with ❤️"`)
	key(t, marta, "Shift+Tab in the picker", kb.Tab, input.ModifierShift)
	waitFor(t, marta, "Shift+Tab moves back", `document.activeElement.getAttribute("aria-label") === "React with 👍"`)
	key(t, marta, "Enter reacts", kb.Enter)
	thumb := `[...document.querySelectorAll("` + m + ` .reactions button.reaction")].find(b => b.dataset.emoji === "👍")`
	waitFor(t, marta, "Marta's 👍 shows 1, pressed, named, the focus kept",
		`(() => { const b = `+thumb+`; return !!b && b.textContent === "👍 1" && b.getAttribute("aria-pressed") === "true" &&
			b.getAttribute("aria-label") === "React with 👍, 1 reaction, you reacted" && !document.getElementById("picker") && `+focused(add)+`; })()`)
	waitFor(t, elodie, "Élodie sees 👍 1, not hers", `(() => { const b = `+thumb+`; return !!b && b.textContent === "👍 1" && b.getAttribute("aria-pressed") === "false"; })()`)

	// Ben reacts 🎉 over HTTP: live on both pages, not pressed, announced.
	status, body = s.do(t, "PUT", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+root+"/reactions/"+url.PathEscape("🎉"), nil,
		"Authorization", "Bearer "+demoBenToken)
	if status != 201 {
		t.Fatalf("Ben's 🎉: %d %v", status, body)
	}
	party := `[...document.querySelectorAll("` + m + ` .reactions button.reaction")].find(b => b.dataset.emoji === "🎉")`
	for _, tab := range []context.Context{marta, elodie} {
		waitFor(t, tab, "🎉 1 shows up live, not pressed, after 👍",
			`(() => { const b = `+party+`, bs = [...document.querySelectorAll("`+m+` .reactions button.reaction")];
				return !!b && b.textContent === "🎉 1" && b.getAttribute("aria-pressed") === "false" && b.getAttribute("aria-label") === "React with 🎉, 1 reaction" &&
					bs.length === 2 && bs[0].dataset.emoji === "👍"; })()`)
	}
	waitFor(t, marta, "the change is announced politely", `document.getElementById("announce").getAttribute("aria-live") === "polite" &&
		document.getElementById("announce").textContent.includes("🎉 1")`)
	screenshot(t, marta, shots, "guest-reactions-es-390px.png")

	// Marta removes her 👍: its button goes, on both pages; 🎉 stays.
	runIn(t, marta, "remove 👍", chromedp.Evaluate(`(`+thumb+`).click() || true`, nil))
	for _, tab := range []context.Context{marta, elodie} {
		waitFor(t, tab, "👍 is gone, 🎉 1 stays", `!(`+thumb+`) && (`+party+`)?.textContent === "🎉 1" && document.querySelectorAll("`+m+` .reactions button.reaction").length === 1`)
	}
	// The server agrees: Ben reads 🎉 (his) alone on the root.
	status, body = s.do(t, "GET", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages?limit=5", nil, "Authorization", "Bearer "+demoBenToken)
	if status != 200 {
		t.Fatalf("Ben's list: %d %v", status, body)
	}
	var rs []any
	for _, v := range body["data"].([]any) {
		if v := v.(map[string]any); v["id"] == root {
			rs, _ = v["reactions"].([]any)
			if v["reply_count"] != float64(2) {
				t.Fatalf("the root's reply_count is %v, want 2", v["reply_count"])
			}
		}
	}
	if len(rs) != 1 || rs[0].(map[string]any)["emoji"] != "🎉" || rs[0].(map[string]any)["count"] != float64(1) || rs[0].(map[string]any)["me"] != true {
		t.Fatalf("the root's reactions as Ben reads them: %v, want 🎉 1 his", rs)
	}

	for _, tab := range []context.Context{marta, elodie} {
		waitFor(t, tab, "the page was never reloaded", `window.notReloaded === true`)
	}
	b.check()
	b.checkConsole()
}
