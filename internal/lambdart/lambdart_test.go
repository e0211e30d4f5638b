package lambdart_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/lambdart"
)

// echo is testdata/echo built as Lambda runs it, once per test binary.
var echo string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lambdart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	echo = filepath.Join(dir, "echo", "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", echo, "./testdata/echo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build testdata/echo: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func invoke(t *testing.T, r *lambdart.Runtime, payload string) []byte {
	t.Helper()
	resp, fnErr, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(payload))
	if err != nil || fnErr != nil {
		t.Fatalf("invoke %s: %v %v, want a response", payload, fnErr, err)
	}
	return resp
}

func TestInvokeReturnsTheResponse(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	for i := range 3 {
		want := fmt.Sprintf(`{"n":%d,"s":"héllo"}`, i)
		if got := invoke(t, r, `{"echo":`+want+`}`); string(got) != want {
			t.Fatalf("invocation %d: got %s, want %s", i, got, want)
		}
	}
	if d := r.InitDuration(); d <= 0 || d > 10*time.Second {
		t.Fatalf("InitDuration %v, want the time to the first poll", d)
	}
	if !r.Polled() || r.ExitCode() != -1 {
		t.Fatalf("Polled %v, ExitCode %d: want a running process that polled", r.Polled(), r.ExitCode())
	}
}

func TestInvocationHeadersReachTheContext(t *testing.T) {
	r := lambdart.Start(t, echo, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "Echo", "AWS_REGION": "eu-west-3"})
	deadline := time.Now().Add(7 * time.Second).Truncate(time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, fnErr, err := r.Invoke(ctx, []byte(`{"context":true}`))
	if err != nil || fnErr != nil {
		t.Fatalf("invoke: %v %v", fnErr, err)
	}
	var info struct {
		RequestID   string `json:"request_id"`
		FunctionARN string `json:"function_arn"`
		DeadlineMs  int64  `json:"deadline_ms"`
		TraceID     string `json:"trace_id"`
	}
	if err := json.Unmarshal(resp, &info); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	if len(info.RequestID) != 36 || strings.Count(info.RequestID, "-") != 4 {
		t.Errorf("request id %q, want a UUID", info.RequestID)
	}
	if info.FunctionARN != "arn:aws:lambda:eu-west-3:123456789012:function:Echo" {
		t.Errorf("function ARN %q, want the function's in its region", info.FunctionARN)
	}
	if info.DeadlineMs != deadline.UnixMilli() {
		t.Errorf("deadline %d, want the context's %d", info.DeadlineMs, deadline.UnixMilli())
	}
	if !strings.HasPrefix(info.TraceID, "Root=1-") {
		t.Errorf("trace id %q, want an X-Ray trace header", info.TraceID)
	}
}

