package webhooks

import (
	"context"
	"net/netip"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Service manages a workspace's webhooks. Every method that changes a
// webhook makes one store write (plus one read for those that name a
// webhook by id), which also records the audit event.
type Service struct {
	Store Store
	IDs   IDGen
	Now   chat.Clock
	// Allow holds OUTBOUND_ALLOW_CIDRS: target ranges exempt from the
	// blocked list, where http is also accepted.
	Allow []netip.Prefix
}

// maxAttempts bounds the read-modify-write retries of a change that lost a
// race with another change of the same webhook.
const maxAttempts = 3

func errNotFound() error { return chat.Errorf(chat.ENotFound, "The webhook does not exist.") }

// fixedToken serves one token record already read, so that the one
// authenticator of the service judges it.
type fixedToken struct{ tok *workspaces.APIToken }

func (f fixedToken) APIToken(context.Context, string) (workspaces.APIToken, error) {
	if f.tok == nil {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no such token")
	}
	return *f.tok, nil
}

// Authorize resolves an admin's credential and webhook id of kind in
// workspaceID, with one read for both. Errors: EUnauthenticated,
// EForbidden (another workspace, or not an admin), ENotFound (no such
// webhook in the workspace), EUnavailable.
func (s *Service) Authorize(ctx context.Context, authorization, workspaceID string, kind Kind, id string) (workspaces.Principal, Webhook, error) {
	token := workspaces.BearerToken(authorization)
	if token == "" {
		return workspaces.Principal{}, Webhook{}, workspaces.ErrUnauthenticated()
	}
	key := id
	if !chat.ValidID(id) {
		key = "" // never build a storage key from a malformed id
	}
	tok, wh, err := s.Store.Load(ctx, chat.HashToken(token), kind, key)
	if err != nil {
		return workspaces.Principal{}, Webhook{}, err
	}
	p, err := (&workspaces.Authenticator{Tokens: fixedToken{tok}}).Authorize(ctx, authorization, workspaceID)
	if err != nil {
		return p, Webhook{}, err
	}
	if err := workspaces.RequireAdmin(p); err != nil {
		return p, Webhook{}, err
	}
	if wh == nil || wh.WorkspaceID != workspaceID || wh.Kind != kind {
		return p, Webhook{}, errNotFound()
	}
	return p, *wh, nil
}

func (s *Service) event(p workspaces.Principal, w Webhook, action string, changes []string, now time.Time) AuditEvent {
	if changes == nil {
		changes = []string{}
	}
	return AuditEvent{ID: s.IDs.New(now), WorkspaceID: p.WorkspaceID, ActorType: chat.AuthorUser, ActorID: p.UserID,
		Action: action, TargetType: w.Kind.TargetType(), TargetID: w.ID, Changes: changes, CreatedAt: now,
		ExpiresAt: now.Add(chat.AuditRetention)}
}

// newSecrets makes the secrets of kind: at least 256 bits from crypto/rand
// each, with the prefixes chatctl's fixtures use.
func newSecrets(kind Kind) Secrets {
	sec := Secrets{SigningSecret: chat.NewToken(chat.SigningSecretPrefix)}
	if kind == Inbound {
		sec.Secret = chat.NewToken(chat.SecretPrefix)
	}
	return sec
}

// Create validates obj as a new webhook of kind and stores it for admin p.
// Errors: EForbidden for a member; EValidation; EUnavailable.
func (s *Service) Create(ctx context.Context, p workspaces.Principal, kind Kind, obj jsonbody.Object) (Webhook, Secrets, error) {
	if err := workspaces.RequireAdmin(p); err != nil {
		return Webhook{}, Secrets{}, err
	}
	now := s.Now().UTC()
	w := Webhook{Kind: kind, WorkspaceID: p.WorkspaceID, Enabled: true, Active: true, CreatedAt: now, UpdatedAt: now}
	changes, err := decode(kind, obj, &w, false, s.Allow)
	if err != nil {
		return Webhook{}, Secrets{}, err
	}
	w.ID = s.IDs.New(now)
	sec := newSecrets(kind)
	w.SigningSecret = sec.SigningSecret
	if kind == Inbound {
		w.SecretHash = chat.HashToken(sec.Secret)
	}
	if err := s.Store.Create(ctx, w, s.event(p, w, ActionCreated, changes, now)); err != nil {
		return Webhook{}, Secrets{}, err
	}
	return w, sec, nil
}

// retry runs a read-modify-write step from old, re-reading the webhook
// when another change won the race. step returns the webhook to answer.
func (s *Service) retry(ctx context.Context, old Webhook, step func(old Webhook) (Webhook, error)) (Webhook, error) {
	for attempt := 1; ; attempt++ {
		w, err := step(old)
		if !chat.IsCode(err, chat.EConflict) {
			return w, err
		}
		if attempt == maxAttempts {
			return Webhook{}, chat.Unavailable(err)
		}
		cur, err := s.Store.Get(ctx, old.Kind, old.ID)
		if err != nil {
			return Webhook{}, err
		}
		if cur == nil || cur.WorkspaceID != old.WorkspaceID {
			return Webhook{}, errNotFound()
		}
		old = *cur
	}
}

// Change applies a partial update to old for admin p (from Authorize):
// fields absent from obj are kept, unknown fields ignored. A patch that
// changes nothing writes nothing. Errors: EValidation; ENotFound when the
// webhook was deleted meanwhile; EUnavailable.
func (s *Service) Change(ctx context.Context, p workspaces.Principal, old Webhook, obj jsonbody.Object) (Webhook, error) {
	next := old
	if _, err := decode(old.Kind, obj, &next, true, s.Allow); err != nil {
		return Webhook{}, err
	}
	return s.retry(ctx, old, func(old Webhook) (Webhook, error) {
		next := old
		changes, _ := decode(old.Kind, obj, &next, true, s.Allow)
		if len(changes) == 0 {
			return old, nil
		}
		now := s.Now().UTC()
		next.UpdatedAt = now
		return next, s.Store.Update(ctx, old, next, s.event(p, old, ActionUpdated, changes, now))
	})
}

// Rotate replaces old's secrets with new ones for admin p: the replaced
// ones keep working until now + RotationWindow. Rotating again within the
// window replaces the previous secret with the one just replaced; the
// older one stops working at once. Errors: as Change.
func (s *Service) Rotate(ctx context.Context, p workspaces.Principal, old Webhook) (Webhook, Secrets, error) {
	var sec Secrets
	w, err := s.retry(ctx, old, func(old Webhook) (Webhook, error) {
		now := s.Now().UTC()
		sec = newSecrets(old.Kind)
		sec.PreviousExpiresAt = now.Add(RotationWindow)
		next := old
		next.PreviousSigningSecret, next.SigningSecret = old.SigningSecret, sec.SigningSecret
		changes := []string{"signing_secret"}
		if old.Kind == Inbound {
			next.PreviousSecretHash, next.SecretHash = old.SecretHash, chat.HashToken(sec.Secret)
			changes = []string{"secret", "signing_secret"}
		}
		next.PreviousExpiresAt = sec.PreviousExpiresAt
		next.UpdatedAt = now
		return next, s.Store.Update(ctx, old, next, s.event(p, old, ActionRotated, changes, now))
	})
	if err != nil {
		return Webhook{}, Secrets{}, err
	}
	return w, sec, nil
}

// Delete removes old for admin p. Errors: as Change.
func (s *Service) Delete(ctx context.Context, p workspaces.Principal, old Webhook) error {
	_, err := s.retry(ctx, old, func(old Webhook) (Webhook, error) {
		now := s.Now().UTC()
		return old, s.Store.Delete(ctx, old, s.event(p, old, ActionDeleted, nil, now), now)
	})
	return err
}

// AuditEvents lists the workspace's audit trail for admin p, newest first.
func (s *Service) AuditEvents(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[AuditEvent], error) {
	if err := workspaces.RequireAdmin(p); err != nil {
		return chat.Page[AuditEvent]{}, err
	}
	return s.Store.AuditEvents(ctx, p.WorkspaceID, after, limit, s.Now())
}
