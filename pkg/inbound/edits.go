package inbound

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// MessageEditor edits and deletes messages as an inbound webhook: its bot,
// in its workspace (edits.Service, through the editor's adapter in
// package webhookedits).
type MessageEditor interface {
	EditAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID string, body edits.Body, ifMatch string) (chat.MessageView, error)
	DeleteAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID string) error
}

// ChangeLogger writes an inbound change's request log record and its
// Idempotency-Key's record.
type ChangeLogger interface {
	// Admit writes rec before the change it logs is applied, in one
	// transaction with sig's use (as Store.Log) and key's claim in progress
	// when key is set: outcomes Written, SignatureUsed, KeyHeld (a live
	// record holds the key; returned), in that precedence, nothing written
	// but for Written. Errors:
	// EIdempotencyKeyInUse (key set) when the transaction kept colliding
	// with another one; EUnavailable.
	Admit(ctx context.Context, rec chat.RequestLog, sig *SignatureUse, key *KeyUse, now time.Time) (Outcome, Record, error)
	// RewriteLog replaces record rec.ID, written by Admit before its
	// change was refused. Errors: EUnavailable.
	RewriteLog(ctx context.Context, rec chat.RequestLog) error
	// CompleteKey completes key's claim with the applied change's answer:
	// status, the message changed, and the message an edit left (nil for a
	// deletion), while key.Owner still holds the claim. Errors:
	// EUnavailable.
	CompleteKey(ctx context.Context, key KeyUse, status int, messageID string, m *chat.Message) error
	// ReleaseKey deletes key's claim while key.Owner still holds it, so
	// that a refused change's key is free for its retry. Errors:
	// EUnavailable.
	ReleaseKey(ctx context.Context, key KeyUse) error
	// ReleaseSignature deletes sig's record, which Admit wrote, so that
	// the request may be sent again with the same signature after a
	// refusal that asked for a retry. Errors: EUnavailable.
	ReleaseSignature(ctx context.Context, sig SignatureUse) error
}

// MessageLocator finds a webhook's message without its channel.
type MessageLocator interface {
	// WebhookMessageChannel returns which of channels holds message
	// messageID posted by webhook webhookID, "" for none, with key reads
	// only. Errors: EUnavailable.
	WebhookMessageChannel(ctx context.Context, webhookID, messageID string, channels []string) (string, error)
}

// ChangeLock is how long a change's claim on its Idempotency-Key holds the
// key: twice the functions' 10-second timeout, so that it outlives the
// request that holds it. A request with the key meanwhile gets 409
// idempotency_key_in_use; a claim whose request died is taken over after.
const ChangeLock = 20 * time.Second

// Changes decides an inbound webhook's edits and deletions of the messages
// it posted (contract section 13): the same webhook lookup, quota, size,
// credential and Idempotency-Key steps as a post (section 4, steps 1 to
// 6), counted and in the request log alike.
type Changes struct {
	*Service
	Editor MessageEditor
	Logs   ChangeLogger
	// Locator finds a message posted to another channel than the
	// webhook's own when the request names none; nil: it is not looked for.
	Locator MessageLocator
}

// Change is one edit (Delete false) or deletion of message MessageID.
type Change struct {
	MessageID string
	Delete    bool
	// IfMatch is the If-Match header of an edit.
	IfMatch string
}

// ChangeResult is the answer to a change: Result (Status 200 with View
// for an edit, 204 for a deletion, or Err; Replayed for the replay of an
// earlier request with the same Idempotency-Key).
type ChangeResult struct {
	Result
	View chat.MessageView
}

// Change decides one edit or deletion. The body of an edit is
// {"content", "channel_id"?}; a deletion's body is empty or
// {"channel_id"?}. channel_id names the channel the message was posted in;
// without it the message is looked for in the webhook's own channel, then
// (with a Locator) in the workspace's others. A message that the webhook
// did not post is 404 not_found (a webhook cannot read a channel).
//
// An Idempotency-Key (contract section 4 step 6, scoped to the webhook,
// shared with its posts) makes the change once: the same request again
// (method, message, channel and content) replays the first answer, a
// different one is idempotency_key_reused, and one while the first is
// applied idempotency_key_in_use. Only an applied change is replayed. A
// signature already used by a request with the same key may be used again.
//
// The request is judged on the webhook's settings as stored when it
// starts (settings.go). Its log record (with its signature, when signed)
// is written before the change is applied, in one transaction, so that a
// captured signed request replayed within the signature's window cannot
// apply again (say, undo a later edit). A refused change's record is then
// corrected.
func (s *Changes) Change(ctx context.Context, req Request, c Change) ChangeResult {
	d, err := s.decide(ctx, req)
	if err != nil {
		return ChangeResult{Result: Result{Err: err}}
	}
	d.log.IdempotencyKey = printableKey(req)
	now := s.Now()
	if res, ok := d.admit(ctx, now); !ok {
		return ChangeResult{Result: res}
	}
	if len(req.Body) > 0 || !c.Delete {
		d.obj, d.jsonErr = jsonbody.ParseObject(req.Body)
	}
	return s.judge(ctx, d, c, now)
}

