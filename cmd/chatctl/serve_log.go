package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// demoLogFile is where chatctl serve --demo writes the service's log,
// relative to the directory it runs in (make run: the repository's root,
// whose .gitignore holds /.run/).
const demoLogFile = ".run/serve.log"

// serveLogger returns chatctl serve's logger. Without a file it writes
// every record as a JSON line on console, as a Lambda function does. With
// one (the demo's), every record goes there as a JSON line and only
// warnings and errors reach console, as text, so that the demo's steps and
// the events its receiver prints are not drowned by a line per request.
// The returned func closes the file.
func serveLogger(console io.Writer, file string) (*slog.Logger, func(), error) {
	if file == "" {
		return slog.New(slog.NewJSONHandler(console, nil)), func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	h := teeHandler{slog.NewJSONHandler(f, nil), slog.NewTextHandler(console, &slog.HandlerOptions{Level: slog.LevelWarn})}
	return slog.New(h), func() { _ = f.Close() }, nil
}

// teeHandler hands each record to both of its handlers, each at its own
// level.
type teeHandler [2]slog.Handler

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t[0].Enabled(ctx, l) || t[1].Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var first error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t[0].WithAttrs(as), t[1].WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t[0].WithGroup(name), t[1].WithGroup(name)}
}
