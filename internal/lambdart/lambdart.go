package lambdart

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
)

// APIVersion is the Runtime API version this package serves.
const APIVersion = "2018-06-01"

// The headers of a /next response and of the runtime's requests, as
// aws-lambda-go names them.
const (
	HeaderRequestID   = "Lambda-Runtime-Aws-Request-Id"
	HeaderDeadlineMs  = "Lambda-Runtime-Deadline-Ms"
	HeaderFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	HeaderTraceID     = "Lambda-Runtime-Trace-Id"
	HeaderErrorType   = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody  = "Lambda-Runtime-Function-Error-Body"
)

// MaxPayloadSize is the largest response Lambda accepts from a function: 6
// MiB, plus the 100 bytes of slack the Runtime Interface Emulator allows.
const MaxPayloadSize = 6*1024*1024 + 100

// DefaultTimeout bounds an invocation whose context has no deadline; it is
// the template's function timeout.
const DefaultTimeout = 10 * time.Second

// ErrExited is wrapped by Invoke and WaitReady when the function's process
// has exited, or exits, before answering.
var ErrExited = errors.New("function process exited")

// ErrTimeout is wrapped by Invoke when the function was still running at
// the end of its Timeout (Lambda's "Task timed out after N seconds").
var ErrTimeout = errors.New("task timed out")

// ErrorBody is a function error as the runtime reports it to
// /invocation/{id}/error or /init/error.
type ErrorBody struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
	// StackTrace is kept raw: runtimes disagree on its shape (aws-lambda-go
	// sends frames, others send lines).
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

// Error returns "errorType: errorMessage".
func (e *ErrorBody) Error() string { return e.Type + ": " + e.Message }

// Runtime is one function process and the Runtime API it polls.
type Runtime struct {
	// Timeout, when set (before the first Invoke), is the function's
	// timeout (its template Timeout), as Lambda applies it: the deadline the
	// function sees is at most Timeout from the invocation, and a function
	// still running then fails the invocation with ErrTimeout and, as
	// Lambda discards a timed-out environment, its process is killed (Stop):
	// start a new Runtime to go on.
	Timeout time.Duration

	tb   testing.TB
	name string
	arn  string
	addr string
	srv  *http.Server
	cmd  *exec.Cmd
	logs childproc.Output

	queue   chan *invocation // unbuffered: a send completes when /next takes it
	closing chan struct{}
	polled  chan struct{} // closed at the first /next
	exited  chan struct{} // closed once the process has exited

	mu        sync.Mutex
	execAt    time.Time
	firstPoll time.Time
	exitCode  int
	inflight  map[string]*invocation
	initErr   *ErrorBody
	stopOnce  sync.Once
}

type invocation struct {
	id       string
	traceID  string
	payload  []byte
	deadline time.Time

	once     sync.Once
	done     chan struct{}
	response []byte
	fnErr    *ErrorBody
	err      error
}

func (inv *invocation) finish(response []byte, fnErr *ErrorBody, err error) {
	inv.once.Do(func() {
		inv.response, inv.fnErr, inv.err = response, fnErr, err
		close(inv.done)
	})
}

