package guestpage

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/web"
)

var guestPage = template.Must(template.ParseFS(web.Files, "guest.html"))

// guestAssets are the page's static files by name, with their types.
var guestAssets = map[string]string{
	"guest.js":    "text/javascript; charset=utf-8",
	"guest.css":   "text/css; charset=utf-8",
	"favicon.svg": "image/svg+xml",
}

// GuestPageHandler serves GET /rooms/{room_id}, the guest page, and GET
// /assets/{file}, its script and stylesheet. The page needs no credential:
// it only tells the room's id and the realtime API's URL to its script,
// which joins, reads and posts through the guest API. realtimeURL is the
// WebSocket API's URL (wss://...), or "" for this origin's /realtime
// (chatctl serve). bucketOrigin is the attachments bucket's origin
// (BucketOrigin), where the page uploads files and shows images from, or
// "" for none. Every answer carries a strict Content-Security-Policy:
// nothing loads but this origin's script and stylesheet and the bucket's
// images, and the only connections are to this origin, the bucket and the
// realtime API. A room id that is not a ULID, or an unknown file, is a
// JSON 404.
func GuestPageHandler(realtimeURL, bucketOrigin string) http.Handler {
	connect, img := "'self'", "'self'"
	if u, err := url.Parse(bucketOrigin); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		bucketOrigin == u.Scheme+"://"+u.Host {
		connect += " " + bucketOrigin
		img += " " + bucketOrigin
	}
	if u, err := url.Parse(realtimeURL); err == nil && (u.Scheme == "wss" || u.Scheme == "ws") && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	} else {
		realtimeURL = ""
	}
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + img + "; connect-src " + connect +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	secure := func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rooms/{room_id}", func(w http.ResponseWriter, r *http.Request) {
		roomID := r.PathValue("room_id")
		if !chat.ValidID(roomID) {
			httpapi.Error(w, r, chat.Errorf(chat.ENotFound, "No such room."))
			return
		}
		var b bytes.Buffer
		// The URL was checked above (ws or wss with a host): html/template
		// would otherwise refuse a scheme it does not know as safe.
		page := struct {
			RoomID      string
			RealtimeURL template.URL
		}{roomID, template.URL(realtimeURL)}
		if err := guestPage.Execute(&b, page); err != nil {
			httpapi.Error(w, r, chat.Internal(err))
			return
		}
		secure(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		_, _ = w.Write(b.Bytes())
	})
	mux.HandleFunc("GET /assets/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		typ, ok := guestAssets[name]
		if !ok {
			httpapi.Error(w, r, chat.Errorf(chat.ENotFound, "No such file."))
			return
		}
		b, err := web.Files.ReadFile(name)
		if err != nil {
			httpapi.Error(w, r, chat.Internal(err))
			return
		}
		secure(w)
		w.Header().Set("Content-Type", typ)
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
	return mux
}
