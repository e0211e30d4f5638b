package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/chatbridge/chat/internal/apyserver"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Local defaults. They agree across serve, apply and post.
const (
	defaultAddr      = "127.0.0.1:3000"
	defaultTable     = "chat"
	defaultMotoPort  = 4566
	localQueuePrefix = "chat-"
	// localCursorKey signs cursors of local runs only; deployed stacks
	// generate theirs in Secrets Manager.
	localCursorKey = "local-development-cursor-key-not-for-production"
)

// localEnv fills in the local defaults for what the user did not set, so
// that every subcommand agrees on the table and endpoint.
func localEnv() {
	if os.Getenv(awsenv.EnvTable) == "" {
		os.Setenv(awsenv.EnvTable, defaultTable)
	}
	if os.Getenv(awsenv.EnvCursorKey) == "" {
		os.Setenv(awsenv.EnvCursorKey, localCursorKey)
	}
	// Deliveries never leave this machine unless told to (contract
	// section 11).
	if _, ok := os.LookupEnv(app.EnvOutboundAllowCIDRS); !ok {
		os.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.0/8,::1/128")
	}
	if _, ok := os.LookupEnv(delivering.EnvOutboundAllowOnly); !ok {
		os.Setenv(delivering.EnvOutboundAllowOnly, "true")
	}
	// A local stack's region; against AWS, the profile's (adminAWS).
	if os.Getenv(awsenv.EnvEndpoint) != "" && os.Getenv(awsenv.EnvRegion) == "" && os.Getenv(awsenv.EnvDefaultRegion) == "" {
		os.Setenv(awsenv.EnvRegion, awsenv.DefaultRegion)
	}
}

