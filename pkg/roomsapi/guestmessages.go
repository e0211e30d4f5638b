package roomsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
)

// GuestMessageLister lists a room's messages as one guest reads them
// (rooms.Lister).
type GuestMessageLister interface {
	List(ctx context.Context, s chat.GuestSession, room chat.Room, after string, limit int) (chat.Page[chat.MessageView], error)
}

// GuestMessagePoster posts a guest's message (rooms.Poster).
type GuestMessagePoster interface {
	// PostIn posts into the thread of message threadID, or a root for "".
	PostIn(ctx context.Context, s chat.GuestSession, room chat.Room, threadID, content string, refs []attachments.Ref) (chat.MessageView, error)
}

// GuestMessagesHandler serves GET
// /api/v1/external/rooms/{room_id}/messages (contract section 6): the
// room's channel, newest first, in the reading guest's language, paginated
// like the workspace lists.
func GuestMessagesHandler(auth httpapi.GuestAuthenticator, msgs GuestMessageLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
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
		httpapi.WriteList(w, r, paging, len(page.Items), func(i int) ([]byte, error) { return view.Encode(page.Items[i]) }, page.Rest)
	})
}

// PostGuestMessageHandler serves POST
// /api/v1/external/rooms/{room_id}/messages (contract section 6): 201 with
// the new message's view. The credential is judged before the body is read.
func PostGuestMessageHandler(auth httpapi.GuestAuthenticator, msgs GuestMessagePoster, view messageview.Renderer) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var val chat.Validation
		content, refs := messages.BodyFields(obj, &val)
		thread := messages.ThreadField(obj, &val)
		if err := val.Err(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		v, err := msgs.PostIn(r.Context(), s, room, thread, content, refs)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		httpapi.JSON(w, http.StatusCreated, struct {
			Data messageview.View `json:"data"`
		}{view.Of(v)})
	})
}
