package attachments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// UploadStore keeps announced uploads.
type UploadStore interface {
	// PutUpload stores u. Errors: EUnavailable.
	PutUpload(ctx context.Context, u Upload) error
}

// Presigner signs the requests that reach the bucket without the service:
// an upload's form and an attachment's download.
type Presigner interface {
	// UploadForm returns the presigned POST of u, whose policy fixes its
	// key, content type, exact size and unattached tag, valid until
	// u.ExpiresAt. Errors: EUnavailable.
	UploadForm(ctx context.Context, u Upload) (Form, error)
	// Link returns a presigned GET of a, valid for ttl, that serves the
	// file with its type when Inline(a.ContentType), else as a download
	// named a.Filename.
	Link(a chat.Attachment, ttl time.Duration) (Link, error)
}

// Object is what Peek reads of a stored file.
type Object struct {
	// Filename is the upload's, which its form fixed in the file's
	// metadata (MetaFilename).
	Filename    string
	ContentType string
	Size        int64
	Head        []byte
}

// Objects reads and changes stored files.
type Objects interface {
	// Peek returns the type, size and first n bytes of the file at key.
	// Errors: ENotFound when there is none; EUnavailable.
	Peek(ctx context.Context, key string, n int) (Object, error)
	// Tag sets the file's TagKey tag to state. Errors: ENotFound;
	// EUnavailable.
	Tag(ctx context.Context, key, state string) error
	// Delete removes the files at keys; absent ones are not an error.
	// Errors: EUnavailable.
	Delete(ctx context.Context, keys []string) error
}

// Service announces uploads and checks the attachments of posts and
// edits.
type Service struct {
	Uploads   UploadStore
	Presigner Presigner
	Objects   Objects
	IDs       *chat.IDs
	Now       chat.Clock
}

// Announcement is what an upload request asks for.
type Announcement struct {
	Filename    string
	ContentType string
	Size        int64
}

// FormView is an upload's answer (201): its id and the presigned POST
// that sends its file.
type FormView struct {
	UploadID  string            `json:"upload_id"`
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Fields    map[string]string `json:"fields"`
	ExpiresAt string            `json:"expires_at"`
}

// ViewOf is u's answer with its form.
func ViewOf(u Upload, f Form) FormView {
	return FormView{UploadID: u.ID, Method: "POST", URL: f.URL, Fields: f.Fields, ExpiresAt: chat.FormatTime(f.ExpiresAt)}
}

// ReadAnnouncement reads an upload request's body. Errors: EInvalidJSON;
// EValidation on filename, content_type and size.
func ReadAnnouncement(body []byte) (Announcement, error) {
	obj, err := jsonbody.ParseObject(body)
	if err != nil {
		return Announcement{}, err
	}
	var v chat.Validation
	a := AnnouncementFields(obj, &v)
	return a, v.Err()
}

// AnnouncementFields reads an upload request's fields from obj, adding
// problems to v.
func AnnouncementFields(obj jsonbody.Object, v *chat.Validation) Announcement {
	var a Announcement
	if name, ok := obj.String(v, "filename", "filename"); ok {
		if p := CheckFilename(name); p != "" {
			v.Add("filename", p)
		}
		a.Filename = name
	} else if !v.Has("filename") {
		v.Add("filename", "The filename field is required.")
	}
	if ct, ok := obj.String(v, "content_type", "content type"); ok {
		if p := CheckContentType(ct); p != "" {
			v.Add("content_type", p)
		}
		a.ContentType = ct
	} else if !v.Has("content_type") {
		v.Add("content_type", "The content type field is required.")
	}
	if obj.IsNull("size") {
		v.Add("size", "The size field is required.")
	} else {
		// A whole number written as one: not a string, a fraction or an
		// exponent.
		a.Size = -1
		if i, err := strconv.ParseInt(string(bytes.TrimSpace(obj["size"])), 10, 64); err == nil {
			a.Size = i
		}
		if p := CheckSize(a.Size); p != "" {
			v.Add("size", p)
		}
	}
	return a
}

