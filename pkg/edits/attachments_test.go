package edits_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

const (
	ws   = "01HZZZZZZZZZZZZZZZZZZZZWS0"
	ch   = "01HZZZZZZZZZZZZZZZZZZZZCH0"
	png  = "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR0123456789abc"
	size = int64(len(png))
)

var ann = edits.Actor{Type: chat.AuthorUser, ID: "ann", Name: "Ann", WorkspaceID: ws}

// memStore is an edits.Store in memory that judges the conditions the
// DynamoDB store writes, claims included.
type memStore struct {
	mu      sync.Mutex
	msgs    map[string]chat.Message
	uploads map[string]*attachments.Upload
	// beforeWrite, when set, runs once before the next write is judged:
	// a concurrent change.
	beforeWrite func(s *memStore)
}

func newMemStore() *memStore {
	return &memStore{msgs: map[string]chat.Message{}, uploads: map[string]*attachments.Upload{}}
}

func (s *memStore) hook() {
	if f := s.beforeWrite; f != nil {
		s.beforeWrite = nil
		f(s)
	}
}

func owns(a edits.Actor, m chat.Message) bool { return m.Author.Type == a.Type && m.Author.ID == a.ID }

func (s *memStore) EditMessage(_ context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook()
	m, ok := s.msgs[c.MessageID]
	if !ok || m.ChannelID != c.ChannelID {
		return chat.Message{}, false, false, nil
	}
	pass := m.WorkspaceID == c.Actor.WorkspaceID && !m.Deleted() && owns(c.Actor, m)
	if c.SetAttachments {
		pass = pass && m.Rev() == c.Base
	} else {
		pass = pass && m.Content != c.Content && (c.IfMatch == 0 || m.Rev() == c.IfMatch)
	}
	if !pass {
		return m, false, true, nil
	}
	owner := attachments.Owner(chat.Author{Type: c.Actor.Type, ID: c.Actor.ID})
	free := make([]bool, len(c.Claims))
	for i, a := range c.Claims {
		u := s.uploads[a.ID]
		free[i] = u == nil || u.MessageID == ""
	}
	for i, a := range c.Claims {
		u := s.uploads[a.ID]
		if u == nil || u.Owner != owner || u.ChannelID != c.ChannelID || u.Size != a.Size || (u.MessageID != "" && u.MessageID != c.MessageID) {
			var cp *attachments.Upload
			if u != nil {
				v := *u
				cp = &v
			}
			return chat.Message{}, false, false, &attachments.ClaimError{Index: i, Upload: cp, Free: free,
				Claim: attachments.Claim{UploadID: a.ID, Owner: owner, ChannelID: c.ChannelID, Size: a.Size, ContentType: a.ContentType}}
		}
	}
	for _, a := range c.Claims {
		s.uploads[a.ID].MessageID = c.MessageID
	}
	old := m
	m = edits.Edited(m, c.Content, c.Now)
	if c.SetAttachments {
		m.Attachments = slices.Clone(c.Attachments)
		if len(m.Attachments) == 0 {
			m.Attachments = nil
		}
	}
	m.DroppedKeys = addKeys(m.DroppedKeys, c.Dropped)
	s.msgs[c.MessageID] = m
	if len(c.Claims) > 0 {
		return chat.Message{}, true, true, nil
	}
	return old, true, true, nil
}

func addKeys(set, keys []string) []string {
	for _, k := range keys {
		if !slices.Contains(set, k) {
			set = append(set, k)
		}
	}
	return set
}

func (s *memStore) DeleteMessage(_ context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook()
	m, ok := s.msgs[c.MessageID]
	if !ok || m.ChannelID != c.ChannelID {
		return chat.Message{}, false, false, nil
	}
	pass := m.WorkspaceID == c.Actor.WorkspaceID && !m.Deleted() && (c.AnyAuthor || owns(c.Actor, m))
	if c.Base == 0 {
		pass = pass && len(m.Attachments) == 0 && len(m.DroppedKeys) == 0
	} else {
		pass = pass && m.Rev() == c.Base
	}
	if !pass {
		return m, false, true, nil
	}
	old := m
	m = edits.Tombstone(m, chat.Author{Type: c.Actor.Type, ID: c.Actor.ID}, c.Now)
	m.DroppedKeys = addKeys(slices.Clone(old.DroppedKeys), c.Dropped)
	s.msgs[c.MessageID] = m
	return old, true, true, nil
}

