package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messageview"
)

// formBody is an upload's 201.
type formBody struct {
	Data struct {
		UploadID  string            `json:"upload_id"`
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Fields    map[string]string `json:"fields"`
		ExpiresAt string            `json:"expires_at"`
	} `json:"data"`
}

// attachmentBody is an attachment in a view, as the API shows it.
type attachmentBody = messageview.AttachmentView

type attachedView struct {
	ID          string           `json:"id"`
	Content     string           `json:"content"`
	Attachments []attachmentBody `json:"attachments"`
}

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// announce asks path for an upload of data and returns its form.
func (w *memberWorld) announce(t *testing.T, path string, hdr map[string]string, filename, ct string, size int) formBody {
	t.Helper()
	rec := w.do(t, "POST", path, fmt.Sprintf(`{"filename":%q,"content_type":%q,"size":%d}`, filename, ct, size), hdr)
	if rec.Code != 201 {
		t.Fatalf("upload %s: %d %s, want 201", filename, rec.Code, rec.Body)
	}
	return decodeAs[formBody](t, rec.Body.Bytes())
}

// sendForm posts data with form as a browser does (the fields, then the
// file) and returns storage's answer.
func sendForm(t *testing.T, form formBody, data []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	names := make([]string, 0, len(form.Data.Fields))
	for k := range form.Data.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		mw.WriteField(k, form.Data.Fields[k])
	}
	fw, _ := mw.CreateFormFile("file", "upload.bin")
	fw.Write(data)
	mw.Close()
	resp, err := http.Post(form.Data.URL, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatalf("send the form: %v", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// upload announces data at path and sends it; it returns the upload id.
func (w *memberWorld) upload(t *testing.T, path string, hdr map[string]string, filename, ct string, data []byte) string {
	t.Helper()
	form := w.announce(t, path, hdr, filename, ct, len(data))
	if code, out := sendForm(t, form, data); code != 204 {
		t.Fatalf("send %s: %d %s, want 204", filename, code, out)
	}
	return form.Data.UploadID
}

func fetch(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (w *memberWorld) channelUploads() string { return w.wsPath("/channels/" + w.general + "/uploads") }

// A member uploads a screenshot and a build log, posts them with a caption
// and an alt text, and every reader sees both with working links: the
// image inline with its type, the log as a download.
func TestAttachmentsUploadPostAndRead(t *testing.T) {
	w := newMemberWorld(t)
	img := testPNG(t, 40, 30)
	log := []byte("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\n")
	imgID := w.upload(t, w.channelUploads(), bearer(w.ana), "Captura de pantalla 😀.png", "image/png", img)
	logID := w.upload(t, w.channelUploads(), bearer(w.ana), "build.log.txt", "text/plain", log)

	body := fmt.Sprintf(`{"content":"","attachments":[{"upload_id":%q,"alt_text":"El error en la consola"},{"upload_id":%q}]}`, imgID, logID)
	rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), body, bearer(w.ana))
	if rec.Code != 201 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	posted := decodeAs[struct{ Data attachedView }](t, rec.Body.Bytes()).Data
	if len(posted.Attachments) != 2 {
		t.Fatalf("posted %s, want 2 attachments", rec.Body)
	}
	a, b := posted.Attachments[0], posted.Attachments[1]
	if a.ID != imgID || a.Filename != "Captura de pantalla 😀.png" || a.ContentType != "image/png" || a.Size != int64(len(img)) ||
		a.OriginalAltText == nil || *a.OriginalAltText != "El error en la consola" || a.URL == nil || a.URLExpiresAt == nil {
		t.Fatalf("image attachment %+v", a)
	}
	if b.ID != logID || b.AltText != nil || b.Size != int64(len(log)) {
		t.Fatalf("log attachment %+v", b)
	}
	if exp, err := time.Parse(time.RFC3339, *a.URLExpiresAt); err != nil || time.Until(exp) < 10*time.Minute {
		t.Fatalf("url_expires_at %s: want at least 10 minutes away", *a.URLExpiresAt)
	}
	code, hdr, got := fetch(t, *a.URL)
	if code != 200 || !bytes.Equal(got, img) || hdr.Get("Content-Type") != "image/png" || strings.HasPrefix(hdr.Get("Content-Disposition"), "attachment") {
		t.Fatalf("image link: %d %v (%d bytes)", code, hdr, len(got))
	}
	code, hdr, got = fetch(t, *b.URL)
	if code != 200 || !bytes.Equal(got, log) || !strings.HasPrefix(hdr.Get("Content-Disposition"), "attachment") {
		t.Fatalf("log link: %d %v", code, hdr)
	}

	// Ben reads the list; a guest of the room reads it too.
	for who, h := range map[string]map[string]string{"Ben": bearer(w.ben), "a guest": w.joinGuest(t, "en")} {
		path := w.wsPath("/channels/" + w.general + "/messages?limit=10")
		if who == "a guest" {
			path = "/api/v1/external/rooms/" + w.room + "/messages?limit=10"
		}
		rec := w.do(t, "GET", path, "", h)
		var found *attachedView
		for _, v := range decodeAs[pageOf[attachedView]](t, rec.Body.Bytes()).Data {
			if v.ID == posted.ID {
				found = &v
			}
		}
		if found == nil || len(found.Attachments) != 2 || found.Attachments[0].URL == nil {
			t.Fatalf("%s reads %s", who, rec.Body)
		}
		if code, _, got := fetch(t, *found.Attachments[0].URL); code != 200 || !bytes.Equal(got, img) {
			t.Fatalf("%s's image link: %d", who, code)
		}
	}

	// The file is tagged attached: the bucket's lifecycle keeps it.
	tags, err := w.st.S3.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String(w.st.Bucket),
		Key: aws.String(attachments.Key(w.ws.ID, w.general, imgID))})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != attachments.TagAttached {
		t.Fatalf("tags %+v %v, want state=attached", tags, err)
	}
}

