// Package web holds the guest page's static files (contract section 12),
// embedded in the binary that serves them: one HTML page, its stylesheet
// and its script, with no build step and nothing third-party.
package web

import "embed"

// Files are guest.html, guest.css, guest.js and icon.svg (the page's icon,
// served so that a browser does not ask for /favicon.ico).
//
//go:embed guest.html guest.css guest.js icon.svg
var Files embed.FS
