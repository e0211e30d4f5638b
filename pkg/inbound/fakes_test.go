package inbound_test

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
)

// memConfigs is an inbound.ConfigSource over a map.
type memConfigs map[string]inbound.Config

func (m memConfigs) WebhookConfig(_ context.Context, id string) (inbound.Config, error) {
	cfg, ok := m[id]
	if !ok {
		return inbound.Config{}, chat.Errorf(chat.EWebhookNotFound, "The webhook does not exist or is disabled.")
	}
	return cfg, nil
}

// memQuota is an inbound.QuotaCounter over a map; hit, when set, replaces
// the count it returns.
type memQuota struct {
	counts map[string]int64
	hit    func(count int64) int64
}

func (q *memQuota) Hit(_ context.Context, ws string, window, _ time.Time) (int64, error) {
	if q.counts == nil {
		q.counts = map[string]int64{}
	}
	k := ws + "#" + window.String()
	q.counts[k]++
	if q.hit != nil {
		return q.hit(q.counts[k]), nil
	}
	return q.counts[k], nil
}

// memStore is an inbound.Store in memory, with the conditions of the
// DynamoDB store: a live record holds its key, a fresh signature is used
// once unless by a retry with the same key, and an acceptance completes
// only a claim its request still holds.
type memStore struct {
	records  map[string]inbound.Record
	sigs     map[string]inbound.SignatureUse
	messages []chat.Message
	logs     []chat.RequestLog
}

func newMemStore() *memStore {
	return &memStore{records: map[string]inbound.Record{}, sigs: map[string]inbound.SignatureUse{}}
}

func (s *memStore) sigUsed(u *inbound.SignatureUse, withKey bool, now time.Time) bool {
	old, ok := s.sigs[u.WebhookID+"#"+u.Hash]
	if !ok || !now.Before(old.ExpiresAt) {
		return false
	}
	return !withKey || old.KeyHash != u.KeyHash
}

func (s *memStore) Claim(_ context.Context, c inbound.Claim, now time.Time) (inbound.ClaimOutcome, inbound.Record, error) {
	k := c.WebhookID + "#" + c.KeyHash
	if rec, ok := s.records[k]; ok {
		live := rec.State == inbound.StateCompleted && now.Before(rec.ExpiresAt) ||
			rec.State == inbound.StateInProgress && now.Before(rec.LockedUntil)
		if live {
			return inbound.KeyHeld, rec, nil
		}
	}
	if c.Signature != nil && s.sigUsed(c.Signature, true, now) {
		return inbound.SignatureUsed, inbound.Record{}, nil
	}
	s.records[k] = inbound.Record{State: inbound.StateInProgress, Fingerprint: c.Fingerprint, Owner: c.Owner,
		LockedUntil: c.LockedUntil, ExpiresAt: c.ExpiresAt}
	if c.Signature != nil {
		s.sigs[c.Signature.WebhookID+"#"+c.Signature.Hash] = *c.Signature
	}
	return inbound.Claimed, inbound.Record{}, nil
}

func (s *memStore) Release(_ context.Context, c inbound.Claim) error {
	k := c.WebhookID + "#" + c.KeyHash
	if rec, ok := s.records[k]; ok && rec.State == inbound.StateInProgress && rec.Owner == c.Owner {
		delete(s.records, k)
	}
	return nil
}

func (s *memStore) Accept(_ context.Context, a inbound.Acceptance, now time.Time) (inbound.AcceptOutcome, error) {
	var k string
	if c := a.Claim; c != nil {
		k = c.WebhookID + "#" + c.KeyHash
		if rec, ok := s.records[k]; !ok || rec.State != inbound.StateInProgress || rec.Owner != c.Owner {
			return inbound.ClaimLost, nil
		}
	}
	if a.Signature != nil && s.sigUsed(a.Signature, false, now) {
		return inbound.AcceptSignatureUsed, nil
	}
	if a.Claim != nil {
		rec := s.records[k]
		rec.State, rec.Status, rec.Body, rec.MessageID = inbound.StateCompleted, a.Status, a.Body, a.Message.ID
		s.records[k] = rec
	}
	if a.Signature != nil {
		s.sigs[a.Signature.WebhookID+"#"+a.Signature.Hash] = *a.Signature
	}
	s.messages = append(s.messages, a.Message)
	s.logs = append(s.logs, a.Log)
	return inbound.Accepted, nil
}

func (s *memStore) Log(_ context.Context, rec chat.RequestLog) error {
	s.logs = append(s.logs, rec)
	return nil
}

var (
	_ inbound.ConfigSource = memConfigs(nil)
	_ inbound.QuotaCounter = (*memQuota)(nil)
	_ inbound.Store        = (*memStore)(nil)
)
