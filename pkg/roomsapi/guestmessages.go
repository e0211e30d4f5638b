package roomsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
)

// GuestAuthenticator resolves a guest token for a room (rooms.GuestAuth).
type GuestAuthenticator interface {
	Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error)
}

// GuestMessageLister lists a room's messages as one guest reads them
// (rooms.Lister).
type GuestMessageLister interface {
	List(ctx context.Context, s chat.GuestSession, room chat.Room, after string, limit int) (chat.Page[chat.MessageView], error)
}

// GuestMessagePoster posts a guest's message (rooms.Poster).
type GuestMessagePoster interface {
	Post(ctx context.Context, s chat.GuestSession, room chat.Room, content string) (chat.MessageView, error)
}

// GuestHandler is a handler of a guest endpoint, called only for a live
// session of the path's room while that room is available.
type GuestHandler func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room)

// RequireGuest is the one gate of every guest endpoint (contract section
// 6): the exact 401 for a missing, unknown, replaced or expired token, 403
// for another room's token, 410 for a room no longer available. A request
// that repeats the header is ambiguous and gets the 401.
func RequireGuest(auth GuestAuthenticator, h GuestHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var token string
		if vals := r.Header.Values(GuestTokenHeader); len(vals) == 1 {
			token = vals[0]
		}
		s, room, err := auth.Authenticate(r.Context(), r.PathValue("room_id"), token)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		h(w, r, s, room)
	})
}

// GuestMessagesHandler serves GET
// /api/v1/external/rooms/{room_id}/messages (contract section 6): the
// room's channel, newest first, in the reading guest's language, paginated
// like the workspace lists.
func GuestMessagesHandler(auth GuestAuthenticator, msgs GuestMessageLister, codec *cursor.Codec) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		paging, err := httpapi.ReadPaging(r, codec, "room-messages:"+room.ID)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := msgs.List(r.Context(), s, room, paging.After, paging.Limit)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.WriteList(w, r, paging, len(page.Items), func(i int) ([]byte, error) { return messageview.Encode(page.Items[i]) }, page.Rest)
	})
}

// PostGuestMessageHandler serves POST
// /api/v1/external/rooms/{room_id}/messages (contract section 6): 201 with
// the new message's view. The credential is judged before the body is read.
func PostGuestMessageHandler(auth GuestAuthenticator, msgs GuestMessagePoster) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		content, err := decodeGuestMessage(obj)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		v, err := msgs.Post(r.Context(), s, room, content)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		httpapi.JSON(w, http.StatusCreated, struct {
			Data messageview.View `json:"data"`
		}{messageview.Of(v)})
	})
}

func decodeGuestMessage(obj httpapi.Object) (string, error) {
	var v chat.Validation
	content := messages.ContentField(obj, &v)
	return content, v.Err()
}
