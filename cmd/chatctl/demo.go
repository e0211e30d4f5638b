package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/fixturestore"
	"github.com/chatbridge/chat/pkg/fixture"
)

// applyDemo applies the embedded demo fixture and prints ready-to-paste
// requests against it: a guest joins a room, a webhook posts in English into
// the room's channel, and the guest reads it in Spanish.
func applyDemo(ctx context.Context, a *app.App, stdout io.Writer) error {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		return fmt.Errorf("demo fixture: %w", err)
	}
	if _, err := applyFixture(ctx, fixturestore.New(a.DB, a.Table), d, time.Now()); err != nil {
		return fmt.Errorf("demo fixture: %w", err)
	}
	if len(d.Workspaces) == 0 {
		return nil
	}
	printDemo(stdout, "http://"+awsenv.Get("ADDR", defaultAddr), d.Workspaces[0], os.Getenv(translating.EnvTranslator), time.Now())
	return nil
}

// printDemo writes the demo's walk-through for ws, served at base, in the
// order that makes it work: the guest joins before the post, so that the
// post is translated for the guest.
func printDemo(w io.Writer, base string, ws fixture.Workspace, translator string, now time.Time) {
	var room *fixture.Room
	for i, r := range ws.TemporaryRooms {
		if r.Status == chat.RoomActive && r.Expires().After(now) {
			room = &ws.TemporaryRooms[i]
			break
		}
	}
	var static, signed *fixture.InboundWebhook
	for i, wh := range ws.InboundWebhooks {
		switch required := wh.SignatureRequired != nil && *wh.SignatureRequired; {
		case required && signed == nil:
			signed = &ws.InboundWebhooks[i]
		case !required && static == nil:
			static = &ws.InboundWebhooks[i]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe demo workspace %q is loaded. Paste these, in order, into a shell in the repository's root (docs/api.md has the whole API).\n", ws.Name)
	if room != nil {
		fmt.Fprintf(&b, `
# 1. Join the Temporary Room %q as the guest Marta, who reads Spanish, and keep her token:
TOKEN=$(curl -s -X POST %s/api/v1/external/rooms/%s/guests \
  -H 'Content-Type: application/json' -d '{"nickname":"Marta","preferred_language":"es-ES"}' \
  | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'); echo "$TOKEN"
`, room.Name, base, room.RoomID)
		if static != nil {
			fmt.Fprintf(&b, `
# 2. The %s posts in English through its inbound webhook, into the room's channel
#    (sent again with the same Idempotency-Key, it is replayed, not posted twice):
curl -s -X POST %s/webhooks/%s/messages \
  -H 'Content-Type: application/json' -H 'X-Service-Webhook-Secret: %s' \
  -H 'Idempotency-Key: demo-build-1042' \
  -d '{"content":"The build passed and the new version is ready.","channel_id":"%s"}'
`, static.BotName, base, static.ID, static.Secret, room.ChannelID)
		}
		note := "content is Spanish, original_content the English original"
		if translator == translating.TranslatorNone {
			note = "translation is off in this run (see the line on stderr), so content stays English"
		}
		fmt.Fprintf(&b, `
# 3. Translation runs off the request path (stream, queue, translator): a few seconds later,
#    Marta reads the room, newest first: %s:
sleep 5; curl -s %s/api/v1/external/rooms/%s/messages -H "X-Service-Guest-Token: $TOKEN"

# 4. Marta answers as a guest (201 with the message as she sees it):
curl -s -X POST %[2]s/api/v1/external/rooms/%[3]s/messages -H "X-Service-Guest-Token: $TOKEN" \
  -H 'Content-Type: application/json' -d '{"content":"Gracias, lo pruebo ahora."}'
`, note, base, room.RoomID)
	}
	if len(ws.Users) > 0 {
		u := ws.Users[0]
		fmt.Fprintf(&b, `
# 5. The workspace's outbound and support webhooks, as the user %s (API token):
curl -s '%s/api/v1/workspaces/%s/outbound-webhooks?limit=2' -H 'Authorization: Bearer %s'
curl -s %[2]s/api/v1/workspaces/%[3]s/support-webhooks -H 'Authorization: Bearer %[4]s'
`, u.Name, base, ws.ID, u.APIToken)
		if static != nil {
			fmt.Fprintf(&b, `
# 6. The %s webhook's request log, newest first:
curl -s %s/api/v1/workspaces/%s/inbound-webhooks/%s/requests -H 'Authorization: Bearer %s'
`, static.BotName, base, ws.ID, static.ID, u.APIToken)
		}
	}
	if signed != nil {
		channel := ""
		if room != nil {
			channel = " --channel " + room.ChannelID
		}
		fmt.Fprintf(&b, `
# 7. The %s webhook requires an HMAC signature; chatctl post signs the request and prints
#    what it signed (into the room's channel: step 3 then shows it to Marta as well). It attaches
#    the deploy's log: uploaded first (POST .../uploads, then the presigned POST to storage), it
#    reaches every reader as a download link, its alt text in their language:
bin/chatctl post --webhook-url %s/webhooks/%s/messages \
  --signing-secret %s%s --attach fixtures/deploy-2.3.1.log --alt "The deploy's log" \
  "Deployed version 2.3.1 to production."
`, signed.BotName, base, signed.ID, signed.SigningSecret, channel)
	}
	if room != nil {
		fmt.Fprintf(&b, `
# The room's guest page: open it in a browser (two windows, two languages), join, and watch
# steps 2 and 7 arrive live, each in its reader's language:
#   %s/rooms/%s
`, base, room.RoomID)
	}
	fmt.Fprint(&b, `
# Events: every active outbound and support webhook of the demo delivers to a receiver that this
# command started (none goes to the fixture's .invalid targets). Each event it accepts prints on
# this terminal as one line: which webhook got which event, its delivery id and attempt, then the
# event's JSON; each it refuses prints on stderr, with why.
`)
	printMemberDemo(&b, base, ws, room, now)
	fmt.Fprintln(&b)
	_, _ = io.WriteString(w, b.String())
}

// printMemberDemo writes the members' part of the walk-through: a member
// who reads English reads the guest's Spanish answer in English, opens a
// Temporary Room, and closes it, which ends its guest's access; an admin
// creates an inbound webhook (its secrets shown once) and rotates it.
func printMemberDemo(b *strings.Builder, base string, ws fixture.Workspace, room *fixture.Room, now time.Time) {
	var admin, member *fixture.User
	for i, u := range ws.Users {
		switch {
		case u.Role == chat.RoleAdmin && admin == nil:
			admin = &ws.Users[i]
		case u.Role != chat.RoleAdmin && member == nil && room != nil && slices.Contains(channelMembers(ws, room.ChannelID), u.ID):
			member = &ws.Users[i]
		}
	}
	api := base + "/api/v1/workspaces/" + ws.ID
	if member != nil {
		fmt.Fprintf(b, `
# 8. %s, a member who reads %s, reads the room's channel: Marta's answer of step 4 in %[2]s
#    (original_content keeps her Spanish), exactly as a guest reading %[2]s would see it:
sleep 5; curl -s '%s/channels/%s/messages?limit=2' -H 'Authorization: Bearer %s'

# 9. %[1]s opens a Temporary Room on that channel for a support call, a visitor joins it with its
#    join_path, %[1]s closes the room, and the visitor's token gets 410 from then on:
ROOM=$(curl -s -X POST %[3]s/rooms -H 'Authorization: Bearer %[5]s' -H 'Content-Type: application/json' \
  -d '{"channel_id":"%[4]s","name":"Call with a visitor","expires_at":"%[6]s"}' \
  | sed -n 's/.*"room_id":"\([^"]*\)".*/\1/p'); echo "$ROOM"
VISITOR=$(curl -s -X POST %[7]s/api/v1/external/rooms/$ROOM/guests -H 'Content-Type: application/json' \
  -d '{"nickname":"Visitor","preferred_language":"fr-FR"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
curl -s -X POST %[3]s/rooms/$ROOM/close -H 'Authorization: Bearer %[5]s'
curl -s %[7]s/api/v1/external/rooms/$ROOM/messages -H "X-Service-Guest-Token: $VISITOR"
`, member.Name, member.PreferredLanguage, api, room.ChannelID, member.APIToken,
			chat.FormatTime(now.Add(24*time.Hour).Truncate(time.Second)), base)
	}
	if admin != nil && room != nil {
		fmt.Fprintf(b, `
# 10. %s, an admin, creates an inbound webhook (its secret and signing_secret are shown this once),
#     then rotates its secret: the previous one keeps working for 24 hours (a member gets 403):
WEBHOOK=$(curl -s -X POST %[2]s/inbound-webhooks -H 'Authorization: Bearer %[3]s' -H 'Content-Type: application/json' \
  -d '{"channel_id":"%[4]s","bot_name":"Alerts"}' | tee /dev/stderr | sed -n 's/.*"id":"\([^"]*\)".*/\1/p'); echo
curl -s -X POST %[2]s/inbound-webhooks/$WEBHOOK/rotate-secret -H 'Authorization: Bearer %[3]s'
curl -s %[2]s/audit-events -H 'Authorization: Bearer %[3]s'
`, admin.Name, api, admin.APIToken, room.ChannelID)
		for _, h := range ws.SupportWebhooks {
			if h.Active == nil || *h.Active {
				fmt.Fprintf(b, `
# 11. The %s support webhook's delivery log, newest first (room.created, room.guest_joined,
#     room.message_created and room.closed of the steps above, each succeeded), and %s
#     redelivers step 9's room.closed, once the delivery function has logged it (a few seconds
#     after the close): the same delivery again, as a new attempt (202; it prints again, attempt 2):
for i in $(seq 30); do
  DELIVERY=$(curl -s '%s/support-webhooks/%s/deliveries?limit=10' -H 'Authorization: Bearer %s' \
    | grep -o '"id":"[^"]*","event_id":"[^"]*","event_type":"room.closed"' | head -n 1 | cut -d '"' -f 4)
  [ -n "$DELIVERY" ] && break; sleep 1
done; echo "$DELIVERY"
curl -s '%[3]s/support-webhooks/%[4]s/deliveries?limit=5' -H 'Authorization: Bearer %[5]s'
curl -s -X POST %[3]s/support-webhooks/%[4]s/deliveries/$DELIVERY/redeliver -H 'Authorization: Bearer %[5]s'
`, h.Name, admin.Name, api, h.ID, admin.APIToken)
				break
			}
		}
	}
}

// channelMembers returns the user ids of channel id in ws.
func channelMembers(ws fixture.Workspace, id string) []string {
	for _, c := range ws.Channels {
		if c.ID == id {
			return c.Members
		}
	}
	return nil
}
