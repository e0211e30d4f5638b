// Package memstore is an in-memory implementation of the storage
// interfaces of the join, workspace-list and inbound paths, for benchmarks
// that measure the code without I/O. It keeps the semantics that matter to
// those paths (conditional claims, one message per acceptance) and nothing
// more; adapter behaviour is tested against moto, never against this.
package memstore

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

var (
	_ rooms.JoinStore         = (*Store)(nil)
	_ inbound.ConfigSource    = (*Store)(nil)
	_ inbound.QuotaCounter    = (*Store)(nil)
	_ inbound.Store           = (*Store)(nil)
	_ workspaces.TokenStore   = (*Store)(nil)
	_ workspaces.WebhookStore = (*Store)(nil)
)

// Store holds everything in maps.
type Store struct {
	mu       sync.Mutex
	Rooms    map[string]chat.Room
	clients  map[string]rooms.PriorGuest
	Guests   int
	Configs  map[string]inbound.Config
	quota    map[string]int64
	idem     map[string]inbound.Record
	sigs     map[string]bool
	Messages int
	Logs     int
	Tokens   map[string]workspaces.APIToken
	Outbound map[string][]chat.OutboundWebhook
}

// New returns an empty Store.
func New() *Store {
	return &Store{
		Rooms: map[string]chat.Room{}, clients: map[string]rooms.PriorGuest{}, Configs: map[string]inbound.Config{},
		quota: map[string]int64{}, idem: map[string]inbound.Record{}, sigs: map[string]bool{},
		Tokens: map[string]workspaces.APIToken{}, Outbound: map[string][]chat.OutboundWebhook{},
	}
}

// LoadJoin implements rooms.JoinStore.
func (s *Store) LoadJoin(_ context.Context, roomID, clientKey string) (rooms.JoinState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.Rooms[roomID]
	if !ok {
		return rooms.JoinState{}, rooms.ErrUnavailable()
	}
	if p, ok := s.clients[roomID+"/"+clientKey]; ok && clientKey != "" {
		return rooms.JoinState{Room: r, Prior: &p}, nil
	}
	return rooms.JoinState{Room: r}, nil
}

// CommitJoin implements rooms.JoinStore.
func (s *Store) CommitJoin(_ context.Context, j rooms.Join) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.Guest.ClientID != "" {
		s.clients[j.Room.ID+"/"+j.Guest.ClientID] = rooms.PriorGuest{GuestID: j.Guest.ID, TokenHash: j.TokenHash, CreatedAt: j.Guest.CreatedAt}
	}
	s.Guests++
	return nil
}

// WebhookConfig implements inbound.ConfigSource.
func (s *Store) WebhookConfig(_ context.Context, id string) (inbound.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.Configs[id]
	if !ok {
		return inbound.Config{}, chat.Errorf(chat.EWebhookNotFound, "no such webhook")
	}
	return c, nil
}

// Take implements inbound.QuotaCounter.
func (s *Store) Take(_ context.Context, ws string, window time.Time, limit int, _ time.Time) (bool, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := ws + window.String()
	if s.quota[k] >= int64(limit) {
		return false, 0, nil
	}
	s.quota[k]++
	return true, limit - int(s.quota[k]), nil
}

// Accept implements inbound.Store.
func (s *Store) Accept(_ context.Context, a inbound.Acceptance, now time.Time) (inbound.Outcome, inbound.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Signature != nil && s.sigs[a.Signature.WebhookID+"/"+a.Signature.Hash] {
		return inbound.SignatureUsed, inbound.Record{}, nil
	}
	if k := a.Key; k != nil {
		if r, ok := s.idem[k.WebhookID+"/"+k.KeyHash]; ok && r.ExpiresAt.After(now) {
			return inbound.KeyHeld, r, nil
		}
		s.idem[k.WebhookID+"/"+k.KeyHash] = inbound.Record{State: inbound.StateCompleted, Fingerprint: k.Fingerprint,
			ExpiresAt: k.ExpiresAt, Status: a.Status, Body: a.Body, MessageID: a.Message.ID}
	}
	if a.Signature != nil {
		s.sigs[a.Signature.WebhookID+"/"+a.Signature.Hash] = true
	}
	s.Messages++
	s.Logs++
	return inbound.Written, inbound.Record{}, nil
}

// ThreadRoot implements inbound.Store: the store keeps no messages, only
// their count, so no thread can be found.
func (s *Store) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "The thread id does not name a message of this channel.")
}

// Log implements inbound.Store.
func (s *Store) Log(_ context.Context, _ chat.RequestLog, sig *inbound.SignatureUse, _ time.Time) (inbound.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig != nil && !sig.CheckOnly {
		s.sigs[sig.WebhookID+"/"+sig.Hash] = true
	}
	s.Logs++
	return inbound.Written, nil
}

// APIToken implements workspaces.TokenStore.
func (s *Store) APIToken(_ context.Context, hash string) (workspaces.APIToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.Tokens[hash]
	if !ok {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no such token")
	}
	return t, nil
}

// OutboundWebhooks implements workspaces.WebhookStore; positions are ids.
func (s *Store) OutboundWebhooks(_ context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.Outbound[ws]
	i := sort.Search(len(all), func(i int) bool { return all[i].ID > after })
	end := min(i+limit, len(all))
	p := chat.Page[chat.OutboundWebhook]{Items: all[i:end]}
	for _, o := range p.Items {
		p.After = append(p.After, o.ID)
	}
	if end < len(all) {
		p.Next = all[end-1].ID
	}
	return p, nil
}

// SupportWebhooks implements workspaces.WebhookStore (none are kept).
func (s *Store) SupportWebhooks(context.Context, string, string, int) (chat.Page[chat.SupportWebhook], error) {
	return chat.Page[chat.SupportWebhook]{}, nil
}