// A guest and a webhook attach too, each its own upload only.
func TestGuestsAndWebhooksAttach(t *testing.T) {
	w := newMemberWorld(t)
	guest := w.joinGuest(t, "es")
	img := testPNG(t, 8, 8)
	gid := w.upload(t, "/api/v1/external/rooms/"+w.room+"/uploads", guest, "pantallazo.png", "image/png", img)
	rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages",
		fmt.Sprintf(`{"content":"Mira esto","attachments":[{"upload_id":%q,"alt_text":"Un error"}]}`, gid), guest)
	if rec.Code != 201 || len(decodeAs[struct{ Data attachedView }](t, rec.Body.Bytes()).Data.Attachments) != 1 {
		t.Fatalf("guest post: %d %s", rec.Code, rec.Body)
	}

	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	csv := []byte("test,result\nlogin,passed\ncheckout,failed\n")
	form := w.announce(t, "/webhooks/"+w.static.ID+"/uploads", secret, "results.csv", "text/csv", len(csv))
	if code, out := sendForm(t, form, csv); code != 204 {
		t.Fatalf("webhook's file: %d %s", code, out)
	}
	rec = w.do(t, "POST", "/webhooks/"+w.static.ID+"/messages",
		fmt.Sprintf(`{"content":"Nightly results","attachments":[{"upload_id":%q}]}`, form.Data.UploadID), secret)
	if rec.Code != 202 || !strings.Contains(rec.Body.String(), `"filename":"results.csv"`) {
		t.Fatalf("webhook post: %d %s", rec.Code, rec.Body)
	}
	// The member can't attach the guest's upload, nor the webhook's.
	for _, id := range []string{gid, form.Data.UploadID} {
		rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"),
			fmt.Sprintf(`{"content":"mine","attachments":[{"upload_id":%q}]}`, id), bearer(w.ana))
		if rec.Code != 422 || !strings.Contains(rec.Body.String(), "attachments") {
			t.Fatalf("another's upload %s: %d %s, want 422", id, rec.Code, rec.Body)
		}
	}
}

