package localrun_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func template(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestRelayKeepsGoingAfterACancelledTransaction: moto puts back a copy of
// the table when a transaction is cancelled; the relay's stream mapping
// (its template settings and filter) must go on reading the new table's
// stream, and must not relay the cancelled transaction's
// partial write.
func TestRelayKeepsGoingAfterACancelledTransaction(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()
	queue := st.Resources.Queues["TranslationQueue"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := localrun.NewStreamMapping(template(t), "OutboxRelayFunction", dynamodbstreams.NewFromConfig(st.AWS), st.SQS, st.Resources,
		(&relay.Relay{Queue: sqsqueue.New(st.SQS, queue)}).HandleStream)
	if err != nil {
		t.Fatal(err)
	}
	m.Poll = 20 * time.Millisecond
	done, err := m.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-done }()

	channel := ids.New(time.Now())
	post := func(content string) chat.Message {
		t.Helper()
		now := time.Now().UTC()
		m := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: channel, Content: content,
			Author:         chat.Author{Type: chat.AuthorGuest, ID: ids.New(now), Name: "Ana", Language: "en"},
			SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
		if err := store.PutMessage(context.Background(), m); err != nil {
			t.Fatalf("put message: %v", err)
		}
		return m
	}
	seen := map[string]bool{}
	await := func(id string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !seen[id] {
			if time.Now().After(deadline) {
				t.Fatalf("message %s never reached the queue (seen %v)", id, seen)
			}
			out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			for _, m := range out.Messages {
				body := aws.ToString(m.Body)
				start := strings.Index(body, `"message_id":"`) + len(`"message_id":"`)
				seen[body[start:start+26]] = true
			}
		}
	}

	first := post("before")
	await(first.ID)

	// A transaction whose first write happens in moto before its second
	// item's condition fails: cancelled, so nothing of it exists.
	raw, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &st.Table,
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CHAN#" + channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + first.ID}}})
	if err != nil || raw.Item == nil {
		t.Fatalf("read the first message back: %v", err)
	}
	phantom := ids.New(time.Now())
	item := raw.Item
	item["sk"] = &types.AttributeValueMemberS{Value: "MSG#" + phantom}
	item["id"] = &types.AttributeValueMemberS{Value: phantom}
	_, err = st.DB.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &st.Table, Item: item}},
		{ConditionCheck: &types.ConditionCheck{TableName: &st.Table, ConditionExpression: aws.String("attribute_exists(pk)"),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "NOPE"}, "sk": &types.AttributeValueMemberS{Value: "NOPE"}}}},
	}})
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		t.Fatalf("transaction: got %v, want it cancelled", err)
	}

	second := post("after")
	await(second.ID)
	third := post("later still")
	await(third.ID)
	if seen[phantom] {
		t.Fatalf("the cancelled transaction's message %s was relayed", phantom)
	}
}
