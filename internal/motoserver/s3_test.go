package motoserver

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// s3Stack is a moto_server behind the proxy with the IAM check on, the
// template's bucket, and a clock the test moves.
type s3Stack struct {
	srv    *Server
	check  *IAM
	bucket string
	skew   atomic.Int64 // added to the proxy's clock, in nanoseconds
	admin  *s3.Client
}

// The test functions' policies: the uploader may put, tag and read under
// a/; the reader may only read under a/; the stranger may do nothing in S3.
func s3Policies(t *testing.T) *iampolicy.Set {
	t.Helper()
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatal(err)
	}
	project, err := iampolicy.FromTemplate(tmpl, iampolicy.DefaultLocal)
	if err != nil {
		t.Fatal(err)
	}
	set := *project
	set.Functions = map[string]*iampolicy.Policy{}
	for k, v := range project.Functions {
		set.Functions[k] = v
	}
	under := set.ObjectARN("a/*")
	set.Functions["Uploader"] = &iampolicy.Policy{Statements: []iampolicy.Statement{
		{Effect: "Allow", Actions: []string{"s3:PutObject", "s3:PutObjectTagging"}, Resources: []string{under}},
		{Effect: "Allow", Actions: []string{"s3:GetObject", "s3:DeleteObject"}, Resources: []string{under}},
	}}
	set.Functions["Reader"] = &iampolicy.Policy{Statements: []iampolicy.Statement{
		{Effect: "Allow", Actions: []string{"s3:GetObject"}, Resources: []string{under}},
	}}
	set.Functions["Stranger"] = &iampolicy.Policy{Statements: []iampolicy.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resources: []string{set.TableARN()}},
	}}
	return &set
}

func newS3Stack(t *testing.T) *s3Stack {
	t.Helper()
	ctx := context.Background()
	st := &s3Stack{check: NewIAM(s3Policies(t))}
	srv, err := Start(ctx, 0, WithIAM(st.check), WithClock(func() time.Time { return time.Now().Add(time.Duration(st.skew.Load())) }))
	if err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	t.Cleanup(srv.Stop)
	st.srv = srv
	admin := st.config("local")
	tmpl, _ := samtemplate.Project()
	res, err := localrun.Ensure(ctx, dynamodb.NewFromConfig(admin), sqs.NewFromConfig(admin), localrun.S3Client(admin), tmpl, "s3test", "s3test-")
	if err != nil {
		t.Fatalf("create the template's resources: %v", err)
	}
	if res.AttachmentsBucket != "s3test-attachmentsbucket" || res.Buckets["AttachmentsBucket"] != res.AttachmentsBucket {
		t.Fatalf("buckets %v, attachments %q; want s3test-attachmentsbucket", res.Buckets, res.AttachmentsBucket)
	}
	st.bucket, st.admin = res.AttachmentsBucket, localrun.S3Client(admin)
	return st
}

func (st *s3Stack) config(akid string) aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(akid, "local", ""),
		BaseEndpoint: aws.String(st.srv.URL), RetryMaxAttempts: 1}
}

func (st *s3Stack) client(akid string) *s3.Client { return localrun.S3Client(st.config(akid)) }

const tagXML = "<Tagging><TagSet><Tag><Key>state</Key><Value>unattached</Value></Tag></TagSet></Tagging>"

// presignPost is what the service does: a presigned POST for exactly size
// bytes of contentType, with the file's name as metadata and a tag.
func (st *s3Stack) presignPost(t *testing.T, signer, key, contentType string, size int) *s3.PresignedPostRequest {
	t.Helper()
	p, err := s3.NewPresignClient(st.client(signer)).PresignPostObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(st.bucket), Key: aws.String(key), ContentType: aws.String(contentType),
		Metadata: map[string]string{"filename": "cat.png"}, Tagging: aws.String(tagXML),
	}, func(o *s3.PresignPostOptions) {
		o.Expires = 15 * time.Minute
		o.Conditions = []any{
			[]any{"content-length-range", size, size},
			map[string]string{"Content-Type": contentType},
			map[string]string{"x-amz-meta-filename": "cat.png"},
			map[string]string{"tagging": tagXML},
		}
	})
	if err != nil {
		t.Fatalf("presign POST: %v", err)
	}
	return p
}

