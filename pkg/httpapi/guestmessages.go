package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
)

// GuestAuthenticator resolves a guest token for a room (rooms.GuestAuth).
type GuestAuthenticator interface {
	Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error)
}

// GuestMessageLister lists a room's messages as one guest reads them
// (rooms.Lister).
type GuestMessageLister interface {
	List(ctx context.Context, s chat.GuestSession, room chat.Room, after string, limit int) (chat.Page[rooms.MessageView], error)
}

// GuestMessagePoster posts a guest's message (rooms.Poster).
type GuestMessagePoster interface {
	Post(ctx context.Context, s chat.GuestSession, room chat.Room, content string) (rooms.MessageView, error)
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
			Error(w, r, err)
			return
		}
		h(w, r, s, room)
	})
}

// messageAuthorView is a message's author. id and avatar_url are null when
// the author has none (a guest has no avatar), never "".
type messageAuthorView struct {
	Type      string  `json:"type"`
	ID        *string `json:"id"`
	Name      string  `json:"name"`
	AvatarURL *string `json:"avatar_url"`
}

// messageView is a message in one reader's language (contract section 6).
type messageView struct {
	ID               string            `json:"id"`
	ChannelID        string            `json:"channel_id"`
	Author           messageAuthorView `json:"author"`
	Content          string            `json:"content"`
	Language         string            `json:"language"`
	OriginalContent  string            `json:"original_content"`
	OriginalLanguage string            `json:"original_language"`
	Translated       bool              `json:"translated"`
	CreatedAt        string            `json:"created_at"`
	// Revision, EditedAt and Deleted: contract section 13.
	Revision int     `json:"revision"`
	EditedAt *string `json:"edited_at"`
	Deleted  bool    `json:"deleted"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func messageViewOf(v rooms.MessageView) messageView {
	m := v.Message
	return messageView{
		ID:        m.ID,
		ChannelID: m.ChannelID,
		Author: messageAuthorView{
			Type: m.Author.Type, ID: nullable(m.Author.ID), Name: m.Author.Name, AvatarURL: nullable(m.Author.AvatarURL),
		},
		Content:          v.Content,
		Language:         v.Language,
		OriginalContent:  m.Content,
		OriginalLanguage: m.SourceLanguage,
		Translated:       v.Translated,
		CreatedAt:        chat.FormatTime(m.CreatedAt),
		Revision:         m.Rev(),
		EditedAt:         nullableTime(m.EditedAt),
	}
}

// encodeMessageView returns the JSON of v, in at most MaxItemBytes. A
// translation is stored as the translator returned it, so one could make
// the view too long to fit a page alone; such a view shows the original
// instead (translated false), which always fits: content and
// original_content are each at most 40,000 characters of at most 6 bytes
// of JSON (\u003c, \u2028), and every other field is bounded (see
// docs/decisions.md, "Lists and page size").
func encodeMessageView(v rooms.MessageView) ([]byte, error) {
	if v.Message.Deleted() {
		return json.Marshal(tombstoneViewOf(v.Message))
	}
	b, err := json.Marshal(messageViewOf(v))
	if err != nil || len(b) <= MaxItemBytes || !v.Translated {
		return b, err
	}
	return json.Marshal(messageViewOf(rooms.ViewOf(v.Message, nil, "")))
}

// GuestMessagesHandler serves GET
// /api/v1/external/rooms/{room_id}/messages (contract section 6): the
// room's channel, newest first, in the reading guest's language, paginated
// like the workspace lists.
func GuestMessagesHandler(auth GuestAuthenticator, msgs GuestMessageLister, codec *cursor.Codec) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		paging, err := ReadPaging(r, codec, "room-messages:"+room.ID)
		if err != nil {
			Error(w, r, err)
			return
		}
		page, err := msgs.List(r.Context(), s, room, paging.After, paging.Limit)
		if err != nil {
			Error(w, r, err)
			return
		}
		writeList(w, r, paging, len(page.Items), func(i int) ([]byte, error) { return encodeMessageView(page.Items[i]) }, page.Rest)
	})
}

// PostGuestMessageHandler serves POST
// /api/v1/external/rooms/{room_id}/messages (contract section 6): 201 with
// the new message's view. The credential is judged before the body is read.
func PostGuestMessageHandler(auth GuestAuthenticator, msgs GuestMessagePoster) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		obj, _, err := ReadObject(r)
		if err != nil {
			Error(w, r, err)
			return
		}
		content, err := decodeGuestMessage(obj)
		if err != nil {
			Error(w, r, err)
			return
		}
		v, err := msgs.Post(r.Context(), s, room, content)
		if err != nil {
			Error(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		JSON(w, http.StatusCreated, struct {
			Data messageView `json:"data"`
		}{messageViewOf(v)})
	})
}

func decodeGuestMessage(obj Object) (string, error) {
	var v chat.Validation
	content, ok := obj.String(&v, "content", "content")
	switch {
	case !ok && !v.Has("content"):
		v.Add("content", "The content field is required.")
	case ok:
		if problem := messages.CheckContent(content); problem != "" {
			v.Add("content", problem)
		}
	}
	return content, v.Err()
}

// EncodeMessageView is the JSON of a message view exactly as the API's
// lists show it; the realtime push sends the same bytes.
func EncodeMessageView(v rooms.MessageView) ([]byte, error) { return encodeMessageView(v) }
