package realtime_test

import (
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

// TestEntitled: a connection is pushed to while its subject is a reader of
// the channel with the credential it subscribed with and, for a guest,
// while the room is active and unexpired; each other case names the code
// its reader is told.
func TestEntitled(t *testing.T) {
	member := realtime.Connection{Kind: realtime.KindMember, Token: "tok"}
	guest := realtime.Connection{Kind: realtime.KindGuest, Token: "tok", RoomID: "R"}
	open := t0.Add(time.Hour)
	for _, tc := range []struct {
		name   string
		conn   realtime.Connection
		access *realtime.Access
		want   string // "" when entitled
	}{
		{"nothing read (a fake store)", member, nil, ""},
		{"member", member, &realtime.Access{Reader: true, ReaderToken: "tok"}, ""},
		{"member from before reader tokens", member, &realtime.Access{Reader: true}, ""},
		{"member's token revoked", member, &realtime.Access{Reader: true, ReaderToken: "new"}, chat.EUnauthenticated},
		{"member removed from the channel", member, &realtime.Access{ReaderToken: "tok"}, chat.EForbidden},
		{"guest", guest, &realtime.Access{Reader: true, ReaderToken: "tok", RoomStatus: chat.RoomActive, RoomExpires: open}, ""},
		{"guest's token replaced by a re-join", guest, &realtime.Access{Reader: true, ReaderToken: "new", RoomStatus: chat.RoomActive, RoomExpires: open}, chat.EUnauthenticated},
		{"guest's room closed", guest, &realtime.Access{Reader: true, ReaderToken: "tok", RoomStatus: chat.RoomClosed, RoomExpires: open}, chat.ERoomExpired},
		{"guest's room expired", guest, &realtime.Access{Reader: true, ReaderToken: "tok", RoomStatus: chat.RoomActive, RoomExpires: t0}, chat.ERoomExpired},
		{"guest's room not found", guest, &realtime.Access{Reader: true, ReaderToken: "tok"}, chat.ERoomExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.conn
			c.Access = tc.access
			ok, code := c.Entitled(t0)
			if ok != (tc.want == "") || code != tc.want {
				t.Fatalf("got %v %q, want entitled=%v %q", ok, code, tc.want == "", tc.want)
			}
		})
	}
}
