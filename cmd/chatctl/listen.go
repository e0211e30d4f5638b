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
	if strings.HasPrefix(v, signature.StandardSecretPrefix) {
		// The signing_secret_standard form of the same secret.
		b, err := signature.ParseStandardSecret(v)
		if err != nil {
			return err
		}
		*s = append(*s, b)
		return nil
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
	fs.Var(&secrets, "signing-secret", "the webhook's signing secret, or its whsec_ form (repeat it to accept a rotated one too)")
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
	srv := &http.Server{Handler: ListenHandler("http://"+ln.Addr().String()+"/", secrets, stdout, stderr, time.Now), ReadHeaderTimeout: 10 * time.Second}
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
// one JSON line when a v1 of X-Service-Signature (or, when a request has
// none, of Standard Webhooks' webhook-signature) verifies with one of
// secrets within signature.Tolerance, else 401 (405 for a method other
// than POST, 413 past 1 MiB, 400 for a body that is not JSON). Each refusal
// is printed to refusals as one line saying why, with the event's type and
// delivery id when the request names them; name says whose deliveries these
// are.
func ListenHandler(name string, secrets [][]byte, out, refusals io.Writer, now func() time.Time) http.Handler {
	return listenHandler(name, secrets, out, refusals, now, false)
}

// DemoListenHandler is ListenHandler for one of several webhooks that
// deliver to one receiver (chatctl serve --demo): each event's line starts
// with whose it is, name, its type, its delivery and its attempt, so that
// two webhooks subscribed to one type, or a redelivery, cannot be taken for
// duplicates.
func DemoListenHandler(name string, secrets [][]byte, out, refusals io.Writer, now func() time.Time) http.Handler {
	return listenHandler(name, secrets, out, refusals, now, true)
}

// deliveryLabel is what a labelled line says of a delivery: "<name> got
// <type> (delivery <id>, attempt <n>): ".
func deliveryLabel(name string, h http.Header) string {
	id := h.Get("X-Service-Delivery")
	if id == "" {
		id = h.Get(signature.StandardHeaderID)
	}
	return fmt.Sprintf("%s got %s (delivery %s, attempt %s): ", name, orUnknown(h.Get("X-Service-Event")), orUnknown(id),
		orUnknown(h.Get("X-Service-Attempt")))
}

func listenHandler(name string, secrets [][]byte, out, refusals io.Writer, now func() time.Time, labelled bool) http.Handler {
	var mu sync.Mutex
	refuse := func(w http.ResponseWriter, r *http.Request, status int, why string) {
		mu.Lock()
		fmt.Fprintf(refusals, "chatctl listen: refused %s delivery %s to %s (%d): %s\n", orUnknown(r.Header.Get("X-Service-Event")),
			orUnknown(r.Header.Get("X-Service-Delivery")), name, status, why)
		mu.Unlock()
		http.Error(w, why, status)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			refuse(w, r, http.StatusMethodNotAllowed, "method "+r.Method+", want POST")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeliveryBody))
		if err != nil {
			refuse(w, r, http.StatusRequestEntityTooLarge, "body over 1 MiB")
			return
		}
		if err := verifyEitherScheme(r.Header, secrets, body, now()); err != nil {
			refuse(w, r, http.StatusUnauthorized, fmt.Sprintf("%v (checked with %d signing secret(s))", err, len(secrets)))
			return
		}
		var line bytes.Buffer
		if labelled {
			line.WriteString(deliveryLabel(name, r.Header))
		}
		if err := json.Compact(&line, body); err != nil {
			refuse(w, r, http.StatusBadRequest, "body is not JSON")
			return
		}
		line.WriteByte('\n')
		mu.Lock()
		_, _ = out.Write(line.Bytes())
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
}

func orUnknown(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}

// VerifyDelivery returns nil when any v1 of header signs body with any of
// secrets, with t within signature.Tolerance of now, else why not (the
// error of the first secret, which the others share unless they differ
// only in the HMAC).
func VerifyDelivery(header string, secrets [][]byte, body []byte, now time.Time) error {
	var first error
	for _, s := range secrets {
		_, err := signature.Verify(strings.TrimSpace(header), s, body, now)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return errors.New("no signing secret to verify with")
	}
	return first
}

// verifyEitherScheme verifies a delivery by X-Service-Signature when it
// carries one, else by the Standard Webhooks headers (contract section
// 14), so that a sender of either scheme is understood.
func verifyEitherScheme(h http.Header, secrets [][]byte, body []byte, now time.Time) error {
	if h.Get(signature.Header) == "" && h.Get(signature.StandardHeaderSignature) != "" {
		if len(secrets) == 0 {
			return errors.New("no signing secret to verify with")
		}
		return signature.VerifyStandard(h.Get(signature.StandardHeaderID), h.Get(signature.StandardHeaderTimestamp),
			h.Get(signature.StandardHeaderSignature), secrets, body, now)
	}
	return VerifyDelivery(h.Get(signature.Header), secrets, body, now)
}