// adminAWS is the AWS configuration of chatctl's administrator commands
// (apply, replay-relay-failures): against AWS, the SDK's own loader, which
// reads profiles, SSO and the shared files as the AWS CLI does; against a
// local stack (AWS_ENDPOINT_URL), a function's (awsenv.Load). Functions
// never link the SDK's loader (docs/performance.md).
func adminAWS(ctx context.Context) (aws.Config, error) {
	if os.Getenv(awsenv.EnvEndpoint) != "" {
		return awsenv.Load(ctx)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: set AWS_REGION or a profile's region")
	}
	if err := awsenv.InstrumentXRay(&cfg); err != nil {
		return aws.Config{}, err
	}
	return cfg, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "apply the embedded demo fixture and print a ready-to-paste curl")
	logFile := fs.String("log", "", "write the service's JSON log to this file, and only warnings and errors to stderr (--demo: "+demoLogFile+")")
	scale := fs.Float64("throughput", 0, "keep AWS's throughput limits divided by this factor (DynamoDB per partition key, API Gateway's rate, Lambda's concurrency; 0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scale < 0 {
		return fmt.Errorf("serve: --throughput %v: a factor of 0 (none) or more", *scale)
	}
	// The account's limits as traffic arrives, scaled (docs/performance.md,
	// "Load runs"); nil when --throughput is 0.
	throttles := localrun.NewThrottles(*scale)
	servedThrottles.Store(throttles)
	if *demo && *logFile == "" {
		*logFile = demoLogFile
	}
	logger, closeLog, err := serveLogger(stderr, *logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	slog.SetDefault(logger)
	if *logFile != "" {
		fmt.Fprintf(stderr, "chatctl: the service's log (JSON lines, one per request) goes to %s; warnings and errors show here too\n", *logFile)
	}
	addr := awsenv.Get("ADDR", defaultAddr)
	if err := loopbackOnly(addr); err != nil {
		return err
	}
	localEnv()
	// Each function's calls are held to its policy in template.yaml.
	policies, err := iampolicy.Project()
	if err != nil {
		return err
	}
	if os.Getenv(awsenv.EnvEndpoint) == "" {
		moto, err := motoserver.Start(ctx, defaultMotoPort, motoserver.WithIAM(motoserver.NewIAM(policies)), motoserver.Throughput(*scale))
		if err != nil {
			return fmt.Errorf("start moto_server (or set AWS_ENDPOINT_URL): %w", err)
		}
		defer moto.Stop()
		os.Setenv(awsenv.EnvEndpoint, moto.URL)
		fmt.Fprintf(stderr, "chatctl: started moto_server at %s (stopped on exit)\n", moto.URL)
	} else if _, err := motoserver.CheckFaithful(ctx, os.Getenv(awsenv.EnvEndpoint)); err != nil {
		// A plain moto_server lacks what keeps it faithful (package motoserver).
		return fmt.Errorf("AWS_ENDPOINT_URL: %w; start the faithful one with `chatctl local-aws --addr 127.0.0.1:PORT` and point AWS_ENDPOINT_URL at it", err)
	} else if *scale > 0 {
		if err := motoserver.SetLimits(ctx, os.Getenv(awsenv.EnvEndpoint), motoserver.Override{Throughput: *scale}); err != nil {
			return err
		}
	}
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return err
	}
	// a is an administrator (creating the table, applying the demo); each
	// function runs on a.For(its LogicalId), signing as itself.
	a.Identity = func(function string) aws.Config { return awsenv.ForFunction(a.AWS, function) }
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		return err
	}
	res, err := localrun.Ensure(ctx, dynamodb.NewFromConfig(a.AWS), sqs.NewFromConfig(a.AWS), localrun.S3Client(a.AWS), tmpl, a.Table, localQueuePrefix)
	if err != nil {
		return err
	}
	// TRANSLATION_QUEUE_URL, when set, names the queue to use instead of the
	// one created from the template.
	queueURL, queueARN := res.Queues["TranslationQueue"], res.QueueARNs["TranslationQueue"]
	if v := os.Getenv(awsenv.EnvQueueURL); v != "" && v != queueURL {
		if queueARN, err = localrun.QueueARN(ctx, sqs.NewFromConfig(a.AWS), v); err != nil {
			return fmt.Errorf("%s: %w", awsenv.EnvQueueURL, err)
		}
		queueURL = v
	}
	os.Setenv(awsenv.EnvQueueURL, queueURL)
	// The functions' bucket is the one created from the template.
	os.Setenv(awsenv.EnvBucket, res.AttachmentsBucket)
	a.Bucket = res.AttachmentsBucket
	// What the event source mappings do in AWS, with the template's
	// settings and timeouts: relay message inserts from the table's stream
	// to the queue.
	workers, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	// Events go to the delivery queue, whose consumer below makes the
	// attempts (OUTBOUND_ALLOW_ONLY keeps them on this machine).
	deliveryURL := res.Queues["DeliveryQueue"]
	os.Setenv(awsenv.EnvDeliveryQueueURL, deliveryURL)
	relayFn := a.For("OutboxRelayFunction")
	outbox := relaying.Relay(relayFn, queueURL, deliveryURL)
	relayMapping, err := localrun.NewStreamMapping(tmpl, "OutboxRelayFunction", dynamodbstreams.NewFromConfig(relayFn.AWS), sqs.NewFromConfig(relayFn.AWS), res, outbox.HandleStream)
	if err != nil {
		return err
	}
	relayMapping.Function.Concurrency = throttles.Executions()
	go relayMapping.Run(workers)
	// ... and what TranslationSweepFunction's schedule does: queue again the
	// messages whose translation never finished.
	sweepFn := a.For("TranslationSweepFunction")
	go localrun.SweepEvery(workers, &relay.Sweep{Store: translationstore.New(sweepFn.DB, sweepFn.Table), Queue: sqsqueue.New(sqs.NewFromConfig(sweepFn.AWS), queueURL), Now: a.Now}, time.Minute)
	stopTranslator, err := localTranslator(ctx, stderr)
	if err != nil {
		return err
	}
	defer stopTranslator()
	translateFn := a.For("TranslateFunction")
	translate, err := translating.Handler(ctx, translateFn)
	if err != nil {
		return err
	}
	translateMapping, err := localrun.NewQueueMapping(tmpl, "TranslateFunction", sqs.NewFromConfig(translateFn.AWS), queueURL, queueARN, localrun.SQSHandler(translate))
	if err != nil {
		return err
	}
	translateMapping.Function.Concurrency = throttles.Executions()
	go translateMapping.Run(workers)
	deliverFn := a.For("DeliverWebhooksFunction")
	deliverer, err := delivering.Deliverer(deliverFn, delivering.Queues{Fast: deliveryURL, Slow: res.Queues["SlowDeliveryQueue"], Wait: res.Queues["DeliveryWaitQueue"]})
	if err != nil {
		return err
	}
	// Both lanes, as the template's two SQS events read them.
	deliverMappings, err := localrun.NewQueueMappings(tmpl, "DeliverWebhooksFunction", sqs.NewFromConfig(deliverFn.AWS), res, deliverer.HandleSQS)
	if err != nil {
		return err
	}
	for _, m := range deliverMappings {
		m.Function.Concurrency = throttles.Executions()
		go m.Run(workers)
	}
	if *demo {
		if err := applyDemo(ctx, a, stdout); err != nil {
			return err
		}
		if err := demoDeliveries(workers, a, stdout, stderr); err != nil {
			return err
		}
	}
	handlers, err := handlers.All(a)
	if err != nil {
		return err
	}
	rt, err := startRealtime(workers, a, policies, dynamodbstreams.NewFromConfig(a.For("RealtimePushFunction").AWS), res, throttles.Executions(), nil)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: withRealtime(withOpenAPI(throttles.APIGateway(httpapi.Mux(handlers))), rt), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "chatctl: serving the API on http://%s (table %s), its OpenAPI document at http://%[1]s/openapi.yaml\n", ln.Addr(), a.Table)
	if throttles != nil {
		fmt.Fprintf(stderr, "chatctl: AWS's throughput limits divided by %v: %v requests a second (burst %v), %d concurrent executions, %v WCU and %v RCU a second per partition key\n",
			*scale, localrun.APIGatewayRate / *scale, localrun.APIGatewayBurst / *scale, max(1, int(localrun.AccountConcurrency / *scale)), 1000 / *scale, 3000 / *scale)
	}
	fmt.Fprintf(stderr, "chatctl: serving the realtime API on ws://%s%s (its Management API at %s)\n", ln.Addr(), realtimePath, rt.ManagementURL)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// withOpenAPI serves the embedded OpenAPI document at GET /openapi.yaml and