// Every hostile attachment is refused, by S3 or with 422 on the field,
// and nothing is stored half: the message is not written, and the upload
// can still be attached by its owner.
func TestHostileAttachments(t *testing.T) {
	w := newMemberWorld(t)
	post := func(body string) (int, string) {
		rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), body, bearer(w.ana))
		return rec.Code, rec.Body.String()
	}
	messages := func() int { return w.count(t, "MSG#") }
	before := messages()

	// Announcements refused with 422 on their field.
	for field, body := range map[string]string{
		"filename":     `{"filename":"../../etc/passwd.txt","content_type":"text/plain","size":10}`,
		"content_type": `{"filename":"logo.svg","content_type":"image/svg+xml","size":10}`,
		"size":         fmt.Sprintf(`{"filename":"big.zip","content_type":"application/zip","size":%d}`, attachments.MaxSize+1),
	} {
		rec := w.do(t, "POST", w.channelUploads(), body, bearer(w.ana))
		if rec.Code != 422 || !strings.Contains(rec.Body.String(), `"`+field+`"`) {
			t.Errorf("%s: %d %s, want 422 on %s", body, rec.Code, rec.Body, field)
		}
	}
	for _, name := range []string{`bell\u0007.png`, strings.Repeat("n", 256) + ".png", `a\u202Egnp.exe`, `C:\\temp\\x.png`} {
		rec := w.do(t, "POST", w.channelUploads(), `{"filename":"`+name+`","content_type":"image/png","size":10}`, bearer(w.ana))
		if rec.Code != 422 {
			t.Errorf("filename %q: %d, want 422", name, rec.Code)
		}
	}
	// At the edge: 25,000,000 bytes is announced.
	if rec := w.do(t, "POST", w.channelUploads(), fmt.Sprintf(`{"filename":"big.zip","content_type":"application/zip","size":%d}`, attachments.MaxSize), bearer(w.ana)); rec.Code != 201 {
		t.Fatalf("25 MB: %d %s", rec.Code, rec.Body)
	}
	// A member of another channel only: 403.
	if rec := w.do(t, "POST", w.wsPath("/channels/"+w.random+"/uploads"), `{"filename":"a.png","content_type":"image/png","size":10}`, bearer(w.ben)); rec.Code != 403 {
		t.Fatalf("upload to a channel Ben is not in: %d", rec.Code)
	}

	// S3 refuses a file of another size than declared, either way.
	img := testPNG(t, 16, 16)
	form := w.announce(t, w.channelUploads(), bearer(w.ana), "shot.png", "image/png", len(img))
	for _, data := range [][]byte{append(img, 0), img[:len(img)-1]} {
		if code, out := sendForm(t, form, data); code/100 == 2 {
			t.Fatalf("%d bytes for a form of %d: %d %s, want a refusal", len(data), len(img), code, out)
		}
	}
	// A PNG's name and type on an HTML body: S3 takes it (it checks no
	// content), the post refuses it.
	html := []byte("<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>")
	fake := w.upload(t, w.channelUploads(), bearer(w.ana), "fake.png", "image/png", html)
	if code, out := post(fmt.Sprintf(`{"content":"x","attachments":[{"upload_id":%q}]}`, fake)); code != 422 || !strings.Contains(out, "does not start like a image/png") {
		t.Fatalf("HTML as PNG: %d %s", code, out)
	}
	// Announced but never sent: incomplete.
	if code, out := post(fmt.Sprintf(`{"content":"x","attachments":[{"upload_id":%q}]}`, form.Data.UploadID)); code != 422 {
		t.Fatalf("never sent: %d %s", code, out)
	}
	// Unknown, malformed, eleven, and another channel's.
	ids := chat.NewIDs()
	refs := make([]string, 11)
	for i := range refs {
		refs[i] = fmt.Sprintf(`{"upload_id":%q}`, ids.New(time.Now()))
	}
	for _, body := range []string{
		fmt.Sprintf(`{"content":"x","attachments":[{"upload_id":%q}]}`, ids.New(time.Now())),
		`{"content":"x","attachments":[{"upload_id":"../a/b"}]}`,
		`{"content":"x","attachments":[` + strings.Join(refs, ",") + `]}`,
		`{"content":"x","attachments":{"upload_id":"x"}}`,
	} {
		if code, out := post(body); code != 422 || !strings.Contains(out, `"attachments"`) {
			t.Fatalf("%.90s: %d %s, want 422 on attachments", body, code, out)
		}
	}
	randomID := w.upload(t, w.wsPath("/channels/"+w.random+"/uploads"), bearer(w.ana), "r.png", "image/png", img)
	if code, out := post(fmt.Sprintf(`{"content":"x","attachments":[{"upload_id":%q}]}`, randomID)); code != 422 {
		t.Fatalf("another channel's upload: %d %s", code, out)
	}

	// Attached once: the second post is refused, the first message keeps it.
	good := w.upload(t, w.channelUploads(), bearer(w.ana), "ok.png", "image/png", img)
	if code, out := post(fmt.Sprintf(`{"content":"first","attachments":[{"upload_id":%q}]}`, good)); code != 201 {
		t.Fatalf("first attach: %d %s", code, out)
	}
	if code, out := post(fmt.Sprintf(`{"content":"second","attachments":[{"upload_id":%q}]}`, good)); code != 422 || !strings.Contains(out, "already attached") {
		t.Fatalf("second attach: %d %s", code, out)
	}
	tags, err := w.st.S3.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String(w.st.Bucket),
		Key: aws.String(attachments.Key(w.ws.ID, w.general, good))})
	if err != nil || aws.ToString(tags.TagSet[0].Value) != attachments.TagAttached {
		t.Fatalf("the first message's file after a refused second attach: %+v %v", tags, err)
	}

	// Past its 15 minutes: an upload recorded an hour ago, its file there.
	old := ids.New(time.Now().Add(-time.Hour))
	if err := dynamo.New(w.st.DB, w.st.Table).PutUpload(context.Background(), attachments.Upload{ID: old, WorkspaceID: w.ws.ID,
		ChannelID: w.general, Owner: "user:" + w.ana.ID, Filename: "old.png", ContentType: "image/png", Size: int64(len(img)),
		CreatedAt: time.Now().Add(-time.Hour), ExpiresAt: time.Now().Add(-45 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.S3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(w.st.Bucket),
		Key: aws.String(attachments.Key(w.ws.ID, w.general, old)), Body: bytes.NewReader(img), ContentType: aws.String("image/png"),
		Metadata: map[string]string{attachments.MetaFilename: "old.png"}}); err != nil {
		t.Fatal(err)
	}
	if code, out := post(fmt.Sprintf(`{"content":"late","attachments":[{"upload_id":%q}]}`, old)); code != 422 || !strings.Contains(out, "expired") {
		t.Fatalf("expired upload: %d %s", code, out)
	}
	if got := messages(); got != before+1 {
		t.Fatalf("%d messages stored, want %d: only the first attach", got, before+1)
	}
}

