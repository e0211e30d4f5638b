// Package stacktest gives tests a real local stack: one moto_server per test
// binary (started by Main, stopped by its PID when the tests end, and killed
// by the kernel when the test binary dies first, as on a -timeout panic:
// see package childproc), and per
// test a fresh table and fresh queues created from template.yaml, with AWS
// clients whose calls are counted.
//
// moto_server is required: `make test` installs it. Without it the tests
// fail, they do not skip, because an adapter test that did not run proves
// nothing.
package stacktest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/testlog"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

var (
	server *motoserver.Server
	check  *motoserver.IAM
	seq    atomic.Int64
)

// Main starts moto_server, runs the tests and stops it. Use it as
// `func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }`.
func Main(m *testing.M) int {
	testlog.Quiet()
	// Every configuration awsenv.Load builds, the stacks' and those a
	// function's FromEnv builds in a test, names its calls' sites.
	awsenv.APIOptions = append(awsenv.APIOptions, siteOption)
	if url := os.Getenv("STACKTEST_ENDPOINT"); url != "" {
		os.Setenv(awsenv.EnvEndpoint, url)
		return m.Run()
	}
	c, err := newCheck()
	if err != nil {
		fmt.Fprintf(os.Stderr, "stacktest: %v\n", err)
		return 1
	}
	s, err := motoserver.Start(context.Background(), 0, motoserver.WithIAM(c))
	if err != nil {
		fmt.Fprintf(os.Stderr, "stacktest: %v\n", err)
		return 1
	}
	server, check = s, c
	defer s.Stop()
	os.Setenv(awsenv.EnvEndpoint, s.URL)
	code := m.Run()
	if path := os.Getenv(EnvIAMRecord); path != "" {
		if err := mergeRecord(path, c.Allowed()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	return code
}

// newCheck is the IAM check of template.yaml's functions that the test
// binary's moto_server applies (STACKTEST_IAM_LOG=1 prints each denial).
func newCheck() (*motoserver.IAM, error) {
	set, err := iampolicy.Project()
	if err != nil {
		return nil, err
	}
	c := motoserver.NewIAM(set)
	if os.Getenv("STACKTEST_IAM_LOG") != "" {
		c.Log = os.Stderr
	}
	return c, nil
}

// IAM is the IAM check of the test binary's moto_server, with its record
// of the calls it allowed and denied; nil when the tests use another
// endpoint (STACKTEST_ENDPOINT).
func IAM() *motoserver.IAM { return check }

// Stack is one test's isolated resources. AWS, DB, SQS and S3 are an
// administrator's (unchecked); As gives a function's configuration.
type Stack struct {
	Endpoint string
	AWS      aws.Config
	DB       *dynamodb.Client
	SQS      *sqs.Client
	// S3 addresses buckets by path (localrun.S3Client), as every S3 client
	// of the local stack must.
	S3 *s3.Client
	// Bucket is the local name of the template's AttachmentsBucket
	// (Resources.AttachmentsBucket), the functions' ATTACHMENTS_BUCKET.
	Bucket    string
	Calls     *awsenv.Counter
	Faults    *Faults
	Table     string
	Resources localrun.Resources
	t         testing.TB
}

// As returns the stack's configuration signed as function (a template
// LogicalId), whose calls the local stack holds to that function's policy.
func (st *Stack) As(function string) aws.Config {
	st.t.Helper()
	if check != nil {
		if _, ok := check.Policies().Functions[function]; !ok {
			st.t.Fatalf("stacktest: As(%q): no such function in template.yaml", function)
		}
	}
	return awsenv.ForFunction(st.AWS, function)
}

// AsApp sets a's Identity so that each handler it builds makes its calls
// as its own function (app.App.For), and returns a.
func (st *Stack) AsApp(a *app.App) *app.App {
	a.Identity = st.As
	return a
}

// New creates a fresh table, queues and bucket for t, named after t.
func New(t testing.TB) *Stack {
	t.Helper()
	ctx := context.Background()
	endpoint := os.Getenv(awsenv.EnvEndpoint)
	if endpoint == "" {
		t.Fatalf("stacktest: no endpoint; call stacktest.Main from TestMain")
	}
	cfg, err := awsenv.Load(ctx)
	if err != nil {
		t.Fatalf("stacktest: %v", err)
	}
	calls := awsenv.Count(&cfg)
	faults := &Faults{}
	faults.install(&cfg)
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatalf("stacktest: %v", err)
	}
	name := fmt.Sprintf("t%d-%s", seq.Add(1), sanitize(t.Name()))
	db, q, b := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), localrun.S3Client(cfg)
	res, err := localrun.Ensure(ctx, db, q, b, tmpl, name, name+"-")
	if err != nil {
		t.Fatalf("stacktest: %v", err)
	}
	calls.Reset()
	return &Stack{Endpoint: endpoint, AWS: cfg, DB: db, SQS: q, S3: b, Bucket: res.AttachmentsBucket, Calls: calls, Faults: faults, Table: name, Resources: res, t: t}
}

// sanitize keeps a name within what table and queue names allow.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}
