package workspaces

import (
	"context"
	"slices"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
)

// TokenPrefix marks workspace API tokens that chatctl generates.
const TokenPrefix = "wsk_"

// Roles of a workspace user (contract section 1).
const (
	RoleAdmin  = chat.RoleAdmin
	RoleMember = chat.RoleMember
)

// RequireAdmin answers 403 forbidden unless p is an admin.
func RequireAdmin(p Principal) error {
	if !p.IsAdmin() {
		return ErrForbidden()
	}
	return nil
}

// Principal is an authenticated workspace user.
type Principal struct {
	WorkspaceID       string
	UserID            string
	Name              string
	Role              string
	PreferredLanguage string
	// Channels are the ids of the workspace's channels the user is a
	// member of.
	Channels []string
}

// MemberOf reports whether the user is a member of channelID.
func (p Principal) MemberOf(channelID string) bool {
	return channelID != "" && slices.Contains(p.Channels, channelID)
}

// IsAdmin reports whether the user is an admin of the workspace.
func (p Principal) IsAdmin() bool { return p.Role == chat.RoleAdmin }

// APIToken is a stored API token, found by the hash of the token. It
// carries its user's name, role, language and channels, so that one read
// authenticates and authorizes a request.
type APIToken struct {
	Hash              string
	WorkspaceID       string
	UserID            string
	Revoked           bool
	Name              string
	Role              string
	PreferredLanguage string
	Channels          []string
}

// TokenStore finds API tokens by hash.
type TokenStore interface {
	// APIToken returns the token stored under hash. Errors: ENotFound when
	// there is none.
	APIToken(ctx context.Context, hash string) (APIToken, error)
}

// Authenticator checks workspace API tokens.
type Authenticator struct {
	Tokens TokenStore
}

// ErrUnauthenticated is the one answer for every bad or missing credential.
func ErrUnauthenticated() error {
	return chat.Errorf(chat.EUnauthenticated, "Unauthenticated.")
}

// ErrForbidden answers a valid credential that does not open the resource.
func ErrForbidden() error {
	return chat.Errorf(chat.EForbidden, "This action is unauthorized.")
}

// BearerToken extracts the token of an Authorization header value of the
// form "Bearer <token>", or "" when the value is anything else.
func BearerToken(authorization string) string {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	token = strings.TrimLeft(token, " ")
	if !chat.WellFormedToken(token) {
		return ""
	}
	return token
}

// Authorize resolves the Authorization header value to a member of
// workspaceID. Errors: EUnauthenticated for a missing, malformed, unknown or
// revoked token; EForbidden for a valid token of another workspace (which
// includes an unknown workspace id); EUnavailable when storage failed.
func (a *Authenticator) Authorize(ctx context.Context, authorization, workspaceID string) (Principal, error) {
	token := BearerToken(authorization)
	if token == "" {
		return Principal{}, ErrUnauthenticated()
	}
	hash := chat.HashToken(token)
	rec, err := a.Tokens.APIToken(ctx, hash)
	if chat.IsCode(err, chat.ENotFound) {
		return Principal{}, ErrUnauthenticated()
	}
	if err != nil {
		return Principal{}, err
	}
	// The lookup was by hash; comparing again in constant time guards
	// against a store that matched loosely.
	if !chat.HashesEqual(rec.Hash, hash) || rec.Revoked {
		return Principal{}, ErrUnauthenticated()
	}
	if rec.WorkspaceID != workspaceID {
		return Principal{}, ErrForbidden()
	}
	role := rec.Role
	if role != chat.RoleAdmin {
		role = chat.RoleMember
	}
	return Principal{WorkspaceID: rec.WorkspaceID, UserID: rec.UserID, Name: rec.Name, Role: role,
		PreferredLanguage: rec.PreferredLanguage, Channels: rec.Channels}, nil
}
