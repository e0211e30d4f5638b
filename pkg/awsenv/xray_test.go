package awsenv_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/awsenv"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// daemon listens like the X-Ray daemon and returns the documents it gets.
func daemon(t *testing.T) (string, <-chan string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	docs := make(chan string, 8)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			docs <- string(buf[:n])
		}
	}()
	return pc.LocalAddr().String(), docs
}

func TestSDKCallsBecomeSubsegments(t *testing.T) {
	st := stacktest.New(t)
	addr, docs := daemon(t)
	t.Setenv(awsenv.EnvXRayDaemonAddress, "tcp:"+addr+" udp:"+addr)
	// Load instruments the configuration; a second Instrument must not
	// double the subsegments.
	cfg, err := awsenv.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := awsenv.InstrumentXRay(&cfg); err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg)
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	if _, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.Table)}); err != nil {
		t.Fatal(err)
	}
	var doc string
	select {
	case doc = <-docs:
	case <-time.After(2 * time.Second):
		t.Fatalf("no subsegment reached the daemon")
	}
	head, body, ok := strings.Cut(doc, "\n")
	if !ok || head != `{"format":"json","version":1}` {
		t.Fatalf("datagram %q lacks the daemon header", doc)
	}
	var seg map[string]any
	if err := json.Unmarshal([]byte(body), &seg); err != nil {
		t.Fatalf("subsegment %q: %v", body, err)
	}
	if seg["name"] != "DynamoDB" || seg["trace_id"] != "1-5759e988-bd862e3fe1be46a994272793" || seg["parent_id"] != "53995c3f42cd8ad8" ||
		seg["type"] != "subsegment" || seg["namespace"] != "aws" {
		t.Fatalf("subsegment %v", seg)
	}
	if op := seg["aws"].(map[string]any)["operation"]; op != "DescribeTable" {
		t.Fatalf("operation %v", op)
	}
	if seg["end_time"].(float64) < seg["start_time"].(float64) {
		t.Fatalf("ends before it starts: %v", seg)
	}
	if status := seg["http"].(map[string]any)["response"].(map[string]any)["status"]; status != float64(200) {
		t.Fatalf("status %v", status)
	}

	select {
	case d := <-docs:
		t.Fatalf("one call sent a second document %q", d)
	case <-time.After(300 * time.Millisecond):
	}

	// An unsampled trace sends nothing.
	ctx = context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
	db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.Table)})
	select {
	case d := <-docs:
		t.Fatalf("unsampled call sent %q", d)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestWithoutDaemonNothingIsInstalled(t *testing.T) {
	t.Setenv(awsenv.EnvXRayDaemonAddress, "")
	var cfg aws.Config
	if err := awsenv.InstrumentXRay(&cfg); err != nil || len(cfg.APIOptions) != 0 {
		t.Fatalf("options %d, err %v; want none", len(cfg.APIOptions), err)
	}
}
