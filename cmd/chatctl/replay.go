package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
	"github.com/chatbridge/chat/pkg/sqsqueue/failurequeue"
)

// envFailureQueueURL names RelayFailureQueue for replay-relay-failures.
const envFailureQueueURL = "RELAY_FAILURE_QUEUE_URL"

// runReplayRelayFailures replays every record of RelayFailureQueue (Lambda's
// on-failure records of the outbox relay's stream mapping) without reading
// the stream: the records the relay parked in those ranges go through the
// relay's work again, translation jobs and events alike (relay.Replayer).
// It prints what it did as JSON.
func runReplayRelayFailures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay-relay-failures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	failures := fs.String("failure-queue-url", awsenv.Get(envFailureQueueURL, ""), "RelayFailureQueue's URL ($"+envFailureQueueURL+")")
	queue := fs.String("queue-url", awsenv.Get(awsenv.EnvQueueURL, ""), "TranslationQueue's URL ($"+awsenv.EnvQueueURL+")")
	deliveries := fs.String("delivery-queue-url", awsenv.Get(awsenv.EnvDeliveryQueueURL, ""), "DeliveryQueue's URL ($"+awsenv.EnvDeliveryQueueURL+")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *failures == "" || *queue == "" || *deliveries == "" {
		return errors.New("replay-relay-failures needs --failure-queue-url, --queue-url and --delivery-queue-url (or $" +
			envFailureQueueURL + ", $" + awsenv.EnvQueueURL + " and $" + awsenv.EnvDeliveryQueueURL + ")")
	}
	slog.SetDefault(slog.New(slog.NewJSONHandler(stderr, nil)))
	localEnv()
	a, _, err := app.FromEnvWith(ctx, adminAWS)
	if err != nil {
		return err
	}
	client := sqs.NewFromConfig(a.AWS)
	translations := sqsqueue.New(client, *queue)
	rp := &relay.Replayer{
		Failures: failurequeue.New(client, *failures),
		Parked:   relaystore.New(a.DB, a.Table),
		Relay:    &relay.Relay{Queue: translations, Events: relaying.Fanout(a, *deliveries), Translations: translationstore.New(a.DB, a.Table)},
		Sweep:    &relay.Sweep{Store: translationstore.New(a.DB, a.Table), Queue: translations, Now: a.Now},
	}
	res, runErr := rp.Run(ctx)
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(out))
	switch {
	case runErr != nil:
		return runErr
	case res.Left > 0:
		return fmt.Errorf("%d failure record(s) could not be replayed now and stay in the queue; run again later", res.Left)
	case res.Unparked > 0:
		return fmt.Errorf("%d failure record(s) name no parked record: the relay could not park them, so their events cannot be restored; "+
			"the sweep re-queued unfinished translations; they stay in the queue (see the error log for their ranges)", res.Unparked)
	}
	return nil
}
