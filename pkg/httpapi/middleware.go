package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/chatbridge/chat/pkg/chat"
)

type ctxKey struct{}

// reqState is what the middleware learns about a request while it runs.
type reqState struct {
	id   string
	code string
}

func stateOf(r *http.Request) *reqState {
	s, _ := r.Context().Value(ctxKey{}).(*reqState)
	return s
}

func noteError(r *http.Request, code string) {
	if s := stateOf(r); s != nil {
		s.code = code
	}
}

// RequestID returns the request's id as sent in X-Request-Id.
func RequestID(ctx context.Context) string {
	if s, ok := ctx.Value(ctxKey{}).(*reqState); ok {
		return s.id
	}
	return ""
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Wrap adds what every endpoint needs: an X-Request-Id (API Gateway's
// request id when there is one), recovery from panics as a 500 in the
// contract's shape, and one summary log line per request.
func Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &reqState{id: requestIDFor(r)}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, st))
		w.Header().Set("X-Request-Id", st.id)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				slog.ErrorContext(r.Context(), "panic", "panic", p, "path", r.URL.Path)
				if rec.status == 0 {
					Error(rec, r, chat.Internal(nil))
				}
			}
			slog.InfoContext(r.Context(), "request",
				"request_id", st.id, "method", r.Method, "route", r.Pattern,
				"status", rec.status, "error_code", st.code,
				"duration_ms", time.Since(start).Milliseconds())
		}()
		if !canonical(r.URL.Path) {
			// ServeMux would answer a 307 to the cleaned path; no route of
			// the contract has such a path, so it is simply not found.
			Error(rec, r, chat.Errorf(chat.ENotFound, "The requested resource was not found."))
			return
		}
		h.ServeHTTP(rec, r)
	})
}

// canonical reports whether p is already clean: no empty, "." or ".."
// segments and no trailing slash.
func canonical(p string) bool {
	return p == "/" || (strings.HasPrefix(p, "/") && path.Clean(p) == p)
}

func requestIDFor(r *http.Request) string {
	if gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && gw.RequestID != "" {
		return gw.RequestID
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
