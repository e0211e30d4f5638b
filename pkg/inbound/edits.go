package inbound

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
)

// MessageEditor edits and deletes messages (edits.Service).
type MessageEditor interface {
	Edit(ctx context.Context, actor edits.Actor, channelID, messageID, content, ifMatch string) (rooms.MessageView, error)
	Delete(ctx context.Context, actor edits.Actor, channelID, messageID string) error
}

// LogRewriter replaces a request log record written before the outcome of
// its request was known (RewriteLog overwrites record rec.ID). Errors:
// EUnavailable.
type LogRewriter interface {
	RewriteLog(ctx context.Context, rec chat.RequestLog) error
}

// Changes decides an inbound webhook's edits and deletions of the messages
// it posted (contract section 13): the same webhook lookup, quota, size
// and credential steps as a post (section 4, steps 1 to 5), counted and in
// the request log alike.
type Changes struct {
	*Service
	Editor MessageEditor
	Logs   LogRewriter
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
	View rooms.MessageView
}

// Change decides one edit or deletion. The body of an edit is
// {"content", "channel_id"?}; a deletion's body is empty or
// {"channel_id"?}. channel_id names the channel the message was posted in,
// by default the webhook's own, as a post does. A message that the webhook
// did not post is 404 not_found (a webhook cannot read a channel).
//
// A webhook that signs its requests has its signature recorded before the
// change is applied, so a captured request replayed within the signature's
// window cannot apply again (say, undo a later edit): its log record is
// written first, then corrected if the change was refused.
func (s *Changes) Change(ctx context.Context, req Request, c Change) ChangeResult {
	if !chat.ValidID(req.WebhookID) {
		return ChangeResult{Result: Result{Err: errNotFound()}}
	}
	cfg, err := s.Configs.WebhookConfig(ctx, req.WebhookID)
	if err == nil && !cfg.Webhook.Enabled {
		err = errNotFound()
	}
	if err != nil {
		return ChangeResult{Result: Result{Err: err}}
	}
	d := &decision{svc: s.Service, req: req, cfg: cfg, log: chat.RequestLog{
		ID: s.IDs.New(req.ReceivedAt), WorkspaceID: cfg.Workspace.ID, WebhookID: cfg.Webhook.ID,
		ReceivedAt: req.ReceivedAt, AuthScheme: scheme(cfg),
		SourceIP: req.SourceIP, UserAgent: truncate(req.UserAgent, maxUserAgent), BodyBytes: max(req.BodyBytes, len(req.Body)),
	}}
	now := s.Now()
	if res, ok := d.admit(ctx, now); !ok {
		return ChangeResult{Result: res}
	}
	var obj jsonbody.Object
	var jsonErr error
	if len(req.Body) > 0 || !c.Delete {
		obj, jsonErr = jsonbody.ParseObject(req.Body)
	}
	sig, err := d.authenticate(obj, now)
	if err != nil {
		return ChangeResult{Result: d.reject(ctx, err)}
	}
	switch {
	case d.req.MediaTypeErr != nil && len(req.Body) > 0:
		return ChangeResult{Result: d.refuse(ctx, d.req.MediaTypeErr, checkOnly(sig))}
	case jsonErr != nil:
		return ChangeResult{Result: d.refuse(ctx, jsonErr, checkOnly(sig))}
	}
	content, channel, err := d.changeBody(obj, c.Delete)
	if err != nil {
		return ChangeResult{Result: d.refuse(ctx, err, checkOnly(sig))}
	}
	status := http.StatusOK
	if c.Delete {
		status = http.StatusNoContent
	}
	d.log.Status, d.log.Outcome, d.log.MessageID = status, chat.OutcomeAccepted, c.MessageID
	if sig != nil {
		// Record the signature (with the outcome expected) before applying.
		if err := d.record(ctx, sig); err != nil {
			d.log.Status, d.log.Outcome, d.log.MessageID = 0, "", ""
			return ChangeResult{Result: d.reject(ctx, err)}
		}
	}
	actor := edits.Actor{Type: chat.AuthorBot, ID: cfg.Webhook.ID, Name: cfg.Webhook.BotName, WorkspaceID: cfg.Workspace.ID}
	var view rooms.MessageView
	if c.Delete {
		err = s.Editor.Delete(ctx, actor, channel, c.MessageID)
	} else {
		view, err = s.Editor.Edit(ctx, actor, channel, c.MessageID, content, c.IfMatch)
	}
	d.log.DurationMS = s.Now().Sub(req.ReceivedAt).Milliseconds()
	if err != nil {
		code := chat.ErrorCode(err)
		d.log.Status, d.log.Outcome, d.log.ErrorCode = chat.Status(code), chat.OutcomeRejected, code
		if sig != nil {
			if werr := s.Logs.RewriteLog(context.WithoutCancel(ctx), d.log); werr != nil {
				logNotWritten(ctx, d.log, werr)
			}
			return ChangeResult{Result: Result{Err: err, Quota: d.quota}}
		}
		return ChangeResult{Result: d.reject(ctx, err)}
	}
	if sig == nil {
		d.write(ctx, nil)
	}
	return ChangeResult{Result: Result{Status: status, Quota: d.quota}, View: view}
}

// changeBody validates a change's body: an edit's content, and the
// channel_id of either, which must be one of the workspace's channels.
func (d *decision) changeBody(obj jsonbody.Object, deleting bool) (content, channel string, err error) {
	var v chat.Validation
	if !deleting {
		c, ok := obj.String(&v, "content", "content")
		switch {
		case !ok && !v.Has("content"):
			v.Add("content", "The content field is required.")
		case ok:
			if problem := messages.CheckContent(c); problem != "" {
				v.Add("content", problem)
			}
		}
		content = c
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
