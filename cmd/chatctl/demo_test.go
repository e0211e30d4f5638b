package main

import (
	"strings"
	"testing"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/fixture"
)

// TestPrintDemoShowsTheGuestTheWebhookPost checks the walk-through that
// `make run` prints: the guest joins before the webhook posts, the post
// goes into the room's channel (the webhook's own channel is another one),
// and the guest then reads the room with the token from the join.
func TestPrintDemoShowsTheGuestTheWebhookPost(t *testing.T) {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatalf("parse demo fixture: %v", err)
	}
	ws := d.Workspaces[0]
	room := ws.TemporaryRooms[0]
	var b strings.Builder
	printDemo(&b, "http://127.0.0.1:3000", ws, translating.TranslatorApertium, time.Now())
	out := b.String()
	join := strings.Index(out, "/api/v1/external/rooms/"+room.RoomID+"/guests")
	post := strings.Index(out, "/webhooks/"+ws.InboundWebhooks[0].ID+"/messages")
	read := strings.Index(out, `sleep 5; curl -s http://127.0.0.1:3000/api/v1/external/rooms/`+room.RoomID+`/messages -H "X-Service-Guest-Token: $TOKEN"`)
	if join < 0 || post < 0 || read < 0 || !(join < post && post < read) {
		t.Fatalf("got join at %d, post at %d, read at %d, want all present in that order:\n%s", join, post, read, out)
	}
	if ws.InboundWebhooks[0].ChannelID == room.ChannelID {
		t.Fatalf("the demo webhook posts into the room's channel by default; this test no longer proves the override")
	}
	if !strings.Contains(out[post:read], `"channel_id":"`+room.ChannelID+`"`) {
		t.Fatalf("the webhook post does not name the room's channel %s:\n%s", room.ChannelID, out[post:read])
	}
	if !strings.Contains(out, "TOKEN=$(curl") || !strings.Contains(out, "content is Spanish") {
		t.Fatalf("want the token kept in $TOKEN and the Spanish note:\n%s", out)
	}
	if !strings.Contains(out, "http://127.0.0.1:3000/rooms/"+room.RoomID+"\n") {
		t.Fatalf("want the room's guest page URL:\n%s", out)
	}
	if !strings.Contains(out, "--channel "+room.ChannelID) {
		t.Fatalf("want the signed post into the room's channel:\n%s", out)
	}
	b.Reset()
	printDemo(&b, "http://127.0.0.1:3000", ws, translating.TranslatorNone, time.Now())
	if !strings.Contains(b.String(), "translation is off") {
		t.Fatalf("with TRANSLATOR=none, want the note that content stays English:\n%s", b.String())
	}
}

// TestPrintDemoShowsTheMembersAPI: after the guest's steps, a member of the
// room's channel reads it, opens and closes a room with a fresh expiry, and
// an admin creates and rotates a webhook, each with its own token.
func TestPrintDemoShowsTheMembersAPI(t *testing.T) {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatalf("parse demo fixture: %v", err)
	}
	ws := d.Workspaces[0]
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var b strings.Builder
	printDemo(&b, "http://127.0.0.1:3000", ws, translating.TranslatorApertium, now)
	out := b.String()
	read := strings.Index(out, "/channels/"+ws.TemporaryRooms[0].ChannelID+"/messages")
	open := strings.Index(out, `"expires_at":"2026-11-24T08:00:00Z"`)
	closing := strings.Index(out, "/rooms/$ROOM/close -H 'Authorization: Bearer wsk_demo_ben_token'")
	gone := strings.Index(out, `/api/v1/external/rooms/$ROOM/messages -H "X-Service-Guest-Token: $VISITOR"`)
	rotate := strings.Index(out, "/inbound-webhooks/$WEBHOOK/rotate-secret -H 'Authorization: Bearer wsk_demo_ana_token'")
	if read < 0 || open < 0 || closing < 0 || gone < 0 || rotate < 0 || !(read < open && open < closing && closing < gone && gone < rotate) {
		t.Fatalf("got read %d, open %d, close %d, gone %d, rotate %d; want all present in that order:\n%s",
			read, open, closing, gone, rotate, out)
	}
}
