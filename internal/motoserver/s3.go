package motoserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/chatbridge/chat/internal/iampolicy"
)

// WithClock sets the clock by which the proxy judges S3's presigned URLs
// and POST policies expired (time.Now unless set), so that a test can
// move past an expiry without sleeping.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// adminS3Authorization is the Authorization header of the requests the
// proxy itself sends to moto: its credential scope tells moto's single
// port that they are S3's, and its access key id is an administrator's.
// moto checks no signature.
const adminS3Authorization = "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0"

// s3Gate is the proxy's S3: it does what S3 does and moto does not, before
// moto stores or serves an object.
//
//   - IAM for calls signed by a function (header-signed SDK calls,
//     presigned GETs and POSTs): the function's policy must allow the
//     object action on arn:aws:s3:::<Bucket>/<key>, as iam.go checks
//     DynamoDB and SQS calls.
//   - Presigned GETs (query-string SigV4) are verified and expire; moto
//     ignores their signature and their response-* overrides, which the
//     gate applies.
//   - Browser POSTs are checked against their POST policy (signature,
//     expiration, every condition, no field left uncovered) and stored as
//     an administrator's PutObject; moto's own POST handler ignores the
//     policy.
//   - CORS follows the template bucket's CorsConfiguration (cors.go);
//     moto's global CORS headers, which allow anything, are removed.
type s3Gate struct {
	moto   string
	client *http.Client
	proxy  *httputil.ReverseProxy
	now    func() time.Time
	iam    *IAM
	cors   []CORSRule
}

func newS3Gate(moto string, o options) (*s3Gate, error) {
	u, err := url.Parse(moto)
	if err != nil {
		return nil, err
	}
	g := &s3Gate{moto: moto, client: &http.Client{Timeout: backendTimeout}, now: o.now, iam: o.iam, cors: o.cors}
	if g.now == nil {
		g.now = time.Now
	}
	if !o.corsSet {
		if g.cors, err = projectCORS(); err != nil {
			return nil, err
		}
	}
	g.proxy = httputil.NewSingleHostReverseProxy(u)
	g.proxy.ModifyResponse = func(resp *http.Response) error {
		dropMotoCORS(resp.Header)
		applyOverrides(resp)
		return nil
	}
	return g, nil
}

// isS3 tells S3 requests from the others as moto's single port does: a
// SigV4 credential scope (header or query) naming s3, or no signature and
// no X-Amz-Target at all (moto's default service is S3: browser POSTs,
// preflights, presigned URLs).
func isS3(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/moto-api") || strings.HasPrefix(r.URL.Path, "/_local-aws/") || r.Header.Get("X-Amz-Target") != "" {
		return false
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		return scopeService(auth) == "s3"
	}
	if cred := r.URL.Query().Get("X-Amz-Credential"); cred != "" {
		parts := strings.Split(cred, "/")
		return len(parts) == 5 && parts[3] == "s3"
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return false // an unsigned query-protocol call (SQS's)
	}
	return true
}

// scopeService is the service of a SigV4 Authorization header's
// credential scope.
func scopeService(auth string) string {
	_, after, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ := strings.Cut(after, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[3]
}

// s3Path splits a path-style path into its bucket and key.
func s3Path(path string) (bucket, key string) {
	bucket, key, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return bucket, key
}

func (g *s3Gate) serve(w http.ResponseWriter, r *http.Request) {
	if g.cors != nil && r.Header.Get("Origin") != "" {
		if r.Method == http.MethodOptions {
			g.preflight(w, r)
			return
		}
		g.corsHeaders(w.Header(), r)
	}
	bucket, key := s3Path(r.URL.Path)
	switch q := r.URL.Query(); {
	case r.Method == http.MethodPost && key == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data"):
		g.post(w, r, bucket)
		return
	case q.Get("X-Amz-Signature") != "" || q.Get("X-Amz-Credential") != "":
		if !g.presigned(w, r, bucket, key) {
			return
		}
	case r.Header.Get("Authorization") != "":
		if !g.authorize(w, r, bucket, key) {
			return
		}
	}
	g.proxy.ServeHTTP(w, r)
}

// authorize checks a header-signed call of a function against its
// policy; an administrator's passes. It may replace r's body (a
// DeleteObjects of which some keys are denied answers w itself).
func (g *s3Gate) authorize(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	function, _, ok := iampolicy.Principal(r.Header.Get("Authorization"))
	if !ok || g.iam == nil || g.iam.policies.Functions[function] == nil {
		return true
	}
	sites := sitesOf(r)
	q := r.URL.Query()
	if r.Method == http.MethodPost && key == "" && q.Has("delete") {
		return g.deleteObjects(w, r, function, sites)
	}
	action, resource, err := g.action(r, bucket, key)
	if err != nil {
		req := iampolicy.Request{Action: "unknown", Resource: "*"}
		g.iam.logDenied(function, req)
		writeS3Error(w, r, http.StatusForbidden, "AccessDenied", g.iam.deniedMessage(function, req, iampolicy.ImplicitDeny, err.Error()))
		return false
	}
	reqs := []iampolicy.Request{{Action: action, Resource: resource}}
	if r.Method == http.MethodPut && key != "" && !q.Has("tagging") && r.Header.Get("X-Amz-Tagging") != "" {
		// S3 asks for s3:PutObjectTagging too when a PutObject tags.
		reqs = append(reqs, iampolicy.Request{Action: "s3:PutObjectTagging", Resource: resource})
	}
	if src := r.Header.Get("X-Amz-Copy-Source"); src != "" && r.Method == http.MethodPut {
		src, _ = url.PathUnescape(src)
		_, srcKey := s3Path("/" + strings.TrimPrefix(src, "/"))
		reqs = append(reqs, iampolicy.Request{Action: "s3:GetObject", Resource: g.iam.policies.ObjectARN(srcKey)})
	}
	for _, req := range reqs {
		if d := g.iam.decide(function, req, sites); d != iampolicy.Allow {
			g.denyXML(w, r, function, req, d)
			return false
		}
	}
	return true
}

// action names the IAM action and resource of a header-signed S3 call.
func (g *s3Gate) action(r *http.Request, bucket, key string) (string, string, error) {
	s := g.iam.policies
	q := r.URL.Query()
	if key == "" {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			if len(q) == 0 || q.Get("list-type") == "2" || q.Has("prefix") {
				return "s3:ListBucket", s.BucketARN(s.Bucket), nil
			}
		}
		return "", "", fmt.Errorf("bucket operation %s %s?%s is not one the check knows", r.Method, bucket, r.URL.RawQuery)
	}
	object := s.ObjectARN(key)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if q.Has("tagging") {
			return "s3:GetObjectTagging", object, nil
		}
		return "s3:GetObject", object, nil
	case http.MethodPut:
		if q.Has("tagging") {
			return "s3:PutObjectTagging", object, nil
		}
		return "s3:PutObject", object, nil
	case http.MethodDelete:
		if q.Has("tagging") {
			return "s3:DeleteObjectTagging", object, nil
		}
		return "s3:DeleteObject", object, nil
	}
	return "", "", fmt.Errorf("object operation %s %s/%s is not one the check knows", r.Method, bucket, key)
}

