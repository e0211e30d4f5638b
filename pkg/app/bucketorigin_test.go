package app_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/guestpage"
)

// TestBucketOriginIsThePresignedURLs: the origin the guest page's policy
// allows (guestpage.BucketOrigin) is the origin of the links the API
// presigns, against AWS (virtual-hosted) and a local endpoint (path-style).
func TestBucketOriginIsThePresignedURLs(t *testing.T) {
	for _, c := range []struct{ region, endpoint string }{{"eu-west-1", ""}, {"us-east-1", ""}, {"us-east-1", "http://127.0.0.1:4566"}} {
		cfg := aws.Config{Region: c.region}
		if c.endpoint != "" {
			cfg.BaseEndpoint = aws.String(c.endpoint)
		}
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
		})
		a := app.New(cfg, "chat")
		a.Bucket = "stack-attachmentsbucket-1a2b3c"
		r := a.Renderer(0)
		if r.Links == nil {
			t.Fatal("no links with a bucket")
		}
		l, err := r.Links.Link(chat.Attachment{ID: "01JD9N113GQYDPWDARF68MKWR7", Key: "a/ws/ch/up", Filename: "a.png", ContentType: "image/png", Size: 1}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(l.URL)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := guestpage.BucketOrigin(a.Bucket, c.region, c.endpoint), u.Scheme+"://"+u.Host; got != want {
			t.Errorf("region %s endpoint %q: the page allows %q, the links are on %q", c.region, c.endpoint, got, want)
		}
	}
}
