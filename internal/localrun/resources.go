// Package localrun does locally what AWS does for a deployed stack: it
// creates, on a local DynamoDB/SQS/S3 endpoint (moto_server), the table,
// queues and bucket that template.yaml declares, so that a local run and the tests use
// exactly the deployed definitions, and it runs functions as Lambda runs
// them: under their template Timeout (Invoke), fed by their event source
// mappings with the template's settings (StreamMapping, QueueMapping), and
// the sweep on its schedule (SweepEvery).
package localrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// Resources names what Ensure created or found.
type Resources struct {
	Table string
	// Queues maps each queue's logical id to its URL.
	Queues map[string]string
	// QueueARNs maps each queue's logical id to its ARN.
	QueueARNs map[string]string
	// StreamARN is the table's stream, when the template enables one.
	StreamARN string
	// Buckets maps each S3 bucket's logical id to its local name
	// (BucketName).
	Buckets map[string]string
	// AttachmentsBucket is the local name of the template's
	// AttachmentsBucket, the functions' ATTACHMENTS_BUCKET
	// (awsenv.EnvBucket); "" when the template has none.
	AttachmentsBucket string
}

// AttachmentsBucketID is the logical id of the bucket whose name the
// functions read from ATTACHMENTS_BUCKET.
const AttachmentsBucketID = "AttachmentsBucket"

// S3Client returns an S3 client on cfg for a local endpoint, which
// addresses buckets by path (http://127.0.0.1:port/<bucket>/<key>): a
// loopback address has no per-bucket host names.
func S3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

// BucketName is the local name of the bucket logical created with prefix:
// prefix+logical, lowercased, with every character S3 refuses in a name
// made a hyphen; a name longer than S3's 63 characters keeps its start and
// ends with a hash of the whole, so that names stay distinct per prefix.
func BucketName(prefix, logical string) string {
	full := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, prefix+logical)
	if len(full) > 63 {
		sum := sha256.Sum256([]byte(prefix + logical))
		full = full[:63-9] + "-" + hex.EncodeToString(sum[:4])
	}
	// A name starts and ends with a letter or digit.
	full = strings.Trim(full, "-")
	for len(full) < 3 {
		full += "0"
	}
	return full
}

// Ensure creates the template's one DynamoDB table under the name table,
// each SQS queue under prefix+logical id and each S3 bucket under
// BucketName(prefix, logical id), skipping those that exist. b addresses
// buckets by path (S3Client).
func Ensure(ctx context.Context, db *dynamodb.Client, q *sqs.Client, b *s3.Client, tmpl *samtemplate.Template, table, prefix string) (Resources, error) {
	res := Resources{Table: table, Queues: map[string]string{}, QueueARNs: map[string]string{}, Buckets: map[string]string{}}
	tables := tmpl.OfType("AWS::DynamoDB::Table")
	if len(tables) != 1 {
		return res, fmt.Errorf("localrun: template declares %d tables, want 1", len(tables))
	}
	arn, err := ensureTable(ctx, db, tmpl.Resources[tables[0]].Properties, table)
	if err != nil {
		return res, err
	}
	res.StreamARN = arn
	// Queues without a redrive policy first, so that redrive targets exist.
	names := tmpl.OfType("AWS::SQS::Queue")
	sort.SliceStable(names, func(i, j int) bool {
		_, ri := tmpl.Resources[names[i]].Properties["RedrivePolicy"]
		_, rj := tmpl.Resources[names[j]].Properties["RedrivePolicy"]
		return !ri && rj
	})
	for _, name := range names {
		url, qarn, err := ensureQueue(ctx, q, prefix+name, tmpl.Resources[name].Properties, res.QueueARNs)
		if err != nil {
			return res, err
		}
		res.Queues[name], res.QueueARNs[name] = url, qarn
	}
	for _, logical := range tmpl.OfType("AWS::S3::Bucket") {
		name := BucketName(prefix, logical)
		if err := ensureBucket(ctx, b, name); err != nil {
			return res, err
		}
		res.Buckets[logical] = name
	}
	res.AttachmentsBucket = res.Buckets[AttachmentsBucketID]
	return res, nil
}

// ensureBucket creates the bucket name unless this account has it (a
// creator racing with another may be told BucketAlreadyExists rather than
// BucketAlreadyOwnedByYou, hence the HeadBucket). Its CORS rules are the
// proxy's (internal/motoserver), which reads them from the template.
func ensureBucket(ctx context.Context, b *s3.Client, name string) error {
	_, err := b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name})
	if err == nil {
		return nil
	}
	if _, herr := b.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &name}); herr != nil {
		return fmt.Errorf("localrun: create bucket %s: %w", name, err)
	}
	return nil
}

// tableWait bounds how long Ensure waits for a table that another process
// (chatctl local-aws and chatctl serve started together, two test binaries)
// is creating.
const tableWait = 2 * time.Minute

