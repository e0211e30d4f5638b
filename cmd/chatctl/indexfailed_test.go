package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// TestIndexFailedDeliveriesCommand: the command indexes a failed record
// written before FailedDeliveryIndex (it then holds failed_id), says so,
// and indexes nothing on a second run.
func TestIndexFailedDeliveriesCommand(t *testing.T) {
	st := stacktest.New(t)
	ctx := context.Background()
	t.Setenv(awsenv.EnvTable, st.Table)
	const id = "01JDA0000000000000000000DL"
	key := map[string]any{"pk": "DLV#01JDA0000000000000000000WS#01JDA0000000000000000000WH", "sk": "DLV#" + id}
	item, err := attributevalue.MarshalMap(map[string]any{"pk": key["pk"], "sk": key["sk"], "id": id, "status": "failed",
		"event_type": "message.created", "attempts": 6})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.Table, Item: item}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"{\"indexed\": 1}\n", "{\"indexed\": 0}\n"} {
		var out, errOut bytes.Buffer
		if err := run(ctx, []string{"index-failed-deliveries"}, nil, &out, &errOut); err != nil || out.String() != want {
			t.Fatalf("index-failed-deliveries: %q %v %s, want %q", out.String(), err, errOut.String(), want)
		}
	}
	k, err := attributevalue.MarshalMap(key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.Table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		FailedID string `dynamodbav:"failed_id"`
	}
	if err := attributevalue.UnmarshalMap(got.Item, &rec); err != nil || rec.FailedID != id {
		t.Fatalf("record's failed_id %q %v, want %s", rec.FailedID, err, id)
	}
}