// Start serves the Runtime API on a free loopback port and launches
// binaryPath as Lambda launches a bootstrap: in the binary's directory
// (LAMBDA_TASK_ROOT), in its own process group, with stdout and stderr
// captured, and with only Lambda's variables (AWS_LAMBDA_RUNTIME_API,
// AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
// AWS_LAMBDA_FUNCTION_VERSION, AWS_REGION, _HANDLER, ...), PATH, HOME and
// env, which overrides all of them but AWS_LAMBDA_RUNTIME_API. The function
// name defaults to the name of the binary's directory. Stop is registered
// with tb.Cleanup, and the process's output is logged when tb failed.
func Start(tb testing.TB, binaryPath string, env map[string]string) *Runtime {
	tb.Helper()
	bin, err := filepath.Abs(binaryPath)
	if err != nil {
		tb.Fatalf("lambdart: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("lambdart: listen: %v", err)
	}
	r := &Runtime{
		tb:       tb,
		addr:     ln.Addr().String(),
		queue:    make(chan *invocation),
		closing:  make(chan struct{}),
		polled:   make(chan struct{}),
		exited:   make(chan struct{}),
		exitCode: -1,
		inflight: map[string]*invocation{},
	}
	vars := r.environ(bin, env)
	r.name = vars["AWS_LAMBDA_FUNCTION_NAME"]
	r.arn = fmt.Sprintf("arn:aws:lambda:%s:123456789012:function:%s", vars["AWS_REGION"], r.name)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /"+APIVersion+"/runtime/invocation/next", r.next)
	mux.HandleFunc("POST /"+APIVersion+"/runtime/invocation/{id}/response", r.response)
	mux.HandleFunc("POST /"+APIVersion+"/runtime/invocation/{id}/error", r.invocationError)
	mux.HandleFunc("POST /"+APIVersion+"/runtime/init/error", r.initError)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()

	r.cmd = exec.Command(bin)
	r.cmd.Dir = filepath.Dir(bin)
	r.cmd.Env = environList(vars)
	// One writer for both, as CloudWatch gets both streams in one log.
	r.cmd.Stdout, r.cmd.Stderr = &r.logs, &r.logs
	// A grandchild holding the output pipe must not keep Wait from seeing
	// the exit.
	r.cmd.WaitDelay = time.Second
	r.execAt = time.Now()
	// Its own process group, killed by the kernel if the test binary dies
	// without stopping it (a panic on -timeout).
	if err := childproc.Start(r.cmd); err != nil {
		_ = r.srv.Close()
		tb.Fatalf("lambdart: start %s: %v", bin, err)
	}
	go func() {
		_ = r.cmd.Wait()
		r.mu.Lock()
		r.exitCode = r.cmd.ProcessState.ExitCode()
		r.mu.Unlock()
		close(r.exited)
	}()
	tb.Cleanup(func() {
		r.Stop()
		if tb.Failed() {
			tb.Logf("lambdart: output of %s:\n%s", r.name, r.Logs())
		}
	})
	return r
}

// environ is the process's environment, as Lambda sets it for a
// provided.al2023 function, then env.
func (r *Runtime) environ(bin string, env map[string]string) map[string]string {
	name := filepath.Base(filepath.Dir(bin))
	if n := env["AWS_LAMBDA_FUNCTION_NAME"]; n != "" {
		name = n
	}
	vars := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + randomHex(16),
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"LAMBDA_TASK_ROOT":                filepath.Dir(bin),
		"TZ":                              ":UTC",
		"_HANDLER":                        "bootstrap",
	}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range env {
		vars[k] = v
	}
	vars["AWS_LAMBDA_RUNTIME_API"] = r.addr
	return vars
}

func environList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Addr is the value of AWS_LAMBDA_RUNTIME_API: host:port of the Runtime API.
func (r *Runtime) Addr() string { return r.addr }

