package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Authorizer resolves a request's Authorization header to a member of a
// workspace.
type Authorizer interface {
	Authorize(ctx context.Context, authorization, workspaceID string) (workspaces.Principal, error)
}

// WorkspaceHandler is a handler of a workspace endpoint, called only for an
// authorized member of the path's workspace.
type WorkspaceHandler func(w http.ResponseWriter, r *http.Request, p workspaces.Principal)

// RequireWorkspace is the one gate of every workspace endpoint: the exact
// 401 for any missing or bad credential, 403 for another workspace's token.
func RequireWorkspace(auth Authorizer, h WorkspaceHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The adapter splits header values on commas, and a repeated header
		// arrives as several values: rejoined, a second credential makes the
		// value malformed, so it is refused rather than half-read.
		authz := strings.Join(r.Header.Values("Authorization"), ",")
		p, err := auth.Authorize(r.Context(), authz, r.PathValue("workspace_id"))
		if err != nil {
			Error(w, r, err)
			return
		}
		h(w, r, p)
	})
}

// Paging is a validated page request: the storage position to start after
// and the page size.
type Paging struct {
	After string
	Limit int
	scope string
	codec Cursors
}

// Cursors makes and reads the lists' cursors: a *cursor.Codec, which
// the constructors that page build (cursor.Of).
type Cursors interface {
	// Encode returns the cursor of position in scope.
	Encode(scope, position string) string
	// Decode returns the position that token carries for scope. Errors:
	// EValidation on "cursor".
	Decode(scope, token string) (string, error)
	// Fits reports whether Decode accepts the cursor Encode makes of
	// position.
	Fits(position string) bool
}

// ReadPaging validates the limit and cursor query parameters; scope binds
// the cursor to one list of one workspace.
func ReadPaging(r *http.Request, codec Cursors, scope string) (Paging, error) {
	q, malformed := pagingQuery(r.URL.RawQuery)
	p := Paging{Limit: workspaces.DefaultLimit, scope: scope, codec: codec}
	var v chat.Validation
	if vals, ok := q["limit"]; ok {
		n, err := strconv.Atoi(vals[0])
		if err != nil || n < 1 || n > workspaces.MaxLimit || len(vals) > 1 || malformed["limit"] {
			v.Add("limit", "The limit field must be an integer between 1 and 100.")
		}
		p.Limit = n
	}
	if vals, ok := q["cursor"]; ok {
		if len(vals) > 1 || malformed["cursor"] {
			v.Add("cursor", "The cursor is invalid.")
		} else if vals[0] != "" {
			after, err := codec.Decode(scope, vals[0])
			if err != nil {
				v.Add("cursor", "The cursor is invalid.")
			}
			p.After = after
		}
	}
	return p, v.Err()
}

// pagingQuery reads the query string piece by piece. url.ParseQuery drops
// a piece it cannot decode (a bad %-escape, a ';'), which would quietly turn
// a bad limit into the default; here such a piece marks its key malformed.
func pagingQuery(raw string) (url.Values, map[string]bool) {
	q, malformed := url.Values{}, map[string]bool{}
	for _, piece := range strings.Split(raw, "&") {
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			continue // not a key of ours
		}
		val, err := url.QueryUnescape(v)
		if err != nil || strings.Contains(v, ";") {
			malformed[key] = true
		}
		q[key] = append(q[key], val)
	}
	return q, malformed
}

// RequireAdminWebhook is RequireWorkspace for a workspace admin (403 for
// any other caller) and the webhook the path's {id} names, read by lookup
// in the caller's workspace: an id that is not one, or one lookup does not
// find (ENotFound), is 404 "The webhook does not exist.". The decisions
// come in that order, before h reads anything of the request.
func RequireAdminWebhook[W any](auth Authorizer, lookup func(ctx context.Context, workspaceID, id string) (W, error),
	h func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, id string, wh W)) http.Handler {
	return RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		if err := workspaces.RequireAdmin(p); err != nil {
			Error(w, r, err)
			return
		}
		notFound := chat.Errorf(chat.ENotFound, "The webhook does not exist.")
		id := r.PathValue("id")
		if !chat.ValidID(id) {
			Error(w, r, notFound)
			return
		}
		wh, err := lookup(r.Context(), p.WorkspaceID, id)
		if err != nil {
			if chat.IsCode(err, chat.ENotFound) {
				err = notFound
			}
			Error(w, r, err)
			return
		}
		h(w, r, p, id, wh)
	})
}
