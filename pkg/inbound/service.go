package inbound

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/signature"
)

// Limits of the contract.
const (
	MaxBodyBytes      = 64 << 10
	QuotaWindow       = 60 * time.Second
	IdempotencyTTL    = 24 * time.Hour
	MaxIdempotencyKey = chat.MaxIdempotencyKeyLen
	// maxUserAgent bounds what the request log keeps of a User-Agent.
	maxUserAgent = 512
)

// Request is one inbound request as the HTTP layer read it.
type Request struct {
	WebhookID string
	// Body holds at most MaxBodyBytes+1 bytes; TooLarge says there was more.
	Body     []byte
	TooLarge bool
	// BodyBytes is the size of the whole body received, which may be more
	// than len(Body); the request log keeps it.
	BodyBytes int
	// ReadErr is set when the body could not be read; such a request is
	// still counted and logged, and refused as invalid_json.
	ReadErr error
	// MediaTypeErr is the HTTP layer's verdict on Content-Type, or nil.
	MediaTypeErr    error
	SecretHeader    string
	HasSecretHeader bool
	SignatureHeader string
	IdempotencyKey  string
	HasKey          bool
	SourceIP        string
	UserAgent       string
	RequestID       string
	ReceivedAt      time.Time
}

// QuotaState is the quota as the X-RateLimit-* headers report it.
type QuotaState struct {
	Limit     int
	Remaining int
	Reset     time.Time
}

// Result is the answer to a request: a body to send as is (accepted or
// replayed), or an error in the contract's codes.
type Result struct {
	Status   int
	Body     []byte
	Replayed bool
	Err      error
	// Quota is nil when the request was refused before the quota step.
	Quota *QuotaState
}

// Service decides inbound requests.
type Service struct {
	Configs ConfigSource
	Quota   QuotaCounter
	Store   Store
	// Attachments checks and attaches a post's files and announces
	// uploads; nil refuses both (503).
	Attachments *attachments.Service
	IDs         *chat.IDs
	Now         chat.Clock
}

// post is a validated request body.
type post struct {
	content   string
	channelID string
	skip      bool
	refs      []attachments.Ref
	// threadID is the message replied to, "" for a root.
	threadID string
}

// Post decides one request. It never returns a Go error: every outcome,
// including a failed dependency, is a Result.
func (s *Service) Post(ctx context.Context, req Request) Result {
	d, err := s.decide(ctx, req)
	if err != nil {
		return Result{Err: err}
	}
	d.log.IdempotencyKey = printableKey(req)
	return d.run(ctx)
}