// deleteRequest is DeleteObjects' body.
type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet,omitempty"`
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId,omitempty"`
	} `xml:"Object"`
}

// deleteObjects checks s3:DeleteObject on every key of a DeleteObjects,
// as S3 does: the denied keys come back as AccessDenied errors of a 200
// answer, the others are deleted.
func (g *s3Gate) deleteObjects(w http.ResponseWriter, r *http.Request, function string, sites []string) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "IncompleteBody", err.Error())
		return false
	}
	var in deleteRequest
	if err := xml.Unmarshal(body, &in); err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
		return false
	}
	var denied []string
	kept := in
	kept.Objects = nil
	for _, o := range in.Objects {
		req := iampolicy.Request{Action: "s3:DeleteObject", Resource: g.iam.policies.ObjectARN(o.Key)}
		if g.iam.decide(function, req, sites) != iampolicy.Allow {
			g.iam.logDenied(function, req)
			denied = append(denied, o.Key)
			continue
		}
		kept.Objects = append(kept.Objects, o)
	}
	if len(denied) == 0 {
		setBody(r, body)
		return true
	}
	type result struct {
		XMLName xml.Name `xml:"DeleteResult"`
		NS      string   `xml:"xmlns,attr"`
		Deleted []struct {
			Key string `xml:"Key"`
		} `xml:"Deleted"`
		Errors []s3ErrorEntry `xml:"Error"`
	}
	var out result
	if len(kept.Objects) > 0 {
		b, _ := xml.Marshal(kept)
		resp, err := g.toMoto(r.Context(), http.MethodPost, r.URL.Path, "delete", http.Header{"Content-Type": {"application/xml"}}, b)
		if err != nil {
			writeS3Error(w, r, http.StatusInternalServerError, "InternalError", err.Error())
			return false
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_ = xml.Unmarshal(data, &out)
	}
	for _, k := range denied {
		out.Errors = append(out.Errors, s3ErrorEntry{Key: k, Code: "AccessDenied", Message: "Access Denied"})
	}
	out.NS = "http://s3.amazonaws.com/doc/2006-03-01/"
	b, _ := xml.Marshal(out)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append([]byte(xml.Header), b...))
	return false
}