// Invoke queues payload as the next event and waits for the function's
// answer: its response, or the error it reported (fnErr). err is non-nil
// when there is no answer: the process exited before or during the
// invocation (wrapping ErrExited), ctx ended first, or the Runtime API
// refused the response (larger than MaxPayloadSize), or the function ran
// past its Timeout (ErrTimeout). The deadline the function sees is the
// earlier of ctx's and Timeout from now; with neither, DefaultTimeout from
// now.
func (r *Runtime) Invoke(ctx context.Context, payload []byte) (response []byte, fnErr *ErrorBody, err error) {
	if _, ok := ctx.Deadline(); !ok && r.Timeout <= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	// timedOut fires at the function's own deadline, when it comes before
	// the caller's.
	var timedOut <-chan time.Time
	if r.Timeout > 0 {
		if fn := time.Now().Add(r.Timeout); deadline.IsZero() || fn.Before(deadline) {
			deadline = fn
			timer := time.NewTimer(r.Timeout)
			defer timer.Stop()
			timedOut = timer.C
		}
	}
	inv := &invocation{id: newRequestID(), traceID: newTraceID(), payload: payload, deadline: deadline, done: make(chan struct{})}
	select {
	case <-r.exited:
		return nil, nil, r.exitError("before the invocation")
	default:
	}
	select {
	case r.queue <- inv:
	case <-r.exited:
		return nil, nil, r.exitError("without polling for the invocation")
	case <-r.closing:
		return nil, nil, fmt.Errorf("lambdart: %s: invoke after Stop", r.name)
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("lambdart: %s did not poll /next: %w", r.name, ctx.Err())
	}
	select {
	case <-inv.done:
		return inv.response, inv.fnErr, inv.err
	case <-r.exited:
		// The answer is recorded before the runtime gets its 202, so
		// before any exit that follows it.
		select {
		case <-inv.done:
			return inv.response, inv.fnErr, inv.err
		default:
		}
		return nil, nil, r.exitError("during invocation " + inv.id)
	case <-timedOut:
		select {
		case <-inv.done:
			return inv.response, inv.fnErr, inv.err
		default:
		}
		r.Stop()
		return nil, nil, fmt.Errorf("lambdart: %s: invocation %s: %w after %v", r.name, inv.id, ErrTimeout, r.Timeout)
	case <-ctx.Done():
		// The caller gave up: the invocation stays in flight, and a late
		// answer is accepted and dropped.
		return nil, nil, fmt.Errorf("lambdart: %s: invocation %s: %w", r.name, inv.id, ctx.Err())
	}
}

func (r *Runtime) exitError(when string) error {
	r.mu.Lock()
	code, initErr := r.exitCode, r.initErr
	r.mu.Unlock()
	msg := fmt.Sprintf("lambdart: %s: exit code %d %s", r.name, code, when)
	if initErr != nil {
		msg += fmt.Sprintf(" (init error %s)", initErr)
	}
	return fmt.Errorf("%s: %w; output:\n%s", msg, ErrExited, r.Logs())
}

// WaitReady waits until the function first polls /next, that is until its
// init is done. It returns an error wrapping ErrExited if the process
// exits first, or ctx's error.
func (r *Runtime) WaitReady(ctx context.Context) error {
	select {
	case <-r.polled:
		return nil
	case <-r.exited:
		select {
		case <-r.polled:
			return nil
		default:
		}
		return r.exitError("before polling /next")
	case <-ctx.Done():
		return fmt.Errorf("lambdart: %s did not poll /next: %w", r.name, ctx.Err())
	}
}

// Wait waits for the process to exit and returns its exit code (-1 when a
// signal ended it), or ctx's error.
func (r *Runtime) Wait(ctx context.Context) (int, error) {
	select {
	case <-r.exited:
		return r.ExitCode(), nil
	case <-ctx.Done():
		return -1, fmt.Errorf("lambdart: %s did not exit: %w", r.name, ctx.Err())
	}
}

// Exited is closed once the process has exited.
func (r *Runtime) Exited() <-chan struct{} { return r.exited }

// ExitCode returns the process's exit code, or -1 while it runs or when a
// signal ended it.
func (r *Runtime) ExitCode() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exitCode
}

// Polled reports whether the function has polled /next at least once.
func (r *Runtime) Polled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.firstPoll.IsZero()
}

// InitDuration is the time from exec to the first poll of /next: the
// function's cold init. It is zero until that poll.
func (r *Runtime) InitDuration() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstPoll.IsZero() {
		return 0
	}
	return r.firstPoll.Sub(r.execAt)
}

// InitError returns what the runtime posted to /init/error, if anything.
func (r *Runtime) InitError() *ErrorBody {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.initErr
}

// Logs returns everything the process wrote to stdout and stderr so far.
func (r *Runtime) Logs() string { return r.logs.String() }

// Stop kills the process group by the process's PID (Lambda ends an
// environment with SIGKILL), waits for the exit and closes the Runtime
// API. It is safe to call more than once.
func (r *Runtime) Stop() {
	r.stopOnce.Do(func() {
		close(r.closing)
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
			r.tb.Errorf("lambdart: %s (pid %d) did not exit after SIGKILL", r.name, r.cmd.Process.Pid)
		}
		_ = r.srv.Close()
	})
}