func TestEnvironmentIsLambdas(t *testing.T) {
	t.Setenv("LAMBDART_PARENT_ONLY", "leak")
	r := lambdart.Start(t, echo, map[string]string{"TABLE_NAME": "chat", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"})
	var info struct {
		Env map[string]string `json:"env"`
		Dir string            `json:"dir"`
	}
	if err := json.Unmarshal(invoke(t, r, `{"context":true}`), &info); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"AWS_LAMBDA_RUNTIME_API":          r.Addr(),
		"AWS_LAMBDA_FUNCTION_NAME":        "echo",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_REGION":                      "us-east-1",
		"_HANDLER":                        "bootstrap",
		"LAMBDA_TASK_ROOT":                filepath.Dir(echo),
		"TABLE_NAME":                      "chat",
		"PATH":                            os.Getenv("PATH"),
	}
	for k, v := range want {
		if info.Env[k] != v {
			t.Errorf("%s=%q, want %q", k, info.Env[k], v)
		}
	}
	if v, ok := info.Env["LAMBDART_PARENT_ONLY"]; ok {
		t.Errorf("the parent's environment leaked: LAMBDART_PARENT_ONLY=%q", v)
	}
	if info.Dir != filepath.Dir(echo) {
		t.Errorf("working directory %q, want the task root %q", info.Dir, filepath.Dir(echo))
	}
}

func TestFunctionErrorKeepsTheProcess(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	resp, fnErr, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{"error":"room is full"}`))
	if err != nil || resp != nil {
		t.Fatalf("invoke: %s %v, want only a function error", resp, err)
	}
	if fnErr == nil || fnErr.Message != "room is full" || fnErr.Type != "errorString" {
		t.Fatalf("function error %+v, want room is full of type errorString", fnErr)
	}
	if got := invoke(t, r, `{"echo":1}`); string(got) != "1" {
		t.Fatalf("after an error: got %s, want 1", got)
	}
	// The payload is not an object: aws-lambda-go fails to decode it.
	_, fnErr, err = r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`[]`))
	if err != nil || fnErr == nil || fnErr.Type != "UnmarshalTypeError" {
		t.Fatalf("undecodable event: %+v %v, want an UnmarshalTypeError", fnErr, err)
	}
}

func TestPanicIsReportedThenTheProcessExits(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	_, fnErr, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{"panic":"boom"}`))
	if err != nil || fnErr == nil || fnErr.Message != "boom" || len(fnErr.StackTrace) == 0 {
		t.Fatalf("panic: %+v %v, want boom with a stack trace", fnErr, err)
	}
	code, err := r.Wait(ctxTimeout(t, 30*time.Second))
	if err != nil || code == 0 {
		t.Fatalf("exit after a panic: code %d %v, want non-zero", code, err)
	}
	if _, _, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{}`)); !errors.Is(err, lambdart.ErrExited) {
		t.Fatalf("invoke after the exit: %v, want ErrExited", err)
	}
}

func TestExitAtInit(t *testing.T) {
	r := lambdart.Start(t, echo, map[string]string{"ECHO_INIT_EXIT": "3"})
	_, _, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{}`))
	if !errors.Is(err, lambdart.ErrExited) || !strings.Contains(err.Error(), "init failed") {
		t.Fatalf("invoke: %v, want ErrExited with the output", err)
	}
	if r.ExitCode() != 3 || r.Polled() || r.InitDuration() != 0 {
		t.Fatalf("exit code %d, polled %v, init %v: want 3, never polled", r.ExitCode(), r.Polled(), r.InitDuration())
	}
	if !strings.Contains(r.Logs(), "echo: init failed: told to exit with 3") {
		t.Fatalf("logs %q, want the init failure", r.Logs())
	}
	if err := r.WaitReady(ctxTimeout(t, time.Second)); !errors.Is(err, lambdart.ErrExited) {
		t.Fatalf("WaitReady: %v, want ErrExited", err)
	}
}

func TestInitErrorIsRecorded(t *testing.T) {
	r := lambdart.Start(t, echo, map[string]string{"ECHO_INIT_ERROR": "no table"})
	if err := r.WaitReady(ctxTimeout(t, 30*time.Second)); !errors.Is(err, lambdart.ErrExited) || !strings.Contains(err.Error(), "no table") {
		t.Fatalf("WaitReady: %v, want ErrExited naming the init error", err)
	}
	if e := r.InitError(); e == nil || e.Message != "no table" || e.Type != "Runtime.InitError" {
		t.Fatalf("init error %+v, want the posted one", e)
	}
	if !strings.Contains(r.Logs(), "init error reported: 202") {
		t.Fatalf("logs %q, want /init/error answered 202", r.Logs())
	}
}

