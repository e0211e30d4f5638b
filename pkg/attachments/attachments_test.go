package attachments

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

func TestCheckFilename(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"screenshot.png", true},
		{"Résumé – final (2).pdf", true},
		{"日本語のファイル.txt", true},
		{"emoji 😀.png", true},
		{strings.Repeat("a", 251) + ".txt", true}, // 255 characters
		{strings.Repeat("é", 255), true},          // 255 characters, 510 bytes
		{strings.Repeat("a", 252) + ".txt", false},
		{"", false},
		{"../etc/passwd", false},
		{"a/b.txt", false},
		{`..\boot.ini`, false},
		{"bell\a.txt", false},
		{"new\nline.txt", false},
		{"del\x7f.txt", false},
		{"exe\u202Etxt.exe", false}, // right-to-left override hides the real extension
		{"zero\u200Bwidth.png", false},
		{"line\u2028sep.txt", false},
		{"nonchar\uFFFF.txt", false},
		{"bad\xffutf8.txt", false},
		{".", false},
		{"..", false},
		{" . ", false},
		{".env", true},
	} {
		if got := CheckFilename(c.name) == ""; got != c.ok {
			t.Errorf("CheckFilename(%q) accepted %v, want %v (%q)", c.name, got, c.ok, CheckFilename(c.name))
		}
	}
}

func TestCheckSizeAtTheEdges(t *testing.T) {
	for size, ok := range map[int64]bool{0: false, 1: true, MaxSize: true, MaxSize + 1: false, 25 << 20: false, -1: false} {
		if got := CheckSize(size) == ""; got != ok {
			t.Errorf("CheckSize(%d) accepted %v, want %v", size, got, ok)
		}
	}
}

