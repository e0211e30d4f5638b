package motoserver

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chatbridge/chat/internal/iampolicy"
)

// maxPostObject bounds the file of a browser POST the proxy holds in
// memory; S3's own bound, 5 GB, is no local need.
const maxPostObject = 256 << 20

// postForm is a browser POST's form: its fields (names lowercased, as S3
// compares them), in order, and its file.
type postForm struct {
	fields   map[string]string
	names    []string // original names, in order
	file     []byte
	filename string
	tooBig   bool
}

// readPostForm reads the form up to its file part; S3 ignores whatever
// follows the file.
func readPostForm(r *http.Request) (*postForm, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, fmt.Errorf("the body of a POST must be multipart/form-data")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	f := &postForm{fields: map[string]string{}}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, fmt.Errorf("POST requires exactly one file upload per request.")
		}
		if err != nil {
			return nil, err
		}
		name := part.FormName()
		if strings.EqualFold(name, "file") {
			f.filename = part.FileName()
			f.file, err = io.ReadAll(io.LimitReader(part, maxPostObject+1))
			if err != nil {
				return nil, err
			}
			f.tooBig = len(f.file) > maxPostObject
			return f, nil
		}
		v, err := io.ReadAll(io.LimitReader(part, 1<<20))
		if err != nil {
			return nil, err
		}
		f.fields[strings.ToLower(name)] = string(v)
		f.names = append(f.names, name)
	}
}

// postPolicy is a decoded POST policy.
type postPolicy struct {
	Expiration string `json:"expiration"`
	Conditions []any  `json:"conditions"`
}

