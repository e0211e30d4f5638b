package httpapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
)

// GuestTokenHeader carries a guest session token.
const GuestTokenHeader = "X-Service-Guest-Token"

// GuestAuthenticator resolves a guest token for a room (rooms.GuestAuth).
type GuestAuthenticator interface {
	Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error)
}

// GuestHandler is a handler of a guest endpoint, called only for a live
// session of the path's room while that room is available.
type GuestHandler func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room)

// RequireGuest is the one gate of every guest endpoint (contract section
// 6): the exact 401 for a missing, unknown, replaced or expired token, 403
// for another room's token, 410 for a room no longer available. A request
// that repeats the header is ambiguous and gets the 401. The room's
// guest endpoints and the guests' edits share it.
func RequireGuest(auth GuestAuthenticator, h GuestHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var token string
		if vals := r.Header.Values(GuestTokenHeader); len(vals) == 1 {
			token = vals[0]
		}
		s, room, err := auth.Authenticate(r.Context(), r.PathValue("room_id"), token)
		if err != nil {
			Error(w, r, err)
			return
		}
		h(w, r, s, room)
	})
}