// formFields are the form's fields: the presigned ones and the three the
// policy's conditions name.
func formFields(p *s3.PresignedPostRequest, contentType string) map[string]string {
	f := map[string]string{"Content-Type": contentType, "x-amz-meta-filename": "cat.png", "tagging": tagXML}
	for k, v := range p.Values {
		f[k] = v
	}
	return f
}

type answer struct {
	status int
	header http.Header
	body   string
}

// upload posts fields and then the file as a browser's FormData does,
// and then the fields after, which S3 ignores.
func upload(t *testing.T, u string, fields map[string]string, file []byte, origin string, after ...string) answer {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", "cat.png")
	_, _ = fw.Write(file)
	for i := 0; i+1 < len(after); i += 2 {
		_ = mw.WriteField(after[i], after[i+1])
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, u, &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(body)}
}

func get(t *testing.T, u string, h http.Header) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range h {
		req.Header[k] = v
	}
	return do(t, req)
}

func wantS3Error(t *testing.T, what string, a answer, status int, code, msg string) {
	t.Helper()
	var e s3Error
	if a.status != status || xml.Unmarshal([]byte(a.body), &e) != nil || e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("%s: got %d %s, want %d %s %q", what, a.status, a.body, status, code, msg)
	}
}

func without(m map[string]string, k string) map[string]string {
	out := map[string]string{}
	for kk, v := range m {
		if kk != k {
			out[kk] = v
		}
	}
	return out
}

func with(m map[string]string, k, v string) map[string]string {
	out := without(m, k)
	out[k] = v
	return out
}

