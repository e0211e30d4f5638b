package editsapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// memberActor is p as the actor of an edit.
func memberActor(p workspaces.Principal) edits.Actor {
	return edits.Actor{Type: chat.AuthorUser, ID: p.UserID, Name: p.Name, WorkspaceID: p.WorkspaceID, Admin: p.IsAdmin()}
}

// EditChannelMessageHandler serves PATCH
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}
// (contract section 13): 200 with the new revision's view. Membership is
// judged before the body is read.
func EditChannelMessageHandler(auth httpapi.Authorizer, svc MessageEditor, view messageview.Renderer) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		Edit(w, r, svc, memberActor(p), channel, view)
	})
}

// DeleteChannelMessageHandler serves DELETE
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}
// (contract section 13): 204. A member deletes their own messages in their
// channels; an admin any message of the workspace.
func DeleteChannelMessageHandler(auth httpapi.Authorizer, svc MessageEditor) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) && !(p.IsAdmin() && chat.ValidID(channel)) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		Delete(w, r, svc, memberActor(p), channel)
	})
}

// EditChannelMessage builds EditChannelMessageFunction.
func EditChannelMessage(a *app.App) (http.Handler, error) {
	return EditChannelMessageHandler(a.Authenticator(), ReactingEditor(a), a.Renderer(0)), nil
}

// DeleteChannelMessage builds DeleteChannelMessageFunction.
func DeleteChannelMessage(a *app.App) (http.Handler, error) {
	return DeleteChannelMessageHandler(a.Authenticator(), Editor(a)), nil
}
