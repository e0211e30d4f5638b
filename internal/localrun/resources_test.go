package localrun_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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
	db, q, b := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), localrun.S3Client(cfg)
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
				got[i], errs[i] = localrun.Ensure(context.Background(), db, q, b, tmpl, name, name+"-")
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
			if got[i].AttachmentsBucket == "" || fmt.Sprint(got[i].Buckets) != fmt.Sprint(got[0].Buckets) {
				t.Errorf("round %d: creator %d's buckets %v, want creator 1's %v", round, i+1, got[i].Buckets, got[0].Buckets)
			}
			if fmt.Sprint(got[i].Queues) != fmt.Sprint(got[0].Queues) {
				t.Errorf("round %d: creator %d's queues %v, want creator 1's %v", round, i+1, got[i].Queues, got[0].Queues)
			}
		}
		if _, err := b.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: &got[0].AttachmentsBucket}); err != nil {
			t.Fatalf("round %d: the bucket %s: %v", round, got[0].AttachmentsBucket, err)
		}
		desc, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil || desc.Table.TableStatus != "ACTIVE" {
			t.Fatalf("round %d: the table: %v, %v; want it ACTIVE", round, desc, err)
		}
	}
}

// TestBucketName: names follow S3's rules (3 to 63 lowercase letters,
// digits and hyphens, a letter or digit at each end) and stay distinct
// for prefixes that differ only past the 63rd character.
func TestBucketName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	long := "t12-" + strings.Repeat("TestSomethingLong_", 4)
	for _, tc := range []struct{ prefix, want string }{
		{"t12-TestFoo-", "t12-testfoo-attachmentsbucket"},
		{"chat-", "chat-attachmentsbucket"},
		{"-", "attachmentsbucket"},
	} {
		if got := localrun.BucketName(tc.prefix, "AttachmentsBucket"); got != tc.want {
			t.Errorf("BucketName(%q): got %q, want %q", tc.prefix, got, tc.want)
		}
	}
	a, b := localrun.BucketName(long+"A-", "AttachmentsBucket"), localrun.BucketName(long+"B-", "AttachmentsBucket")
	if !valid.MatchString(a) || !valid.MatchString(b) || a == b {
		t.Fatalf("long prefixes: got %q and %q, want two distinct valid names", a, b)
	}
}
