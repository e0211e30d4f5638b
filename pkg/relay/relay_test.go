package relay_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/queueapi"
	"github.com/chatbridge/chat/pkg/translation"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

var ids = chat.NewIDs()

// world is one test's stack with a channel read in Spanish.
type world struct {
	st      *stacktest.Stack
	store   *storetest.Stores
	channel string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	st := stacktest.New(t)
	w := &world{st: st, store: storetest.New(st.DB, st.Table), channel: ids.New(time.Now())}
	reader := map[string]any{"pk": "CHAN#" + w.channel, "sk": "READER#USER#" + ids.New(time.Now()), "kind": "user",
		"id": ids.New(time.Now()), "language": "es-ES"}
	av, err := attributevalue.MarshalMap(reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &st.Table, Item: av}); err != nil {
		t.Fatalf("seed reader: %v", err)
	}
	return w
}

// post stores an English message as a post does and returns its id.
func (w *world) post(t *testing.T, content string, at time.Time) string {
	t.Helper()
	m := chat.Message{ID: ids.New(at), WorkspaceID: ids.New(at), ChannelID: w.channel,
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, Content: content, SourceLanguage: "en",
		Status: chat.MessageQueued, CreatedAt: at}
	if err := w.store.PutMessage(context.Background(), m); err != nil {
		t.Fatalf("put message: %v", err)
	}
	return m.ID
}

// spanish translates into es by prefixing "[es] ", counting its calls.
type spanish struct{ calls atomic.Int32 }

func (s *spanish) Targets(context.Context, string) (*translation.Languages, error) {
	return translation.NewLanguages("en", "es"), nil
}

func (s *spanish) Translate(_ context.Context, text, _, target string) (translation.Result, error) {
	s.calls.Add(1)
	return translation.Result{Text: "[" + target + "] " + text}, nil
}

// translateQueue runs the real translation handler over every job on the
// translation queue, as the queue's event source mapping would, and
// returns how many jobs it took.
func (w *world) translateQueue(t *testing.T, tr translation.Translator) int {
	t.Helper()
	ctx := context.Background()
	h := queueapi.NewTranslateHandler(&translation.Service{Store: w.store.Translation, Translator: tr})
	url := w.st.Resources.Queues["TranslationQueue"]
	n := 0
	for {
		out, err := w.st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatalf("receive jobs: %v", err)
		}
		if len(out.Messages) == 0 {
			return n
		}
		var ev events.SQSEvent
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body)})
		}
		resp, err := h(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("translate: %+v %v, want no failures", resp, err)
		}
		for _, m := range out.Messages {
			if _, err := w.st.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete job: %v", err)
			}
		}
		n += len(out.Messages)
	}
}

// translation returns the stored es translation of msg and its flag ("",
// "" when there is none).
func (w *world) translation(t *testing.T, msg string) (content, untranslated string) {
	t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &w.st.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "MSG#" + msg}, "sk": &types.AttributeValueMemberS{Value: "TR#es"},
		}})
	if err != nil {
		t.Fatalf("get translation: %v", err)
	}
	if c, ok := out.Item["content"].(*types.AttributeValueMemberS); ok {
		content = c.Value
	}
	if c, ok := out.Item["untranslated"].(*types.AttributeValueMemberS); ok {
		untranslated = c.Value
	}
	return content, untranslated
}

// marked reports whether msg still holds its untranslated marker.
func (w *world) marked(t *testing.T, msg string) bool {
	t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &w.st.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CHAN#" + w.channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + msg},
		}})
	if err != nil || out.Item == nil {
		t.Fatalf("get message %s: %v", msg, err)
	}
	_, shard := out.Item["pending_shard"]
	_, due := out.Item["pending_due"]
	if shard != due {
		t.Fatalf("message %s holds half a marker: shard %v, due %v", msg, shard, due)
	}
	return shard
}

// streamEvent reads every insert of a message item on the table's stream
// as the event Lambda gives the relay (through Lambda's JSON), and the
// stream's shard.
func (w *world) streamEvent(t *testing.T) (events.DynamoDBEvent, string) {
	t.Helper()
	ctx := context.Background()
	streams := dynamodbstreams.NewFromConfig(w.st.AWS)
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &w.st.Resources.StreamARN})
	if err != nil || len(desc.StreamDescription.Shards) != 1 {
		t.Fatalf("describe stream: %v", err)
	}
	shard := desc.StreamDescription.Shards[0].ShardId
	it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &w.st.Resources.StreamARN,
		ShardId: shard, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("shard iterator: %v", err)
	}
	out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		t.Fatalf("get records: %v", err)
	}
	var ev events.DynamoDBEvent
	for _, r := range out.Records {
		sk, _ := r.Dynamodb.Keys["sk"].(*streamtypes.AttributeValueMemberS)
		if r.EventName != streamtypes.OperationTypeInsert || sk == nil || !strings.HasPrefix(sk.Value, "MSG#") {
			continue
		}
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: string(r.EventName), EventSource: "aws:dynamodb",
			Change: events.DynamoDBStreamRecord{SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), NewImage: stacktest.LambdaImage(t, r.Dynamodb.NewImage)}})
	}
	return ev, aws.ToString(shard)
}

// translationService runs one job through the real translation service.
type translationService struct{ w *world }

func (s *translationService) process(ctx context.Context, job messages.Job) error {
	return (&translation.Service{Store: s.w.store.Translation, Translator: &spanish{}}).Process(ctx, job)
}