// TestPresignedPost: a presigned POST from the SDK's PresignPostObject is
// accepted with exactly the size it names and stores the object with its
// type, metadata and tag; every departure from its policy is refused as S3
// refuses it, and nothing is stored.
func TestPresignedPost(t *testing.T) {
	st := newS3Stack(t)
	ctx := context.Background()
	file := []byte("\x89PNG\r\n\x1a\n a small picture")
	key := "a/W1/C1/U1"
	p := st.presignPost(t, "Uploader", key, "image/png", len(file))
	if want := st.srv.URL + "/" + st.bucket; p.URL != want {
		t.Fatalf("presigned POST URL %q, want the path-style %q", p.URL, want)
	}
	fields := formFields(p, "image/png")
	const origin = "http://127.0.0.1:1"

	refused := []struct {
		name   string
		fields map[string]string
		file   []byte
		status int
		code   string
		msg    string
	}{
		{"one byte more", fields, append(append([]byte{}, file...), 'x'), 400, "EntityTooLarge", "exceeds the maximum allowed size"},
		{"one byte less", fields, file[:len(file)-1], 400, "EntityTooSmall", "smaller than the minimum allowed size"},
		{"another type", with(fields, "Content-Type", "text/html"), file, 403, "AccessDenied", `Policy Condition failed: ["eq", "$Content-Type", "image/png"]`},
		{"another key", with(fields, "key", "a/W1/C1/U2"), file, 403, "AccessDenied", `Policy Condition failed: ["eq", "$key", "a/W1/C1/U1"]`},
		{"a field missing", without(fields, "x-amz-meta-filename"), file, 403, "AccessDenied", `Policy Condition failed: ["eq", "$x-amz-meta-filename", "cat.png"]`},
		{"an extra field", with(fields, "x-amz-meta-owner", "mallory"), file, 403, "AccessDenied", "Extra input fields: x-amz-meta-owner"},
		{"a tampered signature", with(fields, "X-Amz-Signature", strings.Repeat("0", 64)), file, 403, "SignatureDoesNotMatch", "does not match"},
		{"a tampered policy", with(fields, "policy", strings.Replace(fields["policy"], "A", "B", 1)), file, 403, "SignatureDoesNotMatch", "does not match"},
	}
	for _, tc := range refused {
		a := upload(t, p.URL, tc.fields, tc.file, origin)
		wantS3Error(t, tc.name, a, tc.status, tc.code, tc.msg)
		// The page reads the refusal's status: the error carries CORS.
		if got := a.header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Fatalf("%s: Access-Control-Allow-Origin %q, want *", tc.name, got)
		}
	}
	// A field after the file is not read: the form lacks it.
	wantS3Error(t, "the tagging after the file", upload(t, p.URL, without(fields, "tagging"), file, "", "tagging", tagXML),
		403, "AccessDenied", `Policy Condition failed: ["eq", "$tagging", "<Tagging>`)
	// The policy names its bucket.
	other := "s3test-other"
	if _, err := st.admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &other}); err != nil {
		t.Fatal(err)
	}
	wantS3Error(t, "another bucket", upload(t, st.srv.URL+"/"+other, fields, file, ""), 403, "AccessDenied",
		`Policy Condition failed: ["eq", "$bucket", "s3test-attachmentsbucket"]`)
	// A signer whose policy lacks s3:PutObject, with a valid policy.
	reader := st.presignPost(t, "Reader", key, "image/png", len(file))
	wantS3Error(t, "signed by a function without s3:PutObject", upload(t, reader.URL, formFields(reader, "image/png"), file, ""),
		403, "AccessDenied", "is not authorized to perform: s3:PutObject on resource: arn:aws:s3:::AttachmentsBucket/a/W1/C1/U1")
	// Past the policy's expiration.
	st.skew.Store(int64(16 * time.Minute))
	wantS3Error(t, "expired", upload(t, p.URL, fields, file, ""), 403, "AccessDenied", "Invalid according to Policy: Policy expired.")
	st.skew.Store(0)
	if _, err := st.admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.bucket, Key: &key}); err == nil {
		t.Fatalf("a refused POST stored %s", key)
	}

	a := upload(t, p.URL, fields, file, origin)
	if a.status != http.StatusNoContent || a.header.Get("ETag") == "" || a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("the upload: got %d %v %s, want 204 with an ETag and CORS", a.status, a.header, a.body)
	}
	out, err := st.admin.GetObject(ctx, &s3.GetObjectInput{Bucket: &st.bucket, Key: &key})
	if err != nil {
		t.Fatalf("get the upload: %v", err)
	}
	body, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(body, file) || aws.ToString(out.ContentType) != "image/png" || out.Metadata["filename"] != "cat.png" {
		t.Fatalf("stored %q type %q metadata %v; want the file, image/png, filename cat.png", body, aws.ToString(out.ContentType), out.Metadata)
	}
	tags, err := st.admin.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &st.bucket, Key: &key})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Key) != "state" || aws.ToString(tags.TagSet[0].Value) != "unattached" {
		t.Fatalf("tags %+v %v, want state=unattached", tags, err)
	}

	// curl -F posts the same form (--form-string: a value starting with <
	// or @ would name a file).
	if curl, err := exec.LookPath("curl"); err == nil {
		key2 := "a/W1/C1/U4"
		p2 := st.presignPost(t, "Uploader", key2, "image/png", len(file))
		path := filepath.Join(t.TempDir(), "cat.png")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"-s", "-o", "/dev/null", "-w", "%{http_code}"}
		for k, v := range formFields(p2, "image/png") {
			args = append(args, "--form-string", k+"="+v)
		}
		args = append(args, "-F", "file=@"+path, p2.URL)
		out, err := exec.Command(curl, args...).Output()
		if err != nil || string(out) != "204" {
			t.Fatalf("curl -F: got %q %v, want 204", out, err)
		}
		if _, err := st.admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.bucket, Key: &key2}); err != nil {
			t.Fatalf("curl's upload is not stored: %v", err)
		}
	}

	// success_action_status, covered by the policy, is honoured.
	p201, err := s3.NewPresignClient(st.client("Uploader")).PresignPostObject(ctx, &s3.PutObjectInput{Bucket: &st.bucket, Key: aws.String("a/W1/C1/U3")},
		func(o *s3.PresignPostOptions) {
			o.Conditions = []any{map[string]string{"success_action_status": "201"}}
		})
	if err != nil {
		t.Fatal(err)
	}
	f201 := map[string]string{"success_action_status": "201"}
	for k, v := range p201.Values {
		f201[k] = v
	}
	if a := upload(t, p201.URL, f201, file, ""); a.status != http.StatusCreated || !strings.Contains(a.body, "<Key>a/W1/C1/U3</Key>") {
		t.Fatalf("success_action_status 201: got %d %s", a.status, a.body)
	}
}

