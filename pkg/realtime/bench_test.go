package realtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/realtime"
)

// BenchmarkFanOut: one message's insert then its translations landing,
// pushed to 100 connections in 5 languages (the push's own work: grouping,
// views, encoding; the store and sender are in-memory).
func BenchmarkFanOut(b *testing.B) {
	langs := []string{"en", "es", "fr", "de", "ja"}
	store := &fakeStore{}
	for i := range 100 {
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%03d", i), ChannelID: chanID,
			Kind: realtime.KindMember, Language: langs[i%5], ExpiresAt: t0.Add(time.Hour)})
	}
	tr := &fakeTranslations{stored: map[string]string{"es": "hola", "fr": "salut", "de": "hallo", "ja": "こんにちは"}}
	p := &realtime.Pusher{Store: store, Translations: tr, Sender: discard{}, Encode: encode, Now: func() time.Time { return t0 }}
	ctx := context.Background()
	stored := realtime.Change{Kind: realtime.MessageStored, Message: message()}
	landed := realtime.Change{Kind: realtime.MessageChanged, Message: message("es", "fr", "de", "ja"), Before: message()}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Push(ctx, stored)
		_ = p.Push(ctx, landed)
	}
}

type discard struct{}

func (discard) Send(context.Context, string, []byte) error { return nil }
func (discard) Close(context.Context, string) error        { return nil }