// everything else, other methods on that path included, with api.
func withOpenAPI(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Content-Length", strconv.Itoa(len(chatbundle.OpenAPI)))
		_, _ = w.Write(chatbundle.OpenAPI)
	})
	mux.Handle("/", api)
	return mux
}

// loopbackOnly refuses to listen beyond this machine: the local server has
// demo credentials and no TLS.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("ADDR %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("ADDR %q: chatctl serve listens on loopback addresses only", addr)
}

// localTranslator chooses the local run's translator when TRANSLATOR is
// unset: Apertium when apertium-apy and a pair are installed (it starts one,
// stopped by the returned func), else none, said in one line.
func localTranslator(ctx context.Context, stderr io.Writer) (func(), error) {
	if os.Getenv(translating.EnvTranslator) != "" {
		return func() {}, nil
	}
	if err := apyserver.Missing(apyserver.DefaultModesDir, "eng-spa"); err != nil {
		os.Setenv(translating.EnvTranslator, translating.TranslatorNone)
		fmt.Fprintf(stderr, "chatctl: translation is off (TRANSLATOR=none): %v; install apertium-apy and apertium-eng-spa to translate\n", err)
		return func() {}, nil
	}
	srv, err := apyserver.Start(ctx, 0, apyserver.DefaultModesDir)
	if err != nil {
		return nil, fmt.Errorf("start apertium-apy: %w", err)
	}
	os.Setenv(translating.EnvTranslator, translating.TranslatorApertium)
	os.Setenv(translating.EnvApertiumURL, srv.URL)
	fmt.Fprintf(stderr, "chatctl: translating with Apertium at %s (stopped on exit)\n", srv.URL)
	return srv.Stop, nil
}