// The budgets: an upload request is 2 AWS calls for a member and for a
// guest; a post's attachments cost 2 calls each (the first bytes, the tag)
// and no write of their own (their claims ride in the post's transaction).
func TestAttachmentCallBudgets(t *testing.T) {
	w := newMemberWorld(t)
	guest := w.joinGuest(t, "en")
	body := `{"filename":"a.png","content_type":"image/png","size":100}`
	if calls := w.calls(t, "member upload", func() { w.do(t, "POST", w.channelUploads(), body, bearer(w.ana)) }); len(calls) > 2 {
		t.Fatalf("member upload: %d calls %v, want at most 2", len(calls), calls)
	}
	if calls := w.calls(t, "guest upload", func() { w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/uploads", body, guest) }); len(calls) > 2 {
		t.Fatalf("guest upload: %d calls %v, want at most 2", len(calls), calls)
	}
	// A webhook's upload is its post's steps: the settings read, the
	// quota, the upload's record and the request log.
	// The first request of an instance also reads the workspace and its
	// channels (a Query), cached from then on, as a post's.
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	w.do(t, "POST", "/webhooks/"+w.static.ID+"/uploads", body, secret)
	if calls := w.calls(t, "webhook upload", func() { w.do(t, "POST", "/webhooks/"+w.static.ID+"/uploads", body, secret) }); len(calls) > 4 {
		t.Fatalf("webhook upload: %d calls %v, want at most 4", len(calls), calls)
	}
	img := testPNG(t, 4, 4)
	ids := []string{
		w.upload(t, w.channelUploads(), bearer(w.ana), "1.png", "image/png", img),
		w.upload(t, w.channelUploads(), bearer(w.ana), "2.png", "image/png", img),
	}
	plain := w.calls(t, "post without attachments", func() {
		w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), `{"content":"hello"}`, bearer(w.ana))
	})
	with := w.calls(t, "post with 2 attachments", func() {
		rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"),
			fmt.Sprintf(`{"content":"hello","attachments":[{"upload_id":%q},{"upload_id":%q}]}`, ids[0], ids[1]), bearer(w.ana))
		if rec.Code != 201 {
			t.Fatalf("post: %d %s", rec.Code, rec.Body)
		}
	})
	if len(with) != len(plain)+2*2 {
		t.Fatalf("post with 2 attachments: %d calls %v, want %d (%d + 2 per attachment)", len(with), with, len(plain)+4, len(plain))
	}
}