// judge applies steps 4 to 6 to a change on d's settings, then admits and
// applies it.
func (s *Changes) judge(ctx context.Context, d *decision, c Change, now time.Time) ChangeResult {
	sig, r, ok := d.credentials(ctx, now)
	if !ok {
		return ChangeResult{Result: r}
	}
	d.keyRetries(sig)
	switch {
	case d.req.MediaTypeErr != nil && len(d.req.Body) > 0:
		return ChangeResult{Result: d.refuse(ctx, d.req.MediaTypeErr, checkOnly(sig))}
	case d.jsonErr != nil:
		return ChangeResult{Result: d.refuse(ctx, d.jsonErr, checkOnly(sig))}
	}
	body, channel, named, err := d.changeBody(d.obj, c.Delete)
	if err != nil {
		return ChangeResult{Result: d.refuse(ctx, err, checkOnly(sig))}
	}
	// Step 6, as a post's.
	if d.req.HasKey && !chat.ValidIdempotencyKey(d.req.IdempotencyKey) {
		return ChangeResult{Result: d.refuse(ctx, errInvalidKey(), checkOnly(sig))}
	}
	status, method := http.StatusOK, http.MethodPatch
	if c.Delete {
		status, method = http.StatusNoContent, http.MethodDelete
	}
	fp := changeFingerprint(method, c.MessageID, channel, body)
	var key *KeyUse
	if d.req.HasKey {
		key = &KeyUse{WebhookID: d.cfg.Webhook.ID, Key: d.req.IdempotencyKey, KeyHash: chat.HashIdempotencyKey(d.req.IdempotencyKey),
			Fingerprint: fp, ExpiresAt: now.Add(IdempotencyTTL), Owner: d.log.ID, LockedUntil: now.Add(ChangeLock)}
	}
	// Log the request (and record its signature, and claim its key) with
	// the outcome expected, before applying it.
	d.log.Status, d.log.Outcome, d.log.MessageID = status, chat.OutcomeAccepted, c.MessageID
	d.log.DurationMS = s.Now().Sub(d.req.ReceivedAt).Milliseconds()
	outcome, rec, err := s.Logs.Admit(context.WithoutCancel(ctx), d.log, sig, key, now)
	if err != nil || outcome != Written {
		d.log.Status, d.log.Outcome, d.log.MessageID = 0, "", ""
	}
	switch {
	case chat.IsCode(err, chat.EIdempotencyKeyInUse):
		// Nothing was written: another request's transaction holds the key.
		return ChangeResult{Result: d.refuse(ctx, err, sig)}
	case err != nil:
		return ChangeResult{Result: d.reject(ctx, err)}
	case outcome == SignatureUsed:
		return ChangeResult{Result: d.reject(ctx, errReplayed())}
	case outcome == KeyHeld:
		res := ChangeResult{Result: d.held(ctx, rec, fp, sig, now)}
		if res.Replayed && rec.Message != nil {
			res.View = chat.OriginalView(*rec.Message)
		}
		return res
	}
	view, err := s.apply(ctx, d, c, channel, named, body)
	if err != nil {
		code := chat.ErrorCode(err)
		d.log.Status, d.log.Outcome, d.log.ErrorCode = chat.Status(code), chat.OutcomeRejected, code
		d.log.DurationMS = s.Now().Sub(d.req.ReceivedAt).Milliseconds()
		if werr := s.Logs.RewriteLog(context.WithoutCancel(ctx), d.log); werr != nil {
			logNotWritten(ctx, d.log, werr)
		}
		if key != nil {
			// Only an applied change is replayed: the key is free again.
			if rerr := s.Logs.ReleaseKey(context.WithoutCancel(ctx), *key); rerr != nil {
				slog.ErrorContext(ctx, "inbound: idempotency claim not released", "error", rerr.Error(),
					"webhook_id", d.log.WebhookID, "request_log_id", d.log.ID)
			}
		}
		if sig != nil && !sig.CheckOnly && chat.Status(code) >= 500 {
			// Refused for now (503: retry later), nothing applied: the
			// sender's retry of the very same signed request must not be
			// refused as a replay. A refusal for the request's own fault
			// keeps the signature spent.
			if rerr := s.Logs.ReleaseSignature(context.WithoutCancel(ctx), *sig); rerr != nil {
				slog.ErrorContext(ctx, "inbound: signature use not released", "error", rerr.Error(),
					"webhook_id", d.log.WebhookID, "request_log_id", d.log.ID)
			}
		}
		return ChangeResult{Result: Result{Err: err, Quota: d.quota}}
	}
	if key != nil {
		var m *chat.Message
		if !c.Delete {
			m = &view.Message
		}
		// The change is applied whatever this write does: a claim left in
		// progress only holds the key until it lapses, and a retry after
		// that applies the change again, which changes nothing more.
		if cerr := s.Logs.CompleteKey(context.WithoutCancel(ctx), *key, status, c.MessageID, m); cerr != nil {
			slog.ErrorContext(ctx, "inbound: idempotency record not completed", "error", cerr.Error(),
				"webhook_id", d.log.WebhookID, "request_log_id", d.log.ID)
		}
	}
	return ChangeResult{Result: Result{Status: status, Quota: d.quota}, View: view}
}

