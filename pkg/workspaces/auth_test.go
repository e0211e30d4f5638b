package workspaces_test

import (
	"context"
	"errors"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

type fakeTokens struct {
	get func(ctx context.Context, hash string) (workspaces.APIToken, error)
}

func (f fakeTokens) APIToken(ctx context.Context, hash string) (workspaces.APIToken, error) {
	return f.get(ctx, hash)
}

func TestAuthorize(t *testing.T) {
	const ws, other = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WS", "01JDZ8Y7K3Q4W5E6R7T8Y9A0XX"
	stored := map[string]workspaces.APIToken{
		chat.HashToken("wsk_good"):    {Hash: chat.HashToken("wsk_good"), WorkspaceID: ws, UserID: "U1"},
		chat.HashToken("wsk_revoked"): {Hash: chat.HashToken("wsk_revoked"), WorkspaceID: ws, UserID: "U2", Revoked: true},
		chat.HashToken("wsk_other"):   {Hash: chat.HashToken("wsk_other"), WorkspaceID: other, UserID: "U3"},
	}
	lookups := 0
	a := &workspaces.Authenticator{Tokens: fakeTokens{get: func(_ context.Context, hash string) (workspaces.APIToken, error) {
		lookups++
		if tok, ok := stored[hash]; ok {
			return tok, nil
		}
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "none")
	}}}
	for _, tc := range []struct {
		name, header, ws, code string
		lookup                 bool
	}{
		{"valid", "Bearer wsk_good", ws, "", true},
		{"scheme any case", "bearer wsk_good", ws, "", true},
		{"missing", "", ws, chat.EUnauthenticated, false},
		{"basic", "Basic dXNlcjpwYXNz", ws, chat.EUnauthenticated, false},
		{"bearer without token", "Bearer ", ws, chat.EUnauthenticated, false},
		{"token with space", "Bearer wsk good", ws, chat.EUnauthenticated, false},
		{"token with control", "Bearer wsk\x01good", ws, chat.EUnauthenticated, false},
		{"unknown", "Bearer wsk_unknown", ws, chat.EUnauthenticated, true},
		{"guest token", "Bearer gst_abcdef", ws, chat.EUnauthenticated, true},
		{"revoked", "Bearer wsk_revoked", ws, chat.EUnauthenticated, true},
		{"other workspace", "Bearer wsk_other", ws, chat.EForbidden, true},
		{"unknown workspace", "Bearer wsk_good", "not-a-workspace", chat.EForbidden, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookups = 0
			p, err := a.Authorize(context.Background(), tc.header, tc.ws)
			if got := chat.ErrorCode(err); got != tc.code {
				t.Fatalf("code %q, want %q", got, tc.code)
			}
			if tc.code == "" && (p.WorkspaceID != ws || p.UserID != "U1") {
				t.Fatalf("principal %+v, want workspace %s user U1", p, ws)
			}
			if (lookups > 0) != tc.lookup {
				t.Fatalf("store lookups %d, want lookup=%v", lookups, tc.lookup)
			}
		})
	}
}

func TestAuthorizePassesStorageFailuresThrough(t *testing.T) {
	a := &workspaces.Authenticator{Tokens: fakeTokens{get: func(context.Context, string) (workspaces.APIToken, error) {
		return workspaces.APIToken{}, chat.Unavailable(errors.New("throttled"))
	}}}
	_, err := a.Authorize(context.Background(), "Bearer wsk_good", "W")
	if !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("got %v, want %s", err, chat.EUnavailable)
	}
}
