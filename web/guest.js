// The guest page (contract section 12): join a Temporary Room, read it live
// in your language over the realtime API, post, and see originals on demand.
// The guest token lives in this closure only: never in storage or a URL.
"use strict";
(function () {
  const app = document.getElementById("app");
  const roomId = app.dataset.roomId;
  const base = "/api/v1/external/rooms/" + encodeURIComponent(roomId);
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  const list = $("messages");
  const views = new Map(); // message id -> view: every message shows once, by id
  // Threads and reactions (contract section 18): the main list holds roots
  // only; replies (of any thread, as they are pushed or read) live here.
  const replies = new Map(); // reply id -> view
  const myReactions = new Map(); // message id -> Set of this guest's emoji
  let thread = null; // the open thread: { root, cursor }
  let picker = null; // the open reaction picker: { el, li, id }
  let token = null;
  let guestId = null;
  let socket = null;
  let closed = false;
  let retry = 0; // reconnect attempts since the last "subscribed"
  let pinger = null;
  let watchdog = null;
  let live = false;
  let lastTyping = 0;
  const typists = new Map(); // name -> time its "typing" ends
  let typingTimer = null;

  $("language").value = navigator.language || "en";

  function say(text) { status.textContent = text; }

  async function api(method, path, body, ifMatch) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (ifMatch) headers["If-Match"] = ifMatch;
    if (token) headers["X-Service-Guest-Token"] = token;
    const resp = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    return { status: resp.status, data, retryAfter: resp.headers.get("Retry-After") };
  }

  function firstError(data, fallback) {
    if (data && data.errors) {
      for (const k of Object.keys(data.errors)) {
        if (k !== "code" && data.errors[k].length) return data.errors[k][0];
      }
    }
    return (data && data.message) || fallback;
  }

  $("join").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const err = $("join-error");
    err.textContent = "";
    const nickname = $("nickname").value.trim();
    const language = $("language").value.trim();
    if (!nickname) { err.textContent = "Please choose a nickname."; $("nickname").focus(); return; }
    if (!language) { err.textContent = "Please choose a language."; $("language").focus(); return; }
    const button = ev.submitter || $("join").querySelector("button");
    button.disabled = true;
    const r = await api("POST", "/guests", { nickname, preferred_language: language }).catch(() => ({ status: 0 }));
    button.disabled = false;
    if (r.status === 410) { err.textContent = "This room is closed or has expired."; return; }
    if (r.status !== 200 && r.status !== 201) { err.textContent = firstError(r.data, "Could not join the room. Please try again."); return; }
    token = r.data.data.session.token;
    guestId = r.data.data.guest.id;
    $("room-name").textContent = r.data.data.room.name;
    document.title = r.data.data.room.name;
    $("join").hidden = true;
    $("room").hidden = false;
    say("Joined as " + r.data.data.guest.nickname + ", reading in " + r.data.data.guest.preferred_language + ". Connecting…");
    await load();
    connect();
    $("content").focus();
  });

  async function load() {
    const r = await api("GET", "/messages?limit=50").catch(() => ({ status: 0 }));
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status !== 200) return;
    for (const v of r.data.data.slice().reverse()) upsert(v);
  }

  // newest is the id of the newest message held: what a reconnect asks the
  // server to backfill after (ULIDs sort by time).
  function newest() {
    let id = "";
    for (const k of views.keys()) if (k > id) id = k;
    for (const k of replies.keys()) if (k > id) id = k;
    return id;
  }

  function connect() {
    if (closed || !token) return;
    const configured = app.dataset.realtimeUrl;
    const url = configured || ((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/realtime");
    const ws = new WebSocket(url);
    socket = ws;
    ws.addEventListener("open", () => {
      const req = { action: "subscribe", token };
      const since = newest();
      if (since) req.since = since;
      ws.send(JSON.stringify(req));
      // A subscribe that is not answered is a dead connection: retry.
      clearTimeout(watchdog);
      watchdog = setTimeout(() => { if (!live) ws.close(); }, 15000);
    });
    ws.addEventListener("message", (ev) => {
      if (ws !== socket) return;
      let frame;
      try { frame = JSON.parse(ev.data); } catch (e) { return; }
      switch (frame.type) {
        case "subscribed":
          retry = 0;
          live = true;
          clearTimeout(watchdog);
          $("conn").hidden = true;
          say("Live: new messages appear as they arrive, in " + frame.language + ".");
          clearInterval(pinger);
          pinger = setInterval(() => { if (ws.readyState === 1) ws.send('{"action":"ping"}'); }, 5 * 60 * 1000);
          break;
        case "message":
        case "message.updated":
          upsert(frame.data, "push");
          break;
        case "message.deleted":
          if (frame.data && held(frame.data.id)) upsert(tombstone(held(frame.data.id)), "push");
          break;
        case "reaction":
          if (frame.data && frame.data.message_id && frame.data.emoji) reacted(frame.data.message_id, frame.data.emoji, frame.data.count, true);
          break;
        case "message.too_large":
          load();
          break;
        case "backfill_truncated":
          // More was missed than the backfill holds: page back with GET,
          // or, when even the changes did not fit, read the room anew.
          if (frame.reload) reload();
          else catchUp(frame.next_cursor);
          break;
        case "typing":
          if (frame.author && frame.author.name) showTyping(frame.author.name);
          break;
        case "room.closed":
          end("This room has been closed. You can no longer read or post here.");
          break;
        case "error":
          if (frame.code === "temporary_room_expired") end("This room has been closed or has expired.");
          else if (frame.code === "unauthenticated" || frame.code === "forbidden") end("Your session has ended. Reload the page to join again.");
          else say("The live connection was refused (" + frame.code + "); retrying.");
          break;
      }
    });
    ws.addEventListener("close", () => {
      if (ws !== socket) return;
      clearInterval(pinger);
      clearTimeout(watchdog);
      live = false;
      if (closed) return;
      // Backoff from 1 s to 30 s, with jitter so that a room's pages do
      // not all come back at once.
      const delay = Math.min(30000, 1000 * 2 ** retry) * (0.5 + Math.random() / 2);
      retry = Math.min(retry + 1, 5);
      $("conn").hidden = false;
      say("Connection lost. Reconnecting…");
      setTimeout(connect, delay);
    });
  }

  // reload drops every view held and reads the newest page again.
  function reload() {
    views.clear();
    list.replaceChildren();
    replies.clear();
    load();
  }

  // catchUp pages GET .../messages back from cursor until it meets a
  // message already held (at most 20 pages).
  async function catchUp(cursor) {
    for (let i = 0; cursor && i < 20; i++) {
      const r = await api("GET", "/messages?limit=100&cursor=" + encodeURIComponent(cursor)).catch(() => ({ status: 0 }));
      if (r.status !== 200) return;
      let met = false;
      for (const v of r.data.data) { if (views.has(v.id)) met = true; upsert(v); }
      if (met) return;
      cursor = r.data.next_cursor;
    }
  }

  function showTyping(name) {
    typists.set(name, Date.now() + 5000);
    renderTyping();
  }

  function renderTyping() {
    const now = Date.now();
    for (const [n, until] of typists) if (until <= now) typists.delete(n);
    const names = [...typists.keys()];
    const text = names.length === 0 ? "" : names.length === 1 ? names[0] + " is typing…" : names.slice(0, -1).join(", ") + " and " + names[names.length - 1] + " are typing…";
    if ($("typing").textContent !== text) $("typing").textContent = text;
    clearTimeout(typingTimer);
    if (names.length) typingTimer = setTimeout(renderTyping, Math.min(...typists.values()) - now + 10);
  }

  function end(message) {
    closed = true;
    clearInterval(pinger);
    clearTimeout(watchdog);
    $("conn").hidden = true;
    if (socket) socket.close();
    const n = $("closed");
    n.textContent = message;
    n.hidden = false;
    $("content").disabled = true;
    $("send").disabled = true;
    $("attach").disabled = true;
    $("thread-content").disabled = true;
    $("thread-send").disabled = true;
    closePicker(false);
    for (const item of pending) if (item.xhr) item.xhr.abort();
    say("Room closed.");
    n.setAttribute("tabindex", "-1");
    n.focus();
  }

  const atBottom = () => list.scrollHeight - list.scrollTop - list.clientHeight < 48;

  // held is the view of a message held, root or reply.
  const held = (id) => views.get(id) || replies.get(id);

  // upsert shows view v: a root in the main list (and the open thread's
  // head), a reply in its open thread only (counted on its root). source
  // is "push" for a realtime push (whose reactions' "me" is not this
  // reader's), "own" for the answer to this guest's own post, else a read.
  function upsert(v, source) {
    const pushed = source === "push";
    if (v.thread_id) { upsertReply(v, pushed, (pushed && live) || source === "own"); return; }
    // A view never goes back: not from deleted to shown, nor to an older
    // revision (a reload's page may cross a live push of a newer one).
    const had = views.get(v.id);
    if (had && !v.deleted && (had.deleted || (had.revision || 1) > (v.revision || 1))) return;
    adopt(v, had, pushed);
    views.set(v.id, v);
    if (thread && thread.root === v.id) renderThreadRoot();
    let li = document.getElementById("m-" + v.id);
    let added = false;
    const stick = atBottom();
    if (!li) {
      li = document.createElement("li");
      li.id = "m-" + v.id;
      li.className = "msg";
      li.dataset.where = "main";
      // Keep the list oldest first by id (ULIDs sort by time).
      let before = null;
      for (let el = list.lastElementChild; el && el.id > li.id; el = el.previousElementSibling) before = el;
      list.insertBefore(li, before);
      added = true;
    }
    render(li, v);
    if (!added) return;
    // Their message arrived: they are no longer typing it.
    if (v.author && typists.delete(v.author.name)) renderTyping();
    const mine = v.author && v.author.type === "guest" && v.author.id === guestId;
    if (stick || mine) list.scrollTop = list.scrollHeight;
    else if (li === list.lastElementChild) $("new-marker").hidden = false;
  }

  list.addEventListener("scroll", () => { if (atBottom()) $("new-marker").hidden = true; });
  $("new-marker").addEventListener("click", () => {
    list.scrollTop = list.scrollHeight;
    $("new-marker").hidden = true;
    list.focus();
  });

  function render(li, v) {
    const showOriginal = li.dataset.original === "true";
    const focusKey = keyOfFocus(li);
    li.replaceChildren();
    li.setAttribute("lang", v.language || "");
    const mine = v.author && v.author.type === "guest" && v.author.id === guestId;
    li.classList.toggle("mine", !!mine);
    li.classList.toggle("deleted", !!v.deleted);
    const meta = document.createElement("div");
    meta.className = "meta";
    const who = document.createElement("span");
    who.className = "author";
    who.textContent = mine ? "You" : v.author && v.author.name ? v.author.name : "Someone";
    meta.append(who);
    if (v.author && v.author.type === "bot") {
      const badge = document.createElement("span");
      badge.className = "badge";
      badge.textContent = "bot";
      meta.append(badge);
    }
    const when = document.createElement("time");
    when.dateTime = v.created_at;
    const d = new Date(v.created_at);
    when.textContent = isNaN(d) ? "" : " · " + d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    meta.append(when);
    const content = document.createElement("p");
    content.className = "content";
    content.textContent = v.deleted ? "This message was deleted." : v.content;
    if (v.edited_at && !v.deleted) content.append(Object.assign(document.createElement("span"), { className: "meta", textContent: " (edited)" }));
    li.append(meta, content);
    if (!v.deleted && v.attachments && v.attachments.length) li.append(renderAttachments(v));
    if (mine && !v.deleted) li.append(ownActions(li, v));
    if (v.translated && !v.deleted) {
      const label = document.createElement("span");
      label.className = "meta";
      label.textContent = "Translated from " + v.original_language + ". ";
      const toggle = document.createElement("button");
      toggle.type = "button";
      toggle.className = "link";
      toggle.dataset.key = "original";
      toggle.setAttribute("aria-pressed", String(showOriginal));
      toggle.textContent = showOriginal ? "Hide original" : "Show original";
      toggle.addEventListener("click", () => {
        li.dataset.original = String(!(li.dataset.original === "true"));
        render(li, held(v.id));
        const again = li.querySelector('[data-key="original"]');
        if (again) again.focus();
      });
      li.append(label, toggle);
      if (showOriginal) {
        const orig = document.createElement("p");
        orig.className = "original";
        orig.setAttribute("lang", v.original_language || "");
        orig.textContent = v.original_content;
        li.append(orig);
      }
    }
    // Reactions, then (a root in the main list) its thread.
    li.append(reactionRow(li, v));
    if (picker && picker.li === li) {
      if (v.deleted) closePicker(false);
      else li.append(picker.el);
    }
    const err = Object.assign(document.createElement("p"), { className: "error react-error" });
    err.setAttribute("role", "alert");
    li.append(err);
    if (!v.thread_id && li.dataset.where === "main") li.append(threadBar(v));
    refocus(li, focusKey);
  }

  // keyOfFocus is the data-key of the control of el that has the focus,
  // if any: a render puts the focus back on its new self (refocus).
  function keyOfFocus(el) {
    const a = document.activeElement;
    return a && a !== el && el.contains(a) && a.dataset ? a.dataset.key || "" : "";
  }

  function refocus(el, key) {
    if (!key) return;
    const again = [...el.querySelectorAll("[data-key]")].find((e) => e.dataset.key === key);
    if (again) again.focus();
  }

  // tombstone is what a deletion leaves of v: no text, in the page or in memory.
  // A tombstone keeps its place in a thread: thread_id, reply_count and
  // last_reply_at.
  const tombstone = (v) => ({ id: v.id, channel_id: v.channel_id, author: v.author, created_at: v.created_at, deleted: true,
    thread_id: v.thread_id || null, reply_count: v.reply_count || 0, last_reply_at: v.last_reply_at || null, reactions: [] });

  // A guest edits and deletes its own messages (contract section 13).
  function ownActions(li, v) {
    const bar = document.createElement("span");
    bar.className = "actions";
    const edit = Object.assign(document.createElement("button"), { type: "button", className: "link", textContent: "Edit" });
    const del = Object.assign(document.createElement("button"), { type: "button", className: "link", textContent: "Delete" });
    edit.setAttribute("aria-label", "Edit your message");
    del.setAttribute("aria-label", "Delete your message");
    edit.addEventListener("click", () => {
      const form = document.createElement("form");
      form.className = "edit";
      const box = Object.assign(document.createElement("textarea"), { value: v.original_content, rows: 2 });
      box.setAttribute("aria-label", "New text of your message");
      const save = Object.assign(document.createElement("button"), { type: "submit", textContent: "Save" });
      const cancel = Object.assign(document.createElement("button"), { type: "button", className: "link", textContent: "Cancel" });
      const err = Object.assign(document.createElement("span"), { className: "error" });
      err.setAttribute("role", "alert");
      cancel.addEventListener("click", () => render(li, held(v.id)));
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const r = await api("PATCH", "/messages/" + encodeURIComponent(v.id), { content: box.value }, String(v.revision || 1)).catch(() => ({ status: 0 }));
        if (r.status === 200) { upsert(r.data.data); return; }
        if (r.status === 410) { err.textContent = "This message can no longer be edited."; return; }
        if (r.status === 412) { err.textContent = "The message changed meanwhile; reload to edit its latest text."; return; }
        err.textContent = firstError(r.data, "The message could not be edited. Please try again.");
      });
      form.append(box, save, cancel, err);
      li.querySelector("p.content").replaceWith(form);
      bar.remove();
      box.focus();
    });
    del.addEventListener("click", async () => {
      const r = await api("DELETE", "/messages/" + encodeURIComponent(v.id)).catch(() => ({ status: 0 }));
      if (r.status === 204) upsert(tombstone(held(v.id)));
      else say("The message could not be deleted.");
    });
    bar.append(" ", edit, " ", del);
    return bar;
  }

  // ---- Threads and reactions (contract section 18) ----

  // adopt settles what v shows of its reactions and thread against what
  // the page held (had): a reply count never goes down (deleted replies
  // stay counted), and "me" comes from this guest's own reactions when v
  // is a push (a push is the same for every reader), else from v.
  function adopt(v, had, pushed) {
    const rs = Array.isArray(v.reactions) ? v.reactions.filter((r) => r && r.emoji && r.count > 0) : [];
    if (pushed) {
      const set = myReactions.get(v.id);
      v.reactions = rs.map((r) => ({ emoji: r.emoji, count: r.count, me: !!(set && set.has(r.emoji)) }));
    } else {
      myReactions.set(v.id, new Set(rs.filter((r) => r.me).map((r) => r.emoji)));
      v.reactions = rs.map((r) => ({ emoji: r.emoji, count: r.count, me: !!r.me }));
    }
    if (had) {
      if ((had.reply_count || 0) > (v.reply_count || 0)) v.reply_count = had.reply_count;
      if (had.last_reply_at && (!v.last_reply_at || Date.parse(had.last_reply_at) > Date.parse(v.last_reply_at))) v.last_reply_at = had.last_reply_at;
    }
  }

  function upsertReply(v, pushed, fresh) {
    const had = replies.get(v.id);
    if (had && !v.deleted && (had.deleted || (had.revision || 1) > (v.revision || 1))) return;
    adopt(v, null, pushed);
    replies.set(v.id, v);
    if (!had) countReply(v, fresh);
    if (thread && thread.root === v.thread_id) placeReply(v, !had);
  }

  // countReply adds reply v, seen for the first time, to its root's count,
  // unless the root's view may have counted it already. Times are to the
  // second: a reply read (a page of the thread, a reconnect's backfill) is
  // new when it is later than the root's last_reply_at; one pushed live
  // or posted here (fresh) also when it is of the same second.
  function countReply(v, fresh) {
    const root = views.get(v.thread_id);
    if (!root) return;
    const at = Date.parse(v.created_at);
    const last = root.last_reply_at ? Date.parse(root.last_reply_at) : NaN;
    if (!isNaN(last) && (fresh ? at < last : at <= last)) return;
    root.reply_count = (root.reply_count || 0) + 1;
    if (isNaN(last) || at > last) root.last_reply_at = v.created_at;
    const li = document.getElementById("m-" + root.id);
    if (li) {
      const key = keyOfFocus(li);
      const bar = li.querySelector(".thread-bar");
      if (bar) bar.replaceWith(threadBar(root));
      refocus(li, key);
    }
    if (thread && thread.root === root.id) renderThreadCount();
    const mine = v.author && v.author.type === "guest" && v.author.id === guestId;
    if (!mine) announce(replyCountText(root.reply_count) + " in the thread of " + nameOf(root));
  }

  const nameOf = (v) => v.author && v.author.type === "guest" && v.author.id === guestId ? "your message" : (v.author && v.author.name ? v.author.name : "someone") + "'s message";
  const replyCountText = (n) => n === 1 ? "1 reply" : n + " replies";
  const clock = (s) => { const d = new Date(s); return isNaN(d) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); };

  // threadBar is a root's thread under it in the main list: its reply
  // count, its last reply's time, and the button that opens it.
  function threadBar(v) {
    const bar = document.createElement("div");
    bar.className = "thread-bar";
    bar.setAttribute("aria-live", "off");
    const n = v.reply_count || 0;
    if (n > 0) {
      const count = Object.assign(document.createElement("span"), { className: "reply-count", textContent: replyCountText(n) });
      bar.append(count);
      if (v.last_reply_at) {
        const last = document.createElement("time");
        last.className = "meta";
        last.dateTime = v.last_reply_at;
        last.textContent = "last reply " + clock(v.last_reply_at);
        bar.append(" ", last);
      }
    }
    if (n > 0 || !v.deleted) {
      const open = Object.assign(document.createElement("button"), { type: "button", className: "thread-open", textContent: n > 0 ? "View thread" : "Reply" });
      open.dataset.key = "thread";
      open.setAttribute("aria-label", n > 0 ? "View thread, " + replyCountText(n) : "Reply in a thread");
      open.setAttribute("aria-haspopup", "dialog");
      open.addEventListener("click", () => openThread(v.id));
      bar.append(open);
    }
    return bar;
  }

  async function openThread(id) {
    if (!views.has(id)) return;
    closePicker(false);
    thread = { root: id, cursor: null };
    $("thread-replies").replaceChildren();
    $("thread-error").textContent = "";
    $("thread-content").value = "";
    renderThreadRoot();
    $("thread").hidden = false;
    app.classList.add("threaded");
    overlay();
    if ($("thread-content").disabled) $("thread-title").focus();
    else $("thread-content").focus();
    // The replies of this thread already held show at once; the first
    // page (oldest first) follows.
    for (const r of replies.values()) if (r.thread_id === id) placeReply(r, false);
    await loadReplies(id, null);
  }

  function closeThread() {
    if (!thread) return;
    const id = thread.root;
    closePicker(false);
    thread = null;
    $("thread").hidden = true;
    app.classList.remove("threaded");
    overlay();
    $("thread-root").replaceChildren();
    $("thread-replies").replaceChildren();
    const back = document.querySelector("#m-" + id + ' [data-key="thread"]');
    if (back) back.focus();
    else list.focus();
  }

  async function loadReplies(id, cursor) {
    const more = $("thread-more");
    more.disabled = true;
    const r = await api("GET", "/messages/" + encodeURIComponent(id) + "/replies?limit=50" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "")).catch(() => ({ status: 0 }));
    more.disabled = false;
    if (!thread || thread.root !== id) return;
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status !== 200 || !r.data) { $("thread-error").textContent = firstError(r.data, "The replies could not be loaded."); return; }
    for (const v of r.data.data || []) {
      if (v.id === id) continue; // the root shows above
      upsert(v.thread_id ? v : Object.assign({}, v, { thread_id: id }), "read");
    }
    thread.cursor = r.data.next_cursor || null;
    more.hidden = !thread.cursor;
  }

  // On a narrow screen the thread covers the room: the room is inert
  // behind it (and the panel modal) until it closes; on a wide one both
  // stay usable side by side.
  const narrow = window.matchMedia("(max-width: 59.99rem)");
  function overlay() {
    const over = !!thread && narrow.matches;
    $("room").inert = over;
    $("thread").setAttribute("aria-modal", String(over));
  }
  narrow.addEventListener("change", overlay);

  $("thread-more").addEventListener("click", () => { if (thread && thread.cursor) loadReplies(thread.root, thread.cursor); });
  $("thread-close").addEventListener("click", closeThread);
  $("thread").addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && !ev.defaultPrevented) { ev.preventDefault(); closeThread(); }
  });

  function renderThreadRoot() {
    const v = views.get(thread.root);
    const box = $("thread-root");
    let el = document.getElementById("t-" + v.id);
    if (!el) {
      el = document.createElement("div");
      el.id = "t-" + v.id;
      el.className = "msg root";
      el.dataset.where = "thread";
      box.replaceChildren(el);
    }
    render(el, v);
    $("thread-title").textContent = "Thread: " + nameOf(v);
    const gone = !!v.deleted || closed;
    $("thread-content").disabled = gone;
    $("thread-send").disabled = gone;
    $("thread-content").placeholder = v.deleted ? "This message was deleted: no new replies." : "Reply";
    renderThreadCount();
  }

  function renderThreadCount() {
    const v = views.get(thread.root);
    const n = (v && v.reply_count) || 0;
    $("thread-count").textContent = n ? replyCountText(n) : "No replies yet.";
  }

  // placeReply shows reply v in the open thread, oldest first by id.
  function placeReply(v, fresh) {
    const ol = $("thread-replies");
    const body = $("thread-body");
    const stick = body.scrollHeight - body.scrollTop - body.clientHeight < 48;
    let li = document.getElementById("t-" + v.id);
    if (!li) {
      li = document.createElement("li");
      li.id = "t-" + v.id;
      li.className = "msg";
      li.dataset.where = "thread";
      let before = null;
      for (let el = ol.lastElementChild; el && el.id > li.id; el = el.previousElementSibling) before = el;
      ol.insertBefore(li, before);
    }
    render(li, v);
    const mine = v.author && v.author.type === "guest" && v.author.id === guestId;
    if (fresh && (stick || mine)) body.scrollTop = body.scrollHeight;
    if (fresh && !mine) announce("New reply from " + (v.author && v.author.name ? v.author.name : "someone"));
  }

  $("thread-content").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("thread-post").requestSubmit(); }
  });
  $("thread-content").addEventListener("input", () => signalTyping($("thread-content")));

  $("thread-post").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const err = $("thread-error");
    err.textContent = "";
    if (closed || !thread) return;
    const root = thread.root;
    const content = $("thread-content").value;
    if (!content.trim()) { err.textContent = "Write a reply first."; return; }
    $("thread-send").disabled = true;
    const r = await api("POST", "/messages", { content, thread_id: root }).catch(() => ({ status: 0 }));
    $("thread-send").disabled = closed || !thread;
    if (r.status === 201) {
      if (thread && thread.root === root) $("thread-content").value = "";
      upsert(r.data.data, "own");
      return;
    }
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status === 429) { err.textContent = "You are sending too fast. Try again in " + (r.retryAfter || "a few") + " seconds."; return; }
    err.textContent = firstError(r.data, "The reply could not be sent. Please try again.");
  });

  // Reactions: a row of buttons under each message, one per emoji with
  // its count (pressed when this guest reacted), and one to add another.
  const commonEmoji = ["👍", "❤️", "😂", "🎉", "👀", "🚀", "✅", "🙏", "😮", "😢", "🔥", "👏"];

  function reactionLabel(r) {
    return "React with " + r.emoji + ", " + (r.count === 1 ? "1 reaction" : r.count + " reactions") + (r.me ? ", you reacted" : "");
  }

  function reactionRow(li, v) {
    const row = document.createElement("div");
    row.className = "reactions";
    row.setAttribute("aria-live", "off");
    if (v.deleted) { row.hidden = true; return row; }
    row.setAttribute("role", "group");
    row.setAttribute("aria-label", "Reactions");
    for (const r of v.reactions || []) {
      const b = Object.assign(document.createElement("button"), { type: "button", className: "reaction" });
      b.dataset.key = "react:" + r.emoji;
      b.dataset.emoji = r.emoji;
      b.setAttribute("aria-pressed", String(!!r.me));
      b.setAttribute("aria-label", reactionLabel(r));
      b.append(Object.assign(document.createElement("span"), { className: "emoji", textContent: r.emoji }), " ",
        Object.assign(document.createElement("span"), { className: "count", textContent: String(r.count) }));
      b.addEventListener("click", () => react(li, v.id, r.emoji, !r.me));
      row.append(b);
    }
    const add = Object.assign(document.createElement("button"), { type: "button", className: "add-reaction", textContent: "☺+" });
    add.dataset.key = "add";
    add.title = "Add reaction";
    add.setAttribute("aria-label", "Add reaction");
    add.setAttribute("aria-expanded", String(!!(picker && picker.li === li)));
    add.addEventListener("click", () => {
      if (picker && picker.li === li) closePicker(true);
      else openPicker(li, v.id);
    });
    row.append(add);
    return row;
  }

  // refreshReactions renders the reactions of message id anew, wherever it
  // shows (the main list, the open thread), keeping the focus.
  function refreshReactions(id) {
    const v = held(id);
    if (!v) return;
    for (const el of [document.getElementById("m-" + id), document.getElementById("t-" + id)]) {
      if (!el) continue;
      const key = keyOfFocus(el);
      const row = el.querySelector(".reactions");
      if (row) row.replaceWith(reactionRow(el, v));
      refocus(el, key);
    }
  }

  function openPicker(li, id) {
    closePicker(false);
    const el = document.createElement("div");
    el.className = "picker";
    el.id = "picker";
    el.setAttribute("role", "group");
    el.setAttribute("aria-label", "Choose a reaction");
    for (const e of commonEmoji) {
      const b = Object.assign(document.createElement("button"), { type: "button", textContent: e });
      b.dataset.key = "pick:" + e;
      b.setAttribute("aria-label", "React with " + e);
      b.addEventListener("click", () => {
        const v = held(id);
        const r = v && (v.reactions || []).find((x) => x.emoji === e);
        closePicker(true);
        if (!(r && r.me)) react(li, id, e, true);
      });
      el.append(b);
    }
    el.addEventListener("keydown", (ev) => {
      const buttons = [...el.querySelectorAll("button")];
      const at = buttons.indexOf(document.activeElement);
      if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); closePicker(true); }
      else if (ev.key === "ArrowRight" || ev.key === "ArrowDown") { ev.preventDefault(); buttons[(at + 1) % buttons.length].focus(); }
      else if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") { ev.preventDefault(); buttons[(at - 1 + buttons.length) % buttons.length].focus(); }
      else if (ev.key === "Home") { ev.preventDefault(); buttons[0].focus(); }
      else if (ev.key === "End") { ev.preventDefault(); buttons[buttons.length - 1].focus(); }
    });
    picker = { el, li, id };
    const row = li.querySelector(".reactions");
    row.after(el);
    const add = row.querySelector('[data-key="add"]');
    add.setAttribute("aria-expanded", "true");
    add.setAttribute("aria-controls", "picker");
    el.querySelector("button").focus();
  }

  // closePicker closes the open picker; back puts the focus on the button
  // that opened it.
  function closePicker(back) {
    if (!picker) return;
    const { el, li } = picker;
    picker = null;
    el.remove();
    const add = li.querySelector('.reactions [data-key="add"]');
    if (add) {
      add.setAttribute("aria-expanded", "false");
      add.removeAttribute("aria-controls");
      if (back) add.focus();
    }
  }

  // A click elsewhere closes the picker.
  document.addEventListener("click", (ev) => {
    if (picker && !picker.el.contains(ev.target) && !picker.li.contains(ev.target)) closePicker(false);
  });

  // react adds (on) or removes this guest's reaction emoji to message id,
  // shown in li; a refusal shows next to the message.
  async function react(li, id, emoji, on) {
    const err = li.querySelector(".react-error");
    if (err) err.textContent = "";
    if (closed) return;
    const path = "/messages/" + encodeURIComponent(id) + "/reactions/" + encodeURIComponent(emoji);
    const r = await api(on ? "PUT" : "DELETE", path).catch(() => ({ status: 0 }));
    if (r.status === 200 || r.status === 201) {
      const body = (r.data && r.data.data) || r.data || {};
      mark(id, emoji, true);
      reacted(id, body.emoji || emoji, typeof body.count === "number" ? body.count : null, false);
      return;
    }
    if (r.status === 204) {
      const v = held(id);
      const had = v && (v.reactions || []).find((x) => x.emoji === emoji);
      const wasMine = myReactions.get(id) && myReactions.get(id).has(emoji);
      mark(id, emoji, false);
      reacted(id, emoji, had ? (wasMine ? had.count - 1 : had.count) : 0, false);
      return;
    }
    const code = r.data && r.data.errors && r.data.errors.code ? r.data.errors.code[0] : "";
    if (code === "temporary_room_expired") { end("This room has been closed. You can no longer read or post here."); return; }
    let why;
    if (code === "message_deleted" || r.status === 410) why = "This message was deleted: it takes no reactions.";
    else if (r.status === 404) why = "This message no longer exists.";
    else if (r.status === 429) why = "You are reacting too fast. Try again in " + (r.retryAfter || "a few") + " seconds.";
    else if (r.status === 422) why = firstError(r.data, "This reaction cannot be added.");
    else why = firstError(r.data, "The reaction could not be " + (on ? "added" : "removed") + ". Please try again.");
    const place = document.getElementById(li.id) || li;
    const e2 = place.querySelector(".react-error");
    if (e2) e2.textContent = why;
  }

  function mark(id, emoji, on) {
    let set = myReactions.get(id);
    if (!set) myReactions.set(id, (set = new Set()));
    if (on) set.add(emoji);
    else set.delete(emoji);
  }

  // reacted sets emoji's count on message id (null: keep it, at least 1)
  // and shows it; a count of 0 removes its button. A push's change is
  // announced (politely, gathered).
  function reacted(id, emoji, count, pushed) {
    const v = held(id);
    if (!v || v.deleted) return;
    const rs = v.reactions || (v.reactions = []);
    const me = !!(myReactions.get(id) && myReactions.get(id).has(emoji));
    const at = rs.findIndex((r) => r.emoji === emoji);
    if (count === null) count = at >= 0 ? Math.max(rs[at].count, 1) : 1;
    if (count <= 0) { if (at >= 0) rs.splice(at, 1); }
    else if (at >= 0) { rs[at].count = count; rs[at].me = me; }
    else rs.push({ emoji, count, me });
    refreshReactions(id);
    if (pushed) announce(count > 0 ? emoji + " " + count + " on " + nameOf(v) : emoji + " removed from " + nameOf(v));
  }

  // announce tells screen readers of live changes, gathered for a second
  // so that a burst is one announcement.
  let heard = [];
  let announceTimer = null;
  function announce(text) {
    heard.push(text);
    clearTimeout(announceTimer);
    announceTimer = setTimeout(() => {
      $("announce").textContent = heard.slice(-3).join(". ");
      heard = [];
    }, 1000);
  }

  // Typing: at most one signal every 3 s, only while live.
  function signalTyping(box) {
    const now = Date.now();
    if (!live || now - lastTyping < 3000 || !box.value.trim()) return;
    lastTyping = now;
    socket.send('{"action":"typing"}');
  }
  $("content").addEventListener("input", () => signalTyping($("content")));

  $("content").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("post").requestSubmit(); }
  });

  $("post").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const err = $("post-error");
    err.textContent = "";
    if (closed) return;
    const content = $("content").value;
    if (pending.some((i) => i.state === "uploading")) { err.textContent = "Wait for the files to finish uploading."; return; }
    if (pending.some((i) => i.state === "failed")) { err.textContent = "Remove the files that could not be uploaded first."; return; }
    const ready = pending.filter((i) => i.state === "done");
    if (!content.trim() && !ready.length) { err.textContent = "Write a message or attach a file first."; return; }
    const body = { content };
    if (ready.length) {
      body.attachments = ready.map((i) => {
        const a = { upload_id: i.uploadId };
        const alt = i.alt.value.trim();
        if (alt) a.alt_text = alt;
        return a;
      });
    }
    sending = true;
    syncSend();
    const r = await api("POST", "/messages", body).catch(() => ({ status: 0 }));
    sending = false;
    syncSend();
    if (r.status === 201) {
      $("content").value = "";
      for (const i of ready) dropPending(i);
      syncSend();
      upsert(r.data.data);
      return;
    }
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status === 429) { err.textContent = "You are sending too fast. Try again in " + (r.retryAfter || "a few") + " seconds."; return; }
    // An attachment's problem ("Attachment 2 (upload ...) ...") shows next
    // to that file too.
    const about = r.data && r.data.errors && r.data.errors.attachments;
    if (about) {
      for (const m of about) {
        const n = /^Attachment (\d+)\b/.exec(m);
        if (n && ready[+n[1] - 1]) ready[+n[1] - 1].error.textContent = m;
      }
    }
    err.textContent = firstError(r.data, "The message could not be sent. Please try again.");
  });

  // ---- Attachments (contract section 17) ----
  // A file goes to the bucket with the presigned POST the API hands out,
  // from this page (XMLHttpRequest, for its progress), then the post names
  // its upload. The server judges every file again: these checks only
  // spare a round trip.
  const maxFiles = 10;
  const maxSize = 25000000;
  const maxAlt = 1000;
  const types = {
    "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "application/pdf": "pdf",
    "text/plain": "txt", "text/csv": "csv", "application/json": "json", "application/zip": "zip",
  };
  const byExtension = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", pdf: "application/pdf",
    txt: "text/plain", csv: "text/csv", json: "application/json", zip: "application/zip" };
  const pending = []; // the files of the message being written, in order
  let sending = false;

  // humanSize is a size in decimal units, as the limits are written.
  function humanSize(n) {
    if (n < 1000) return n + " B";
    if (n < 1e6) return (n / 1e3).toFixed(1) + " kB";
    return (n / 1e6).toFixed(1) + " MB";
  }

  // typeOf is the accepted type of file: its own, or its extension's when
  // the browser does not know it (or names it otherwise, as some systems
  // do CSV); "" for none.
  function typeOf(file, name) {
    if (types[file.type]) return file.type;
    const ext = (/\.([A-Za-z0-9]+)$/.exec(name) || [])[1];
    return (ext && byExtension[ext.toLowerCase()]) || "";
  }

  // cleanName keeps a file's name, with what the API refuses (separators,
  // control and formatting characters) replaced, at most 255 characters
  // (the extension kept).
  function cleanName(name) {
    let n = [...String(name || "").replace(/[\/\\\p{Cc}\p{Cf}\u2028\u2029\uFFFE\uFFFF]/gu, "_")];
    if (n.length > 255) {
      const dot = n.lastIndexOf(".");
      const ext = dot > 0 && n.length - dot <= 16 ? n.slice(dot) : [];
      n = n.slice(0, 255 - ext.length).concat(ext);
    }
    const s = n.join("");
    return s.replace(/[. ]/g, "") === "" ? "file" : s;
  }

  function syncSend() {
    const busy = pending.some((i) => i.state === "uploading");
    $("send").disabled = closed || sending || busy;
    $("attach").disabled = closed;
    $("pending").hidden = pending.length === 0;
  }

  function addFiles(files) {
    if (closed || !token) return;
    for (const file of files) {
      if (pending.length >= maxFiles) {
        $("post-error").textContent = "A message carries at most " + maxFiles + " files.";
        break;
      }
      addPending(file);
    }
    syncSend();
  }

  function addPending(file) {
    const name = cleanName(file.name);
    const type = typeOf(file, name);
    const item = { file, name, type, state: "uploading", uploadId: "", xhr: null };
    const li = document.createElement("li");
    item.li = li;
    const head = document.createElement("div");
    head.className = "pending-head";
    const fn = Object.assign(document.createElement("span"), { className: "filename", textContent: name });
    const size = Object.assign(document.createElement("span"), { className: "size", textContent: humanSize(file.size) });
    const remove = Object.assign(document.createElement("button"), { type: "button", className: "link", textContent: "Remove" });
    remove.setAttribute("aria-label", "Remove " + name);
    remove.addEventListener("click", () => {
      if (item.xhr) item.xhr.abort();
      const next = li.nextElementSibling || li.previousElementSibling;
      dropPending(item);
      syncSend();
      (next && next.querySelector("button")) ? next.querySelector("button").focus() : $("content").focus();
    });
    head.append(fn, " ", size, " ", remove);
    const progress = document.createElement("progress");
    progress.max = 100;
    progress.value = 0;
    progress.setAttribute("aria-label", "Uploading " + name);
    item.progress = progress;
    const alt = document.createElement("input");
    alt.type = "text";
    alt.maxLength = maxAlt;
    alt.className = "alt";
    const image = type.startsWith("image/");
    alt.placeholder = image ? "Describe the image" : "Describe the file (optional)";
    alt.setAttribute("aria-label", (image ? "Describe the image " : "Describe the file ") + name);
    alt.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.isComposing) { ev.preventDefault(); $("post").requestSubmit(); }
    });
    item.alt = alt;
    const error = Object.assign(document.createElement("p"), { className: "error" });
    error.setAttribute("role", "alert");
    item.error = error;
    li.append(head, progress, alt, error);
    $("pending").append(li);
    pending.push(item);
    let problem = "";
    if (!type) problem = "This type of file cannot be sent: only images (PNG, JPEG, GIF, WebP), PDF, text, CSV, JSON or ZIP.";
    else if (file.size < 1) problem = "This file is empty.";
    else if (file.size > maxSize) problem = "This file is too large: " + humanSize(file.size) + ", at most 25 MB.";
    if (problem) { fail(item, problem); return; }
    upload(item);
  }

  function dropPending(item) {
    const at = pending.indexOf(item);
    if (at >= 0) pending.splice(at, 1);
    item.state = "removed";
    item.li.remove();
  }

  function fail(item, why) {
    if (item.state === "removed") return;
    item.state = "failed";
    item.xhr = null;
    item.progress.hidden = true;
    item.li.classList.add("failed");
    item.error.textContent = why;
    syncSend();
  }

  async function upload(item) {
    const r = await api("POST", "/uploads", { filename: item.name, content_type: item.type, size: item.file.size }).catch(() => ({ status: 0 }));
    if (item.state === "removed") return;
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status === 429) { fail(item, "Too many uploads. Remove this file and try again in " + (r.retryAfter || "a few") + " seconds."); return; }
    if (r.status !== 201 || !r.data || !r.data.data) { fail(item, firstError(r.data, "The file could not be uploaded. Remove it and try again.")); return; }
    const form = r.data.data;
    item.uploadId = form.upload_id;
    const fd = new FormData();
    // Every field of the form first, the file last: S3 reads no field
    // after the file.
    for (const [k, v] of Object.entries(form.fields || {})) fd.append(k, v);
    fd.append("file", item.file, item.name);
    const xhr = new XMLHttpRequest();
    item.xhr = xhr;
    xhr.open(form.method || "POST", form.url);
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) item.progress.value = Math.round((e.loaded / e.total) * 100);
    });
    xhr.addEventListener("load", () => {
      if (item.state === "removed") return;
      if (xhr.status >= 200 && xhr.status < 300) {
        item.state = "done";
        item.xhr = null;
        item.progress.value = 100;
        item.progress.setAttribute("aria-label", "Uploaded " + item.name);
        item.li.classList.add("done");
        syncSend();
        return;
      }
      fail(item, "The storage refused the file" + storageReason(xhr) + ". Remove it and try again.");
    });
    xhr.addEventListener("error", () => fail(item, "The file could not be uploaded (network error). Remove it and try again."));
    xhr.addEventListener("timeout", () => fail(item, "The upload took too long. Remove the file and try again."));
    xhr.send(fd);
  }

  // storageReason is S3's own words from its XML error, read as text.
  function storageReason(xhr) {
    try {
      const doc = new DOMParser().parseFromString(xhr.responseText || "", "application/xml");
      const m = doc.querySelector("Message");
      const code = doc.querySelector("Code");
      const text = (m && m.textContent) || (code && code.textContent) || "";
      if (text) return ": " + text.slice(0, 200);
    } catch (e) { /* not XML */ }
    return xhr.status ? " (" + xhr.status + ")" : "";
  }

  $("attach").addEventListener("click", () => $("file").click());
  $("file").addEventListener("change", () => {
    addFiles([...$("file").files]);
    $("file").value = "";
  });

  // A pasted image (a screenshot) is attached, named after the time.
  $("content").addEventListener("paste", (ev) => {
    const data = ev.clipboardData;
    if (!data) return;
    const files = [];
    for (const it of data.items || []) {
      if (it.kind !== "file") continue;
      const f = it.getAsFile();
      if (!f) continue;
      if (f.type.startsWith("image/") && (!f.name || f.name === "image.png")) {
        const stamp = new Date().toISOString().replace(/\.\d+Z$/, "").replace(/[-:]/g, "").replace("T", "-");
        files.push(new File([f], "screenshot-" + stamp + "." + (types[f.type] || "png"), { type: f.type }));
      } else files.push(f);
    }
    if (!files.length) return;
    if (![...(data.types || [])].includes("text/plain")) ev.preventDefault();
    addFiles(files);
  });

  // Files dropped on the composer are attached.
  $("post").addEventListener("dragover", (ev) => {
    if (closed || !ev.dataTransfer || ![...ev.dataTransfer.types].includes("Files")) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "copy";
    $("post").classList.add("dropping");
  });
  $("post").addEventListener("dragleave", () => $("post").classList.remove("dropping"));
  $("post").addEventListener("drop", (ev) => {
    $("post").classList.remove("dropping");
    if (!ev.dataTransfer || !ev.dataTransfer.files.length) return;
    ev.preventDefault();
    addFiles([...ev.dataTransfer.files]);
  });

  // renderAttachments shows a message's files: images inline, with their
  // alt text in the reader's language; other files as links to download.
  // Filenames and alt texts are user content: text only, never markup.
  function renderAttachments(v) {
    const ul = document.createElement("ul");
    ul.className = "attachments";
    ul.setAttribute("aria-label", "Attached files");
    for (const a of v.attachments) {
      const item = document.createElement("li");
      const alt = a.alt_text || "";
      if (a.url && String(a.content_type || "").startsWith("image/")) {
        item.className = "image";
        const img = document.createElement("img");
        img.alt = alt || a.filename;
        img.title = alt || a.filename;
        img.decoding = "async";
        img.addEventListener("load", () => {
          // Still at the newest message: stay there as the image grows.
          if (list.scrollHeight - list.scrollTop - list.clientHeight - img.offsetHeight < 48) list.scrollTop = list.scrollHeight;
        });
        img.addEventListener("error", () => {
          const note = Object.assign(document.createElement("span"), { className: "meta", textContent: "Image unavailable: " + a.filename });
          img.replaceWith(note);
          // Its link expired (or this clock is off): read it anew, once per
          // file unless the link is past its time, so that a file gone
          // for good does not re-read the room over and over.
          const until = Date.parse(a.url_expires_at || "");
          if (!retried.has(a.id) || (until && Date.now() > until - 5000)) {
            retried.add(a.id);
            refreshLinks();
          }
        });
        img.src = a.url;
        item.append(img);
      } else {
        item.className = "file";
        let name;
        if (a.url) {
          name = document.createElement("a");
          name.href = a.url;
          name.rel = "noopener noreferrer";
          name.setAttribute("download", a.filename);
          name.addEventListener("click", (ev) => {
            // An expired link is refused by the bucket: read it anew first.
            const until = Date.parse(a.url_expires_at || "");
            if (until && Date.now() > until - 5000) {
              ev.preventDefault();
              say("The link to " + a.filename + " expired; getting a new one…");
              refreshLinks(true).then(() => say("The link to " + a.filename + " is renewed: open it again."));
            }
          });
        } else name = document.createElement("span");
        name.className = "filename";
        name.textContent = a.filename;
        const size = Object.assign(document.createElement("span"), { className: "size", textContent: " (" + humanSize(a.size) + ")" });
        item.append(name, size);
        if (alt) item.append(Object.assign(document.createElement("span"), { className: "meta", textContent: " — " + alt }));
      }
      ul.append(item);
    }
    return ul;
  }

  // refreshLinks reads the newest messages anew, with fresh links (views
  // at the same revision render again), at most once every 30 s unless
  // asked for.
  let refreshedAt = 0;
  const retried = new Set(); // attachment ids whose image failed once
  function refreshLinks(now) {
    if (!now && Date.now() - refreshedAt < 30000) return Promise.resolve();
    refreshedAt = Date.now();
    return load();
  }
})();