func (s *memStore) Message(_ context.Context, channelID, messageID string) (chat.Message, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[messageID]
	if !ok || m.ChannelID != channelID {
		return chat.Message{}, false, nil
	}
	return m, true, nil
}

func (s *memStore) ClearDroppedKeys(_ context.Context, _, messageID string, keys []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[messageID]
	if !ok {
		return nil
	}
	m.DroppedKeys = slices.DeleteFunc(m.DroppedKeys, func(k string) bool { return slices.Contains(keys, k) })
	if len(m.DroppedKeys) == 0 {
		m.DroppedKeys = nil
	}
	s.msgs[messageID] = m
	return nil
}

func (s *memStore) get(id string) chat.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.msgs[id]
}

// fakeObjects is attachments.Objects with function fields; a nil field
// does the usual thing on files (a map of keys to tags).
type fakeObjects struct {
	mu       sync.Mutex
	files    map[string]string // key -> tag
	PeekFn   func(key string) (attachments.Object, error)
	DeleteFn func(keys []string) error
	deleted  [][]string
}

func (o *fakeObjects) Peek(_ context.Context, key string, n int) (attachments.Object, error) {
	if o.PeekFn != nil {
		return o.PeekFn(key)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.files[key]; !ok {
		return attachments.Object{}, chat.Errorf(chat.ENotFound, "no file %s", key)
	}
	return attachments.Object{Filename: "shot.png", ContentType: "image/png", Size: size, Head: []byte(png)[:min(n, len(png))]}, nil
}

func (o *fakeObjects) Tag(_ context.Context, key, state string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.files[key]; !ok {
		return chat.Errorf(chat.ENotFound, "no file %s", key)
	}
	o.files[key] = state
	return nil
}

func (o *fakeObjects) Delete(_ context.Context, keys []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleted = append(o.deleted, slices.Clone(keys))
	if o.DeleteFn != nil {
		if err := o.DeleteFn(keys); err != nil {
			return err
		}
	}
	for _, k := range keys {
		delete(o.files, k)
	}
	return nil
}

func (o *fakeObjects) has(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.files[key]
	return ok
}

func (o *fakeObjects) tag(key string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.files[key]
}

type world struct {
	st   *memStore
	objs *fakeObjects
	svc  *edits.Service
	ids  *chat.IDs
	now  time.Time
}

func newWorld() *world {
	w := &world{st: newMemStore(), objs: &fakeObjects{files: map[string]string{}}, ids: chat.NewIDs(),
		now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return w.now }
	w.svc = &edits.Service{Store: w.st, IDs: w.ids, Now: clock, Pause: func(time.Duration) {},
		Attachments: &attachments.Service{Objects: w.objs, IDs: w.ids, Now: clock}}
	return w
}

// upload stores an upload of owner in ch, its file sent (unattached).
func (w *world) upload(owner edits.Actor) string {
	id := w.ids.New(w.now)
	w.st.uploads[id] = &attachments.Upload{ID: id, WorkspaceID: ws, ChannelID: ch, Owner: attachments.Owner(chat.Author{Type: owner.Type, ID: owner.ID}),
		Filename: "shot.png", ContentType: "image/png", Size: size, CreatedAt: w.now, ExpiresAt: w.now.Add(attachments.UploadTTL)}
	w.objs.files[attachments.Key(ws, ch, id)] = attachments.TagUnattached
	return id
}

// post stores a message of author carrying uploads (claimed), alt texts
// "alt <n>".
func (w *world) post(author edits.Actor, content string, uploads ...string) string {
	id := w.ids.New(w.now)
	m := chat.Message{ID: id, WorkspaceID: ws, ChannelID: ch, Author: chat.Author{Type: author.Type, ID: author.ID},
		Content: content, CreatedAt: w.now}
	for i, u := range uploads {
		m.Attachments = append(m.Attachments, chat.Attachment{ID: u, Key: attachments.Key(ws, ch, u), Filename: "shot.png",
			ContentType: "image/png", Size: size, AltText: "alt " + string(rune('1'+i))})
		w.st.uploads[u].MessageID = id
		w.objs.files[attachments.Key(ws, ch, u)] = attachments.TagAttached
	}
	w.st.msgs[id] = m
	return id
}

func refs(r ...attachments.Ref) edits.Body { return edits.Body{Attachments: r, SetAttachments: true} }

func ids(as []chat.Attachment) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID+"="+a.AltText)
	}
	return out
}

