package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
)

// TestHostileMembers extends TestHostileInput to the members' and rooms'
// workspace endpoints: each hostile request gets the contract's 4xx in its
// error shape, never a 5xx, and the table is left exactly as it was.
func TestHostileMembers(t *testing.T) {
	w := newMemberWorld(t)
	later := chat.FormatTime(time.Now().Add(2 * time.Hour))
	w.doc.Workspaces[0].TemporaryRooms = append(w.doc.Workspaces[0].TemporaryRooms,
		fixture.Room{ChannelID: w.random, Name: "Random call", ExpiresAt: later})
	w.doc.Workspaces[1].TemporaryRooms = append(w.doc.Workspaces[1].TemporaryRooms,
		fixture.Room{ChannelID: w.otherChannel, Name: "Their call", ExpiresAt: later})
	if err := w.doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	randomRoom := w.doc.Workspaces[0].TemporaryRooms[1].RoomID
	theirRoom := w.doc.Workspaces[1].TemporaryRooms[0].RoomID
	zed := w.doc.Workspaces[1].Users[0]
	ws, other := w.ws.ID, w.other.ID

	// A guest token, to be sent where only an API token belongs.
	jr := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/guests", `{"nickname":"G","preferred_language":"en"}`, nil)
	guestTok := decodeAs[struct {
		Data struct {
			Session struct{ Token string } `json:"session"`
		} `json:"data"`
	}](t, jr.Body.Bytes()).Data.Session.Token

	// Cursors of real lists, to be sent where they do not belong.
	cursorOf := func(path string, u fixture.User) string {
		rec := w.do(t, "GET", path+"?limit=1", "", bearer(u))
		p := decodeAs[pageOf[struct{ ID string }]](t, rec.Body.Bytes())
		if p.Meta.NextCursor == nil {
			t.Fatalf("GET %s?limit=1: %s, want a cursor", path, rec.Body)
		}
		return *p.Meta.NextCursor
	}
	channels, rooms := w.wsPath("/channels"), w.wsPath("/rooms")
	anaChannels := cursorOf(channels, w.ana)
	roomsCursor := cursorOf(rooms, w.ana)

	ana, ben := bearer(w.ana), bearer(w.ben)
	asGuest := map[string]string{"Authorization": "Bearer " + guestTok}
	guestHeader := map[string]string{"X-Service-Guest-Token": guestTok}
	zedHdr := bearer(zed)
	with := func(base map[string]string, kv ...string) map[string]string {
		h := map[string]string{}
		for k, v := range base {
			h[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	msgs := func(channel string) string { return w.wsPath("/channels/" + channel + "/messages") }
	closeOf := func(wsID, room string) string { return "/api/v1/workspaces/" + wsID + "/rooms/" + room + "/close" }
	exp := chat.FormatTime(time.Now().Add(time.Hour))
	roomBody := func(channel, name, expires string) string {
		return `{"channel_id":` + channel + `,"name":` + name + `,"expires_at":` + expires + `}`
	}
	q := func(s string) string { return `"` + s + `"` }
	unknown := "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"
	huge := `{"content":"` + strings.Repeat("a", 64<<10) + `"}`

	cases := []hostileCase{
		// Credentials, on every endpoint.
		{name: "channels without token", method: "GET", path: channels, status: 401, code: "unauthenticated"},
		{name: "channels with a guest token as bearer", method: "GET", path: channels, hdr: asGuest, status: 401, code: "unauthenticated"},
		{name: "channels with only a guest header", method: "GET", path: channels, hdr: guestHeader, status: 401, code: "unauthenticated"},
		{name: "channels of another workspace", method: "GET", path: "/api/v1/workspaces/" + other + "/channels", hdr: ana, status: 403, code: "forbidden"},
		{name: "channels of an unknown workspace", method: "GET", path: "/api/v1/workspaces/" + unknown + "/channels", hdr: ana, status: 403, code: "forbidden"},
		{name: "messages with a guest token", method: "GET", path: msgs(w.general), hdr: guestHeader, status: 401, code: "unauthenticated"},
		{name: "post with a guest token", method: "POST", path: msgs(w.general), body: `{"content":"hi"}`, hdr: asGuest, status: 401, code: "unauthenticated"},
		{name: "create room with a guest token", method: "POST", path: rooms, body: roomBody(q(w.general), q("x"), q(exp)), hdr: guestHeader, status: 401, code: "unauthenticated"},
		{name: "rooms with another workspace's token", method: "GET", path: rooms, hdr: zedHdr, status: 403, code: "forbidden"},
		{name: "close with a guest token", method: "POST", path: closeOf(ws, w.room), hdr: asGuest, status: 401, code: "unauthenticated"},
		{name: "close with another workspace's token", method: "POST", path: closeOf(ws, w.room), hdr: zedHdr, status: 403, code: "forbidden"},

		// Paging.
		{name: "channels limit 0", method: "GET", path: channels + "?limit=0", hdr: ana, status: 422, code: "field:limit"},
		{name: "channels limit 101", method: "GET", path: channels + "?limit=101", hdr: ana, status: 422, code: "field:limit"},
		{name: "channels cursor garbage", method: "GET", path: channels + "?cursor=%00%ff", hdr: ana, status: 422, code: "field:cursor"},
		{name: "channels cursor of rooms", method: "GET", path: channels + "?cursor=" + roomsCursor, hdr: ana, status: 422, code: "field:cursor"},
		{name: "channels cursor of another member", method: "GET", path: channels + "?cursor=" + anaChannels, hdr: ben, status: 422, code: "field:cursor"},
		{name: "messages cursor of channels", method: "GET", path: msgs(w.general) + "?cursor=" + anaChannels, hdr: ana, status: 422, code: "field:cursor"},
		{name: "messages limit emoji", method: "GET", path: msgs(w.general) + "?limit=%F0%9F%98%80", hdr: ana, status: 422, code: "field:limit"},
		{name: "rooms cursor of channels", method: "GET", path: rooms + "?cursor=" + anaChannels, hdr: ana, status: 422, code: "field:cursor"},
		{name: "rooms limit twice", method: "GET", path: rooms + "?limit=1&limit=2", hdr: ana, status: 422, code: "field:limit"},

		// Channels that are not the caller's.
		{name: "messages of a member's channel not mine", method: "GET", path: msgs(w.random), hdr: ben, status: 403, code: "forbidden"},
		{name: "messages of another workspace's channel", method: "GET", path: msgs(w.otherChannel), hdr: ana, status: 403, code: "forbidden"},
		{name: "messages of an unknown channel", method: "GET", path: msgs(unknown), hdr: ana, status: 403, code: "forbidden"},
		{name: "messages of a lower-case id", method: "GET", path: msgs(strings.ToLower(w.general)), hdr: ana, status: 403, code: "forbidden"},
		{name: "messages of a unicode id", method: "GET", path: msgs("%F0%9F%98%80"), hdr: ana, status: 403, code: "forbidden"},
		{name: "post to a member's channel not mine", method: "POST", path: msgs(w.random), body: `{"content":"hi"}`, hdr: ben, status: 403, code: "forbidden"},
		{name: "post to another workspace's channel", method: "POST", path: msgs(w.otherChannel), body: `{"content":"hi"}`, hdr: ana, status: 403, code: "forbidden"},

		// Member post bodies.
		{name: "post content number", method: "POST", path: msgs(w.general), body: `{"content":5}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post content array", method: "POST", path: msgs(w.general), body: `{"content":["hi"]}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post content object", method: "POST", path: msgs(w.general), body: `{"content":{"text":"hi"}}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post content null", method: "POST", path: msgs(w.general), body: `{"content":null}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post content blank", method: "POST", path: msgs(w.general), body: `{"content":" \u2028\n"}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post content 40,001", method: "POST", path: msgs(w.general), body: `{"content":"` + strings.Repeat("<", 40001) + `"}`, hdr: ben, status: 422, code: "field:content"},
		{name: "post skip_translation string", method: "POST", path: msgs(w.general), body: `{"content":"hi","skip_translation":"yes"}`, hdr: ben, status: 422, code: "field:skip_translation"},
		{name: "post skip_translation 1", method: "POST", path: msgs(w.general), body: `{"content":"hi","skip_translation":1}`, hdr: ben, status: 422, code: "field:skip_translation"},
		{name: "post body array", method: "POST", path: msgs(w.general), body: `[]`, hdr: ben, status: 400, code: "invalid_json"},
		{name: "post duplicate key", method: "POST", path: msgs(w.general), body: `{"content":"a","content":"b"}`, hdr: ben, status: 400, code: "invalid_json"},
		{name: "post lone surrogate", method: "POST", path: msgs(w.general), body: `{"content":"\ud800"}`, hdr: ben, status: 400, code: "invalid_json"},
		{name: "post invalid UTF-8", method: "POST", path: msgs(w.general), body: "{\"content\":\"\xff\"}", hdr: ben, status: 400, code: "invalid_json"},
		{name: "post text/plain", method: "POST", path: msgs(w.general), body: `{"content":"hi"}`, hdr: with(ben, "Content-Type", "text/plain"), status: 415, code: "unsupported_media_type"},
		{name: "post over 64 KiB", method: "POST", path: msgs(w.general), body: huge, hdr: ben, status: 413, code: "payload_too_large"},
		{name: "post key too long", method: "POST", path: msgs(w.general), body: `{"content":"hi"}`, hdr: with(ben, "Idempotency-Key", strings.Repeat("k", 256)), status: 400, code: "invalid_idempotency_key"},
		{name: "post key not ASCII", method: "POST", path: msgs(w.general), body: `{"content":"hi"}`, hdr: with(ben, "Idempotency-Key", "clé"), status: 400, code: "invalid_idempotency_key"},
		{name: "post key twice", method: "POST", path: msgs(w.general), body: `{"content":"hi"}`, hdr: ben, status: 400, code: "invalid_idempotency_key",
			mutate: func(r *http.Request) {
				r.Header.Add("Idempotency-Key", "a")
				r.Header.Add("Idempotency-Key", strings.Repeat("b", 255))
			}},

		// Room creation bodies.
		{name: "room channel number", method: "POST", path: rooms, body: roomBody("5", q("x"), q(exp)), hdr: ana, status: 422, code: "field:channel_id"},
		{name: "room name array", method: "POST", path: rooms, body: roomBody(q(w.general), `["x"]`, q(exp)), hdr: ana, status: 422, code: "field:name"},
		{name: "room name 101 emoji", method: "POST", path: rooms, body: roomBody(q(w.general), q(strings.Repeat("😀", 101)), q(exp)), hdr: ana, status: 422, code: "field:name"},
		{name: "room name U+2028", method: "POST", path: rooms, body: roomBody(q(w.general), q("a\u2028b"), q(exp)), hdr: ana, status: 422, code: "field:name"},
		{name: "room name bidi override", method: "POST", path: rooms, body: roomBody(q(w.general), q("a\u202eb"), q(exp)), hdr: ana, status: 422, code: "field:name"},
		{name: "room expires bool", method: "POST", path: rooms, body: roomBody(q(w.general), q("x"), "true"), hdr: ana, status: 422, code: "field:expires_at"},
		{name: "room expires past", method: "POST", path: rooms, body: roomBody(q(w.general), q("x"), q("2020-01-01T00:00:00Z")), hdr: ana, status: 422, code: "field:expires_at"},
		{name: "room expires in 8 days", method: "POST", path: rooms, body: roomBody(q(w.general), q("x"), q(chat.FormatTime(time.Now().Add(8*24*time.Hour)))), hdr: ana, status: 422, code: "field:expires_at"},
		{name: "room expires year 10000", method: "POST", path: rooms, body: roomBody(q(w.general), q("x"), q("10000-01-01T00:00:00Z")), hdr: ana, status: 422, code: "field:expires_at"},
		{name: "room of a member's channel not mine", method: "POST", path: rooms, body: roomBody(q(w.random), q("x"), q(exp)), hdr: ben, status: 403, code: "forbidden"},
		{name: "room of another workspace's channel", method: "POST", path: rooms, body: roomBody(q(w.otherChannel), q("x"), q(exp)), hdr: ana, status: 403, code: "forbidden"},
		{name: "room of a forged channel", method: "POST", path: rooms, body: roomBody(q(w.general+"#READER"), q("x"), q(exp)), hdr: ana, status: 403, code: "forbidden"},
		{name: "room body string", method: "POST", path: rooms, body: `"room"`, hdr: ana, status: 400, code: "invalid_json"},
		{name: "room deep body", method: "POST", path: rooms, body: strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40), hdr: ana, status: 400, code: "invalid_json"},
		{name: "room over 64 KiB", method: "POST", path: rooms, body: huge, hdr: ana, status: 413, code: "payload_too_large"},

		// Closing rooms that are not the caller's to close.
		{name: "close another workspace's room", method: "POST", path: closeOf(ws, theirRoom), hdr: ana, status: 404, code: "not_found"},
		{name: "close my room through their workspace", method: "POST", path: closeOf(other, w.room), hdr: zedHdr, status: 404, code: "not_found"},
		{name: "close an unknown room", method: "POST", path: closeOf(ws, unknown), hdr: ana, status: 404, code: "not_found"},
		{name: "close a malformed room", method: "POST", path: closeOf(ws, "not-a-room"), hdr: ana, status: 404, code: "not_found"},
		{name: "close a lower-case room id", method: "POST", path: closeOf(ws, strings.ToLower(w.room)), hdr: ana, status: 404, code: "not_found"},
		{name: "close a room of a channel not mine", method: "POST", path: closeOf(ws, randomRoom), hdr: ben, status: 403, code: "forbidden"},
		{name: "close with GET", method: "GET", path: closeOf(ws, w.room), hdr: ana, status: 405, code: "method_not_allowed"},
		{name: "rooms with DELETE", method: "DELETE", path: rooms, hdr: ana, status: 405, code: "method_not_allowed"},
	}
	before := w.snapshot(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErrorShape(t, c, w.send(t, c))
		})
	}
	after := w.snapshot(t)
	for k, it := range after {
		if old, ok := before[k]; !ok {
			t.Errorf("item %s written:\n%s", k, it)
		} else if old.String() != it.String() {
			t.Errorf("item %s changed:\nbefore:\n%s\nafter:\n%s", k, old, it)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d items before, %d after", len(before), len(after))
	}
}
