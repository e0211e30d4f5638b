package glossary

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Stored is a workspace's glossary as stored.
type Stored struct {
	Glossary
	// UpdatedAt is when it was last replaced; zero before the first PUT.
	UpdatedAt time.Time
}

// Store keeps glossaries.
type Store interface {
	// Get returns the workspace's glossary, the empty one when it has none.
	// Errors: EUnavailable.
	Get(ctx context.Context, workspaceID string) (Stored, error)
	// Replace stores g (with its Version) as the workspace's glossary at
	// now, with ev, in one atomic write. Errors: EUnavailable.
	Replace(ctx context.Context, workspaceID string, g Glossary, now time.Time, ev chat.AuditEvent) error
}

// Service reads and replaces workspaces' glossaries (contract: any user
// reads, an admin replaces, and the replacement is audited).
type Service struct {
	Store Store
	IDs   *chat.IDs
	Now   chat.Clock
}

// Get returns p's workspace's glossary.
func (s *Service) Get(ctx context.Context, p workspaces.Principal) (Stored, error) {
	return s.Store.Get(ctx, p.WorkspaceID)
}

// Replace validates g and stores it as p's workspace's glossary, audited
// as glossary.updated with the lists that changed. Errors: EForbidden for a
// member who is not an admin; EValidation; the store's.
func (s *Service) Replace(ctx context.Context, p workspaces.Principal, g Glossary) (Stored, error) {
	if err := workspaces.RequireAdmin(p); err != nil {
		return Stored{}, err
	}
	if err := Validate(g); err != nil {
		return Stored{}, err
	}
	g = WithVersion(g)
	old, err := s.Store.Get(ctx, p.WorkspaceID)
	if err != nil {
		return Stored{}, err
	}
	var changes []string
	oldKeep := WithVersion(Glossary{Keep: old.Keep}).Version
	oldFixed := WithVersion(Glossary{Fixed: old.Fixed}).Version
	if WithVersion(Glossary{Keep: g.Keep}).Version != oldKeep {
		changes = append(changes, "keep")
	}
	if WithVersion(Glossary{Fixed: g.Fixed}).Version != oldFixed {
		changes = append(changes, "fixed")
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ev := chat.AuditEvent{ID: s.IDs.New(now), WorkspaceID: p.WorkspaceID, ActorType: chat.AuthorUser, ActorID: p.UserID,
		Action: "glossary.updated", TargetType: "glossary", TargetID: p.WorkspaceID, Changes: changes, CreatedAt: now,
		ExpiresAt: now.Add(chat.AuditRetention)}
	if changes == nil {
		ev.Changes = []string{}
	}
	if err := s.Store.Replace(ctx, p.WorkspaceID, g, now, ev); err != nil {
		return Stored{}, err
	}
	return Stored{Glossary: g, UpdatedAt: now}, nil
}