type s3ErrorEntry struct {
	Key     string `xml:"Key"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// presigned verifies a query-signed request (a presigned URL) as S3 does:
// expiry, then signature, then the signer's policy. It strips the
// signature from r so that moto serves it as an administrator's call.
func (g *s3Gate) presigned(w http.ResponseWriter, r *http.Request, bucket, key string) bool {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
		writeS3Error(w, r, http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
		return false
	}
	cred := strings.Split(q.Get("X-Amz-Credential"), "/")
	signedAt, derr := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	var expires int
	_, eerr := fmt.Sscan(q.Get("X-Amz-Expires"), &expires)
	if len(cred) != 5 || cred[4] != "aws4_request" || derr != nil || eerr != nil || q.Get("X-Amz-SignedHeaders") == "" || q.Get("X-Amz-Signature") == "" {
		writeS3Error(w, r, http.StatusBadRequest, "AuthorizationQueryParametersError",
			"Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		return false
	}
	if expires < 1 || expires > 604800 {
		writeS3Error(w, r, http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Expires must be less than a week (in seconds) that is; the maximum expires is 604800 seconds")
		return false
	}
	if g.now().After(signedAt.Add(time.Duration(expires) * time.Second)) {
		writeS3Error(w, r, http.StatusForbidden, "AccessDenied", "Request has expired")
		return false
	}
	want, err := presignedSignature(r, cred, signedAt)
	if err != nil || !hmac.Equal([]byte(want), []byte(q.Get("X-Amz-Signature"))) {
		writeS3Error(w, r, http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
		return false
	}
	function := cred[0]
	if g.iam != nil && g.iam.policies.Functions[function] != nil {
		action, resource, err := g.action(r, bucket, key)
		if err != nil {
			writeS3Error(w, r, http.StatusForbidden, "AccessDenied", err.Error())
			return false
		}
		req := iampolicy.Request{Action: action, Resource: resource}
		if d := g.iam.decide(function, req, nil); d != iampolicy.Allow {
			g.denyXML(w, r, function, req, d)
			return false
		}
	}
	for k := range q {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			q.Del(k)
		}
	}
	r.URL.RawQuery = q.Encode()
	r.Header.Set("Authorization", adminS3Authorization)
	return true
}

// presignedSignature recomputes a presigned URL's signature with the SDK's
// signer: the request's method, host, path and query (its signature
// left out), the headers it says it signed, an unsigned payload, and the
// secret every local credential has ("local", awsenv.ForFunction).
func presignedSignature(r *http.Request, cred []string, signedAt time.Time) (string, error) {
	q := r.URL.Query()
	q.Del("X-Amz-Signature")
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), nil)
	if err != nil {
		return "", err
	}
	for _, h := range strings.Split(q.Get("X-Amz-SignedHeaders"), ";") {
		if h != "host" {
			req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	signed, _, err := signer.PresignHTTP(r.Context(), aws.Credentials{AccessKeyID: cred[0], SecretAccessKey: localSecret},
		req, "UNSIGNED-PAYLOAD", cred[3], cred[2], signedAt)
	if err != nil {
		return "", err
	}
	su, err := url.Parse(signed)
	if err != nil {
		return "", err
	}
	return su.Query().Get("X-Amz-Signature"), nil
}

// localSecret is the secret access key of every local credential.
const localSecret = "local"

// signingKey is SigV4's key for a date, region and service.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// toMoto sends an administrator's S3 request to moto.
func (g *s3Gate) toMoto(ctx context.Context, method, path, rawQuery string, h http.Header, body []byte) (*http.Response, error) {
	u := g.moto + (&url.URL{Path: path}).EscapedPath()
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", adminS3Authorization)
	return g.client.Do(req)
}

// denyXML answers as S3 answers a call its caller's role may not make:
// HTTP 403, AccessDenied in S3's XML error shape.
func (g *s3Gate) denyXML(w http.ResponseWriter, r *http.Request, function string, req iampolicy.Request, d iampolicy.Decision) {
	g.iam.logDenied(function, req)
	writeS3Error(w, r, http.StatusForbidden, "AccessDenied", g.iam.deniedMessage(function, req, d, ""))
}

// s3Error is S3's XML error body.
type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	RequestID string   `xml:"RequestId"`
	HostID    string   `xml:"HostId"`
}

// writeS3Error answers an S3 error; a HEAD's answer has no body, as S3's.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", "LOCAL")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	b, _ := xml.Marshal(s3Error{Code: code, Message: msg, RequestID: "LOCAL", HostID: "local"})
	_, _ = w.Write(append([]byte(xml.Header), b...))
}

// overrides maps the response-* query parameters of a GetObject to the
// headers they replace in its answer.
var overrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-disposition": "Content-Disposition",
	"response-content-language":    "Content-Language",
	"response-content-encoding":    "Content-Encoding",
	"response-cache-control":       "Cache-Control",
	"response-expires":             "Expires",
}

// applyOverrides applies a GetObject's response-* parameters to moto's
// answer, which ignores them.
func applyOverrides(resp *http.Response) {
	if resp.Request == nil || resp.StatusCode/100 != 2 || resp.Request.Method != http.MethodGet && resp.Request.Method != http.MethodHead {
		return
	}
	q := resp.Request.URL.Query()
	for p, h := range overrides {
		if v := q.Get(p); v != "" {
			resp.Header.Set(h, v)
		}
	}
}

// dropMotoCORS removes the CORS headers moto adds to every answer.
func dropMotoCORS(h http.Header) {
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
}

func sitesOf(r *http.Request) []string {
	if sites := r.Header.Get(iampolicy.SitesHeader); sites != "" {
		return strings.Split(sites, ",")
	}
	return nil
}

// hexSignature is the hex HMAC of a POST policy under a signing key.
func hexSignature(key []byte, policy string) string {
	return hex.EncodeToString(hmacSHA256(key, policy))
}
