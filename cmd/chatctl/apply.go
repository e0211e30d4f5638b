package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/fixturestore"
	"github.com/chatbridge/chat/pkg/fixture"
)

// maxFixtureBytes bounds a fixture document read from a file or stdin.
const maxFixtureBytes = 16 << 20

// runApply implements `chatctl apply FILE|-`: it reads a fixture document
// (contract section 8) from FILE or, for "-", from stdin, completes and
// validates it, applies it to TABLE_NAME, and prints the completed document
// as indented JSON on stdout. That output holds every generated API token
// and webhook secret in clear, and is the only place they are ever shown:
// storage keeps tokens and static secrets as hashes. An invalid document is
// reported with every problem by its JSON path and writes nothing.
func runApply(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprint(stderr, usage)
		return errors.New("apply: want exactly one argument, FILE or - for stdin")
	}
	name := args[0]
	b, err := readFixture(name, stdin)
	if err != nil {
		return err
	}
	now := time.Now()
	// Validate before touching the environment: a bad document is reported
	// the same with or without a reachable table.
	d, err := fixture.Parse(b)
	if err != nil {
		return fixtureError(name, err)
	}
	if err := d.Complete(chat.NewIDs(), now); err != nil {
		return fixtureError(name, err)
	}
	localEnv()
	a, _, err := app.FromEnvWith(ctx, adminAWS)
	if err != nil {
		return err
	}
	if _, err := applyFixture(ctx, fixturestore.New(a.DB, a.Table), d, now); err != nil {
		return fixtureError(name, err)
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("apply: print the document: %w", err)
	}
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return fmt.Errorf("apply: print the document: %w", err)
	}
	fmt.Fprintf(stderr, "chatctl: applied %d workspace(s) to table %s; the document above holds API tokens and secrets in clear\n",
		len(d.Workspaces), a.Table)
	return nil
}

// applyFixture completes d (a no-op for an already completed document)
// and applies it to store at now; it returns d. `chatctl serve --demo` can
// apply the embedded demo with it.
func applyFixture(ctx context.Context, store *fixturestore.Store, d *fixture.Document, now time.Time) (*fixture.Document, error) {
	if err := d.Complete(chat.NewIDs(), now); err != nil {
		return nil, err
	}
	if err := store.Apply(ctx, d, now); err != nil {
		return nil, err
	}
	return d, nil
}

// readFixture reads the document from the file name, or stdin for "-".
func readFixture(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		defer f.Close()
		r = f
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, maxFixtureBytes+1))
	if err != nil {
		return nil, fmt.Errorf("apply: read %s: %w", name, err)
	}
	if n > maxFixtureBytes {
		return nil, fmt.Errorf("apply: %s is larger than %d bytes", name, maxFixtureBytes)
	}
	return buf.Bytes(), nil
}

// fixtureError shows a document problem as its message (which lists every
// problem by path) rather than as the error code's wrapper.
func fixtureError(name string, err error) error {
	var ce *chat.Error
	if errors.As(err, &ce) && (ce.Code == chat.EValidation || ce.Code == chat.EInvalidJSON) {
		return fmt.Errorf("apply %s: %s", name, ce.Message)
	}
	return fmt.Errorf("apply %s: %w", name, err)
}
