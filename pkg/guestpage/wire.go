package guestpage

import (
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/chatbridge/chat/pkg/awsenv"
)

// EnvRealtimeURL names the realtime API's URL (wss://...) in the guest
// page function's environment; unset, the page connects to its own
// origin's /realtime (chatctl serve).
const EnvRealtimeURL = "REALTIME_URL"

// Handler is GuestPageFunction's handler, on the environment's
// REALTIME_URL, and the attachments bucket's origin as the functions that
// presign its URLs reach it (BucketOrigin of ATTACHMENTS_BUCKET,
// AWS_REGION and AWS_ENDPOINT_URL). The page needs no table and no AWS
// client.
func Handler() http.Handler {
	region := os.Getenv(awsenv.EnvRegion)
	if region == "" {
		region = os.Getenv(awsenv.EnvDefaultRegion)
	}
	return GuestPageHandler(os.Getenv(EnvRealtimeURL), BucketOrigin(os.Getenv(awsenv.EnvBucket), region, os.Getenv(awsenv.EnvEndpoint)))
}

// BucketOrigin is the origin of the presigned URLs of bucket (the uploads'
// POSTs, the attachments' GETs), as package app's S3 client makes them:
// against a local endpoint (AWS_ENDPOINT_URL, chatctl serve) path-style
// addresses on that endpoint, so its origin; in AWS virtual-hosted
// addresses, https://<bucket>.s3.<region>.amazonaws.com (the default
// region when region is ""). "" when no bucket is configured, or the
// endpoint is not an http(s) URL: the page then allows no other origin.
// TestBucketOriginIsThePresignedURLs (package app) holds the two to agree.
func BucketOrigin(bucket, region, endpoint string) string {
	if bucket == "" {
		return ""
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ""
		}
		return u.Scheme + "://" + u.Host
	}
	if region == "" {
		region = awsenv.DefaultRegion
	}
	// A bucket name is lower-case letters, digits, dots and hyphens: one
	// with anything else is not one S3 serves, nor one to put in a policy.
	if strings.Trim(bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" ||
		strings.Trim(region, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return ""
	}
	return "https://" + bucket + ".s3." + region + ".amazonaws.com"
}
