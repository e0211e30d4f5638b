package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/editstore"
	"github.com/chatbridge/chat/pkg/edits"
)

const pngHead = "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR0123456789abc"

// bucketFake is attachments.Objects over a map of keys to tags; DeleteFn,
// when set, answers Delete first.
type bucketFake struct {
	mu       sync.Mutex
	files    map[string]string
	DeleteFn func(keys []string) error
}

func (b *bucketFake) Peek(_ context.Context, key string, n int) (attachments.Object, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.files[key]; !ok {
		return attachments.Object{}, chat.Errorf(chat.ENotFound, "no file %s", key)
	}
	return attachments.Object{Filename: "a.png", ContentType: "image/png", Size: int64(len(pngHead)), Head: []byte(pngHead)}, nil
}

func (b *bucketFake) Tag(_ context.Context, key, state string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.files[key]; !ok {
		return chat.Errorf(chat.ENotFound, "no file %s", key)
	}
	b.files[key] = state
	return nil
}

func (b *bucketFake) Delete(_ context.Context, keys []string) error {
	if b.DeleteFn != nil {
		if err := b.DeleteFn(keys); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		delete(b.files, k)
	}
	return nil
}

func (b *bucketFake) has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.files[key]
	return ok
}

// racingStore runs beforeEdit once before the next edit's write.
type racingStore struct {
	*editstore.Store
	beforeEdit func()
}

func (r *racingStore) EditMessage(ctx context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	if f := r.beforeEdit; f != nil {
		r.beforeEdit = nil
		f()
	}
	return r.Store.EditMessage(ctx, c)
}

type attWorld struct {
	t      *testing.T
	st     *stacktest.Stack
	table  *dynamo.Table
	store  *racingStore
	bucket *bucketFake
	svc    *edits.Service
	ids    *chat.IDs
	ws, ch string
	ann    edits.Actor
}

func newAttWorld(t *testing.T) *attWorld {
	st := stacktest.New(t)
	ids := chat.NewIDs()
	now := time.Now()
	w := &attWorld{t: t, st: st, table: dynamo.New(st.DB, st.Table), bucket: &bucketFake{files: map[string]string{}}, ids: ids,
		ws: ids.New(now), ch: ids.New(now)}
	w.ann = edits.Actor{Type: chat.AuthorUser, ID: ids.New(now), Name: "Ann", WorkspaceID: w.ws}
	w.store = &racingStore{Store: editstore.New(st.DB, st.Table)}
	w.svc = &edits.Service{Store: w.store, IDs: ids, Now: time.Now, Pause: func(time.Duration) {},
		Attachments: &attachments.Service{Objects: w.bucket, IDs: ids, Now: time.Now}}
	return w
}

// upload announces an upload by a into the world's channel, its file sent.
func (w *attWorld) upload(a edits.Actor) string {
	w.t.Helper()
	now := time.Now().UTC()
	id := w.ids.New(now)
	u := attachments.Upload{ID: id, WorkspaceID: w.ws, ChannelID: w.ch, Owner: attachments.Owner(chat.Author{Type: a.Type, ID: a.ID}),
		Filename: "a.png", ContentType: "image/png", Size: int64(len(pngHead)), CreatedAt: now, ExpiresAt: now.Add(attachments.UploadTTL)}
	if err := w.table.PutUpload(context.Background(), u); err != nil {
		w.t.Fatal(err)
	}
	w.bucket.files[u.Key()] = attachments.TagUnattached
	return id
}

