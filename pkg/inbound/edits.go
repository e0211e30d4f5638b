package inbound

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/messages"
)

// MessageEditor edits and deletes messages as an inbound webhook: its bot,
// in its workspace (edits.Service, through the editor's adapter in
// package webhookedits).
type MessageEditor interface {
	EditAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID, content, ifMatch string) (chat.MessageView, error)
	DeleteAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID string) error
}

// ChangeLogger writes an inbound change's request log record.
type ChangeLogger interface {
	// Admit writes rec before the change it logs is applied, in one
	// transaction with sig's use (as Store.Log) and a check that webhook
	// judged still holds the settings the change was judged on: outcomes
	// Written, SignatureUsed, SettingsChanged (nothing written). Errors:
	// EUnavailable.
	Admit(ctx context.Context, rec chat.RequestLog, sig *SignatureUse, judged chat.InboundWebhook, now time.Time) (Outcome, error)
	// RewriteLog replaces record rec.ID, written by Admit before its
	// change was refused. Errors: EUnavailable.
	RewriteLog(ctx context.Context, rec chat.RequestLog) error
}

// Changes decides an inbound webhook's edits and deletions of the messages
// it posted (contract section 13): the same webhook lookup, quota, size
// and credential steps as a post (section 4, steps 1 to 5), counted and in
// the request log alike.
type Changes struct {
	*Service
	Editor MessageEditor
	Logs   ChangeLogger
}

// Change is one edit (Delete false) or deletion of message MessageID.
type Change struct {
	MessageID string
	Delete    bool
	// IfMatch is the If-Match header of an edit.
	IfMatch string
}

// ChangeResult is the answer to a change: Result (Status 200 with View
// for an edit, 204 for a deletion, or Err).
type ChangeResult struct {
	Result
	View chat.MessageView
}

// Change decides one edit or deletion. The body of an edit is
// {"content", "channel_id"?}; a deletion's body is empty or
// {"channel_id"?}. channel_id names the channel the message was posted in,
// by default the webhook's own, as a post does. A message that the webhook
// did not post is 404 not_found (a webhook cannot read a channel).
//
// The request's log record (with its signature, when signed) is written
// before the change is applied, in one transaction that also checks the
// webhook still holds the settings the request was judged on, so that a
// rotated-away secret, a disabled or deleted webhook, changes nothing from
// the moment it is stored, cached settings or not (settings.go), and a
// captured signed request replayed within the signature's window cannot
// apply again (say, undo a later edit). A refused change's record is then
// corrected.
func (s *Changes) Change(ctx context.Context, req Request, c Change) ChangeResult {
	d, err := s.decide(ctx, req)
	if err != nil {
		return ChangeResult{Result: Result{Err: err}}
	}
	now := s.Now()
	if res, ok := d.admit(ctx, now); !ok {
		return ChangeResult{Result: res}
	}
	if len(req.Body) > 0 || !c.Delete {
		d.obj, d.jsonErr = jsonbody.ParseObject(req.Body)
	}
	for {
		res, again := s.judge(ctx, d, c, now)
		if !again {
			return res
		}
		// Judged on settings changed meanwhile: nothing was written.
		if d.rereads >= maxRereads {
			return ChangeResult{Result: d.reject(ctx, chat.Unavailable(errors.New("inbound: the webhook kept changing while the change was judged")))}
		}
		if r, done := d.reread(ctx); done {
			return ChangeResult{Result: r}
		}
	}
}

// judge applies steps 4 and 5 to a change on d's settings, then admits and
// applies it; again reports that the settings changed since they were
// read, and nothing was written.
func (s *Changes) judge(ctx context.Context, d *decision, c Change, now time.Time) (res ChangeResult, again bool) {
	sig, r, ok := d.credentials(ctx, now)
	if !ok {
		return ChangeResult{Result: r}, false
	}
	switch {
	case d.req.MediaTypeErr != nil && len(d.req.Body) > 0:
		return ChangeResult{Result: d.refuse(ctx, d.req.MediaTypeErr, checkOnly(sig))}, false
	case d.jsonErr != nil:
		return ChangeResult{Result: d.refuse(ctx, d.jsonErr, checkOnly(sig))}, false
	}
	content, channel, err := d.changeBody(d.obj, c.Delete)
	if err != nil {
		return ChangeResult{Result: d.refuse(ctx, err, checkOnly(sig))}, false
	}
	status := http.StatusOK
	if c.Delete {
		status = http.StatusNoContent
	}
	// Log the request (and record its signature) with the outcome
	// expected, before applying it.
	d.log.Status, d.log.Outcome, d.log.MessageID = status, chat.OutcomeAccepted, c.MessageID
	d.log.DurationMS = s.Now().Sub(d.req.ReceivedAt).Milliseconds()
	outcome, err := s.Logs.Admit(context.WithoutCancel(ctx), d.log, sig, d.cfg.Webhook, now)
	if err != nil || outcome != Written {
		d.log.Status, d.log.Outcome, d.log.MessageID = 0, "", ""
	}
	switch {
	case err != nil:
		return ChangeResult{Result: d.reject(ctx, err)}, false
	case outcome == SettingsChanged:
		return ChangeResult{}, true
	case outcome == SignatureUsed:
		return ChangeResult{Result: d.reject(ctx, errReplayed())}, false
	}
	wh, ws := d.cfg.Webhook, d.cfg.Workspace.ID
	var view chat.MessageView
	if c.Delete {
		err = s.Editor.DeleteAsWebhook(ctx, wh, ws, channel, c.MessageID)
	} else {
		view, err = s.Editor.EditAsWebhook(ctx, wh, ws, channel, c.MessageID, content, c.IfMatch)
	}
	if err != nil {
		code := chat.ErrorCode(err)
		d.log.Status, d.log.Outcome, d.log.ErrorCode = chat.Status(code), chat.OutcomeRejected, code
		d.log.DurationMS = s.Now().Sub(d.req.ReceivedAt).Milliseconds()
		if werr := s.Logs.RewriteLog(context.WithoutCancel(ctx), d.log); werr != nil {
			logNotWritten(ctx, d.log, werr)
		}
		return ChangeResult{Result: Result{Err: err, Quota: d.quota}}, false
	}
	return ChangeResult{Result: Result{Status: status, Quota: d.quota}, View: view}, false
}

// changeBody validates a change's body: an edit's content, and the
// channel_id of either, which must be one of the workspace's channels.
func (d *decision) changeBody(obj jsonbody.Object, deleting bool) (content, channel string, err error) {
	var v chat.Validation
	if !deleting {
		content = messages.ContentField(obj, &v)
	}
	channel = d.cfg.Webhook.ChannelID
	if obj != nil {
		if ch, ok := obj.String(&v, "channel_id", "channel id"); ok {
			if !chat.ValidID(ch) || !d.cfg.Channels[ch] {
				v.Add("channel_id", "The selected channel id is invalid.")
			}
			channel = ch
		}
		obj.String(&v, "secret", "secret")
	}
	return content, channel, v.Err()
}

func logNotWritten(ctx context.Context, rec chat.RequestLog, err error) {
	slog.ErrorContext(ctx, "inbound: request log record not corrected", "error", err.Error(),
		"workspace_id", rec.WorkspaceID, "webhook_id", rec.WebhookID, "request_log_id", rec.ID, "status", rec.Status)
}