func TestEditAddsAnUpload(t *testing.T) {
	w := newWorld()
	u1 := w.upload(ann)
	id := w.post(ann, "hello")
	b := refs(attachments.Ref{UploadID: u1, AltText: "a chart"})
	v, err := w.svc.Edit(context.Background(), ann, ch, id, b, "1")
	if err != nil {
		t.Fatal(err)
	}
	m := w.st.get(id)
	if got := ids(m.Attachments); !slices.Equal(got, []string{u1 + "=a chart"}) || m.Rev() != 2 || m.Content != "hello" {
		t.Fatalf("stored %v at revision %d with %q, want the upload at revision 2 with the content kept", got, m.Rev(), m.Content)
	}
	if !slices.Equal(ids(v.Message.Attachments), ids(m.Attachments)) || v.Message.Rev() != 2 {
		t.Fatalf("answered %v at revision %d", ids(v.Message.Attachments), v.Message.Rev())
	}
	if w.st.uploads[u1].MessageID != id || w.objs.tag(attachments.Key(ws, ch, u1)) != attachments.TagAttached {
		t.Fatalf("upload claimed by %q, tagged %q", w.st.uploads[u1].MessageID, w.objs.tag(attachments.Key(ws, ch, u1)))
	}
}

func TestEditReplacesAltTextsAndRemovesAFile(t *testing.T) {
	w := newWorld()
	u1, u2 := w.upload(ann), w.upload(ann)
	id := w.post(ann, "two files", u1, u2)
	if _, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1, AltText: "new alt"}), ""); err != nil {
		t.Fatal(err)
	}
	m := w.st.get(id)
	if got := ids(m.Attachments); !slices.Equal(got, []string{u1 + "=new alt"}) || m.Rev() != 2 {
		t.Fatalf("stored %v at revision %d, want u1 with the new alt text at revision 2", got, m.Rev())
	}
	if w.objs.has(attachments.Key(ws, ch, u2)) || !w.objs.has(attachments.Key(ws, ch, u1)) {
		t.Fatalf("u2's file should be deleted, u1's kept (deleted %v)", w.objs.deleted)
	}
	if len(m.DroppedKeys) != 0 {
		t.Fatalf("dropped keys left after the deletion: %v", m.DroppedKeys)
	}
	// An alt text left out is removed: a change, though the content and
	// files are the same.
	if _, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1}), ""); err != nil {
		t.Fatal(err)
	}
	if m := w.st.get(id); !slices.Equal(ids(m.Attachments), []string{u1 + "="}) || m.Rev() != 3 {
		t.Fatalf("stored %v at revision %d, want u1 without alt text at revision 3", ids(m.Attachments), m.Rev())
	}
	// The same list again changes nothing.
	if v, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1}), ""); err != nil || v.Message.Rev() != 3 {
		t.Fatalf("unchanged edit: %v, revision %d, want no new revision", err, v.Message.Rev())
	}
}

func TestEditWithoutAttachmentsKeepsThem(t *testing.T) {
	w := newWorld()
	u1 := w.upload(ann)
	id := w.post(ann, "hi", u1)
	if _, err := w.svc.Edit(context.Background(), ann, ch, id, edits.Body{Content: "hello", HasContent: true}, ""); err != nil {
		t.Fatal(err)
	}
	if m := w.st.get(id); len(m.Attachments) != 1 || m.Content != "hello" || len(w.objs.deleted) != 0 {
		t.Fatalf("stored %v %q, deleted %v: want the file kept", ids(m.Attachments), m.Content, w.objs.deleted)
	}
	// Removing the last file of a message without content leaves it empty: 422.
	id2 := w.post(ann, "", w.upload(ann))
	if _, err := w.svc.Edit(context.Background(), ann, ch, id2, refs(), ""); !chat.IsCode(err, chat.EValidation) {
		t.Fatalf("emptying a message: %v, want a validation error", err)
	}
}

