// Package editsapi is the HTTP side of editing and deleting a message
// (contract section 13) that members, guests and inbound webhooks share:
// an edit's body and If-Match, the answers. Each caller's handlers live
// with its capability (membersapi, roomsapi, inboundapi).
package editsapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messageview"
)

// MessageEditor edits and deletes messages (edits.Service).
type MessageEditor interface {
	Edit(ctx context.Context, actor edits.Actor, channelID, messageID string, body edits.Body, ifMatch string) (chat.MessageView, error)
	Delete(ctx context.Context, actor edits.Actor, channelID, messageID string) error
}

// IfMatch is r's If-Match header. A repeated If-Match arrives split on
// commas: rejoined, it is no one revision, so it matches none.
func IfMatch(r *http.Request) string { return strings.Join(r.Header.Values("If-Match"), ",") }

// Edit reads an edit's body ({"content"?, "attachments"?}, edits.ReadBody)
// and If-Match, edits message
// {message_id} of channel as actor and answers 200 with the view.
func Edit(w http.ResponseWriter, r *http.Request, svc MessageEditor, actor edits.Actor, channel string, view messageview.Renderer) {
	obj, _, err := httpapi.ReadObject(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var val chat.Validation
	body := edits.ReadBody(obj, &val)
	if err := val.Err(); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v, err := svc.Edit(r.Context(), actor, channel, r.PathValue("message_id"), body, IfMatch(r))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	WriteEdited(w, v, view)
}

// WriteEdited answers an edit: 200 with v, its revision as the ETag.
func WriteEdited(w http.ResponseWriter, v chat.MessageView, view messageview.Renderer) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("ETag", `"`+strconv.Itoa(v.Message.Rev())+`"`)
	httpapi.JSON(w, http.StatusOK, struct {
		Data messageview.View `json:"data"`
	}{view.Of(v)})
}

// Delete deletes message {message_id} of channel as actor and answers 204.
func Delete(w http.ResponseWriter, r *http.Request, svc MessageEditor, actor edits.Actor, channel string) {
	if err := svc.Delete(r.Context(), actor, channel, r.PathValue("message_id")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	WriteDeleted(w)
}

// WriteDeleted answers a deletion: 204.
func WriteDeleted(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