func TestContentTypes(t *testing.T) {
	for _, ct := range TypeNames {
		if CheckContentType(ct) != "" {
			t.Errorf("%s refused", ct)
		}
	}
	for _, ct := range []string{"image/svg+xml", "text/html", "application/xhtml+xml", "text/javascript", "application/octet-stream",
		"IMAGE/PNG", "image/png; charset=utf-8", ""} {
		if CheckContentType(ct) == "" {
			t.Errorf("%q accepted", ct)
		}
	}
	if !Inline("image/png") || Inline("application/pdf") || Inline("text/plain") {
		t.Fatal("only images are inline")
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func webp(size int) []byte {
	b := make([]byte, size)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(size-8))
	copy(b[8:], "WEBPVP8 ")
	return b
}

func TestFirstBytesMatchTheirType(t *testing.T) {
	realPNG := pngBytes(t)
	html := []byte("<!DOCTYPE html><html><script>alert(1)</script></html>")
	for _, c := range []struct {
		ct   string
		head []byte
		size int64
		ok   bool
	}{
		{"image/png", realPNG, int64(len(realPNG)), true},
		{"image/png", append([]byte("\x89PNG\r\n\x1a\n"), html...), 60, false}, // a PNG signature on an HTML body
		{"image/png", html, int64(len(html)), false},
		{"image/jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}, 5000, true},
		{"image/jpeg", []byte{0xFF, 0xD8, 0xFF}, 3, false},
		{"image/gif", []byte("GIF89a\x01\x00\x01\x00"), 40, true},
		{"image/gif", []byte("GIF90a"), 40, false},
		{"image/webp", webp(64), 64, true},
		{"image/webp", webp(64)[:16], 70, false}, // its RIFF size says another file
		{"application/pdf", []byte("%PDF-1.7\n"), 900, true},
		{"application/pdf", []byte("<html>%PDF-"), 900, false},
		{"application/zip", []byte("PK\x03\x04\x14\x00"), 300, true},
		{"application/zip", []byte("PK\x05\x06" + strings.Repeat("\x00", 18)), 22, true},
		{"application/zip", []byte("MZ\x90\x00"), 300, false},
		{"text/plain", []byte("panic: runtime error: index out of range [3] with length 3\n\tmain.go:12 +0x1d\n"), 80, true},
		{"text/plain", []byte("\xEF\xBB\xBFhola \u2028 😀"), 15, true},
		{"text/plain", []byte("binary\x00data"), 11, false},
		{"text/plain", []byte("bad \xff utf-8"), 10, false},
		{"text/plain", []byte("cut here: \xF0\x9F"), 5000, true}, // a character cut by the end of the window
		{"text/plain", []byte("cut here: \xF0\x9F"), 12, false},  // ...but not at the file's end
		{"text/csv", []byte("name,size\nscreenshot.png,48213\n"), 31, true},
		{"application/json", []byte("  {\"ok\": true}"), 14, true},
		{"application/json", []byte("[1,2]"), 5, true},
		{"application/json", []byte("<html>"), 6, false},
		{"application/json", []byte("   "), 3, false},
	} {
		if got := Types[c.ct].Matches(c.head, c.size); got != c.ok {
			t.Errorf("%s %q (size %d): matched %v, want %v", c.ct, c.head, c.size, got, c.ok)
		}
	}
}

func fieldOf(t *testing.T, body string) ([]Ref, bool, error) {
	t.Helper()
	obj, err := jsonbody.ParseObject([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var v chat.Validation
	refs, present := Field(obj, &v)
	return refs, present, v.Err()
}

func TestField(t *testing.T) {
	id1, id2 := chat.NewIDs().New(time.Now()), chat.NewIDs().New(time.Now())
	refs, present, err := fieldOf(t, `{"attachments":[{"upload_id":"`+id1+`","alt_text":"A build log"},{"upload_id":"`+id2+`"}]}`)
	if err != nil || !present || len(refs) != 2 || refs[0] != (Ref{id1, "A build log"}) || refs[1] != (Ref{UploadID: id2}) {
		t.Fatalf("got %+v %v %v", refs, present, err)
	}
	if _, present, err := fieldOf(t, `{"content":"x"}`); present || err != nil {
		t.Fatalf("absent: present %v, err %v", present, err)
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = `{"upload_id":"` + chat.NewIDs().New(time.Now()) + `"}`
	}
	for _, bad := range []string{
		`{"attachments":"x"}`,
		`{"attachments":[{"upload_id":"not-an-id"}]}`,
		`{"attachments":[{"upload_id":"` + id1 + `"},{"upload_id":"` + id1 + `"}]}`,
		`{"attachments":[{"upload_id":"` + id1 + `","alt_text":5}]}`,
		`{"attachments":[{"upload_id":"` + id1 + `","alt_text":"` + strings.Repeat("a", MaxAltText+1) + `"}]}`,
		`{"attachments":[{"upload_id":"` + id1 + `","url":"https://x.invalid"}]}`,
		`{"attachments":[` + strings.Join(eleven, ",") + `]}`,
	} {
		if _, _, err := fieldOf(t, bad); !chat.IsCode(err, chat.EValidation) {
			t.Errorf("%.80s: err %v, want 422", bad, err)
		}
	}
	if refs, _, err := fieldOf(t, `{"attachments":[{"upload_id":"`+id1+`","alt_text":"`+strings.Repeat("é", MaxAltText)+`"}]}`); err != nil || len(refs) != 1 {
		t.Fatalf("alt text at its limit: %v", err)
	}
}

func TestReadAnnouncement(t *testing.T) {
	a, err := ReadAnnouncement([]byte(`{"filename":"screenshot.png","content_type":"image/png","size":48213}`))
	if err != nil || a != (Announcement{"screenshot.png", "image/png", 48213}) {
		t.Fatalf("got %+v %v", a, err)
	}
	for _, c := range []struct{ body, field string }{
		{`{"content_type":"image/png","size":1}`, "filename"},
		{`{"filename":"../x.png","content_type":"image/png","size":1}`, "filename"},
		{`{"filename":"x.svg","content_type":"image/svg+xml","size":1}`, "content_type"},
		{`{"filename":"x.png","content_type":"image/png","size":25000001}`, "size"},
		{`{"filename":"x.png","content_type":"image/png","size":0}`, "size"},
		{`{"filename":"x.png","content_type":"image/png","size":1.5}`, "size"},
		{`{"filename":"x.png","content_type":"image/png","size":"10"}`, "size"},
		{`{"filename":"x.png","content_type":"image/png","size":1e3}`, "size"},
		{`{"filename":"x.png","content_type":"image/png"}`, "size"},
	} {
		_, err := ReadAnnouncement([]byte(c.body))
		var e *chat.Error
		if !errors.As(err, &e) || e.Code != chat.EValidation || len(e.Fields[c.field]) == 0 {
			t.Errorf("%s: err %v, want 422 on %s", c.body, err, c.field)
		}
	}
}

// objects is a hand-written fake of Objects.
type objects struct {
	mu     sync.Mutex
	files  map[string]Object
	tags   map[string]string
	tagErr error
}

func (o *objects) Peek(_ context.Context, key string, n int) (Object, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.files[key]
	if !ok {
		return Object{}, chat.Errorf(chat.ENotFound, "no such file")
	}
	if len(f.Head) > n {
		f.Head = f.Head[:n]
	}
	return f, nil
}

func (o *objects) Tag(_ context.Context, key, state string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tagErr != nil {
		return o.tagErr
	}
	o.tags[key] = state
	return nil
}

func (o *objects) Delete(context.Context, []string) error { return nil }

func TestAttachChecksTagsAndGivesBackFreeFiles(t *testing.T) {
	ids := chat.NewIDs()
	now := time.Now()
	img := pngBytes(t)
	good, fake, other := ids.New(now), ids.New(now), ids.New(now)
	objs := &objects{tags: map[string]string{}, files: map[string]Object{
		Key("ws", "ch", good): {Filename: "a.png", ContentType: "image/png", Size: int64(len(img)), Head: img},
		Key("ws", "ch", fake): {Filename: "b.png", ContentType: "image/png", Size: 50, Head: []byte("<html><script>")},
	}}
	s := &Service{Objects: objs}
	var wrote []chat.Attachment
	err := s.Attach(context.Background(), "ws", "ch", []Ref{{UploadID: good, AltText: "A chart"}}, now, func(as []chat.Attachment) error {
		wrote = as
		return nil
	})
	if err != nil || len(wrote) != 1 || wrote[0].Filename != "a.png" || wrote[0].AltText != "A chart" || wrote[0].Key != Key("ws", "ch", good) {
		t.Fatalf("attach: %v %+v", err, wrote)
	}
	if objs.tags[Key("ws", "ch", good)] != TagAttached {
		t.Fatalf("tag %q, want attached", objs.tags[Key("ws", "ch", good)])
	}

	// A file whose first bytes lie, and an upload of another channel: 422,
	// and nothing written.
	for _, ref := range []Ref{{UploadID: fake}, {UploadID: other}} {
		called := false
		err := s.Attach(context.Background(), "ws", "ch", []Ref{ref}, now, func([]chat.Attachment) error { called = true; return nil })
		if !chat.IsCode(err, chat.EValidation) || called {
			t.Fatalf("%s: err %v, written %v", ref.UploadID, err, called)
		}
	}

	// A refused claim: the free file is tagged unattached again, the one
	// another message holds is left attached.
	objs.tags = map[string]string{}
	objs.files[Key("ws", "ch", other)] = objs.files[Key("ws", "ch", good)]
	refused := &ClaimError{Index: 1, Claim: Claim{UploadID: other, Owner: "user:u1", ChannelID: "ch"},
		Upload: &Upload{Owner: "user:u1", ChannelID: "ch", MessageID: "01OTHER", ExpiresAt: now.Add(time.Minute)},
		Free:   []bool{true, false}}
	err = s.Attach(context.Background(), "ws", "ch", []Ref{{UploadID: good}, {UploadID: other}}, now, func([]chat.Attachment) error { return refused })
	if !chat.IsCode(err, chat.EValidation) || !strings.Contains(err.(*chat.Error).Fields["attachments"][0], "already attached") {
		t.Fatalf("refused claim: %v", err)
	}
	if objs.tags[Key("ws", "ch", good)] != TagUnattached || objs.tags[Key("ws", "ch", other)] != TagAttached {
		t.Fatalf("tags after a refused claim: %v", objs.tags)
	}

	// Without a bucket, a post with attachments is 503, one without is
	// written.
	var none *Service
	if err := none.Attach(context.Background(), "ws", "ch", []Ref{{UploadID: good}}, now, func([]chat.Attachment) error { return nil }); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("no bucket: %v", err)
	}
	if err := none.Attach(context.Background(), "ws", "ch", nil, now, func([]chat.Attachment) error { return nil }); err != nil {
		t.Fatalf("no bucket, no attachments: %v", err)
	}
}

func TestExplainEachRefusal(t *testing.T) {
	now := time.Now()
	claim := Claim{UploadID: "01U", Owner: "guest:g1", ChannelID: "ch", Size: 10, ContentType: "image/png"}
	up := func(f func(*Upload)) *Upload {
		u := &Upload{Owner: "guest:g1", ChannelID: "ch", Size: 10, ContentType: "image/png", ExpiresAt: now.Add(time.Minute)}
		f(u)
		return u
	}
	for want, u := range map[string]*Upload{
		"not an upload of this channel": nil,
		"uploaded by someone else":      up(func(u *Upload) { u.Owner = "user:u1" }),
		"already attached":              up(func(u *Upload) { u.MessageID = "01M" }),
		"expired":                       up(func(u *Upload) { u.ExpiresAt = now.Add(-time.Second) }),
		"not the 12 it declared":        up(func(u *Upload) { u.Size = 12 }),
	} {
		err := Explain(&ClaimError{Claim: claim, Upload: u}, now)
		var e *chat.Error
		if !errors.As(err, &e) || e.Code != chat.EValidation || !strings.Contains(e.Fields["attachments"][0], want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	other := errors.New("boom")
	if Explain(other, now) != other {
		t.Fatal("Explain changed an error that is not a claim's")
	}
}