// Announce records an upload by owner into channel ch of workspace ws and
// returns it with the form that sends its file. Errors: EValidation on the
// announcement's fields; those of UploadStore and Presigner.
func (s *Service) Announce(ctx context.Context, owner, ws, ch string, a Announcement) (Upload, Form, error) {
	if s == nil {
		return Upload{}, Form{}, chat.Unavailable(errors.New("attachments: no bucket is configured (ATTACHMENTS_BUCKET)"))
	}
	var v chat.Validation
	if p := CheckFilename(a.Filename); p != "" {
		v.Add("filename", p)
	}
	if p := CheckContentType(a.ContentType); p != "" {
		v.Add("content_type", p)
	}
	if p := CheckSize(a.Size); p != "" {
		v.Add("size", p)
	}
	if err := v.Err(); err != nil {
		return Upload{}, Form{}, err
	}
	now := s.Now().UTC()
	u := Upload{ID: s.IDs.New(now), WorkspaceID: ws, ChannelID: ch, Owner: owner, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, CreatedAt: now, ExpiresAt: now.Add(UploadTTL)}
	form, err := s.Presigner.UploadForm(ctx, u)
	if err != nil {
		return Upload{}, Form{}, err
	}
	if err := s.Uploads.PutUpload(ctx, u); err != nil {
		return Upload{}, Form{}, err
	}
	return u, form, nil
}

// Field reads a post's or an edit's optional "attachments" field:
// present is false when it is absent or null. Problems are added to v on
// "attachments".
func Field(obj jsonbody.Object, v *chat.Validation) (refs []Ref, present bool) {
	if obj.IsNull("attachments") {
		return nil, false
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(obj["attachments"], &raw); err != nil {
		v.Add("attachments", "The attachments field must be an array of objects with an upload_id and an optional alt_text.")
		return nil, true
	}
	if len(raw) > MaxPerMessage {
		v.Add("attachments", fmt.Sprintf("A message carries at most %d attachments.", MaxPerMessage))
		return nil, true
	}
	seen := map[string]bool{}
	for i, item := range raw {
		var r Ref
		bad := func(why string) { v.Add("attachments", fmt.Sprintf("Attachment %d %s.", i+1, why)) }
		for k := range item {
			if k != "upload_id" && k != "alt_text" {
				bad(fmt.Sprintf("has an unknown field %q", k))
			}
		}
		if err := json.Unmarshal(item["upload_id"], &r.UploadID); err != nil || !chat.ValidID(r.UploadID) {
			bad("needs an upload_id, the id an upload request returned")
			continue
		}
		if seen[r.UploadID] {
			bad("repeats an upload already in the list")
			continue
		}
		seen[r.UploadID] = true
		if raw, ok := item["alt_text"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &r.AltText); err != nil {
				bad("has an alt_text that is not a string")
				continue
			}
			if p := CheckAltText(r.AltText); p != "" {
				bad("has an alt_text that " + p)
				continue
			}
		}
		refs = append(refs, r)
	}
	return refs, true
}

