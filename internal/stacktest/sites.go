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
// goroutine's stack, which the local IAM check records with the call.
func siteOption(st *middleware.Stack) error {
	return st.Build.Add(middleware.BuildMiddlewareFunc("ChatCallSites",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				if sites := callSites(); sites != "" {
					req.Header.Set(iampolicy.SitesHeader, sites)
				}
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
}

// callSites returns the adapter functions on the stack, innermost first,
// each once, comma-separated. The middleware runs on the goroutine that
// made the call, so the stack goes back to the adapter function that made
// it (or, in a goroutine an adapter started, to its closure).
func callSites() string {
	pcs := make([]uintptr, 64)
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