// ensureTable creates the table name from the template's properties
// unless it exists, and returns its stream's ARN once it is ACTIVE. A
// table that another process created first (CreateTable's
// ResourceInUseException) or is still creating is waited for, at most
// tableWait.
func ensureTable(ctx context.Context, db *dynamodb.Client, props map[string]any, name string) (string, error) {
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
	if err == nil {
		if desc.Table.TableStatus != dtypes.TableStatusActive {
			return waitForTable(ctx, db, name)
		}
		return aws.ToString(desc.Table.LatestStreamArn), nil
	}
	var nf *dtypes.ResourceNotFoundException
	if !errors.As(err, &nf) {
		return "", fmt.Errorf("localrun: describe table %s: %w", name, err)
	}
	var in struct {
		AttributeDefinitions []struct{ AttributeName, AttributeType string }
		KeySchema            []struct{ AttributeName, KeyType string }
		StreamSpecification  *struct{ StreamViewType string }
		TimeToLive           *struct {
			AttributeName string
			Enabled       bool
		} `json:"TimeToLiveSpecification"`
		GlobalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []struct{ AttributeName, KeyType string }
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
		}
	}
	if err := remarshal(props, &in); err != nil {
		return "", fmt.Errorf("localrun: table properties: %w", err)
	}
	create := &dynamodb.CreateTableInput{TableName: &name, BillingMode: dtypes.BillingModePayPerRequest}
	for _, a := range in.AttributeDefinitions {
		create.AttributeDefinitions = append(create.AttributeDefinitions, dtypes.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName), AttributeType: dtypes.ScalarAttributeType(a.AttributeType)})
	}
	for _, k := range in.KeySchema {
		create.KeySchema = append(create.KeySchema, dtypes.KeySchemaElement{
			AttributeName: aws.String(k.AttributeName), KeyType: dtypes.KeyType(k.KeyType)})
	}
	for _, g := range in.GlobalSecondaryIndexes {
		gsi := dtypes.GlobalSecondaryIndex{IndexName: aws.String(g.IndexName), Projection: &dtypes.Projection{
			ProjectionType: dtypes.ProjectionType(g.Projection.ProjectionType), NonKeyAttributes: g.Projection.NonKeyAttributes}}
		for _, k := range g.KeySchema {
			gsi.KeySchema = append(gsi.KeySchema, dtypes.KeySchemaElement{
				AttributeName: aws.String(k.AttributeName), KeyType: dtypes.KeyType(k.KeyType)})
		}
		create.GlobalSecondaryIndexes = append(create.GlobalSecondaryIndexes, gsi)
	}
	if in.StreamSpecification != nil {
		create.StreamSpecification = &dtypes.StreamSpecification{
			StreamEnabled: aws.Bool(true), StreamViewType: dtypes.StreamViewType(in.StreamSpecification.StreamViewType)}
	}
	out, err := db.CreateTable(ctx, create)
	var inUse *dtypes.ResourceInUseException
	if errors.As(err, &inUse) {
		// Another process created it since DescribeTable: it sets it up
		// (its TTL included); wait until it is ACTIVE.
		return waitForTable(ctx, db, name)
	}
	if err != nil {
		return "", fmt.Errorf("localrun: create table %s: %w", name, err)
	}
	if in.TimeToLive != nil && in.TimeToLive.Enabled {
		if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &name,
			TimeToLiveSpecification: &dtypes.TimeToLiveSpecification{AttributeName: aws.String(in.TimeToLive.AttributeName), Enabled: aws.Bool(true)}}); err != nil {
			return "", fmt.Errorf("localrun: enable ttl on %s: %w", name, err)
		}
	}
	return aws.ToString(out.TableDescription.LatestStreamArn), nil
}

// waitForTable waits, at most tableWait, until the table name exists and
// is ACTIVE, and returns its stream's ARN.
func waitForTable(ctx context.Context, db *dynamodb.Client, name string) (string, error) {
	in := &dynamodb.DescribeTableInput{TableName: &name}
	desc, err := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		// A local endpoint creates a table in milliseconds; the SDK's
		// defaults (20 s to 120 s between checks) are AWS's minutes.
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 2*time.Second
	}).WaitForOutput(ctx, in, tableWait)
	if err != nil {
		return "", fmt.Errorf("localrun: wait for table %s, which another process is creating: %w", name, err)
	}
	return aws.ToString(desc.Table.LatestStreamArn), nil
}

func ensureQueue(ctx context.Context, q *sqs.Client, name string, props map[string]any, arns map[string]string) (string, string, error) {
	attrs := map[string]string{}
	for k, v := range props {
		switch k {
		case "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize":
			attrs[k] = fmt.Sprint(v)
		case "RedrivePolicy":
			rp, _ := v.(map[string]any)
			target, err := resolveArn(rp["deadLetterTargetArn"], arns)
			if err != nil {
				return "", "", err
			}
			b, _ := json.Marshal(map[string]string{"deadLetterTargetArn": target, "maxReceiveCount": fmt.Sprint(rp["maxReceiveCount"])})
			attrs["RedrivePolicy"] = string(b)
		}
	}
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if err != nil {
		return "", "", fmt.Errorf("localrun: create queue %s: %w", name, err)
	}
	arn, err := QueueARN(ctx, q, aws.ToString(out.QueueUrl))
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.QueueUrl), arn, nil
}

// QueueARN returns the ARN of the queue at url.
func QueueARN(ctx context.Context, q *sqs.Client, url string) (string, error) {
	ga, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []stypes.QueueAttributeName{stypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", fmt.Errorf("localrun: queue arn of %s: %w", url, err)
	}
	return ga.Attributes[string(stypes.QueueAttributeNameQueueArn)], nil
}

// resolveArn resolves `!GetAtt Queue.Arn` against queues created so far.
func resolveArn(v any, arns map[string]string) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprint(v), nil
	}
	ref, _ := m["!GetAtt"].(string)
	logical, attr, _ := strings.Cut(ref, ".")
	if arn, ok := arns[logical]; ok && attr == "Arn" {
		return arn, nil
	}
	return "", fmt.Errorf("localrun: cannot resolve %v", v)
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
