// Package glossaryapi is the HTTP face of a workspace's glossary:
// GET /api/v1/workspaces/{workspace_id}/glossary (any user of the
// workspace) and PUT (an admin; replaces it, audited).
package glossaryapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/glossarystore"
	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Glossaries is what the handlers need of glossary.Service.
type Glossaries interface {
	Get(ctx context.Context, p workspaces.Principal) (glossary.Stored, error)
	Replace(ctx context.Context, p workspaces.Principal, g glossary.Glossary) (glossary.Stored, error)
}

type fixedView struct {
	Term         string            `json:"term"`
	Translations map[string]string `json:"translations"`
}

type view struct {
	Keep      []string    `json:"keep"`
	Fixed     []fixedView `json:"fixed"`
	UpdatedAt *string     `json:"updated_at"`
}

func viewOf(s glossary.Stored) any {
	v := view{Keep: s.Keep, Fixed: make([]fixedView, 0, len(s.Fixed))}
	if v.Keep == nil {
		v.Keep = []string{}
	}
	for _, f := range s.Fixed {
		v.Fixed = append(v.Fixed, fixedView(f))
	}
	if !s.UpdatedAt.IsZero() {
		at := chat.FormatTime(s.UpdatedAt)
		v.UpdatedAt = &at
	}
	return struct {
		Data view `json:"data"`
	}{v}
}

// GetHandler serves GET .../glossary: 200 with the glossary, empty lists
// and updated_at null before the first PUT.
func GetHandler(auth httpapi.Authorizer, g Glossaries) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		s, err := g.Get(r.Context(), p)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, viewOf(s))
	})
}

// PutHandler serves PUT .../glossary (admin): the body replaces the
// glossary; 200 with it.
func PutHandler(auth httpapi.Authorizer, g Glossaries) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		if err := workspaces.RequireAdmin(p); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		obj, err := httpapi.ReadLargeObject(r, glossary.MaxBodyBytes)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		in, err := Decode(obj)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		s, err := g.Replace(r.Context(), p, in)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, viewOf(s))
	})
}

// Decode reads a glossary object: keep, an array of strings, and fixed, an
// array of {term, translations}; either may be absent or null (empty).
// Errors: 422 on the field whose type is wrong.
func Decode(obj httpapi.Object) (glossary.Glossary, error) {
	var g glossary.Glossary
	var v chat.Validation
	if raw, ok := obj["keep"]; ok && !obj.IsNull("keep") {
		if err := json.Unmarshal(raw, &g.Keep); err != nil {
			v.Add("keep", "The keep field must be an array of strings.")
		}
	}
	if raw, ok := obj["fixed"]; ok && !obj.IsNull("fixed") {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			v.Add("fixed", "The fixed field must be an array of objects.")
		}
		for _, item := range items {
			var f struct {
				Term         *string           `json:"term"`
				Translations map[string]string `json:"translations"`
			}
			if err := json.Unmarshal(item, &f); err != nil || f.Term == nil {
				v.Add("fixed", "Each fixed entry must be an object with a string term and a translations object of strings.")
				break
			}
			g.Fixed = append(g.Fixed, glossary.Fixed{Term: *f.Term, Translations: f.Translations})
		}
	}
	return g, v.Err()
}

// service builds the glossary service on a.
func service(a *app.App) *glossary.Service {
	return &glossary.Service{Store: glossarystore.New(a.DB, a.Table), IDs: chat.NewIDs(), Now: a.Now}
}

// Get builds GetGlossaryFunction.
func Get(a *app.App) (http.Handler, error) {
	return GetHandler(a.Authenticator(), service(a)), nil
}

// Put builds PutGlossaryFunction.
func Put(a *app.App) (http.Handler, error) {
	return PutHandler(a.Authenticator(), service(a)), nil
}
