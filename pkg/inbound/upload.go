package inbound

import (
	"context"
	"encoding/json"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// Upload decides one upload request, POST /webhooks/{webhook}/uploads
// (contract section 17), with a post's steps 1 to 5: the webhook, its
// workspace's quota, the body's size, the credentials and the body, which
// is an announcement ({"filename", "content_type", "size"}, with an
// optional "channel_id" of the webhook's workspace and, for the static
// scheme, "secret"). An accepted request answers 201 with the upload's
// presigned POST and is logged as accepted. An upload takes no
// Idempotency-Key: announcing twice only makes two forms, and the one never
// used expires. Like Post, it never returns a Go error.
func (s *Service) Upload(ctx context.Context, req Request) Result {
	d, err := s.decide(ctx, req)
	if err != nil {
		return Result{Err: err}
	}
	now := s.Now()
	if res, ok := d.admit(ctx, now); !ok {
		return res
	}
	d.obj, d.jsonErr = jsonbody.ParseObject(d.req.Body)
	sig, res, ok := d.credentials(ctx, now)
	if !ok {
		return res
	}
	switch {
	case d.req.MediaTypeErr != nil:
		return d.refuse(ctx, d.req.MediaTypeErr, checkOnly(sig))
	case d.jsonErr != nil:
		return d.refuse(ctx, d.jsonErr, checkOnly(sig))
	}
	var v chat.Validation
	a := attachments.AnnouncementFields(d.obj, &v)
	ch := d.channel(d.obj, &v)
	d.obj.String(&v, "secret", "secret")
	if err := v.Err(); err != nil {
		return d.refuse(ctx, err, checkOnly(sig))
	}
	owner := attachments.Owner(chat.Author{Type: chat.AuthorBot, ID: d.cfg.Webhook.ID})
	u, form, err := s.Attachments.Announce(ctx, owner, d.cfg.Workspace.ID, ch, a)
	if err != nil {
		return d.refuse(ctx, err, checkOnly(sig))
	}
	body, err := json.Marshal(struct {
		Data attachments.FormView `json:"data"`
	}{attachments.ViewOf(u, form)})
	if err != nil {
		return d.reject(ctx, chat.Internal(err))
	}
	d.log.Status, d.log.Outcome = 201, chat.OutcomeAccepted
	if err := d.record(ctx, sig); err != nil {
		d.log.Status, d.log.Outcome = 0, ""
		return d.reject(ctx, err)
	}
	return Result{Status: 201, Body: body, Quota: d.quota}
}