// decide applies step 1, the webhook's lookup, to req and starts its
// decision on the webhook's settings as stored now (settings.go). Errors:
// ENotFound for no enabled webhook; EUnavailable.
func (s *Service) decide(ctx context.Context, req Request) (*decision, error) {
	if !chat.ValidID(req.WebhookID) {
		return nil, errNotFound()
	}
	cfg, err := s.config(ctx, req.WebhookID)
	if err == nil && !cfg.Webhook.Enabled {
		err = errNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &decision{svc: s, req: req, cfg: cfg, log: chat.RequestLog{
		ID: s.IDs.New(req.ReceivedAt), WorkspaceID: cfg.Workspace.ID, WebhookID: cfg.Webhook.ID,
		ReceivedAt: req.ReceivedAt, AuthScheme: scheme(cfg),
		SourceIP: req.SourceIP, UserAgent: truncate(req.UserAgent, maxUserAgent), BodyBytes: max(req.BodyBytes, len(req.Body)),
	}}, nil
}

// decision carries one request through the steps after the lookup.
type decision struct {
	svc   *Service
	req   Request
	cfg   Config
	log   chat.RequestLog
	quota *QuotaState
	// obj and jsonErr are the parsed body.
	obj     jsonbody.Object
	jsonErr error
}

func (d *decision) run(ctx context.Context) Result {
	now := d.svc.Now()
	if res, ok := d.admit(ctx, now); !ok {
		return res
	}
	d.obj, d.jsonErr = jsonbody.ParseObject(d.req.Body)
	return d.judge(ctx, now)
}

// admit applies steps 2 and 3 (quota, size) and refuses an unreadable
// body; ok is false with the answer when the request stops there.
func (d *decision) admit(ctx context.Context, now time.Time) (Result, bool) {
	// Step 2: quota. Every request from here on is counted and logged.
	limit := d.cfg.Workspace.WebhookQuota
	if limit <= 0 {
		limit = chat.DefaultWebhookQuota
	}
	window := now.Truncate(QuotaWindow)
	reset := window.Add(QuotaWindow)
	ok, remaining, err := d.svc.Quota.Take(ctx, d.cfg.Workspace.ID, window, limit, reset)
	if err != nil {
		return d.reject(ctx, err), false
	}
	if !ok {
		remaining = 0
	}
	d.quota = &QuotaState{Limit: limit, Remaining: min(max(0, remaining), limit), Reset: reset}
	if !ok {
		retry := int(reset.Sub(now).Seconds() + 0.999)
		e := chat.Errorf(chat.EQuotaExceeded, "The webhook request quota of this workspace is exhausted. Retry after the window resets.")
		e.RetryAfter = max(1, retry)
		return d.reject(ctx, e), false
	}
	// Step 3: size.
	if d.req.TooLarge || len(d.req.Body) > MaxBodyBytes {
		return d.reject(ctx, chat.Errorf(chat.EPayloadTooLarge, "The request body must not be larger than 64 KiB.")), false
	}
	if d.req.ReadErr != nil {
		return d.reject(ctx, chat.Errorf(chat.EInvalidJSON, "The request body could not be read.")), false
	}
	return Result{}, true
}

// judge runs steps 4 to 7 on the decision's settings.
func (d *decision) judge(ctx context.Context, now time.Time) Result {
	obj, jsonErr := d.obj, d.jsonErr
	// Step 4: credentials, before the body is judged.
	sig, res, ok := d.credentials(ctx, now)
	if !ok {
		return res
	}
	d.keyRetries(sig)
	// Step 5: body. A signature is judged (step 4) before the body, but
	// whether it was used needs the store: the log write checks it.
	if d.req.MediaTypeErr != nil {
		return d.refuse(ctx, d.req.MediaTypeErr, checkOnly(sig))
	}
	if jsonErr != nil {
		return d.refuse(ctx, jsonErr, checkOnly(sig))
	}
	p, err := d.validate(obj)
	if err != nil {
		return d.refuse(ctx, err, checkOnly(sig))
	}
	// Step 6: Idempotency-Key. A malformed key is refused at the door: the
	// request never reaches the idempotency lookup and posts nothing, so
	// its signature is only checked. Past it, a signature counts as
	// accepted and is recorded, whatever the answer.
	if d.req.HasKey && !chat.ValidIdempotencyKey(d.req.IdempotencyKey) {
		return d.refuse(ctx, errInvalidKey(), checkOnly(sig))
	}
	return d.accept(ctx, p, sig, now)
}

// credentials applies step 4 to the decision's settings and returns the
// signature use to record, if any. ok is false with the answer when the
// request stops there.
func (d *decision) credentials(ctx context.Context, now time.Time) (sig *SignatureUse, res Result, ok bool) {
	sig, err := d.authenticate(d.obj, now)
	if err != nil {
		return nil, d.reject(ctx, err), false
	}
	return sig, Result{}, true
}

// keyRetries lets sig be used again by a request with the same valid
// Idempotency-Key: a resend with the key is a retry, not a replay (step 4).
func (d *decision) keyRetries(sig *SignatureUse) {
	if sig != nil && d.req.HasKey && chat.ValidIdempotencyKey(d.req.IdempotencyKey) {
		sig.KeyHash = chat.HashIdempotencyKey(d.req.IdempotencyKey)
	}
}

// checkOnly is sig, to be checked unused but not recorded.
func checkOnly(sig *SignatureUse) *SignatureUse {
	if sig == nil {
		return nil
	}
	c := *sig
	c.CheckOnly = true
	return &c
}

// authenticate applies the webhook's scheme and returns the signature use
// to record, if any.
func (d *decision) authenticate(obj jsonbody.Object, now time.Time) (*SignatureUse, error) {
	wh := d.cfg.Webhook
	if wh.SignatureRequired {
		matched, err := verifySignature(d.req.SignatureHeader, wh, d.req.Body, now)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(matched))
		return &SignatureUse{
			WebhookID: wh.ID, Hash: hex.EncodeToString(sum[:]),
			// An accepted timestamp is within Tolerance of now, so it stays
			// fresh until at most now + 2×Tolerance: keep the record that
			// long, with no second parse of the header.
			ExpiresAt: now.Add(2*signature.Tolerance + time.Second),
		}, nil
	}
	secret, ok := d.req.SecretHeader, d.req.HasSecretHeader
	if !ok && obj != nil {
		var v chat.Validation
		secret, ok = obj.String(&v, "secret", "secret")
	}
	if !ok || secret == "" {
		return nil, chat.Errorf(chat.EMissingCredentials, "The webhook secret is required: send it in the X-Service-Webhook-Secret header or the secret field.")
	}
	if !staticSecretMatches(secret, wh, now) {
		return nil, chat.Errorf(chat.EInvalidSecret, "The webhook secret is invalid.")
	}
	return nil, nil
}