func TestEditAttachingAnotherUsersUploadIs422(t *testing.T) {
	w := newWorld()
	ben := edits.Actor{Type: chat.AuthorUser, ID: "ben", WorkspaceID: ws}
	theirs := w.upload(ben)
	id := w.post(ann, "hello")
	_, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: theirs}), "")
	var ce *chat.Error
	if !errors.As(err, &ce) || ce.Code != chat.EValidation || ce.Fields["attachments"] == nil {
		t.Fatalf("got %v, want 422 on attachments", err)
	}
	if m := w.st.get(id); m.Rev() != 1 || len(m.Attachments) != 0 || w.st.uploads[theirs].MessageID != "" {
		t.Fatalf("message changed (revision %d, %v) or upload claimed", m.Rev(), ids(m.Attachments))
	}
	if tag := w.objs.tag(attachments.Key(ws, ch, theirs)); tag != attachments.TagUnattached {
		t.Fatalf("the refused file is tagged %q, want it unattached again", tag)
	}
}

func TestEditAttachingAnUploadOfAnotherMessageIs422(t *testing.T) {
	w := newWorld()
	u1 := w.upload(ann)
	first := w.post(ann, "first", u1)
	second := w.post(ann, "second")
	_, err := w.svc.Edit(context.Background(), ann, ch, second, refs(attachments.Ref{UploadID: u1}), "")
	if !chat.IsCode(err, chat.EValidation) {
		t.Fatalf("got %v, want 422", err)
	}
	if w.st.uploads[u1].MessageID != first || w.objs.tag(attachments.Key(ws, ch, u1)) != attachments.TagAttached {
		t.Fatalf("upload now %q tagged %q: the first message must keep it", w.st.uploads[u1].MessageID, w.objs.tag(attachments.Key(ws, ch, u1)))
	}
}

func TestEditRacingADelete(t *testing.T) {
	w := newWorld()
	u1, u2 := w.upload(ann), w.upload(ann)
	id := w.post(ann, "hello", u1)
	w.st.beforeWrite = func(s *memStore) {
		m := s.msgs[id]
		t := edits.Tombstone(m, m.Author, w.now)
		t.DroppedKeys = []string{attachments.Key(ws, ch, u1)}
		s.msgs[id] = t
	}
	_, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1}, attachments.Ref{UploadID: u2}), "")
	if !chat.IsCode(err, chat.EMessageDeleted) {
		t.Fatalf("got %v, want message_deleted", err)
	}
	if m := w.st.get(id); len(m.Attachments) != 0 || w.st.uploads[u2].MessageID != "" {
		t.Fatalf("the tombstone took attachments %v (u2 claimed by %q)", ids(m.Attachments), w.st.uploads[u2].MessageID)
	}
	// The deletion's retry deletes its files.
	if err := w.svc.Delete(context.Background(), ann, ch, id); err != nil {
		t.Fatal(err)
	}
	if w.objs.has(attachments.Key(ws, ch, u1)) || len(w.st.get(id).DroppedKeys) != 0 {
		t.Fatalf("u1's file kept or its key left: %v", w.st.get(id).DroppedKeys)
	}
}

func TestEditRacingAnotherEditIsDecidedAgain(t *testing.T) {
	w := newWorld()
	u1, u2 := w.upload(ann), w.upload(ann)
	id := w.post(ann, "hello", u1)
	w.st.beforeWrite = func(s *memStore) {
		// Another edit removed u1 meanwhile; its file is being deleted.
		m := s.msgs[id]
		m.Attachments, m.Revision, m.DroppedKeys = nil, 2, []string{attachments.Key(ws, ch, u1)}
		s.msgs[id] = m
	}
	_, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1}, attachments.Ref{UploadID: u2}), "")
	if !chat.IsCode(err, chat.EValidation) {
		t.Fatalf("got %v: u1, taken off by the other edit, must not be attached again", err)
	}
	if m := w.st.get(id); m.Rev() != 2 {
		t.Fatalf("revision %d, want the other edit's 2", m.Rev())
	}
}

