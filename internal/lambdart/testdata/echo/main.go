// Command echo is a tiny aws-lambda-go function for lambdart's tests: what
// it does is chosen by its event, and at init by its environment.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Echo    json.RawMessage `json:"echo"`
	Error   string          `json:"error"`
	Panic   string          `json:"panic"`
	Exit    *int            `json:"exit"`
	SleepMs int             `json:"sleep_ms"`
	Context bool            `json:"context"`
	Big     int             `json:"big"`
	Spawn   bool            `json:"spawn"`
}

// contextInfo is what the function saw of its invocation and environment.
type contextInfo struct {
	RequestID   string            `json:"request_id"`
	FunctionARN string            `json:"function_arn"`
	DeadlineMs  int64             `json:"deadline_ms"`
	TraceID     string            `json:"trace_id"`
	Env         map[string]string `json:"env"`
	Dir         string            `json:"dir"`
}

func handle(ctx context.Context, req request) (any, error) {
	if req.SleepMs > 0 {
		time.Sleep(time.Duration(req.SleepMs) * time.Millisecond)
	}
	switch {
	case req.Error != "":
		return nil, errors.New(req.Error)
	case req.Panic != "":
		panic(req.Panic)
	case req.Exit != nil:
		fmt.Fprintf(os.Stderr, "echo: exiting with %d\n", *req.Exit)
		os.Exit(*req.Exit)
	case req.Big > 0:
		return strings.Repeat("x", req.Big), nil
	case req.Spawn:
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return cmd.Process.Pid, nil
	case req.Context:
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		info := contextInfo{RequestID: lc.AwsRequestID, FunctionARN: lc.InvokedFunctionArn, DeadlineMs: deadline.UnixMilli(),
			TraceID: os.Getenv("_X_AMZN_TRACE_ID"), Env: map[string]string{}}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			info.Env[k] = v
		}
		info.Dir, _ = os.Getwd()
		return info, nil
	}
	return req.Echo, nil
}

func main() {
	if ms, _ := strconv.Atoi(os.Getenv("ECHO_INIT_SLEEP_MS")); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	if code, err := strconv.Atoi(os.Getenv("ECHO_INIT_EXIT")); err == nil {
		fmt.Fprintf(os.Stderr, "echo: init failed: told to exit with %d\n", code)
		os.Exit(code)
	}
	if msg := os.Getenv("ECHO_INIT_ERROR"); msg != "" {
		reportInitError(msg)
		os.Exit(1)
	}
	lambda.Start(handle)
}

// reportInitError posts to /init/error as a runtime that fails at init
// should.
func reportInitError(msg string) {
	b, _ := json.Marshal(map[string]string{"errorMessage": msg, "errorType": "Runtime.InitError"})
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		fmt.Fprintf(os.Stderr, "echo: report init error: %v\n", err)
		return
	}
	resp.Body.Close()
	fmt.Fprintf(os.Stderr, "echo: init error reported: %d\n", resp.StatusCode)
}