func (d *decision) validate(obj jsonbody.Object) (post, error) {
	var v chat.Validation
	var p post
	p.content, p.refs = messages.BodyFields(obj, &v)
	p.channelID = d.channel(obj, &v)
	p.skip, _ = obj.Bool(&v, "skip_translation", "skip translation")
	p.threadID = messages.ThreadField(obj, &v)
	obj.String(&v, "secret", "secret")
	return p, v.Err()
}

// channel reads a body's optional channel_id: the webhook's own channel
// when absent, else one of its workspace's channels.
func (d *decision) channel(obj jsonbody.Object, v *chat.Validation) string {
	id := d.cfg.Webhook.ChannelID
	if ch, ok := obj.String(v, "channel_id", "channel id"); ok {
		if !chat.ValidID(ch) || !d.cfg.Channels[ch] {
			v.Add("channel_id", "The selected channel id is invalid.")
		}
		id = ch
	}
	return id
}

// accept stores the message (steps 6 and 7) with one transaction that
// also claims the key and records the signature: nothing but DynamoDB runs
// between the claim and the completion, so no in-progress state is written.
func (d *decision) accept(ctx context.Context, p post, sig *SignatureUse, now time.Time) Result {
	wh := d.cfg.Webhook
	// A reply's root, read before anything is written: a refused thread
	// posts nothing.
	root, err := messages.Thread(ctx, d.svc.Store, p.channelID, p.threadID)
	if chat.IsCode(err, chat.EValidation) {
		return d.refuse(ctx, err, sig)
	}
	if err != nil {
		return d.reject(ctx, err)
	}
	msg := chat.Message{
		ThreadID: root,
		ID:       d.svc.IDs.New(now), WorkspaceID: d.cfg.Workspace.ID, ChannelID: p.channelID,
		Author:  chat.Author{Type: chat.AuthorBot, ID: wh.ID, Name: wh.BotName, AvatarURL: wh.BotAvatarURL, Language: d.cfg.Workspace.DefaultLanguage},
		Content: p.content, SkipTranslation: p.skip, SourceLanguage: d.cfg.Workspace.DefaultLanguage,
		Status: chat.MessageQueued, CreatedAt: now,
	}
	parts := attachments.Parts(p.refs)
	if p.threadID != "" {
		parts = append(parts, "thread:"+p.threadID)
	}
	fp := chat.IdempotencyFingerprint(p.channelID, p.content, p.skip, parts...)
	var key *KeyUse
	if d.req.HasKey {
		key = &KeyUse{WebhookID: wh.ID, Key: d.req.IdempotencyKey, KeyHash: chat.HashIdempotencyKey(d.req.IdempotencyKey),
			Fingerprint: fp, ExpiresAt: now.Add(IdempotencyTTL)}
	}
	var body []byte
	var outcome Outcome
	var rec Record
	err = d.svc.Attachments.Attach(ctx, msg.WorkspaceID, msg.ChannelID, p.refs, now, func(as []chat.Attachment) error {
		msg.Attachments = as
		body = AcceptedBody(msg)
		d.log.Status, d.log.Outcome, d.log.MessageID = 202, chat.OutcomeAccepted, msg.ID
		d.log.DurationMS = d.svc.Now().Sub(d.req.ReceivedAt).Milliseconds()
		var err error
		outcome, rec, err = d.svc.Store.Accept(ctx, Acceptance{Message: msg, Log: d.log, Key: key, Status: 202, Body: body, Signature: sig}, now)
		d.log.Status, d.log.Outcome, d.log.MessageID = 0, "", ""
		return err
	})
	switch {
	case chat.IsCode(err, chat.EValidation):
		// An attachment that cannot be attached: nothing was written.
		return d.refuse(ctx, err, sig)
	case chat.IsCode(err, chat.EIdempotencyKeyInUse):
		// Nothing was written: another request's transaction holds the key.
		return d.refuse(ctx, err, sig)
	case err != nil:
		// The transaction may have committed though its answer was lost;
		// the log write then keeps the record it wrote.
		return d.reject(ctx, err)
	case outcome == SignatureUsed:
		return d.reject(ctx, errReplayed())
	case outcome == KeyHeld:
		return d.held(ctx, rec, fp, sig, now)
	}
	return Result{Status: 202, Body: body, Quota: d.quota}
}

