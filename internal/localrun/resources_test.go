package localrun_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// TestEnsureConcurrently is chatctl serve started right after chatctl
// local-aws, against the real local AWS: both create the template's table
// and queues at once (here three creators, several times, each time on a
// new table), and each gets the same resources, none an error. The one
// whose CreateTable meets the other's table (ResourceInUseException) waits
// for it instead.
func TestEnsureConcurrently(t *testing.T) {
	cfg, err := awsenv.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db, q := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	tmpl := template(t)
	const creators = 3
	for round := range 4 {
		name := fmt.Sprintf("ensure-%d-%d", time.Now().UnixNano(), round)
		got := make([]localrun.Resources, creators)
		errs := make([]error, creators)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range creators {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = localrun.Ensure(context.Background(), db, q, tmpl, name, name+"-")
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: creator %d of %d: %v", round, i+1, creators, err)
			}
		}
		for i := 1; i < creators; i++ {
			if got[i].StreamARN == "" || got[i].StreamARN != got[0].StreamARN {
				t.Errorf("round %d: creator %d's stream %q, want creator 1's %q", round, i+1, got[i].StreamARN, got[0].StreamARN)
			}
			if fmt.Sprint(got[i].Queues) != fmt.Sprint(got[0].Queues) {
				t.Errorf("round %d: creator %d's queues %v, want creator 1's %v", round, i+1, got[i].Queues, got[0].Queues)
			}
		}
		desc, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil || desc.Table.TableStatus != "ACTIVE" {
			t.Fatalf("round %d: the table: %v, %v; want it ACTIVE", round, desc, err)
		}
	}
}
