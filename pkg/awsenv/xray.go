package awsenv

// X-Ray tracing. InstrumentXRay records every AWS SDK call as an X-Ray
// subsegment of the Lambda invocation's trace: with active tracing, Lambda
// starts the invocation's segment and runs the X-Ray daemon, and each SDK
// operation sends one subsegment document to that daemon over UDP, as the
// X-Ray SDKs do.
//
// Why not the X-Ray SDK for Go: it is in maintenance (AWS points new code to
// OpenTelemetry), and its module links aws-sdk-go v1 into every binary,
// adding about 13 MB to each function; the operation-level subsegments we
// need are a documented JSON format and one datagram
// (https://docs.aws.amazon.com/xray/latest/devguide/xray-api-segmentdocuments.html).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// EnvXRayDaemonAddress is set by Lambda when active tracing is on.
const EnvXRayDaemonAddress = "AWS_XRAY_DAEMON_ADDRESS"

// lambdaTraceKey is where aws-lambda-go puts the invocation's trace header.
const lambdaTraceKey = "x-amzn-trace-id"

const middlewareID = "XRaySubsegment"

// header precedes every document sent to the daemon.
const header = `{"format":"json","version":1}` + "\n"

// InstrumentXRay adds subsegment recording to cfg when the daemon address is
// set (in Lambda with Tracing: Active); otherwise it does nothing.
func InstrumentXRay(cfg *aws.Config) error {
	addr := os.Getenv(EnvXRayDaemonAddress)
	if addr == "" {
		return nil
	}
	e, err := newEmitter(addr)
	if err != nil {
		return err
	}
	cfg.APIOptions = append(cfg.APIOptions, e.middleware)
	return nil
}

// emitter sends subsegments to one daemon.
type emitter struct {
	mu   sync.Mutex
	conn net.Conn
	now  func() time.Time
}

func newEmitter(addr string) (*emitter, error) {
	// The variable may hold "tcp:host:port udp:host:port"; take UDP's.
	for _, part := range strings.Fields(addr) {
		if a, ok := strings.CutPrefix(part, "udp:"); ok {
			addr = a
		}
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	return &emitter{conn: conn, now: time.Now}, nil
}

// trace is a parsed X-Amzn-Trace-Id header.
type trace struct{ root, parent string }

func parseTrace(h string) (trace, bool) {
	var t trace
	sampled := false
	for _, part := range strings.Split(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Root":
			t.root = v
		case "Parent":
			t.parent = v
		case "Sampled":
			sampled = v == "1"
		}
	}
	return t, sampled && t.root != "" && t.parent != ""
}

type subsegment struct {
	Name      string         `json:"name"`
	ID        string         `json:"id"`
	TraceID   string         `json:"trace_id"`
	ParentID  string         `json:"parent_id"`
	Type      string         `json:"type"`
	Namespace string         `json:"namespace"`
	StartTime float64        `json:"start_time"`
	EndTime   float64        `json:"end_time"`
	Error     bool           `json:"error,omitempty"`
	Fault     bool           `json:"fault,omitempty"`
	Throttle  bool           `json:"throttle,omitempty"`
	AWS       map[string]any `json:"aws"`
	HTTP      map[string]any `json:"http,omitempty"`
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// middleware wraps each operation, retries included, in one subsegment.
func (e *emitter) middleware(stack *middleware.Stack) error {
	if _, ok := stack.Initialize.Get(middlewareID); ok {
		return nil // instrumented twice: one subsegment is enough
	}
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(middlewareID,
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			h, _ := ctx.Value(lambdaTraceKey).(string)
			tr, ok := parseTrace(h)
			if !ok {
				return next.HandleInitialize(ctx, in)
			}
			start := e.now()
			out, md, err := next.HandleInitialize(ctx, in)
			seg := subsegment{
				Name: middleware.GetServiceID(ctx), ID: newID(), TraceID: tr.root, ParentID: tr.parent,
				Type: "subsegment", Namespace: "aws", StartTime: seconds(start), EndTime: seconds(e.now()),
				AWS: map[string]any{"operation": middleware.GetOperationName(ctx), "region": awsmiddleware.GetRegion(ctx)},
			}
			if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
				seg.AWS["request_id"] = id
			}
			if attempts, ok := retry.GetAttemptResults(md); ok && len(attempts.Results) > 1 {
				seg.AWS["retries"] = len(attempts.Results) - 1
			}
			if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
				status := raw.StatusCode
				seg.HTTP = map[string]any{"response": map[string]any{"status": status}}
				seg.Throttle = status == 429
				seg.Error = status >= 400 && status < 500
				seg.Fault = status >= 500
			} else if err != nil {
				seg.Fault = true
			}
			e.send(seg)
			return out, md, err
		}), middleware.Before)
}

func (e *emitter) send(seg subsegment) {
	b, err := json.Marshal(seg)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Tracing must never fail a request: a lost datagram is a lost span.
	_, _ = e.conn.Write(append([]byte(header), b...))
}
