package inboundapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/chatbridge/chat/pkg/awsenv"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/signature"
)

// Inbound webhook headers.
const (
	WebhookSecretHeader  = "X-Service-Webhook-Secret"
	IdempotencyKeyHeader = "Idempotency-Key"
	ReplayedHeader       = "Idempotent-Replayed"
)

// maxCountedBody is how much of a body the handler reads to count its size
// for the request log: API Gateway's own limit (10 MB), so that in AWS the
// count is always exact. Locally, reading stops there.
const maxCountedBody = 10 << 20

// Poster decides inbound webhook requests.
type Poster interface {
	Post(ctx context.Context, req inbound.Request) inbound.Result
}

// InboundHandler serves POST /webhooks/{webhook}/messages (contract
// section 4). The decisions are inbound.Service's; this reads the request
// and writes the result with the X-RateLimit-* headers.
func InboundHandler(p Poster, now chat.Clock, m awsenv.MetricRecorder) http.Handler {
	return Decided(p.Post, now, m)
}

// Decided serves a request of an inbound webhook's credentials decided by
// decide (inbound.Service's Post or Upload): it reads the request, and
// writes the result with the X-RateLimit-* headers.
func Decided(decide func(context.Context, inbound.Request) inbound.Result, now chat.Clock, m awsenv.MetricRecorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := ReadRequest(r, now)
		res := decide(r.Context(), req)
		WriteQuota(w, res.Quota)
		Record(r.Context(), m, res)
		if res.Err != nil {
			httpapi.Error(w, r, res.Err)
			return
		}
		if res.Replayed {
			w.Header().Set(ReplayedHeader, "true")
		}
		httpapi.RawJSON(w, res.Status, res.Body)
	})
}

// ReadRequest reads an inbound webhook request: its credentials, at most
// MaxBodyBytes+1 bytes of its body, and the whole body's size.
func ReadRequest(r *http.Request, now chat.Clock) inbound.Request {
	req := inbound.Request{
		WebhookID:    r.PathValue("webhook"),
		MediaTypeErr: httpapi.CheckContentType(r),
		SourceIP:     clientIP(r),
		UserAgent:    r.UserAgent(),
		RequestID:    httpapi.RequestID(r.Context()),
		ReceivedAt:   now(),
	}
	// Header, not r.Header: commas are part of a secret or a key.
	req.SecretHeader, req.HasSecretHeader = httpapi.Header(r, WebhookSecretHeader)
	req.IdempotencyKey, req.HasKey = httpapi.Header(r, IdempotencyKeyHeader)
	req.SignatureHeader, _ = httpapi.Header(r, signature.Header)
	body, err := io.ReadAll(io.LimitReader(r.Body, inbound.MaxBodyBytes+1))
	req.Body, req.TooLarge, req.ReadErr = body, len(body) > inbound.MaxBodyBytes || r.ContentLength > inbound.MaxBodyBytes, err
	req.BodyBytes = len(body)
	if err == nil && len(body) > inbound.MaxBodyBytes {
		// Count the rest for the log without keeping it.
		rest, _ := io.Copy(io.Discard, io.LimitReader(r.Body, maxCountedBody-int64(len(body))))
		req.BodyBytes += int(rest)
	}
	return req
}

// WriteQuota sets the X-RateLimit-* headers of q, when the request reached
// the quota step.
func WriteQuota(w http.ResponseWriter, q *inbound.QuotaState) {
	if q != nil {
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(q.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(q.Reset.Unix(), 10))
	}
}

// clientIP is the caller's address: API Gateway's sourceIp (the adapter
// puts it in RemoteAddr), or the socket's host locally.
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// Record counts a decided request by outcome.
func Record(ctx context.Context, m awsenv.MetricRecorder, res inbound.Result) {
	name := "InboundAccepted"
	switch {
	case res.Err != nil && chat.IsCode(res.Err, chat.EQuotaExceeded):
		awsenv.RecordMetrics(ctx, m, awsenv.Metric{Name: "InboundRejected", Unit: awsenv.UnitCount, Value: 1}, awsenv.Metric{Name: "QuotaRejections", Unit: awsenv.UnitCount, Value: 1})
		return
	case res.Err != nil:
		name = "InboundRejected"
	case res.Replayed:
		name = "InboundReplayed"
	}
	awsenv.RecordMetrics(ctx, m, awsenv.Metric{Name: name, Unit: awsenv.UnitCount, Value: 1})
}

// record is m.Record for an m that may be nil.
func record(ctx context.Context, m awsenv.MetricRecorder, metrics ...awsenv.Metric) {
	if m != nil {
		m.Record(ctx, metrics...)
	}
}