// held answers a request whose key a live record holds, and records its
// signature: it reached step 6.
func (d *decision) held(ctx context.Context, rec Record, fp string, sig *SignatureUse, now time.Time) Result {
	switch {
	case rec.Fingerprint != fp:
		return d.refuse(ctx, chat.Errorf(chat.EIdempotencyKeyReused, "This Idempotency-Key was already used with a different request."), sig)
	case rec.State != StateCompleted:
		wait := int(rec.LockedUntil.Sub(now).Seconds() + 0.999)
		return d.refuse(ctx, errInUse(max(1, wait)), sig)
	}
	d.log.Status, d.log.Outcome, d.log.MessageID = rec.Status, chat.OutcomeReplayed, rec.MessageID
	if err := d.record(ctx, sig); err != nil {
		d.log.Status, d.log.Outcome, d.log.MessageID = 0, "", ""
		return d.reject(ctx, err)
	}
	return Result{Status: rec.Status, Body: rec.Body, Replayed: true, Quota: d.quota}
}

// refuse is reject for a request that authenticated with sig: the log write
// records sig (or checks it), and a used signature turns the answer into
// signature_replayed, which the contract judges first (step 4).
func (d *decision) refuse(ctx context.Context, err error, sig *SignatureUse) Result {
	if sig == nil {
		return d.reject(ctx, err)
	}
	code := chat.ErrorCode(err)
	d.log.Status, d.log.Outcome, d.log.ErrorCode = chat.Status(code), chat.OutcomeRejected, code
	if rerr := d.record(ctx, sig); rerr != nil {
		d.log.ErrorCode = ""
		return d.reject(ctx, rerr)
	}
	return Result{Err: err, Quota: d.quota}
}

// record writes the log record with sig. It returns signature_replayed when
// the signature was used, and the store's error when the write failed: a
// signature to record that was not would stay usable again, and one only
// to check (sig.CheckOnly) was not judged, so the request's own answer
// would skip step 4. The caller then answers the error and logs the
// request without the signature (reject), so it is still in the log.
func (d *decision) record(ctx context.Context, sig *SignatureUse) error {
	outcome, err := d.write(ctx, sig)
	switch {
	case outcome == SignatureUsed:
		return errReplayed()
	case err != nil:
		return err
	}
	return nil
}

// reject logs a refused request (from the quota step on) and answers it.
func (d *decision) reject(ctx context.Context, err error) Result {
	code := chat.ErrorCode(err)
	d.log.Status, d.log.Outcome, d.log.ErrorCode = chat.Status(code), chat.OutcomeRejected, code
	d.write(ctx, nil)
	return Result{Err: err, Quota: d.quota}
}

