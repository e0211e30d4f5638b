package realtime

import (
	"sync"
	"time"
)

// Sent remembers, for the changes a push left unfinished, which
// connections already got them, so that the change's retry skips those.
//
// It lives in the function's memory, so it helps only when the retry runs
// in the same execution environment. That is the usual case: a stream
// shard is read by one invocation at a time, and a push that stops before
// its deadline leaves its environment warm. A retry elsewhere (a new
// environment, a crash, a timeout after all) pushes again to connections
// that had it: pushes are at least once, and a client replaces a view by
// its message id (contract section 12), so a duplicate changes nothing it
// shows.
type Sent struct {
	// TTL is how long an unfinished change is remembered (DefaultSentTTL
	// when 0): past the stream mapping's MaximumRecordAgeInSeconds the
	// change is not retried anyway.
	TTL time.Duration

	mu     sync.Mutex
	byKey  map[string]*sentEntry
	lastGC time.Time
}

// DefaultSentTTL outlives RealtimePushFunction's MaximumRecordAgeInSeconds
// (60).
const DefaultSentTTL = 2 * time.Minute

type sentEntry struct {
	at  time.Time
	ids map[string]struct{}
}

func (s *Sent) has(key, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byKey[key]
	if e == nil {
		return false
	}
	_, ok := e.ids[id]
	return ok
}

func (s *Sent) mark(key, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.gc(now)
	if s.byKey == nil {
		s.byKey = map[string]*sentEntry{}
	}
	e := s.byKey[key]
	if e == nil {
		e = &sentEntry{at: now, ids: map[string]struct{}{}}
		s.byKey[key] = e
	}
	e.ids[id] = struct{}{}
}

// forget drops a finished change.
func (s *Sent) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byKey, key)
}

// Len is the number of changes remembered.
func (s *Sent) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}

// gc drops the changes older than TTL, at most once a second.
func (s *Sent) gc(now time.Time) {
	if now.Sub(s.lastGC) < time.Second {
		return
	}
	s.lastGC = now
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultSentTTL
	}
	for k, e := range s.byKey {
		if now.Sub(e.at) > ttl {
			delete(s.byKey, k)
		}
	}
}
