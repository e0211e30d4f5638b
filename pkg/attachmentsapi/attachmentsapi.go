// Package attachmentsapi is the HTTP side of uploads (contract section
// 17): a member's, a guest's and an inbound webhook's request for a
// presigned POST. Attaching an upload is a post's or an edit's business.
package attachmentsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inboundapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Announcer records uploads and signs their forms (attachments.Service).
type Announcer interface {
	Announce(ctx context.Context, owner, ws, ch string, a attachments.Announcement) (attachments.Upload, attachments.Form, error)
}

// announce reads r's announcement, records the upload by author in channel
// ch of workspace ws and answers 201 with its form.
func announce(w http.ResponseWriter, r *http.Request, svc Announcer, author chat.Author, ws, ch string) {
	obj, _, err := httpapi.ReadObject(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var v chat.Validation
	a := attachments.AnnouncementFields(obj, &v)
	if err := v.Err(); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	u, form, err := svc.Announce(r.Context(), attachments.Owner(author), ws, ch, a)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, http.StatusCreated, struct {
		Data attachments.FormView `json:"data"`
	}{attachments.ViewOf(u, form)})
}

// ChannelUploadHandler serves POST
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/uploads: a
// member of the channel announces a file. Membership is judged before the
// body is read.
func ChannelUploadHandler(auth httpapi.Authorizer, svc Announcer) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		ch := r.PathValue("channel_id")
		if !p.MemberOf(ch) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		announce(w, r, svc, chat.Author{Type: chat.AuthorUser, ID: p.UserID}, p.WorkspaceID, ch)
	})
}

// GuestUploadHandler serves POST /api/v1/external/rooms/{room_id}/uploads:
// the room's guest announces a file, while the room is active.
func GuestUploadHandler(auth httpapi.GuestAuthenticator, svc Announcer) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		announce(w, r, svc, chat.Author{Type: chat.AuthorGuest, ID: s.Guest.ID}, room.WorkspaceID, room.ChannelID)
	})
}

// attachmentsOf is a's attachments service, as an Announcer that answers
// 503 without a bucket.
func attachmentsOf(a *app.App) Announcer { return a.Attachments() }

// CreateChannelUpload builds CreateChannelUploadFunction.
func CreateChannelUpload(a *app.App) (http.Handler, error) {
	return ChannelUploadHandler(a.Authenticator(), attachmentsOf(a)), nil
}

// CreateGuestUpload builds CreateGuestUploadFunction.
func CreateGuestUpload(a *app.App) (http.Handler, error) {
	return GuestUploadHandler(&rooms.GuestAuth{Sessions: dynamo.New(a.DB, a.Table), Now: a.Now}, attachmentsOf(a)), nil
}

// CreateWebhookUpload builds CreateWebhookUploadFunction: the inbound
// webhook's decisions (credentials, quota, request log), WEBHOOK_CACHE_TTL.
func CreateWebhookUpload(a *app.App) (http.Handler, error) {
	ttl, err := app.WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	return inboundapi.Decided(inboundapi.Service(a, ttl).Upload, a.Now, a.Metrics), nil
}