// postWith posts content with the uploads ids as Ana and returns the view.
func (w *memberWorld) postWith(t *testing.T, content string, ids ...string) attachedView {
	t.Helper()
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = fmt.Sprintf(`{"upload_id":%q}`, id)
	}
	rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"),
		fmt.Sprintf(`{"content":%q,"attachments":[%s]}`, content, strings.Join(refs, ",")), bearer(w.ana))
	if rec.Code != 201 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	return decodeAs[struct{ Data attachedView }](t, rec.Body.Bytes()).Data
}

// An edit adds a file, keeps one with a new alt text and drops one, whose
// file is deleted; deleting the message deletes the rest, and the links
// handed out before answer 404 from then on.
func TestEditsAndDeletionsOfAttachments(t *testing.T) {
	w := newMemberWorld(t)
	img := testPNG(t, 6, 6)
	a := w.upload(t, w.channelUploads(), bearer(w.ana), "a.png", "image/png", img)
	b := w.upload(t, w.channelUploads(), bearer(w.ana), "b.png", "image/png", img)
	posted := w.postWith(t, "two files", a, b)
	linkB := *posted.Attachments[1].URL

	c := w.upload(t, w.channelUploads(), bearer(w.ana), "c.txt", "text/plain", []byte("notes\n"))
	rec := w.do(t, "PATCH", w.msgPath(w.general, posted.ID),
		fmt.Sprintf(`{"attachments":[{"upload_id":%q,"alt_text":"Primera"},{"upload_id":%q}]}`, a, c), bearer(w.ana))
	if rec.Code != 200 {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	edited := decodeAs[struct{ Data attachedView }](t, rec.Body.Bytes()).Data
	if len(edited.Attachments) != 2 || edited.Attachments[0].ID != a || edited.Attachments[1].ID != c ||
		edited.Attachments[0].OriginalAltText == nil || *edited.Attachments[0].OriginalAltText != "Primera" || edited.Content != "two files" {
		t.Fatalf("edited %s", rec.Body)
	}
	if code, _, _ := fetch(t, linkB); code != 404 {
		t.Fatalf("the dropped file's link after the edit: %d, want 404", code)
	}
	links := []string{*edited.Attachments[0].URL, *edited.Attachments[1].URL}
	for _, l := range links {
		if code, _, _ := fetch(t, l); code != 200 {
			t.Fatalf("a kept file's link: %d", code)
		}
	}
	// The dropped upload cannot come back to another message.
	if rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"),
		fmt.Sprintf(`{"content":"again","attachments":[{"upload_id":%q}]}`, b), bearer(w.ana)); rec.Code != 422 {
		t.Fatalf("a dropped upload attached again: %d %s", rec.Code, rec.Body)
	}

	if rec := w.do(t, "DELETE", w.msgPath(w.general, posted.ID), "", bearer(w.ana)); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	for _, l := range links {
		if code, _, _ := fetch(t, l); code != 404 {
			t.Fatalf("a link after the deletion: %d, want 404", code)
		}
	}
	v := w.listed(t, bearer(w.ben), posted.ID)
	if !v.Deleted {
		t.Fatalf("listed %+v, want a tombstone", v)
	}
	raw := w.rawMessage(t, w.general, posted.ID)
	if _, ok := raw["attachments"]; ok {
		t.Fatal("the tombstone still holds its attachments")
	}
	if _, ok := raw["attachment_keys"]; ok {
		t.Fatal("the tombstone still lists keys to delete after its files were deleted")
	}
}