// write stores the log record (with sig, see Store.Log). A failure is
// logged as an error, with the record's fields but never a credential: a
// request missing from the request log is a fault an operator must see.
func (d *decision) write(ctx context.Context, sig *SignatureUse) (Outcome, error) {
	d.log.DurationMS = d.svc.Now().Sub(d.req.ReceivedAt).Milliseconds()
	outcome, err := d.svc.Store.Log(context.WithoutCancel(ctx), d.log, sig, d.svc.Now())
	if err != nil {
		slog.ErrorContext(ctx, "inbound: request log record not written", "error", err.Error(),
			"workspace_id", d.log.WorkspaceID, "webhook_id", d.log.WebhookID, "request_log_id", d.log.ID,
			"status", d.log.Status, "error_code", d.log.ErrorCode, "with_signature", sig != nil)
	}
	return outcome, err
}

// acceptedAttachment is an attachment in a 202 body.
type acceptedAttachment struct {
	ID          string  `json:"id"`
	Filename    string  `json:"filename"`
	ContentType string  `json:"content_type"`
	Size        int64   `json:"size"`
	AltText     *string `json:"alt_text"`
}

// AcceptedBody is the 202 body of an accepted message; it is stored with
// the idempotency record, so that a replay is byte-identical.
func AcceptedBody(m chat.Message) []byte {
	type author struct {
		Type      string  `json:"type"`
		Name      string  `json:"name"`
		AvatarURL *string `json:"avatar_url"`
	}
	var body struct {
		Data struct {
			ID              string `json:"id"`
			WorkspaceID     string `json:"workspace_id"`
			ChannelID       string `json:"channel_id"`
			Content         string `json:"content"`
			SkipTranslation bool   `json:"skip_translation"`
			Author          author `json:"author"`
			Status          string `json:"status"`
			CreatedAt       string `json:"created_at"`
			// ThreadID is the root of the thread of a reply, null on a
			// root.
			ThreadID *string `json:"thread_id"`
			// Attachments are described without links: the body is
			// replayed byte for byte, and a link would have expired.
			Attachments []acceptedAttachment `json:"attachments"`
		} `json:"data"`
	}
	b := &body.Data
	b.ID, b.WorkspaceID, b.ChannelID, b.Content, b.SkipTranslation = m.ID, m.WorkspaceID, m.ChannelID, m.Content, m.SkipTranslation
	b.Author = author{Type: m.Author.Type, Name: m.Author.Name}
	if m.ThreadID != "" {
		b.ThreadID = &m.ThreadID
	}
	if m.Author.AvatarURL != "" {
		b.Author.AvatarURL = &m.Author.AvatarURL
	}
	b.Status, b.CreatedAt = m.Status, chat.FormatTime(m.CreatedAt)
	b.Attachments = make([]acceptedAttachment, len(m.Attachments))
	for i, a := range m.Attachments {
		b.Attachments[i] = acceptedAttachment{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size}
		if a.AltText != "" {
			b.Attachments[i].AltText = &m.Attachments[i].AltText
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		panic("inbound: marshal accepted body: " + err.Error())
	}
	return out
}

// fingerprint identifies "the same request" for a key: channel, content
// and skip_translation (contract section 4, step 6).
// printableKey is the key as the log keeps it: only a valid one.
func printableKey(req Request) string {
	if req.HasKey && chat.ValidIdempotencyKey(req.IdempotencyKey) {
		return req.IdempotencyKey
	}
	return ""
}

func scheme(cfg Config) string {
	if cfg.Webhook.SignatureRequired {
		return chat.SchemeSignature
	}
	return chat.SchemeStatic
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func errNotFound() error {
	return chat.Errorf(chat.EWebhookNotFound, "The webhook does not exist or is disabled.")
}

func errReplayed() error {
	return chat.Errorf(chat.ESignatureReplayed, "This signature was already used. Sign every request anew.")
}

func errInvalidKey() error {
	return chat.Errorf(chat.EInvalidIdempotencyKey, "The Idempotency-Key header must be 1 to 255 printable ASCII characters.")
}

func errInUse(retryAfter int) error {
	e := chat.Errorf(chat.EIdempotencyKeyInUse, "A request with this Idempotency-Key is still being processed. Retry later.")
	e.RetryAfter = retryAfter
	return e
}
