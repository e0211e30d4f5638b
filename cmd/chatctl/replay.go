package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// envFailureQueueURL names RelayFailureQueue for replay-relay-failures.
const envFailureQueueURL = "RELAY_FAILURE_QUEUE_URL"

// runReplayRelayFailures replays every record of RelayFailureQueue (Lambda's
// on-failure records of the outbox relay's stream mapping): their messages
// are queued for translation again, from the stream while it holds them,
// else by a sweep run over PendingTranslationIndex. It prints what it did
// as JSON.
func runReplayRelayFailures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay-relay-failures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	failures := fs.String("failure-queue-url", awsenv.Get(envFailureQueueURL, ""), "RelayFailureQueue's URL ($"+envFailureQueueURL+")")
	queue := fs.String("queue-url", awsenv.Get(awsenv.EnvQueueURL, ""), "TranslationQueue's URL ($"+awsenv.EnvQueueURL+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *failures == "" || *queue == "" {
		return errors.New("replay-relay-failures needs --failure-queue-url and --queue-url (or $" + envFailureQueueURL + " and $" + awsenv.EnvQueueURL + ")")
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(stderr, nil)))
	localEnv()
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return err
	}
	client := sqs.NewFromConfig(a.AWS)
	translations := sqsqueue.New(client, *queue)
	rp := &relay.Replayer{
		Failures: sqsqueue.New(client, *failures),
		Stream:   dynamo.NewStreamReader(dynamodbstreams.NewFromConfig(a.AWS)),
		Relay:    &relay.Relay{Queue: translations},
		Sweep:    &relay.Sweep{Store: a.Store, Queue: translations, Now: a.Now},
	}
	res, runErr := rp.Run(ctx)
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(out))
	if runErr != nil {
		return runErr
	}
	if res.Left > 0 {
		return fmt.Errorf("%d failure record(s) could not be replayed now and stay in the queue; run again later", res.Left)
	}
	return nil
}