// post stores a message by a carrying uploads, claimed in its write.
func (w *attWorld) post(a edits.Actor, content string, uploads ...string) string {
	w.t.Helper()
	now := time.Now().UTC()
	m := chat.Message{ID: w.ids.New(now), WorkspaceID: w.ws, ChannelID: w.ch, Author: chat.Author{Type: a.Type, ID: a.ID, Name: a.Name},
		Content: content, SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
	for _, u := range uploads {
		m.Attachments = append(m.Attachments, chat.Attachment{ID: u, Key: attachments.Key(w.ws, w.ch, u), Filename: "a.png",
			ContentType: "image/png", Size: int64(len(pngHead)), AltText: "alt"})
	}
	if err := w.table.PutMessage(context.Background(), m); err != nil {
		w.t.Fatal(err)
	}
	return m.ID
}

func (w *attWorld) message(id string) chat.Message {
	w.t.Helper()
	m, found, err := w.store.Message(context.Background(), w.ch, id)
	if err != nil || !found {
		w.t.Fatalf("read message %s: found %v, %v", id, found, err)
	}
	return m
}

// claimedBy is the message_id of upload id's item, "" for none.
func (w *attWorld) claimedBy(id string) string {
	w.t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(w.st.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": dynamo.Str(dynamo.UploadPK(id)), "sk": dynamo.Str(dynamo.MetaSK)}})
	if err != nil {
		w.t.Fatal(err)
	}
	return dynamo.GetS(out.Item, "message_id")
}

func (w *attWorld) rawMessage(id string) map[string]types.AttributeValue {
	w.t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(w.st.Table), ConsistentRead: aws.Bool(true),
		Key: dynamo.Key(dynamo.ChanPK(w.ch), dynamo.MessageSK(id))})
	if err != nil {
		w.t.Fatal(err)
	}
	return out.Item
}

func set(refs ...attachments.Ref) edits.Body {
	return edits.Body{Attachments: refs, SetAttachments: true}
}

func altTexts(as []chat.Attachment) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID+"="+a.AltText)
	}
	return out
}

// TestEditAttachmentsOnTheTable: an edit adds an upload (the message's
// update and the claim in one transaction), replaces an alt text, removes
// a file (deleted, its key off attachment_keys); another user's upload and
// an upload another message holds are 422 and change nothing.
func TestEditAttachmentsOnTheTable(t *testing.T) {
	w := newAttWorld(t)
	ctx := context.Background()
	u1, u2 := w.upload(w.ann), w.upload(w.ann)
	id := w.post(w.ann, "hello", u1)

	w.st.Calls.Reset()
	if _, err := w.svc.Edit(ctx, w.ann, w.ch, id, set(attachments.Ref{UploadID: u1, AltText: "kept"}, attachments.Ref{UploadID: u2, AltText: "new"}), "1"); err != nil {
		t.Fatal(err)
	}
	if calls := w.st.Calls.Calls(); countOf(calls, "DynamoDB.TransactWriteItems") != 1 || countOf(calls, "DynamoDB.UpdateItem") != 0 {
		t.Fatalf("calls %v, want the edit's write as one TransactWriteItems", calls)
	}
	m := w.message(id)
	if got := altTexts(m.Attachments); !slices.Equal(got, []string{u1 + "=kept", u2 + "=new"}) || m.Rev() != 2 || m.Content != "hello" {
		t.Fatalf("stored %v at revision %d (%q)", got, m.Rev(), m.Content)
	}
	if w.claimedBy(u2) != id {
		t.Fatalf("u2 claimed by %q, want %s", w.claimedBy(u2), id)
	}

	if _, err := w.svc.Edit(ctx, w.ann, w.ch, id, set(attachments.Ref{UploadID: u2}), "2"); err != nil {
		t.Fatal(err)
	}
	m = w.message(id)
	if got := altTexts(m.Attachments); !slices.Equal(got, []string{u2 + "="}) || m.Rev() != 3 {
		t.Fatalf("stored %v at revision %d, want u2 alone without alt text at 3", got, m.Rev())
	}
	if w.bucket.has(attachments.Key(w.ws, w.ch, u1)) || len(m.DroppedKeys) != 0 {
		t.Fatalf("u1's file kept (%v) or its key left %v", w.bucket.has(attachments.Key(w.ws, w.ch, u1)), m.DroppedKeys)
	}
	if _, ok := w.rawMessage(id)[dynamo.AttrAttachmentKeys]; ok {
		t.Fatal("attachment_keys left on the item")
	}

	ben := edits.Actor{Type: chat.AuthorUser, ID: w.ids.New(time.Now()), WorkspaceID: w.ws}
	theirs := w.upload(ben)
	_, err := w.svc.Edit(ctx, w.ann, w.ch, id, set(attachments.Ref{UploadID: u2}, attachments.Ref{UploadID: theirs}), "")
	var ce *chat.Error
	if !errors.As(err, &ce) || ce.Code != chat.EValidation || len(ce.Fields["attachments"]) == 0 {
		t.Fatalf("another user's upload: %v, want 422 on attachments", err)
	}
	other := w.post(w.ann, "other")
	if _, err := w.svc.Edit(ctx, w.ann, w.ch, other, set(attachments.Ref{UploadID: u2}), ""); !chat.IsCode(err, chat.EValidation) {
		t.Fatalf("an upload of another message: %v, want 422", err)
	}
	if m := w.message(id); m.Rev() != 3 || w.claimedBy(theirs) != "" || w.claimedBy(u2) != id || w.message(other).Rev() != 1 {
		t.Fatalf("a refused edit changed something: revision %d, claims %q %q", m.Rev(), w.claimedBy(theirs), w.claimedBy(u2))
	}
}

