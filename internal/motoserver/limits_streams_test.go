package motoserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestAtMostTwoReadersAShard has three callers, each signing with its own
// access key, read one shard: the first two may, the third is throttled as
// DynamoDB Streams throttles it, and may once one of the others has not read
// for the reader window.
func TestAtMostTwoReadersAShard(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, true)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key("a")}); err != nil {
		t.Fatal(err)
	}
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	arn := desc.Table.LatestStreamArn
	l := limitsOf(srv)
	l.mu.Lock()
	l.readerWindow = time.Second
	l.mu.Unlock()
	defer func() { l.mu.Lock(); l.readerWindow = DefaultReaderWindow; l.mu.Unlock() }()

	// reader reads the shard from its start as the function named key.
	reader := func(key string) func() error {
		streams := dynamodbstreams.NewFromConfig(config(srv.URL, key))
		var it *string
		return func() error {
			if it == nil {
				s, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
				if err != nil {
					return err
				}
				out, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn,
					ShardId: s.StreamDescription.Shards[0].ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
				if err != nil {
					return err
				}
				it = out.ShardIterator
			}
			out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			if err != nil {
				it = nil // a refused iterator may have been used: start again
				return err
			}
			it = out.NextShardIterator
			return nil
		}
	}
	relay, push, replay := reader("OutboxRelayFunction"), reader("RealtimePushFunction"), reader("chatctl")
	for _, read := range []func() error{relay, push, relay, push} {
		if err := read(); err != nil {
			t.Fatalf("one of two readers: %v", err)
		}
	}
	var limited *streamtypes.LimitExceededException
	if err := replay(); !errors.As(err, &limited) {
		t.Fatalf("a third reader: got %v, want LimitExceededException", err)
	}
	// The relay goes on reading; the push stops for longer than the window.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := relay(); err != nil {
			t.Fatalf("a reader that keeps reading: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := replay(); err != nil {
		t.Fatalf("a second reader once another stopped: %v", err)
	}
	if err := push(); !errors.As(err, &limited) {
		t.Fatalf("the stopped reader back as a third: got %v, want LimitExceededException", err)
	}
}

// TestInfoMarksTheFaithfulEndpoint: the proxy describes itself, a plain
// moto_server does not.
func TestInfoMarksTheFaithfulEndpoint(t *testing.T) {
	srv := server(t)
	info, err := CheckFaithful(context.Background(), srv.URL)
	if err != nil {
		t.Fatalf("the proxy: %v", err)
	}
	if info.InFlight != DefaultInFlight {
		t.Fatalf("in-flight limit: got %d, want %d", info.InFlight, DefaultInFlight)
	}
	if _, err := CheckFaithful(context.Background(), srv.moto); err == nil {
		t.Fatalf("plain moto_server passed as faithful")
	}
	if err := SetLimits(context.Background(), srv.moto, Override{Table: "t"}); err == nil {
		t.Fatalf("plain moto_server took limits")
	}
}
