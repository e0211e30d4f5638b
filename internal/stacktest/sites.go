package stacktest

import (
	"context"
	"runtime"
	"strings"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/chatbridge/chat/internal/iampolicy"
)

// siteOption makes a client name each call's sites
// (iampolicy.SitesHeader): the adapter functions on the calling
// goroutine's stack, which the local IAM check records with the call. The
// header is set after signing, so that it is never one of a presigned
// URL's signed headers (a presigner stops at signing and never gets here):
// a browser fetching the URL does not send it, and the local S3 checks
// presigned signatures. moto checks no header signature.
func siteOption(st *middleware.Stack) error {
	return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("ChatCallSites",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				if sites := callSites(); sites != "" {
					req.Header.Set(iampolicy.SitesHeader, sites)
				}
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// callSites returns the adapter functions on the stack, innermost first,
// each once, comma-separated. The middleware runs on the goroutine that
// made the call, so the stack goes back to the adapter function that made
// it (or, in a goroutine an adapter started, to its closure).
func callSites() string {
	// After signing, the middleware runs more than 64 frames below the
	// adapter function.
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	var sites []string
	for {
		f, more := frames.Next()
		if s, ok := iampolicy.Site(f.Function); ok && (len(sites) == 0 || sites[len(sites)-1] != s) {
			sites = append(sites, s)
		}
		if !more {
			break
		}
	}
	return strings.Join(sites, ",")
}