// TestEditRacingADeleteOnTheTable: a deletion lands between an edit's read
// and its write: the edit answers message_deleted, claims nothing, and
// the tombstone has no attachments.
func TestEditRacingADeleteOnTheTable(t *testing.T) {
	w := newAttWorld(t)
	ctx := context.Background()
	u1, u2 := w.upload(w.ann), w.upload(w.ann)
	id := w.post(w.ann, "hello", u1)
	w.store.beforeEdit = func() {
		if err := w.svc.Delete(ctx, w.ann, w.ch, id); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
	_, err := w.svc.Edit(ctx, w.ann, w.ch, id, set(attachments.Ref{UploadID: u1}, attachments.Ref{UploadID: u2}), "")
	if !chat.IsCode(err, chat.EMessageDeleted) {
		t.Fatalf("got %v, want message_deleted", err)
	}
	m := w.message(id)
	if !m.Deleted() || len(m.Attachments) != 0 || w.claimedBy(u2) != "" || w.bucket.has(attachments.Key(w.ws, w.ch, u1)) {
		t.Fatalf("tombstone %v with %v, u2 claimed by %q, u1's file kept %v", m.Deleted(), altTexts(m.Attachments), w.claimedBy(u2),
			w.bucket.has(attachments.Key(w.ws, w.ch, u1)))
	}
}

// TestDeleteWithFilesOnTheTable: a deletion removes the attachments and
// deletes every file; when the files' deletion fails it answers 503 and
// the tombstone keeps only their keys, which a retried DELETE deletes
// (204) and clears.
func TestDeleteWithFilesOnTheTable(t *testing.T) {
	w := newAttWorld(t)
	ctx := context.Background()
	u1, u2, u3 := w.upload(w.ann), w.upload(w.ann), w.upload(w.ann)
	id := w.post(w.ann, "two", u1, u2)
	if err := w.svc.Delete(ctx, w.ann, w.ch, id); err != nil {
		t.Fatal(err)
	}
	raw := w.rawMessage(id)
	_, hasAtt := raw[dynamo.AttrAttachments]
	_, hasKeys := raw[dynamo.AttrAttachmentKeys]
	if hasAtt || hasKeys || w.bucket.has(attachments.Key(w.ws, w.ch, u1)) || w.bucket.has(attachments.Key(w.ws, w.ch, u2)) {
		t.Fatalf("after the deletion: attachments %v, keys %v, files %v", hasAtt, hasKeys, w.bucket.files)
	}

	failing := w.post(w.ann, "one", u3)
	attempts := 0
	w.bucket.DeleteFn = func([]string) error { attempts++; return chat.Unavailable(errors.New("s3 down")) }
	if err := w.svc.Delete(ctx, w.ann, w.ch, failing); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("got %v, want 503", err)
	}
	m := w.message(failing)
	if _, ok := w.rawMessage(failing)[dynamo.AttrAttachments]; ok || !m.Deleted() || attempts != 3 ||
		!slices.Equal(m.DroppedKeys, []string{attachments.Key(w.ws, w.ch, u3)}) {
		t.Fatalf("tombstone %v, attachments kept %v, keys %v after %d attempts", m.Deleted(), ok, m.DroppedKeys, attempts)
	}
	w.bucket.DeleteFn = nil
	if err := w.svc.Delete(ctx, w.ann, w.ch, failing); err != nil {
		t.Fatalf("retry: %v, want 204", err)
	}
	if _, ok := w.rawMessage(failing)[dynamo.AttrAttachmentKeys]; ok || w.bucket.has(attachments.Key(w.ws, w.ch, u3)) {
		t.Fatalf("the retry left the key (%v) or the file", ok)
	}
}

func countOf(calls []string, op string) int {
	n := 0
	for _, c := range calls {
		if c == op {
			n++
		}
	}
	return n
}
