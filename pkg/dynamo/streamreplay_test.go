package dynamo_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// TestParkedStreamRecords: parked records come back by stream and by an
// inclusive range of sequence numbers, in numeric order whatever their
// length, with their event name, exact time and image; parking one again
// keeps one copy.
func TestParkedStreamRecords(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
	rec := func(seq, event string) dynamo.StreamRecord {
		return dynamo.StreamRecord{Seq: seq, EventName: event, At: at, Image: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "ROOM#" + seq}, "n": &types.AttributeValueMemberN{Value: seq},
			"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberBOOL{Value: true}}}}}
	}
	const stream, other = "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/1", "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2"
	recs := []dynamo.StreamRecord{rec("9", "INSERT"), rec("10", "MODIFY"), rec("100", "INSERT"), rec("1000", "INSERT")}
	for range 2 {
		if err := store.Relay.ParkStreamRecords(ctx, stream, recs, at); err != nil {
			t.Fatalf("park: %v", err)
		}
	}
	if err := store.Relay.ParkStreamRecords(ctx, other, []dynamo.StreamRecord{rec("11", "INSERT")}, at); err != nil {
		t.Fatalf("park on another stream: %v", err)
	}
	got, err := store.Relay.ParkedStreamRecords(ctx, stream, "9", "100")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, r := range got {
		seqs = append(seqs, r.Seq)
		if !r.At.Equal(at) {
			t.Errorf("record %s: got time %s, want %s", r.Seq, r.At, at)
		}
		if n, ok := r.Image["n"].(*types.AttributeValueMemberN); !ok || n.Value != r.Seq {
			t.Errorf("record %s: got image %v, want its own", r.Seq, r.Image)
		}
		if m, ok := r.Image["m"].(*types.AttributeValueMemberM); !ok || len(m.Value) != 1 {
			t.Errorf("record %s: got nested map %v, want it kept", r.Seq, r.Image["m"])
		}
	}
	if strings.Join(seqs, ",") != "9,10,100" || got[1].EventName != "MODIFY" {
		t.Fatalf("got %v (second %q), want 9,10,100 with 10 a MODIFY", seqs, got[1].EventName)
	}
	if none, err := store.Relay.ParkedStreamRecords(ctx, stream, "1001", "2000"); err != nil || len(none) != 0 {
		t.Fatalf("empty range: got %d records (%v), want none", len(none), err)
	}
}

// TestParkedRecordsSpreadOverPartitions: the records of one stream are
// parked under 16 partition keys (by sequence number), not one, so an
// outage's parking is not held to one partition's 1,000 write units a
// second; a range still comes back whole and in order.
func TestParkedRecordsSpreadOverPartitions(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	const stream = "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/3"
	var recs []dynamo.StreamRecord
	var want []string
	for i := range 64 {
		seq := strconv.Itoa(1000000 + i*137)
		recs = append(recs, dynamo.StreamRecord{Seq: seq, EventName: "INSERT", At: time.Now(), Image: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "X"}}})
		want = append(want, seq)
	}
	if err := store.Relay.ParkStreamRecords(ctx, stream, recs, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, err := st.DB.Scan(ctx, &dynamodb.ScanInput{TableName: &st.Table})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, it := range out.Items {
		if pk := dynamo.GetS(it, "pk"); strings.HasPrefix(pk, "RELAYPARK#"+stream) {
			keys[pk] = true
		}
	}
	if len(keys) < 12 {
		t.Fatalf("64 parked records under %d partition keys, want them spread over about 16", len(keys))
	}
	got, err := store.Relay.ParkedStreamRecords(ctx, stream, want[0], want[len(want)-1])
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, r := range got {
		seqs = append(seqs, r.Seq)
	}
	if strings.Join(seqs, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want the 64 in order", seqs)
	}
}
