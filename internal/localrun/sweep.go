package localrun

import (
	"context"
	"log/slog"
	"time"

	"github.com/chatbridge/chat/pkg/relay"
)

// SweepEvery does locally what TranslationSweepFunction's schedule does in
// AWS: it runs s every interval until ctx ends.
func SweepEvery(ctx context.Context, s *relay.Sweep, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		if _, err := s.Run(ctx); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "local sweep", "error", err.Error())
		}
	}
}