func TestInitDurationMeasuresInit(t *testing.T) {
	r := lambdart.Start(t, echo, map[string]string{"ECHO_INIT_SLEEP_MS": "150"})
	if err := r.WaitReady(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := r.InitDuration(); d < 150*time.Millisecond {
		t.Fatalf("InitDuration %v, want at least the 150ms the init sleeps", d)
	}
}

func TestExitDuringInvocation(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	_, _, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{"exit":2}`))
	if !errors.Is(err, lambdart.ErrExited) || !strings.Contains(err.Error(), "during invocation") {
		t.Fatalf("invoke: %v, want ErrExited during the invocation", err)
	}
	if r.ExitCode() != 2 {
		t.Fatalf("exit code %d, want 2", r.ExitCode())
	}
}

func TestContextEndsTheWait(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	start := time.Now()
	_, _, err := r.Invoke(ctxTimeout(t, 100*time.Millisecond), []byte(`{"sleep_ms":300,"echo":1}`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("invoke: %v after %v, want DeadlineExceeded at 100ms", err, time.Since(start))
	}
	// The late answer is dropped; the next invocation gets its own.
	if got := invoke(t, r, `{"echo":2}`); string(got) != "2" {
		t.Fatalf("after a timeout: got %s, want 2", got)
	}
}

func TestOversizedResponseIsRefused(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	_, _, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(fmt.Sprintf(`{"big":%d}`, lambdart.MaxPayloadSize)))
	if err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("invoke: %v, want the response refused as too large", err)
	}
	// aws-lambda-go treats a refused response as fatal.
	if code, err := r.Wait(ctxTimeout(t, 30*time.Second)); err != nil || code == 0 {
		t.Fatalf("exit: %d %v, want a non-zero exit", code, err)
	}
}

func TestProtocolErrors(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	invoke(t, r, `{"echo":1}`)
	base := "http://" + r.Addr() + "/" + lambdart.APIVersion + "/runtime/"
	for _, tc := range []struct {
		method, path string
		status       int
		errorType    string
	}{
		{"POST", "invocation/00000000-0000-4000-8000-000000000000/response", 400, "InvalidRequestID"},
		{"POST", "invocation/00000000-0000-4000-8000-000000000000/error", 400, "InvalidRequestID"},
		{"POST", "init/error", 403, "InvalidStateTransition"},
		{"PUT", "invocation/next", 405, ""},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, bytes.NewReader([]byte(`{}`)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			ErrorType string `json:"errorType"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || body.ErrorType != tc.errorType {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, resp.StatusCode, body.ErrorType, tc.status, tc.errorType)
		}
	}
}

func TestStopKillsTheProcessGroup(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	pid, err := strconv.Atoi(string(invoke(t, r, `{"spawn":true}`)))
	if err != nil || !alive(pid) {
		t.Fatalf("spawned pid %d (%v), want a running child", pid, err)
	}
	r.Stop()
	if r.ExitCode() != -1 {
		t.Fatalf("exit code %d, want -1 for SIGKILL", r.ExitCode())
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the function's child %d survived Stop", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, _, err := r.Invoke(ctxTimeout(t, time.Second), []byte(`{}`)); err == nil {
		t.Fatalf("invoke after Stop succeeded")
	}
	r.Stop() // idempotent
}

// alive reports whether pid runs: a zombie waiting for init to reap it does
// not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestTimeoutFailsTheInvocation: under a Timeout, the function sees a
// deadline at most Timeout away; one still running at it fails the
// invocation with ErrTimeout (not the caller's context error), and the
// process is killed, as Lambda discards a timed-out environment.
func TestTimeoutFailsTheInvocation(t *testing.T) {
	r := lambdart.Start(t, echo, nil)
	r.Timeout = 2 * time.Second
	before := time.Now()
	var info struct {
		DeadlineMs int64 `json:"deadline_ms"`
	}
	if err := json.Unmarshal(invoke(t, r, `{"context":true}`), &info); err != nil {
		t.Fatal(err)
	}
	if d := time.UnixMilli(info.DeadlineMs).Sub(before); d > 2*time.Second+50*time.Millisecond || d < time.Second {
		t.Fatalf("the function saw a deadline %v away, want the 2 s Timeout, not the caller's 30 s", d)
	}
	r.Timeout = 100 * time.Millisecond
	start := time.Now()
	_, _, err := r.Invoke(ctxTimeout(t, 30*time.Second), []byte(`{"sleep_ms":500,"echo":1}`))
	if !errors.Is(err, lambdart.ErrTimeout) || time.Since(start) > 400*time.Millisecond {
		t.Fatalf("invoke: %v after %v, want ErrTimeout at about 100ms", err, time.Since(start))
	}
	if _, err := r.Wait(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatalf("the timed-out environment's process: %v, want it killed", err)
	}
}
