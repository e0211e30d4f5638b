package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
)

// runIndexFailedDeliveries puts the failed delivery records written before
// FailedDeliveryIndex existed into it (deliverystore's
// IndexFailedDeliveries: a Scan of the table), so that a recovery finds
// them; run once when the index is deployed. It prints how many it
// indexed as JSON.
func runIndexFailedDeliveries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("index-failed-deliveries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("index-failed-deliveries takes no arguments")
	}
	localEnv()
	a, _, err := app.FromEnvWith(ctx, adminAWS)
	if err != nil {
		return err
	}
	n, err := deliverystore.New(a.DB, a.Table).IndexFailedDeliveries(ctx)
	fmt.Fprintf(stdout, "{\"indexed\": %d}\n", n)
	return err
}
