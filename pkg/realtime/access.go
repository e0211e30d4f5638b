package realtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Access is what the channel's partition says, at one read, about a
// connection's right to read the channel (contract section 10, "Access
// ends at once"). The store reads it in the same Query as the connections:
// the channel's reader items (one per member, one per guest, each naming
// the token of the reader's current credential) and its rooms' states.
type Access struct {
	// Reader is whether the subject is still a reader of the channel: a
	// member of it (apply deletes a removed member's reader item), or a
	// guest who joined one of its rooms.
	Reader bool
	// ReaderToken is chat.SeatToken of the subject's current credential:
	// the API token apply last gave the member, the guest token of the
	// guest's last join. "" on an item written before readers carried it:
	// then the credential is not compared.
	ReaderToken string
	// RoomStatus and RoomExpires are the guest's room's (guests only); an
	// empty status means the room's item was not found.
	RoomStatus  string
	RoomExpires time.Time
}

// Entitled reports whether c may still be pushed to at now, and when not,
// the error code its reader is told: unauthenticated (a revoked or
// replaced credential), forbidden (no longer a reader of the channel) or
// temporary_room_expired (the room closed or ended).
func (c Connection) Entitled(now time.Time) (bool, string) {
	a := c.Access
	if a == nil {
		return true, ""
	}
	switch {
	case !a.Reader:
		return false, chat.EForbidden
	case a.ReaderToken != "" && a.ReaderToken != c.Token:
		return false, chat.EUnauthenticated
	case c.Kind == KindGuest && (a.RoomStatus != chat.RoomActive || !now.Before(a.RoomExpires)):
		return false, chat.ERoomExpired
	}
	return true, ""
}

// entitled returns the connections of conns that may still be pushed to,
// and ends the others: each is told why (a room.closed push for a guest
// whose room ended, else an error frame), closed and its item deleted. The
// push's one Query read both the connections and their Access, so this
// check costs no call; ending a revoked connection costs its own three.
func (p *Pusher) entitled(ctx context.Context, conns []Connection) []Connection {
	now := p.Now().UTC()
	keep := conns[:0:0]
	for _, c := range conns {
		ok, code := c.Entitled(now)
		if ok {
			keep = append(keep, c)
			continue
		}
		EndConnection(ctx, p.Sender, p.Store, c, code)
	}
	return keep
}

// EndConnection tells a connection why it ends (code: an error code, or
// ERoomExpired, which a guest is told as {"type":"room.closed"}), closes it
// and deletes its item. Failures are logged: the connection's item stays
// and the next push ends it again.
func EndConnection(ctx context.Context, sender Sender, store ConnectionStore, c Connection, code string) {
	var b []byte
	if code == chat.ERoomExpired && c.Kind == KindGuest {
		b, _ = json.Marshal(frame{Type: "room.closed"})
	} else {
		b, _ = json.Marshal(struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		}{"error", code, "Your access to this channel has ended."})
	}
	if err := sender.Send(ctx, c.ID, b); err != nil && err != ErrGone {
		slog.WarnContext(ctx, "realtime: tell ended connection", "connection", c.ID, "error", err.Error())
	}
	if err := sender.Close(ctx, c.ID); err != nil {
		slog.WarnContext(ctx, "realtime: close ended connection", "connection", c.ID, "error", err.Error())
	}
	if err := store.DeleteConnection(ctx, c.ChannelID, c.ID); err != nil {
		slog.WarnContext(ctx, "realtime: delete ended connection", "connection", c.ID, "error", err.Error())
	}
}