// post handles a browser POST (a presigned POST's form) as S3 does: the
// policy's signature, its expiration, each of its conditions, every field
// covered by one, the signer's policy; then the object is stored as an
// administrator's PutObject with the form's type, metadata and tags.
func (g *s3Gate) post(w http.ResponseWriter, r *http.Request, bucket string) {
	f, err := readPostForm(r)
	if err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "InvalidArgument", err.Error())
		return
	}
	for _, name := range []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature", "key"} {
		if _, ok := f.fields[name]; !ok {
			if name == "key" {
				writeS3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
			} else {
				writeS3Error(w, r, http.StatusForbidden, "AccessDenied", "Bucket POST must contain a field named '"+name+"'.  If it is specified, please check the order of the fields.")
			}
			return
		}
	}
	if f.fields["x-amz-algorithm"] != "AWS4-HMAC-SHA256" {
		writeS3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Invalid algorithm: x-amz-algorithm must be AWS4-HMAC-SHA256")
		return
	}
	cred := strings.Split(f.fields["x-amz-credential"], "/")
	if len(cred) != 5 || cred[3] != "s3" || cred[4] != "aws4_request" || !strings.HasPrefix(f.fields["x-amz-date"], cred[1]) {
		writeS3Error(w, r, http.StatusBadRequest, "InvalidArgument", "Invalid according to Policy: x-amz-credential "+f.fields["x-amz-credential"])
		return
	}
	want := hexSignature(signingKey(localSecret, cred[1], cred[2], cred[3]), f.fields["policy"])
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(f.fields["x-amz-signature"]))) {
		writeS3Error(w, r, http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
		return
	}
	raw, err := base64.StdEncoding.DecodeString(f.fields["policy"])
	var p postPolicy
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.")
		return
	}
	expiration, err := time.Parse(time.RFC3339Nano, p.Expiration)
	if err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: Invalid 'expiration' value: '"+p.Expiration+"'")
		return
	}
	if !g.now().Before(expiration) {
		writeS3Error(w, r, http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Policy expired.")
		return
	}
	key := strings.ReplaceAll(f.fields["key"], "${filename}", f.filename)
	status, code, msg := checkConditions(p.Conditions, f, bucket, int64(len(f.file)))
	if status != 0 {
		writeS3Error(w, r, status, code, msg)
		return
	}
	if f.tooBig {
		writeS3Error(w, r, http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
		return
	}
	if function := cred[0]; g.iam != nil && g.iam.policies.Functions[function] != nil {
		reqs := []iampolicy.Request{{Action: "s3:PutObject", Resource: g.iam.policies.ObjectARN(key)}}
		if _, ok := f.fields["tagging"]; ok {
			reqs = append(reqs, iampolicy.Request{Action: "s3:PutObjectTagging", Resource: g.iam.policies.ObjectARN(key)})
		}
		for _, req := range reqs {
			if d := g.iam.decide(function, req, nil); d != iampolicy.Allow {
				g.denyXML(w, r, function, req, d)
				return
			}
		}
	}
	h, err := objectHeaders(f)
	if err != nil {
		writeS3Error(w, r, http.StatusBadRequest, "MalformedXML", err.Error())
		return
	}
	resp, err := g.toMoto(r.Context(), http.MethodPut, "/"+bucket+"/"+key, "", h, f.file)
	if err != nil {
		writeS3Error(w, r, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// moto's refusal (no such bucket...) is S3's.
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return
	}
	etag := resp.Header.Get("ETag")
	location := "http://" + r.Host + "/" + bucket + "/" + url.PathEscape(key)
	w.Header().Set("ETag", etag)
	w.Header().Set("Location", location)
	if redirect := f.fields["success_action_redirect"]; redirect != "" {
		if u, err := url.Parse(redirect); err == nil && u.Scheme != "" {
			q := u.Query()
			q.Set("bucket", bucket)
			q.Set("key", key)
			q.Set("etag", etag)
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
	}
	switch f.fields["success_action_status"] {
	case "200":
		w.WriteHeader(http.StatusOK)
	case "201":
		type postResponse struct {
			XMLName  xml.Name `xml:"PostResponse"`
			Location string   `xml:"Location"`
			Bucket   string   `xml:"Bucket"`
			Key      string   `xml:"Key"`
			ETag     string   `xml:"ETag"`
		}
		b, _ := xml.Marshal(postResponse{Location: location, Bucket: bucket, Key: key, ETag: etag})
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(append([]byte(xml.Header), b...))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// exempt reports whether a form field needs no condition (S3's rule).
func exempt(name string) bool {
	switch name {
	case "x-amz-signature", "file", "policy":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}

// checkConditions checks the form against the policy's conditions as S3
// does; status 0 means it passes.
func checkConditions(conds []any, f *postForm, bucket string, size int64) (status int, code, msg string) {
	// S3 names a failed condition in its array form: ["eq", "$key", "v"].
	failed := func(c []any) (int, string, string) {
		parts := make([]string, len(c))
		for i, v := range c {
			var b strings.Builder
			e := json.NewEncoder(&b)
			e.SetEscapeHTML(false) // a tagging value is XML, shown as is
			_ = e.Encode(v)
			parts[i] = strings.TrimSpace(b.String())
		}
		return http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Policy Condition failed: [" + strings.Join(parts, ", ") + "]"
	}
	covered := map[string]bool{}
	value := func(name string) (string, bool) {
		name = strings.ToLower(strings.TrimPrefix(name, "$"))
		covered[name] = true
		if name == "bucket" {
			return bucket, true
		}
		v, ok := f.fields[name]
		return v, ok
	}
	for _, c := range conds {
		switch x := c.(type) {
		case map[string]any:
			for k, want := range x {
				got, ok := value(k)
				if s, isStr := want.(string); !ok || !isStr || got != s {
					return failed([]any{"eq", "$" + k, want})
				}
			}
		case []any:
			if len(x) != 3 {
				return http.StatusBadRequest, "InvalidPolicyDocument", fmt.Sprintf("Invalid Policy: Invalid Condition: %v", x)
			}
			op, _ := x[0].(string)
			switch strings.ToLower(op) {
			case "content-length-range":
				lo, lok := x[1].(float64)
				hi, hok := x[2].(float64)
				if !lok || !hok {
					return http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: Invalid content-length-range"
				}
				if size < int64(lo) {
					return http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size"
				}
				if size > int64(hi) {
					return http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"
				}
			case "eq", "starts-with":
				name, _ := x[1].(string)
				want, _ := x[2].(string)
				if !strings.HasPrefix(name, "$") {
					return http.StatusBadRequest, "InvalidPolicyDocument", fmt.Sprintf("Invalid Policy: Invalid Condition: %v", x)
				}
				got, ok := value(name)
				if !ok || op == "eq" && got != want || op == "starts-with" && !strings.HasPrefix(got, want) {
					return failed(x)
				}
			default:
				return http.StatusBadRequest, "InvalidPolicyDocument", fmt.Sprintf("Invalid Policy: Invalid Condition operator: %s", op)
			}
		default:
			return http.StatusBadRequest, "InvalidPolicyDocument", fmt.Sprintf("Invalid Policy: Invalid Condition: %v", c)
		}
	}
	var extra []string
	for _, n := range f.names {
		if l := strings.ToLower(n); !exempt(l) && !covered[l] {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		return http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Extra input fields: " + strings.Join(extra, ", ")
	}
	return 0, "", ""
}

// tagging is the XML of a POST's tagging field.
type tagging struct {
	Tags []struct {
		Key   string `xml:"Key"`
		Value string `xml:"Value"`
	} `xml:"TagSet>Tag"`
}

// objectHeaders are the PutObject headers of a POST's fields: its type,
// its stored headers, its metadata and its tags.
func objectHeaders(f *postForm) (http.Header, error) {
	h := http.Header{}
	ct := f.fields["content-type"]
	if ct == "" {
		ct = "binary/octet-stream" // S3's type of a POST without one
	}
	h.Set("Content-Type", ct)
	for _, n := range []string{"cache-control", "content-disposition", "content-encoding", "expires", "x-amz-storage-class", "x-amz-server-side-encryption"} {
		if v, ok := f.fields[n]; ok {
			h.Set(n, v)
		}
	}
	for n, v := range f.fields {
		if strings.HasPrefix(n, "x-amz-meta-") {
			h.Set(n, v)
		}
	}
	if raw, ok := f.fields["tagging"]; ok {
		var t tagging
		if err := xml.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("the tagging field is not a Tagging document: %v", err)
		}
		q := url.Values{}
		for _, tag := range t.Tags {
			q.Add(tag.Key, tag.Value)
		}
		h.Set("X-Amz-Tagging", q.Encode())
	}
	return h, nil
}
