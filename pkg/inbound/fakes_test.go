package inbound_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
// the count a request would bring its window to.
type memQuota struct {
	counts map[string]int64
	hit    func(count int64) int64
}

func (q *memQuota) Take(_ context.Context, ws string, window time.Time, limit int, _ time.Time) (bool, int, error) {
	if q.counts == nil {
		q.counts = map[string]int64{}
	}
	k := ws + "#" + window.String()
	n := q.counts[k] + 1
	if q.hit != nil {
		n = q.hit(n)
	}
	if n > int64(limit) {
		return false, 0, nil
	}
	q.counts[k]++
	return true, limit - int(n), nil
}

// memStore is an inbound.Store in memory, with the conditions of the
// DynamoDB store: a live record holds its key, and a fresh signature is
// used once, unless again by a request with the same key. acceptErr and
// logErr, when set, make those writes fail without writing; sigLogErr
// fails only the log writes that carry a signature.
type memStore struct {
	records   map[string]inbound.Record
	sigs      map[string]inbound.SignatureUse
	messages  []chat.Message
	logs      []chat.RequestLog
	acceptErr error
	logErr    error
	sigLogErr error
}

func newMemStore() *memStore {
	return &memStore{records: map[string]inbound.Record{}, sigs: map[string]inbound.SignatureUse{}}
}

func (s *memStore) sigUsed(u *inbound.SignatureUse, now time.Time) bool {
	old, ok := s.sigs[u.WebhookID+"#"+u.Hash]
	if !ok || !now.Before(old.ExpiresAt) {
		return false
	}
	return u.KeyHash == "" || old.KeyHash != u.KeyHash
}

func (s *memStore) Accept(_ context.Context, a inbound.Acceptance, now time.Time) (inbound.Outcome, inbound.Record, error) {
	if s.acceptErr != nil {
		return 0, inbound.Record{}, s.acceptErr
	}
	if a.Signature != nil && s.sigUsed(a.Signature, now) {
		return inbound.SignatureUsed, inbound.Record{}, nil
	}
	if k := a.Key; k != nil {
		if rec, ok := s.records[k.WebhookID+"#"+k.KeyHash]; ok {
			live := rec.State == inbound.StateCompleted && now.Before(rec.ExpiresAt) ||
				rec.State == inbound.StateInProgress && now.Before(rec.LockedUntil)
			if live {
				return inbound.KeyHeld, rec, nil
			}
		}
		s.records[k.WebhookID+"#"+k.KeyHash] = inbound.Record{State: inbound.StateCompleted, Fingerprint: k.Fingerprint,
			ExpiresAt: k.ExpiresAt, Status: a.Status, Body: a.Body, MessageID: a.Message.ID}
	}
	if a.Signature != nil {
		s.sigs[a.Signature.WebhookID+"#"+a.Signature.Hash] = *a.Signature
	}
	s.messages = append(s.messages, a.Message)
	s.logs = append(s.logs, a.Log)
	return inbound.Written, inbound.Record{}, nil
}

func (s *memStore) Log(_ context.Context, rec chat.RequestLog, sig *inbound.SignatureUse, now time.Time) (inbound.Outcome, error) {
	if s.logErr != nil {
		return 0, s.logErr
	}
	if sig != nil && s.sigLogErr != nil {
		return 0, s.sigLogErr
	}
	if sig != nil {
		if s.sigUsed(sig, now) {
			return inbound.SignatureUsed, nil
		}
		if !sig.CheckOnly {
			s.sigs[sig.WebhookID+"#"+sig.Hash] = *sig
		}
	}
	s.logs = append(s.logs, rec)
	return inbound.Written, nil
}

var (
	_ inbound.ConfigSource = memConfigs(nil)
	_ inbound.QuotaCounter = (*memQuota)(nil)
	_ inbound.Store        = (*memStore)(nil)
)

// hashOf is the hash an idempotency key is stored under.
func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func asError(err error, target **chat.Error) bool { return errors.As(err, target) }

// ThreadRoot finds no thread: the tests of this file post roots.
func (s *memStore) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
