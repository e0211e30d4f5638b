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
  const views = new Map(); // message id -> view
  let token = null;
  let socket = null;
  let closed = false;
  let retry = 0;
  let pinger = null;

  $("language").value = navigator.language || "en";

  function say(text) { status.textContent = text; }

  async function api(method, path, body) {
    const headers = { "Accept": "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
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

  function connect() {
    if (closed || !token) return;
    const configured = app.dataset.realtimeUrl;
    const url = configured || ((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/realtime");
    socket = new WebSocket(url);
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ action: "subscribe", token }));
    });
    socket.addEventListener("message", (ev) => {
      let frame;
      try { frame = JSON.parse(ev.data); } catch (e) { return; }
      switch (frame.type) {
        case "subscribed":
          retry = 0;
          say("Live: new messages appear as they arrive, in " + frame.language + ".");
          clearInterval(pinger);
          pinger = setInterval(() => { if (socket && socket.readyState === 1) socket.send('{"action":"ping"}'); }, 5 * 60 * 1000);
          break;
        case "message":
        case "message.updated":
          upsert(frame.data);
          break;
        case "message.too_large":
          load();
          break;
        case "room.closed":
          end("This room has been closed. You can no longer read or post here.");
          break;
        case "error":
          if (frame.code === "temporary_room_expired") end("This room has been closed or has expired.");
          else if (frame.code === "unauthenticated") end("Your session has ended. Reload the page to join again.");
          else say("The live connection was refused (" + frame.code + ").");
          break;
      }
    });
    socket.addEventListener("close", () => {
      clearInterval(pinger);
      if (closed) return;
      retry = Math.min(retry + 1, 6);
      say("Connection lost; reconnecting…");
      setTimeout(() => { load().then(connect); }, 500 * 2 ** retry);
    });
  }

  function end(message) {
    closed = true;
    clearInterval(pinger);
    if (socket) socket.close();
    const n = $("closed");
    n.textContent = message;
    n.hidden = false;
    $("content").disabled = true;
    $("post").querySelector("button").disabled = true;
    say("Room closed.");
    n.setAttribute("tabindex", "-1");
    n.focus();
  }

  function upsert(v) {
    views.set(v.id, v);
    let li = document.getElementById("m-" + v.id);
    if (!li) {
      li = document.createElement("li");
      li.id = "m-" + v.id;
      // Keep the list oldest first by id (ULIDs sort by time).
      let before = null;
      for (const el of list.children) { if (el.id > li.id) { before = el; break; } }
      list.insertBefore(li, before);
    }
    render(li, v);
  }

  function render(li, v) {
    const showOriginal = li.dataset.original === "true";
    li.replaceChildren();
    li.setAttribute("lang", v.language || "");
    const meta = document.createElement("div");
    meta.className = "meta";
    const who = document.createElement("span");
    who.className = "author";
    who.textContent = v.author && v.author.name ? v.author.name : "Someone";
    const when = document.createElement("time");
    when.dateTime = v.created_at;
    const d = new Date(v.created_at);
    when.textContent = isNaN(d) ? "" : " · " + d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    meta.append(who, when);
    const content = document.createElement("p");
    content.className = "content";
    content.textContent = v.content;
    li.append(meta, content);
    if (v.translated) {
      const label = document.createElement("span");
      label.className = "meta";
      label.textContent = "Translated from " + v.original_language + ". ";
      const toggle = document.createElement("button");
      toggle.type = "button";
      toggle.className = "link";
      toggle.setAttribute("aria-pressed", String(showOriginal));
      toggle.textContent = showOriginal ? "Hide original" : "Show original";
      toggle.addEventListener("click", () => {
        li.dataset.original = String(!(li.dataset.original === "true"));
        render(li, views.get(v.id));
        li.querySelector("button.link").focus();
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
  }

  $("content").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); $("post").requestSubmit(); }
  });

  $("post").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const err = $("post-error");
    err.textContent = "";
    const content = $("content").value;
    if (!content.trim()) { err.textContent = "Write a message first."; return; }
    const r = await api("POST", "/messages", { content }).catch(() => ({ status: 0 }));
    if (r.status === 201) { $("content").value = ""; upsert(r.data.data); return; }
    if (r.status === 410) { end("This room has been closed. You can no longer read or post here."); return; }
    if (r.status === 429) { err.textContent = "You are sending too fast. Try again in " + (r.retryAfter || "a few") + " seconds."; return; }
    err.textContent = firstError(r.data, "The message could not be sent. Please try again.");
  });
})();
