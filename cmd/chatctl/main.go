// Command chatctl is the chat service's admin and local-run command.
//
//	chatctl serve              run the whole API locally (ADDR, default 127.0.0.1:3000)
//	chatctl apply FILE|-       create or update workspaces from a fixture document
//	chatctl post ...           send a correctly authenticated inbound webhook request
//	chatctl webhooks test|recover ID  test a webhook, or queue its failed deliveries again
//	chatctl replay-relay-failures  redo the relay's work (jobs and events) for RelayFailureQueue's records
//	chatctl index-failed-deliveries  index the failed deliveries recorded before FailedDeliveryIndex (once)
//	chatctl local-aws          moto_server with AWS's limits, the table and queues (--addr)
//	chatctl load               start the local stack with AWS's throughput limits scaled, run load scenarios, print a table
//
// Every subcommand honours AWS_ENDPOINT_URL, AWS_REGION and TABLE_NAME, with
// local defaults that agree with each other (see README.md).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  chatctl serve [--demo] [--throughput K]   run the API locally at $ADDR (default 127.0.0.1:3000)
  chatctl apply FILE|-          apply a fixture document; prints it with generated values
  chatctl post --webhook-url URL (--secret S | --signing-secret S) [--idempotency-key K] CONTENT
  chatctl replay-relay-failures [--failure-queue-url URL] [--queue-url URL] [--delivery-queue-url URL]
  chatctl index-failed-deliveries   index the failed deliveries recorded before FailedDeliveryIndex (once)
  chatctl listen --signing-secret S [--addr 127.0.0.1:PORT]   receive webhook deliveries, print each event
  chatctl webhooks test --workspace WS [--kind outbound|support] [--token T] [--api URL] ID   send a webhook.test event now
  chatctl webhooks recover --workspace WS --since TIME [--until TIME] [--kind ...] [--token T] [--api URL] ID   queue failed deliveries again
  chatctl local-aws [--addr 127.0.0.1:PORT] [--sqs-in-flight N] [--throughput K] [--sam-env-vars FILE]   serve the faithful local AWS
  chatctl load [--throughput K] [--scenarios a,c,b,d,e] [--readers N] [--apertium] [--log FILE]   load scenarios against a local stack of its own
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "chatctl: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "apply":
		return runApply(ctx, args[1:], stdin, stdout, stderr)
	case "post":
		return runPost(ctx, args[1:], stdout, stderr)
	case "replay-relay-failures":
		return runReplayRelayFailures(ctx, args[1:], stdout, stderr)
	case "index-failed-deliveries":
		return runIndexFailedDeliveries(ctx, args[1:], stdout, stderr)
	case "listen":
		return runListen(ctx, args[1:], stdout, stderr)
	case "webhooks":
		return runWebhooks(ctx, args[1:], stdout, stderr)
	case "local-aws":
		return runLocalAWS(ctx, args[1:], stdout, stderr)
	case "load":
		return runLoad(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
