package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/chatbridge/chat/internal/childproc"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// TestLocalAWS runs `chatctl local-aws` on a free port: it prints the
// variables of a faithful endpoint holding the template's queues, and stops
// when its context ends (as on SIGINT).
func TestLocalAWS(t *testing.T) {
	// runLocalAWS sets these for its own clients; put them back afterwards.
	t.Setenv(awsenv.EnvEndpoint, os.Getenv(awsenv.EnvEndpoint))
	t.Setenv(awsenv.EnvRegion, awsenv.DefaultRegion)
	t.Setenv(awsenv.EnvTable, "local-aws-test")
	port, err := motoserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &childproc.Output{}, &childproc.Output{}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"local-aws", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--sqs-in-flight", "7", "--throughput", "4"}, nil, stdout, stderr)
	}()
	vars := map[string]string{}
	deadline := time.Now().Add(90 * time.Second)
	// ATTACHMENTS_BUCKET is printed last.
	for vars[awsenv.EnvBucket] == "" {
		select {
		case err := <-errc:
			t.Fatalf("local-aws ended early: %v; stderr: %s", err, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("local-aws printed no queue in 90s; stdout: %q stderr: %q", stdout.String(), stderr.String())
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				vars[k] = v
			}
		}
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if got := vars[awsenv.EnvEndpoint]; got != endpoint {
		t.Fatalf("AWS_ENDPOINT_URL: got %q, want %q", got, endpoint)
	}
	if got := vars[awsenv.EnvTable]; got != "local-aws-test" {
		t.Fatalf("TABLE_NAME: got %q, want local-aws-test", got)
	}
	if got := vars[awsenv.EnvBucket]; got != "chat-attachmentsbucket" {
		t.Fatalf("ATTACHMENTS_BUCKET: got %q, want chat-attachmentsbucket", got)
	}
	info, err := motoserver.CheckFaithful(ctx, endpoint)
	if err != nil {
		t.Fatalf("the printed endpoint is not faithful: %v", err)
	}
	if info.InFlight != 7 {
		t.Fatalf("in-flight limit: got %d, want 7 (--sqs-in-flight)", info.InFlight)
	}
	if info.Throughput != 4 {
		t.Fatalf("throughput scale: got %v, want 4 (--throughput)", info.Throughput)
	}
	cfg, err := awsenv.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	if _, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(vars[awsenv.EnvDeliveryQueueURL])}); err != nil {
		t.Fatalf("the printed delivery queue: %v", err)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("local-aws on SIGINT: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("local-aws still runs 15s after its context ended")
	}
	if _, err := motoserver.CheckFaithful(context.Background(), endpoint); err == nil {
		t.Fatalf("the endpoint still answers after local-aws stopped")
	}
}

// TestServeRefusesAPlainEndpoint: an AWS_ENDPOINT_URL that is not the
// faithful local AWS (a plain moto_server answers 404 to its info path)
// stops serve at once, naming the command to use.
func TestServeRefusesAPlainEndpoint(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	// serve fills in local defaults; put them back afterwards.
	for _, k := range []string{awsenv.EnvTable, awsenv.EnvCursorKey, awsenv.EnvRegion, app.EnvOutboundAllowCIDRS, delivering.EnvOutboundAllowOnly} {
		t.Setenv(k, os.Getenv(k))
	}
	t.Setenv(awsenv.EnvEndpoint, plain.URL)
	port, err := motoserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ADDR", "127.0.0.1:"+strconv.Itoa(port))
	err = run(context.Background(), []string{"serve"}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "chatctl local-aws") {
		t.Fatalf("serve with a plain endpoint: got %v, want an error naming chatctl local-aws", err)
	}
}