// TestPresignedGet: a presigned GET serves the object with its overrides,
// and is refused once expired, when tampered with, when its signer may not
// read, and once the object is gone.
func TestPresignedGet(t *testing.T) {
	st := newS3Stack(t)
	ctx := context.Background()
	key := "a/W1/C1/U1"
	if _, err := st.admin.PutObject(ctx, &s3.PutObjectInput{Bucket: &st.bucket, Key: &key, Body: strings.NewReader("picture"), ContentType: aws.String("image/png")}); err != nil {
		t.Fatal(err)
	}
	presign := func(signer, key string, expires time.Duration) string {
		t.Helper()
		r, err := s3.NewPresignClient(st.client(signer)).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &st.bucket, Key: &key,
			ResponseContentType: aws.String("application/octet-stream"), ResponseContentDisposition: aws.String(`attachment; filename="cat.png"`)},
			s3.WithPresignExpires(expires))
		if err != nil {
			t.Fatal(err)
		}
		return r.URL
	}
	u := presign("Reader", key, 15*time.Minute)
	a := get(t, u, http.Header{"Origin": {"http://127.0.0.1:1"}})
	if a.status != 200 || a.body != "picture" || a.header.Get("Content-Type") != "application/octet-stream" ||
		a.header.Get("Content-Disposition") != `attachment; filename="cat.png"` || a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("presigned GET: got %d %q %v", a.status, a.body, a.header)
	}
	tampered := strings.Replace(u, "octet-stream", "x-msdownload", 1)
	wantS3Error(t, "tampered", get(t, tampered, nil), 403, "SignatureDoesNotMatch", "does not match")
	pu, _ := url.Parse(u)
	pu.Path = "/" + st.bucket + "/a/W1/C1/U2"
	wantS3Error(t, "another key", get(t, pu.String(), nil), 403, "SignatureDoesNotMatch", "does not match")
	wantS3Error(t, "signed by a function that may not read", get(t, presign("Stranger", key, time.Hour), nil), 403, "AccessDenied",
		"is not authorized to perform: s3:GetObject")
	wantS3Error(t, "outside the signer's policy", get(t, presign("Reader", "b/x", time.Hour), nil), 403, "AccessDenied", "s3:GetObject")

	long := presign("Reader", key, 24*time.Hour)
	st.skew.Store(int64(16 * time.Minute))
	wantS3Error(t, "expired", get(t, u, nil), 403, "AccessDenied", "Request has expired")
	if a := get(t, long, nil); a.status != 200 {
		t.Fatalf("a 24 h URL 16 min on: got %d %s, want 200", a.status, a.body)
	}
	st.skew.Store(0)

	if _, err := st.admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &st.bucket, Key: &key}); err != nil {
		t.Fatal(err)
	}
	wantS3Error(t, "deleted", get(t, u, nil), 404, "NoSuchKey", "")
}

// TestS3CORS: preflights are answered by the template bucket's
// CorsConfiguration: any origin (GuestPageOrigin's default), its methods.
func TestS3CORS(t *testing.T) {
	st := newS3Stack(t)
	preflight := func(method, headers string) answer {
		req, _ := http.NewRequest(http.MethodOptions, st.srv.URL+"/"+st.bucket, nil)
		req.Header.Set("Origin", "http://127.0.0.1:1")
		req.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		return do(t, req)
	}
	a := preflight("POST", "content-type,x-requested-with")
	if a.status != 200 || a.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(a.header.Get("Access-Control-Allow-Methods"), "POST") ||
		a.header.Get("Access-Control-Max-Age") != "3600" || a.header.Get("Access-Control-Allow-Headers") != "content-type, x-requested-with" {
		t.Fatalf("preflight POST: got %d %v", a.status, a.header)
	}
	wantS3Error(t, "preflight PUT (not an allowed method)", preflight("PUT", ""), 403, "AccessForbidden", "CORSResponse")
}