func TestDeleteDeletesAllFiles(t *testing.T) {
	w := newWorld()
	u1, u2 := w.upload(ann), w.upload(ann)
	id := w.post(ann, "two", u1, u2)
	if err := w.svc.Delete(context.Background(), ann, ch, id); err != nil {
		t.Fatal(err)
	}
	m := w.st.get(id)
	if !m.Deleted() || len(m.Attachments) != 0 || len(m.DroppedKeys) != 0 {
		t.Fatalf("tombstone: deleted %v, attachments %v, keys %v", m.Deleted(), ids(m.Attachments), m.DroppedKeys)
	}
	if w.objs.has(attachments.Key(ws, ch, u1)) || w.objs.has(attachments.Key(ws, ch, u2)) {
		t.Fatalf("files kept: %v", w.objs.files)
	}
}

func TestRetriedDeleteAfterTheFilesDeletionFailed(t *testing.T) {
	w := newWorld()
	u1 := w.upload(ann)
	id := w.post(ann, "one", u1)
	w.objs.DeleteFn = func([]string) error { return chat.Unavailable(errors.New("s3 down")) }
	err := w.svc.Delete(context.Background(), ann, ch, id)
	if !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("got %v, want 503", err)
	}
	m := w.st.get(id)
	if !m.Deleted() || len(m.Attachments) != 0 || !slices.Equal(m.DroppedKeys, []string{attachments.Key(ws, ch, u1)}) {
		t.Fatalf("tombstone: deleted %v, attachments %v, keys %v: want a tombstone holding the key", m.Deleted(), ids(m.Attachments), m.DroppedKeys)
	}
	if n := len(w.objs.deleted); n != 3 {
		t.Fatalf("%d attempts at deleting, want 3", n)
	}
	w.objs.DeleteFn = nil
	if err := w.svc.Delete(context.Background(), ann, ch, id); err != nil {
		t.Fatalf("retry: %v, want 204", err)
	}
	if w.objs.has(attachments.Key(ws, ch, u1)) || len(w.st.get(id).DroppedKeys) != 0 {
		t.Fatalf("the retry left the file or its key (%v)", w.st.get(id).DroppedKeys)
	}
	// Again: nothing left to do, 204.
	if err := w.svc.Delete(context.Background(), ann, ch, id); err != nil || len(w.objs.deleted) != 4 {
		t.Fatalf("third delete: %v after %d deletions, want 204 without another", err, len(w.objs.deleted))
	}
}

func TestEditWithAttachmentsWithoutABucketIs503(t *testing.T) {
	w := newWorld()
	w.svc.Attachments = nil
	u1 := w.upload(ann)
	id := w.post(ann, "hi")
	if _, err := w.svc.Edit(context.Background(), ann, ch, id, refs(attachments.Ref{UploadID: u1}), ""); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("got %v, want 503", err)
	}
}

func TestReadBody(t *testing.T) {
	up := chat.NewIDs().New(time.Now())
	for _, tc := range []struct {
		body      string
		ok        bool
		set, cont bool
	}{
		{`{"content":"x"}`, true, false, true},
		{`{}`, false, false, false},
		{`{"attachments":[]}`, true, true, false},
		{`{"content":" ","attachments":[]}`, false, true, true},
		{`{"content":" ","attachments":[{"upload_id":"` + up + `"}]}`, true, true, true},
		{`{"content":" "}`, false, false, true},
	} {
		obj, err := jsonbody.ParseObject([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var v chat.Validation
		b := edits.ReadBody(obj, &v)
		if (v.Err() == nil) != tc.ok || b.SetAttachments != tc.set || b.HasContent != tc.cont {
			t.Errorf("%s: err %v, set %v, content %v", tc.body, v.Err(), b.SetAttachments, b.HasContent)
		}
	}
}
