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
// like the workspace lists; roots only (contract section 18).
func GuestMessagesHandler(auth httpapi.GuestAuthenticator, msgs GuestMessageLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return guestList(auth, codec, view, func(r *http.Request, room chat.Room) string { return "room-messages:" + room.ID },
		func(r *http.Request, s chat.GuestSession, room chat.Room, paging httpapi.Paging) (chat.Page[chat.MessageView], error) {
			return msgs.List(r.Context(), s, room, paging.After, paging.Limit)
		})
}

// GuestReplyLister lists a thread as one guest reads it (rooms.Lister).
type GuestReplyLister interface {
	Replies(ctx context.Context, s chat.GuestSession, room chat.Room, id, after string, limit int) (chat.Page[chat.MessageView], error)
}

// GuestRepliesHandler serves GET
// /api/v1/external/rooms/{room_id}/messages/{message_id}/replies (contract
// section 18): the thread of message_id (its root's for a reply) in the
// room's channel, oldest first, in the guest's language, paged like the
// room list.
func GuestRepliesHandler(auth httpapi.GuestAuthenticator, msgs GuestReplyLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return guestList(auth, codec, view, func(r *http.Request, room chat.Room) string {
		return "room-replies:" + room.ID + ":" + r.PathValue("message_id")
	}, func(r *http.Request, s chat.GuestSession, room chat.Room, paging httpapi.Paging) (chat.Page[chat.MessageView], error) {
		return msgs.Replies(r.Context(), s, room, r.PathValue("message_id"), paging.After, paging.Limit)
	})
}

// guestList serves a guest's list of its room's messages: the paging read
// with a cursor bound to scope, then the page list reads.
func guestList(auth httpapi.GuestAuthenticator, codec *cursor.Codec, view messageview.Renderer,
	scope func(*http.Request, chat.Room) string,
	list func(*http.Request, chat.GuestSession, chat.Room, httpapi.Paging) (chat.Page[chat.MessageView], error)) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		paging, err := httpapi.ReadPaging(r, codec, scope(r, room))
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := list(r, s, room, paging)
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
