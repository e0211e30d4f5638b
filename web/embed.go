// Package web holds the guest page's static files (contract section 12),
// embedded in the binary that serves them: one HTML page, its stylesheet
// and its script, with no build step and nothing third-party.
package web

import "embed"

// Files are guest.html, guest.css, guest.js and favicon.svg.
//
//go:embed guest.html guest.css guest.js favicon.svg
var Files embed.FS
