package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// runLocalAWS serves the faithful local AWS on --addr until ctx ends:
// moto_server behind the proxy that keeps AWS's limits (package
// motoserver), with the table and queues of template.yaml. It prints the
// variables that point a process at it (chatctl serve, chatctl apply, a test
// with STACKTEST_ENDPOINT) and, with --sam-env-vars, writes them as the
// --env-vars file of `sam local start-api`. moto_server is stopped by its
// PID on SIGINT or SIGTERM.
func runLocalAWS(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("local-aws", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(defaultMotoPort)), "loopback address to serve on (port 0: a free one)")
	inFlight := fs.Int("sqs-in-flight", motoserver.DefaultInFlight, "messages in flight per queue above which ReceiveMessage answers OverLimit")
	samEnv := fs.String("sam-env-vars", "", "also write the variables as a `sam local start-api --env-vars` file here")
	scale := fs.Float64("throughput", 0, "keep DynamoDB's per-partition throughput divided by this factor (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("local-aws: unexpected argument %q", fs.Arg(0))
	}
	if err := loopbackOnly(*addr); err != nil {
		return err
	}
	_, portText, _ := net.SplitHostPort(*addr)
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("local-aws: --addr %q: bad port", *addr)
	}
	if *inFlight < 1 {
		return fmt.Errorf("local-aws: --sqs-in-flight %d: want at least 1", *inFlight)
	}
	if *scale < 0 {
		return fmt.Errorf("local-aws: --throughput %v: a factor of 0 (none) or more", *scale)
	}
	// Functions that sign as themselves (access key id = LogicalId, as serve
	// and the tests make them) are held to their template policies.
	policies, err := iampolicy.Project()
	if err != nil {
		return fmt.Errorf("local-aws: %w", err)
	}
	moto, err := motoserver.Start(ctx, port, motoserver.InFlightLimit(*inFlight), motoserver.Throughput(*scale), motoserver.WithIAM(motoserver.NewIAM(policies)))
	if err != nil {
		return fmt.Errorf("local-aws: %w", err)
	}
	defer moto.Stop()
	os.Setenv(awsenv.EnvEndpoint, moto.URL)
	if os.Getenv(awsenv.EnvRegion) == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		os.Setenv(awsenv.EnvRegion, awsenv.DefaultRegion)
	}
	cfg, err := awsenv.Load(ctx)
	if err != nil {
		return err
	}
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		return err
	}
	table := awsenv.Get(awsenv.EnvTable, defaultTable)
	res, err := localrun.Ensure(ctx, dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), localrun.S3Client(cfg), tmpl, table, localQueuePrefix)
	if err != nil {
		return fmt.Errorf("local-aws: %w", err)
	}
	vars := [][2]string{
		{awsenv.EnvEndpoint, moto.URL},
		{awsenv.EnvRegion, awsenv.Get(awsenv.EnvRegion, awsenv.DefaultRegion)},
		{awsenv.EnvTable, table},
		{awsenv.EnvQueueURL, res.Queues["TranslationQueue"]},
		{awsenv.EnvDeliveryQueueURL, res.Queues["DeliveryQueue"]},
		{awsenv.EnvSlowDeliveryQueueURL, res.Queues["SlowDeliveryQueue"]},
		{awsenv.EnvWaitDeliveryQueueURL, res.Queues["DeliveryWaitQueue"]},
		{awsenv.EnvBucket, res.AttachmentsBucket},
	}
	for _, v := range vars {
		fmt.Fprintf(stdout, "%s=%s\n", v[0], v[1])
	}
	if *samEnv != "" {
		// SAM sets AWS_REGION itself and overrides only declared variables.
		params := map[string]string{awsenv.EnvCursorKey: localCursorKey}
		for _, v := range vars {
			if v[0] != awsenv.EnvRegion {
				params[v[0]] = v[1]
			}
		}
		data, _ := json.MarshalIndent(map[string]any{"Parameters": params}, "", "  ")
		if err := os.WriteFile(*samEnv, append(data, '\n'), 0o600); err != nil {
			return fmt.Errorf("local-aws: %w", err)
		}
	}
	fmt.Fprintf(stderr, "chatctl: local AWS at %s (moto_server pid %d, in-flight limit %d a queue); stop with Ctrl-C\n", moto.URL, moto.PID(), *inFlight)
	<-ctx.Done()
	fmt.Fprintf(stderr, "chatctl: stopping moto_server (pid %d)\n", moto.PID())
	return nil
}
