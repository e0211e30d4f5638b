package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/emf"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// MessageEditor edits and deletes messages (edits.Service).
type MessageEditor interface {
	Edit(ctx context.Context, actor edits.Actor, channelID, messageID, content, ifMatch string) (rooms.MessageView, error)
	Delete(ctx context.Context, actor edits.Actor, channelID, messageID string) error
}

// memberActor is p as the actor of an edit.
func memberActor(p workspaces.Principal) edits.Actor {
	return edits.Actor{Type: chat.AuthorUser, ID: p.UserID, Name: p.Name, WorkspaceID: p.WorkspaceID, Admin: p.IsAdmin()}
}

// guestActor is the session's guest as the actor of an edit.
func guestActor(s chat.GuestSession, room chat.Room) edits.Actor {
	return edits.Actor{Type: chat.AuthorGuest, ID: s.Guest.ID, Name: s.Guest.Nickname, WorkspaceID: room.WorkspaceID}
}

// EditChannelMessageHandler serves PATCH
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}
// (contract section 13): 200 with the new revision's view. Membership is
// judged before the body is read.
func EditChannelMessageHandler(auth Authorizer, svc MessageEditor) http.Handler {
	return RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) {
			Error(w, r, workspaces.ErrForbidden())
			return
		}
		edit(w, r, svc, memberActor(p), channel)
	})
}

// DeleteChannelMessageHandler serves DELETE
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}
// (contract section 13): 204. A member deletes their own messages in their
// channels; an admin any message of the workspace.
func DeleteChannelMessageHandler(auth Authorizer, svc MessageEditor) http.Handler {
	return RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) && !(p.IsAdmin() && chat.ValidID(channel)) {
			Error(w, r, workspaces.ErrForbidden())
			return
		}
		remove(w, r, svc, memberActor(p), channel)
	})
}

// EditGuestMessageHandler serves PATCH
// /api/v1/external/rooms/{room_id}/messages/{message_id} (contract section
// 13): a guest edits its own messages while its room is active.
func EditGuestMessageHandler(auth GuestAuthenticator, svc MessageEditor) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		edit(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// DeleteGuestMessageHandler serves DELETE
// /api/v1/external/rooms/{room_id}/messages/{message_id}: 204.
func DeleteGuestMessageHandler(auth GuestAuthenticator, svc MessageEditor) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		remove(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// edit reads an edit's body ({"content"}) and If-Match and answers 200
// with the view.
func edit(w http.ResponseWriter, r *http.Request, svc MessageEditor, actor edits.Actor, channel string) {
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
	// A repeated If-Match arrives split on commas: rejoined, it is no one
	// revision, so it matches none.
	ifMatch := strings.Join(r.Header.Values("If-Match"), ",")
	v, err := svc.Edit(r.Context(), actor, channel, r.PathValue("message_id"), content, ifMatch)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeEdited(w, v)
}

// writeEdited answers 200 with v, its revision as the ETag.
func writeEdited(w http.ResponseWriter, v rooms.MessageView) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("ETag", `"`+itoa(v.Message.Rev())+`"`)
	JSON(w, http.StatusOK, struct {
		Data messageView `json:"data"`
	}{messageViewOf(v)})
}

// remove deletes and answers 204.
func remove(w http.ResponseWriter, r *http.Request, svc MessageEditor, actor edits.Actor, channel string) {
	if err := svc.Delete(r.Context(), actor, channel, r.PathValue("message_id")); err != nil {
		Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// tombstoneView is a deleted message as every list shows it (contract
// section 13): no content, original or translation.
type tombstoneView struct {
	ID        string            `json:"id"`
	ChannelID string            `json:"channel_id"`
	Author    messageAuthorView `json:"author"`
	Deleted   bool              `json:"deleted"`
	DeletedAt string            `json:"deleted_at"`
	CreatedAt string            `json:"created_at"`
}

func tombstoneViewOf(m chat.Message) tombstoneView {
	return tombstoneView{
		ID: m.ID, ChannelID: m.ChannelID,
		Author:  messageAuthorView{Type: m.Author.Type, ID: nullable(m.Author.ID), Name: m.Author.Name, AvatarURL: nullable(m.Author.AvatarURL)},
		Deleted: true, DeletedAt: chat.FormatTime(m.DeletedAt), CreatedAt: chat.FormatTime(m.CreatedAt),
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// nullableTime is t in the API's format, nil for the zero time.
func nullableTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := chat.FormatTime(t)
	return &s
}

// WebhookChanger decides an inbound webhook's edits and deletions
// (inbound.Changes).
type WebhookChanger interface {
	Change(ctx context.Context, req inbound.Request, c inbound.Change) inbound.ChangeResult
}

// EditWebhookMessageHandler serves PATCH /webhooks/{webhook}/messages/{message_id}
// and DeleteWebhookMessageHandler DELETE on the same path (contract
// section 13): the post's credential scheme, quota and request log, with
// the X-RateLimit-* headers.
func EditWebhookMessageHandler(c WebhookChanger, now chat.Clock, m emf.Recorder) http.Handler {
	return webhookChange(c, now, m, false)
}

// DeleteWebhookMessageHandler: see EditWebhookMessageHandler.
func DeleteWebhookMessageHandler(c WebhookChanger, now chat.Clock, m emf.Recorder) http.Handler {
	return webhookChange(c, now, m, true)
}

func webhookChange(c WebhookChanger, now chat.Clock, m emf.Recorder, deleting bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := readInbound(r, now)
		res := c.Change(r.Context(), req, inbound.Change{MessageID: r.PathValue("message_id"), Delete: deleting,
			IfMatch: strings.Join(r.Header.Values("If-Match"), ",")})
		writeQuota(w, res.Quota)
		recordInbound(r.Context(), m, res.Result)
		switch {
		case res.Err != nil:
			Error(w, r, res.Err)
		case deleting:
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
		default:
			writeEdited(w, res.View)
		}
	})
}