// Check reads each upload of refs in channel ch of workspace ws and checks
// that it is complete and that its first bytes match its type, in
// parallel. It returns the attachments, in refs' order; the store's write
// of the message then claims each upload for its author (a Claim each), which checks
// ownership, size and that it was not attached before. Errors: EValidation
// on "attachments" naming the first upload that fails and why; those of
// Objects.
func (s *Service) Check(ctx context.Context, ws, ch string, refs []Ref) ([]chat.Attachment, error) {
	out := make([]chat.Attachment, len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := Key(ws, ch, r.UploadID)
			obj, err := s.Objects.Peek(ctx, key, PeekBytes)
			switch {
			case chat.IsCode(err, chat.ENotFound):
				errs[i] = refError(i, r, "was not found in this channel: it is another channel's, or its file was never sent, or it expired")
				return
			case err != nil:
				errs[i] = err
				return
			}
			if CheckFilename(obj.Filename) != "" {
				errs[i] = refError(i, r, "is stored without its filename")
				return
			}
			t, ok := Types[obj.ContentType]
			if !ok {
				errs[i] = refError(i, r, "is stored with a type that is not accepted")
				return
			}
			if !t.Matches(obj.Head, obj.Size) {
				errs[i] = refError(i, r, "does not start like a "+obj.ContentType+" file: its content does not match its declared type")
				return
			}
			out[i] = chat.Attachment{ID: r.UploadID, Key: key, Filename: obj.Filename, ContentType: obj.ContentType, Size: obj.Size, AltText: r.AltText}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func refError(i int, r Ref, why string) error {
	return chat.FieldError("attachments", fmt.Sprintf("Attachment %d (upload %s) %s.", i+1, r.UploadID, why))
}

// Claim is what a message's write checks of one upload it attaches.
type Claim struct {
	UploadID string
	Owner    string
	// ChannelID, Size and ContentType must be the upload's declared ones.
	ChannelID   string
	Size        int64
	ContentType string
}

// ClaimError is a store's refusal of a claim: the upload as stored (zero
// when there is none).
type ClaimError struct {
	Index  int
	Claim  Claim
	Upload *Upload
	// Free[i] is true when the i-th upload of the write is known not to be
	// attached to any message (its claim passed, or failed on an upload
	// no message holds): its file can be tagged unattached again.
	Free []bool
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("attachments: claim of upload %s refused", e.Claim.UploadID)
}

// Explain turns a store's *ClaimError into the contract's 422 on
// "attachments"; any other error is returned as it is.
func Explain(err error, now time.Time) error {
	var ce *ClaimError
	if !errors.As(err, &ce) {
		return err
	}
	u, c := ce.Upload, ce.Claim
	why := "cannot be attached"
	switch {
	case u == nil:
		why = "is not an upload of this channel"
	case u.Owner != c.Owner:
		why = "was uploaded by someone else: only its uploader can attach it"
	case u.ChannelID != c.ChannelID:
		why = "is not an upload of this channel"
	case u.MessageID != "":
		why = "is already attached to a message: an upload is attached once"
	case !now.Before(u.ExpiresAt):
		why = fmt.Sprintf("expired: an upload must be attached within %d minutes", int(UploadTTL/time.Minute))
	case u.Size != c.Size:
		why = fmt.Sprintf("has %d bytes, not the %d it declared", c.Size, u.Size)
	case u.ContentType != c.ContentType:
		why = "is stored with another type than it declared"
	}
	return chat.FieldError("attachments", fmt.Sprintf("Attachment %d (upload %s) %s.", ce.Index+1, c.UploadID, why))
}

// Keys are the storage keys of as.
func Keys(as []chat.Attachment) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Key
	}
	return out
}

// Attach runs write, the store's write of a message, with the attachments
// of refs in channel ch of workspace ws. Without refs it is write(nil).
// With refs it checks them (Check), tags their files attached, so that
// the bucket's lifecycle keeps them, then writes. When the write refuses
// a claim (*ClaimError) the files known to be attached to no message are
// tagged unattached again and the refusal is explained (Explain); after
// any other failure the tags stay, since a file may be another message's:
// a file kept too long is better than one lost. Errors: EUnavailable when
// s is nil (no bucket); those of Check, Objects and write.
func (s *Service) Attach(ctx context.Context, ws, ch string, refs []Ref, now time.Time, write func([]chat.Attachment) error) error {
	if len(refs) == 0 {
		return write(nil)
	}
	if s == nil {
		return chat.Unavailable(errors.New("attachments: no bucket is configured (ATTACHMENTS_BUCKET)"))
	}
	as, err := s.Check(ctx, ws, ch, refs)
	if err != nil {
		return err
	}
	if err := s.tagAll(ctx, as, TagAttached); err != nil {
		return err
	}
	err = write(as)
	var ce *ClaimError
	if errors.As(err, &ce) {
		var free []chat.Attachment
		for i, a := range as {
			if i < len(ce.Free) && ce.Free[i] {
				free = append(free, a)
			}
		}
		// Best effort, past the request's cancellation: a file left tagged
		// attached is only kept, never lost.
		_ = s.tagAll(context.WithoutCancel(ctx), free, TagUnattached)
	}
	if err != nil {
		return Explain(err, now)
	}
	return nil
}

func (s *Service) tagAll(ctx context.Context, as []chat.Attachment, state string) error {
	errs := make([]error, len(as))
	var wg sync.WaitGroup
	for i, a := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Objects.Tag(ctx, a.Key, state)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Parts are refs as an idempotency fingerprint's parts: each upload id
// and alt text, in order, so that a request with other attachments is
// another request.
func Parts(refs []Ref) []string {
	out := make([]string, 0, 2*len(refs))
	for _, r := range refs {
		out = append(out, r.UploadID, r.AltText)
	}
	return out
}
