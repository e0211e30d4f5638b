package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/signature"
)

// defaultListenAddr is where chatctl listen receives deliveries.
const defaultListenAddr = "127.0.0.1:3001"

// maxDeliveryBody bounds a delivery's body: an envelope is at most 256 KiB.
const maxDeliveryBody = 1 << 20

// secretsFlag collects repeated --signing-secret flags.
type secretsFlag [][]byte

func (s *secretsFlag) String() string { return fmt.Sprintf("%d secret(s)", len(*s)) }
func (s *secretsFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty signing secret")
	}
	*s = append(*s, []byte(v))
	return nil
}

// runListen receives deliveries on a loopback address, verifies each
// signature and prints each event as one JSON line.
func runListen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var secrets secretsFlag
	fs.Var(&secrets, "signing-secret", "the webhook's signing secret (repeat it to accept a rotated one too)")
	addr := fs.String("addr", defaultListenAddr, "loopback address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(secrets) == 0 {
		return errors.New("listen: --signing-secret is required")
	}
	if err := loopbackOnly(*addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "chatctl: listening for deliveries on http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: ListenHandler(secrets, stdout, time.Now), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// ListenHandler answers deliveries: 204 and the event printed to out as
// one JSON line when a v1 of X-Service-Signature verifies with one of
// secrets within signature.Tolerance, else 401 (405 for a method other
// than POST, 413 past 1 MiB, 400 for a body that is not JSON).
func ListenHandler(secrets [][]byte, out io.Writer, now func() time.Time) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeliveryBody))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if !VerifyDelivery(r.Header.Get(signature.Header), secrets, body, now()) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var line bytes.Buffer
		if err := json.Compact(&line, body); err != nil {
			http.Error(w, "body is not JSON", http.StatusBadRequest)
			return
		}
		line.WriteByte('\n')
		mu.Lock()
		_, _ = out.Write(line.Bytes())
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
}

// VerifyDelivery reports whether any v1 of header signs body with any of
// secrets, with t within signature.Tolerance of now.
func VerifyDelivery(header string, secrets [][]byte, body []byte, now time.Time) bool {
	for _, s := range secrets {
		if _, err := signature.Verify(strings.TrimSpace(header), s, body, now); err == nil {
			return true
		}
	}
	return false
}