// TestS3FunctionCalls: a function's SDK calls are held to its policy; a
// denial is S3's XML AccessDenied (HTTP 403); the allowed calls are
// recorded; DeleteObjects is checked key by key.
func TestS3FunctionCalls(t *testing.T) {
	st := newS3Stack(t)
	ctx := context.Background()
	up := st.client("Uploader")
	in := "a/W1/C1/U1"
	out := "b/W1/C1/U1"
	for _, k := range []string{in, out} {
		if _, err := st.admin.PutObject(ctx, &s3.PutObjectInput{Bucket: &st.bucket, Key: aws.String(k), Body: strings.NewReader(strings.Repeat("x", 1000))}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := up.GetObject(ctx, &s3.GetObjectInput{Bucket: &st.bucket, Key: &in, Range: aws.String("bytes=0-511")})
	if err != nil {
		t.Fatalf("GetObject inside the policy: %v", err)
	}
	got.Body.Close()
	if aws.ToString(got.ContentRange) != "bytes 0-511/1000" {
		t.Fatalf("Content-Range %q, want bytes 0-511/1000", aws.ToString(got.ContentRange))
	}
	_, err = up.GetObject(ctx, &s3.GetObjectInput{Bucket: &st.bucket, Key: &out})
	var api smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &api) || api.ErrorCode() != "AccessDenied" || !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusForbidden ||
		!strings.Contains(api.ErrorMessage(), "s3:GetObject on resource: arn:aws:s3:::AttachmentsBucket/b/W1/C1/U1") {
		t.Fatalf("GetObject outside the policy: got %v, want AccessDenied (403)", err)
	}
	if _, err := up.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &st.bucket, Key: &in,
		Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String("state"), Value: aws.String("attached")}}}}); err != nil {
		t.Fatalf("PutObjectTagging inside the policy: %v", err)
	}
	if _, err := st.client("Reader").PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &st.bucket, Key: &in,
		Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String("state"), Value: aws.String("x")}}}}); !errors.As(err, &api) || api.ErrorCode() != "AccessDenied" {
		t.Fatalf("the reader's PutObjectTagging: got %v, want AccessDenied", err)
	}
	del, err := up.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &st.bucket, Delete: &s3types.Delete{
		Objects: []s3types.ObjectIdentifier{{Key: aws.String(in)}, {Key: aws.String(out)}}}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	if len(del.Deleted) != 1 || aws.ToString(del.Deleted[0].Key) != in || len(del.Errors) != 1 ||
		aws.ToString(del.Errors[0].Key) != out || aws.ToString(del.Errors[0].Code) != "AccessDenied" {
		t.Fatalf("DeleteObjects: deleted %+v errors %+v; want %s deleted, %s AccessDenied", del.Deleted, del.Errors, in, out)
	}
	if _, err := st.admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.bucket, Key: &out}); err != nil {
		t.Fatalf("the denied key was deleted: %v", err)
	}
	if _, err := st.admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.bucket, Key: &in}); err == nil {
		t.Fatalf("the allowed key is still there")
	}
	seen := map[string]bool{}
	for _, c := range st.check.Allowed() {
		seen[c.Function+" "+c.Action+" "+c.Resource] = true
	}
	for _, want := range []string{"Uploader s3:GetObject arn:aws:s3:::AttachmentsBucket/a/W1/C1/U1",
		"Uploader s3:PutObjectTagging arn:aws:s3:::AttachmentsBucket/a/W1/C1/U1", "Uploader s3:DeleteObject arn:aws:s3:::AttachmentsBucket/a/W1/C1/U1"} {
		if !seen[want] {
			t.Errorf("allowed calls %v: want %q recorded", seen, want)
		}
	}
}