// Concurrent posts: twelve posts racing for one upload attach it exactly
// once (the rest 422, none 5xx), and a burst of twelve posts, each with its
// own upload, are all stored with their file.
func TestConcurrentAttachments(t *testing.T) {
	w := newMemberWorld(t)
	img := testPNG(t, 5, 5)
	contested := w.upload(t, w.channelUploads(), bearer(w.ana), "contested.png", "image/png", img)
	own := make([]string, 12)
	for i := range own {
		own[i] = w.upload(t, w.channelUploads(), bearer(w.ana), fmt.Sprintf("own-%d.png", i), "image/png", img)
	}
	before := w.count(t, "MSG#")
	codes := make([]int, 24)
	done := make(chan struct{})
	for i := range codes {
		go func() {
			defer func() { done <- struct{}{} }()
			id := contested
			if i >= 12 {
				id = own[i-12]
			}
			rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"),
				fmt.Sprintf(`{"content":"race %d","attachments":[{"upload_id":%q}]}`, i, id), bearer(w.ana))
			codes[i] = rec.Code
		}()
	}
	for range codes {
		<-done
	}
	won := 0
	for i, c := range codes[:12] {
		switch c {
		case 201:
			won++
		case 422:
		default:
			t.Errorf("post %d for the contested upload: %d, want 201 or 422", i, c)
		}
	}
	if won != 1 {
		t.Fatalf("the contested upload was attached %d times, want once (%v)", won, codes[:12])
	}
	for i, c := range codes[12:] {
		if c != 201 {
			t.Fatalf("burst post %d with its own upload: %d, want 201 (%v)", i, c, codes[12:])
		}
	}
	if got := w.count(t, "MSG#") - before; got != 13 {
		t.Fatalf("%d messages stored, want 13: one for the contested upload, twelve of the burst", got)
	}
}

// The worst content in an alt text and a filename: characters that JSON
// escapes to six bytes, U+2028, U+FFFF in an alt text, emoji, code and
// links, at the alt text's limit, round trip through the post and the list.
func TestAttachmentWorstContent(t *testing.T) {
	w := newMemberWorld(t)
	alt := "<script>&\u2028\uFFFF😀 `go test ./...` https://ci.invalid/build/1042 @Ana "
	for len([]rune(alt)) < attachments.MaxAltText {
		alt += "<"
	}
	alt = string([]rune(alt)[:attachments.MaxAltText])
	name := "<b>&\"quotes\" 😀 résumé " + strings.Repeat("x", 200) + ".txt"
	id := w.upload(t, w.channelUploads(), bearer(w.ana), name, "text/plain", []byte("fn main() { println!(\"hi\") }\n"))
	body, _ := json.Marshal(map[string]any{"content": "", "attachments": []map[string]string{{"upload_id": id, "alt_text": alt}}})
	rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), string(body), bearer(w.ana))
	if rec.Code != 201 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	posted := decodeAs[struct{ Data attachedView }](t, rec.Body.Bytes()).Data
	rec = w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages?limit=5"), "", bearer(w.ben))
	for _, v := range decodeAs[pageOf[attachedView]](t, rec.Body.Bytes()).Data {
		if v.ID != posted.ID {
			continue
		}
		a := v.Attachments[0]
		if a.Filename != name || a.OriginalAltText == nil || *a.OriginalAltText != alt {
			t.Fatalf("listed %q / %q, want the name and alt text as sent", a.Filename, *a.OriginalAltText)
		}
		code, hdr, _ := fetch(t, *a.URL)
		if code != 200 || !strings.Contains(hdr.Get("Content-Disposition"), "attachment") {
			t.Fatalf("download of a hostile name: %d %v", code, hdr)
		}
		return
	}
	t.Fatalf("message %s not listed: %s", posted.ID, rec.Body)
}
