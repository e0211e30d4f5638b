// Package s3bucket adapts the attachments bucket (Amazon S3) to package
// attachments: the presigned POST of an upload, the presigned GET of an
// attachment, and the reads, tags and deletions of stored files.
package s3bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
)

// Bucket is the attachments bucket.
type Bucket struct {
	Client  *s3.Client
	Presign *s3.PresignClient
	Name    string
	// Now is the clock of presigned requests; nil is time.Now.
	Now func() time.Time
}

var (
	_ attachments.Presigner = (*Bucket)(nil)
	_ attachments.Objects   = (*Bucket)(nil)
)

// New returns the bucket name reached through c.
func New(c *s3.Client, name string) *Bucket {
	return &Bucket{Client: c, Presign: s3.NewPresignClient(c), Name: name}
}

func (b *Bucket) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// tagging is the tag set of a new upload, as the POST's tagging field
// carries it.
var tagging = "<Tagging><TagSet><Tag><Key>" + attachments.TagKey + "</Key><Value>" + attachments.TagUnattached +
	"</Value></Tag></TagSet></Tagging>"

// UploadForm returns u's presigned POST. Its policy fixes the key, the
// content type, the exact size (content-length-range N..N), the filename
// metadata and the unattached tag, so that S3 refuses any other file.
// Errors: EUnavailable.
func (b *Bucket) UploadForm(ctx context.Context, u attachments.Upload) (attachments.Form, error) {
	name := url.PathEscape(u.Filename)
	ttl := u.ExpiresAt.Sub(b.now())
	if ttl <= 0 {
		return attachments.Form{}, chat.Internal(fmt.Errorf("s3bucket: upload %s expired before its form was signed", u.ID))
	}
	req, err := b.Presign.PresignPostObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.Name), Key: aws.String(u.Key()),
	}, func(o *s3.PresignPostOptions) {
		o.Expires = ttl
		o.Conditions = []any{
			[]any{"content-length-range", u.Size, u.Size},
			map[string]string{"Content-Type": u.ContentType},
			map[string]string{"x-amz-meta-" + attachments.MetaFilename: name},
			map[string]string{"tagging": tagging},
		}
	})
	if err != nil {
		return attachments.Form{}, chat.Unavailable(fmt.Errorf("s3bucket: presign upload %s: %w", u.ID, err))
	}
	fields := make(map[string]string, len(req.Values)+3)
	for k, v := range req.Values {
		fields[k] = v
	}
	fields["Content-Type"] = u.ContentType
	fields["x-amz-meta-"+attachments.MetaFilename] = name
	fields["tagging"] = tagging
	return attachments.Form{URL: req.URL, Fields: fields, ExpiresAt: u.ExpiresAt}, nil
}

// Link returns a presigned GET of a valid for ttl: an image is served
// inline with its type, every other type as a download named after the
// file (Content-Disposition: attachment), so nothing the bucket serves
// runs in a browser.
func (b *Bucket) Link(a chat.Attachment, ttl time.Duration) (attachments.Link, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(a.Key),
		ResponseContentType: aws.String(a.ContentType)}
	if attachments.Inline(a.ContentType) {
		in.ResponseContentDisposition = aws.String(mime.FormatMediaType("inline", map[string]string{"filename": a.Filename}))
	} else {
		in.ResponseContentDisposition = aws.String(mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename}))
	}
	now := b.now()
	// Presigning is local: it makes no call, so no request's context is
	// needed.
	req, err := b.Presign.PresignGetObject(context.Background(), in, s3.WithPresignExpires(ttl))
	if err != nil {
		return attachments.Link{}, fmt.Errorf("s3bucket: presign download of %s: %w", a.ID, err)
	}
	return attachments.Link{URL: req.URL, ExpiresAt: now.Add(ttl).UTC().Truncate(time.Second)}, nil
}

// Peek reads the file at key's type, size, filename and first n bytes with
// one ranged GetObject. Errors: ENotFound; EUnavailable.
func (b *Bucket) Peek(ctx context.Context, key string, n int) (attachments.Object, error) {
	out, err := b.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(key),
		Range: aws.String(fmt.Sprintf("bytes=0-%d", n-1))})
	if err != nil {
		if notFound(err) {
			return attachments.Object{}, chat.Errorf(chat.ENotFound, "no such file")
		}
		return attachments.Object{}, chat.Unavailable(fmt.Errorf("s3bucket: read %s: %w", key, err))
	}
	defer out.Body.Close()
	head, err := io.ReadAll(io.LimitReader(out.Body, int64(n)))
	if err != nil {
		return attachments.Object{}, chat.Unavailable(fmt.Errorf("s3bucket: read %s: %w", key, err))
	}
	size := aws.ToInt64(out.ContentLength)
	if cr := aws.ToString(out.ContentRange); cr != "" {
		// "bytes 0-511/123456": the total follows the slash.
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if v, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				size = v
			}
		}
	}
	name, _ := url.PathUnescape(out.Metadata[attachments.MetaFilename])
	ct, _, _ := mime.ParseMediaType(aws.ToString(out.ContentType))
	return attachments.Object{Filename: name, ContentType: ct, Size: size, Head: head}, nil
}

// Tag sets the file's state tag. Errors: ENotFound; EUnavailable.
func (b *Bucket) Tag(ctx context.Context, key, state string) error {
	_, err := b.Client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b.Name), Key: aws.String(key),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(attachments.TagKey), Value: aws.String(state)}}}})
	if err != nil {
		if notFound(err) {
			return chat.Errorf(chat.ENotFound, "no such file")
		}
		return chat.Unavailable(fmt.Errorf("s3bucket: tag %s %s: %w", key, state, err))
	}
	return nil
}

// Delete removes the files at keys, up to 1,000 a call (DeleteObjects).
// Errors: EUnavailable, also when S3 reports a key it could not delete.
func (b *Bucket) Delete(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		objs := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			objs[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := b.Client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b.Name),
			Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)}})
		if err != nil {
			return chat.Unavailable(fmt.Errorf("s3bucket: delete %d file(s): %w", n, err))
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return chat.Unavailable(fmt.Errorf("s3bucket: delete %s: %s %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
		}
		keys = keys[n:]
	}
	return nil
}

func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}