// apply makes the change in channel. A message the request did not name
// the channel of and that is not in the webhook's own channel is looked
// for in the workspace's other channels (key reads, no scan), so that a
// webhook edits what it posted elsewhere as it edits the rest.
func (s *Changes) apply(ctx context.Context, d *decision, c Change, channel string, named bool, body edits.Body) (chat.MessageView, error) {
	wh, ws := d.cfg.Webhook, d.cfg.Workspace.ID
	change := func(channel string) (chat.MessageView, error) {
		if c.Delete {
			return chat.MessageView{}, s.Editor.DeleteAsWebhook(ctx, wh, ws, channel, c.MessageID)
		}
		return s.Editor.EditAsWebhook(ctx, wh, ws, channel, c.MessageID, body, c.IfMatch)
	}
	view, err := change(channel)
	if named || s.Locator == nil || !chat.IsCode(err, chat.ENotFound) || !chat.ValidID(c.MessageID) {
		return view, err
	}
	others := make([]string, 0, len(d.cfg.Channels))
	for ch := range d.cfg.Channels {
		if ch != channel {
			others = append(others, ch)
		}
	}
	slices.Sort(others)
	found, lerr := s.Locator.WebhookMessageChannel(ctx, wh.ID, c.MessageID, others)
	switch {
	case lerr != nil:
		return view, lerr
	case found == "":
		return view, err
	}
	return change(found)
}

// changeBody validates a change's body: an edit's content and
// attachments (edits.ReadBody), and the channel_id of either, which must
// be one of the workspace's channels; named reports that the body named
// it.
func (d *decision) changeBody(obj jsonbody.Object, deleting bool) (body edits.Body, channel string, named bool, err error) {
	var v chat.Validation
	if !deleting {
		body = edits.ReadBody(obj, &v)
	}
	channel = d.cfg.Webhook.ChannelID
	if obj != nil {
		if ch, ok := obj.String(&v, "channel_id", "channel id"); ok {
			if !chat.ValidID(ch) || !d.cfg.Channels[ch] {
				v.Add("channel_id", "The selected channel id is invalid.")
			}
			channel, named = ch, true
		}
		obj.String(&v, "secret", "secret")
	}
	return body, channel, named, v.Err()
}

// changeFingerprint is the Idempotency-Key fingerprint of a change: the
// method, the message, the channel and an edit's content
// (chat.ChangeFingerprint, unchanged for an edit without attachments, so
// that live records still match), with the attachments when the edit sets
// them: the same content with other files is another request.
func changeFingerprint(method, messageID, channel string, b edits.Body) string {
	if !b.SetAttachments {
		return chat.ChangeFingerprint(method, messageID, channel, b.Content)
	}
	var content *string
	if b.HasContent {
		content = &b.Content
	}
	refs := make([]string, 0, 2*len(b.Attachments))
	for _, r := range b.Attachments {
		refs = append(refs, r.UploadID, r.AltText)
	}
	return chat.AttachmentsChangeFingerprint(method, messageID, channel, content, refs)
}

func logNotWritten(ctx context.Context, rec chat.RequestLog, err error) {
	slog.ErrorContext(ctx, "inbound: request log record not corrected", "error", err.Error(),
		"workspace_id", rec.WorkspaceID, "webhook_id", rec.WebhookID, "request_log_id", rec.ID, "status", rec.Status)
}