func (r *Runtime) next(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	if r.firstPoll.IsZero() {
		r.firstPoll = time.Now()
		close(r.polled)
	}
	r.mu.Unlock()
	select {
	case inv := <-r.queue:
		r.mu.Lock()
		r.inflight[inv.id] = inv
		r.mu.Unlock()
		h := w.Header()
		h.Set(HeaderRequestID, inv.id)
		h.Set(HeaderDeadlineMs, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set(HeaderFunctionARN, r.arn)
		h.Set(HeaderTraceID, inv.traceID)
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.payload)
	case <-req.Context().Done():
	case <-r.closing:
		renderError(w, http.StatusInternalServerError, "Runtime.Shutdown", "The execution environment is shutting down.")
	}
}

// take removes the in-flight invocation id; nil when there is none, or it
// was already answered.
func (r *Runtime) take(id string) *invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	inv := r.inflight[id]
	delete(r.inflight, id)
	return inv
}

func (r *Runtime) response(w http.ResponseWriter, req *http.Request) {
	inv := r.take(req.PathValue("id"))
	if inv == nil {
		renderError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxPayloadSize+1))
	switch {
	case err != nil:
		inv.finish(nil, nil, fmt.Errorf("lambdart: %s: read response of %s: %w", r.name, inv.id, err))
		renderError(w, http.StatusBadRequest, "TruncatedHTTPRequest", "HTTP request detected as truncated")
		return
	case len(body) > MaxPayloadSize:
		inv.finish(nil, nil, fmt.Errorf("lambdart: %s: response of %s exceeds %d bytes", r.name, inv.id, MaxPayloadSize))
		renderError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			fmt.Sprintf("Exceeded maximum allowed payload size (%d bytes).", MaxPayloadSize))
		return
	}
	// A failure while the runtime streamed the body arrives in trailers.
	if typ := req.Trailer.Get(HeaderErrorType); typ != "" {
		fnErr := &ErrorBody{Type: typ}
		if b, err := base64.StdEncoding.DecodeString(req.Trailer.Get(trailerErrorBody)); err == nil {
			_ = json.Unmarshal(b, fnErr)
		}
		inv.finish(nil, fnErr, nil)
	} else {
		inv.finish(body, nil, nil)
	}
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

func (r *Runtime) invocationError(w http.ResponseWriter, req *http.Request) {
	inv := r.take(req.PathValue("id"))
	if inv == nil {
		renderError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	inv.finish(nil, readErrorBody(req), nil)
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

func (r *Runtime) initError(w http.ResponseWriter, req *http.Request) {
	e := readErrorBody(req)
	r.mu.Lock()
	ready := !r.firstPoll.IsZero()
	if !ready {
		r.initErr = e
	}
	r.mu.Unlock()
	if ready {
		renderError(w, http.StatusForbidden, "InvalidStateTransition", "State transition from Ready to InitError failed for runtime.")
		return
	}
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

// readErrorBody reads the error a runtime reports: the standard JSON body,
// or else the Lambda-Runtime-Function-Error-Type header and the raw body.
func readErrorBody(req *http.Request) *ErrorBody {
	b, _ := io.ReadAll(io.LimitReader(req.Body, MaxPayloadSize))
	e := &ErrorBody{}
	if err := json.Unmarshal(b, e); err != nil || e.Type == "" && e.Message == "" {
		e = &ErrorBody{Message: string(b)}
	}
	if e.Type == "" {
		e.Type = req.Header.Get(HeaderErrorType)
	}
	if e.Type == "" {
		e.Type = "Unhandled"
	}
	return e
}

func renderError(w http.ResponseWriter, status int, typ, msg string) {
	renderJSON(w, status, map[string]string{"errorType": typ, "errorMessage": msg})
}

func renderJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// newRequestID returns a random UUID, the shape of Lambda's request ids.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newTraceID returns an X-Ray trace header, not sampled.
func newTraceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), randomHex(12), randomHex(8))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
