package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/realtime"
)

// TestConnectionsAgainstDynamo: a channel's connections are stored under
// its partition and found with one Query; expired ones are left out, a
// deleted one is gone, other channels' are not read.
func TestConnectionsAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ctx := context.Background()
	ids := chat.NewIDs()
	now := time.Now().UTC()
	ch, other := ids.New(now), ids.New(now)
	for i := range 30 {
		c := realtime.Connection{ID: fmt.Sprintf("L0SM9cOFvHcCIhw%d=", i), WorkspaceID: ids.New(now), ChannelID: ch,
			Kind: realtime.KindGuest, SubjectID: ids.New(now), RoomID: ids.New(now), Language: "es-MX", ExpiresAt: now.Add(time.Hour)}
		if i == 0 {
			c.ExpiresAt = now.Add(-time.Second) // its TTL deletion lags
		}
		if err := store.Conns.PutConnection(ctx, c); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	if err := store.Conns.PutConnection(ctx, realtime.Connection{ID: "x/y+z=", ChannelID: other, Kind: realtime.KindMember, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := store.Conns.PutConnection(ctx, realtime.Connection{ID: "bad#id", ChannelID: ch, ExpiresAt: now.Add(time.Hour)}); err == nil {
		t.Fatalf("put a connection id with '#': no error")
	}
	st.Calls.Reset()
	got, err := store.Conns.Connections(ctx, ch, now)
	if err != nil {
		t.Fatal(err)
	}
	if calls := st.Calls.Calls(); len(calls) != 1 || calls[0] != "DynamoDB.Query" {
		t.Fatalf("connections called %v, want one Query", calls)
	}
	if len(got) != 29 || got[0].Language != "es-MX" || got[0].Kind != realtime.KindGuest || got[0].RoomID == "" {
		t.Fatalf("got %d connections (%+v), want the 29 live ones", len(got), got[0])
	}
	if err := store.Conns.DeleteConnection(ctx, ch, got[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := store.Conns.DeleteConnection(ctx, ch, "never-there"); err != nil {
		t.Fatalf("delete a missing connection: %v", err)
	}
	if again, _ := store.Conns.Connections(ctx, ch, now); len(again) != 28 {
		t.Fatalf("after a delete: %d connections, want 28", len(again))
	}
	if o, _ := store.Conns.Connections(ctx, other, now); len(o) != 1 || o[0].ID != "x/y+z=" {
		t.Fatalf("other channel: %+v", o)
	}
}

func TestRealtimeChange(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	const ch, room = "01JCHAN0000000000000000000", "01JROOM0000000000000000000"
	roomImage := func(status string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s("CHAN#" + ch), "sk": s("ROOM#" + room), "status": s(status)}
	}
	if c, ok := connstore.RealtimeChange("MODIFY", roomImage(chat.RoomActive), roomImage(chat.RoomClosed)); !ok || c.Kind != realtime.RoomClosed || c.ChannelID != ch || c.RoomID != room {
		t.Fatalf("room closing: %+v %v", c, ok)
	}
	if _, ok := connstore.RealtimeChange("MODIFY", roomImage(chat.RoomClosed), roomImage(chat.RoomClosed)); ok {
		t.Fatalf("an already closed room closed again")
	}
	if _, ok := connstore.RealtimeChange("INSERT", nil, roomImage(chat.RoomActive)); ok {
		t.Fatalf("a room insert is a change")
	}
	if _, ok := connstore.RealtimeChange("INSERT", nil, map[string]types.AttributeValue{"pk": s("CHAN#" + ch), "sk": s("SUB#abc=")}); ok {
		t.Fatalf("a connection insert is a change")
	}
}

// TestHoldEndsWithItsPendingTime: a connection whose subscribe is reading
// its backfill holds pushes until its Ready, or until its pending time
// has passed: a subscribe that died before Ready (its function timed out)
// does not keep the connection's pushes held for the rest of its life.
func TestHoldEndsWithItsPendingTime(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ctx := context.Background()
	ids := chat.NewIDs()
	now := time.Now().UTC()
	ch := ids.New(now)
	for _, tc := range []struct {
		id      string
		until   time.Time
		pending bool
		want    bool
	}{
		{"fresh0=", now.Add(realtime.MaxPending), true, true},
		{"dead00=", now.Add(-time.Second), true, false},
		{"ready0=", time.Time{}, false, false},
	} {
		c := realtime.Connection{ID: tc.id, ChannelID: ch, Kind: realtime.KindMember, SubjectID: ids.New(now), Language: "en",
			ExpiresAt: now.Add(time.Hour), Pending: tc.pending, PendingUntil: tc.until}
		if err := store.Conns.PutConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		held, _, err := store.Conns.Hold(ctx, ch, tc.id, ids.New(now))
		if err != nil || held != tc.want {
			t.Errorf("%s: held %v, %v; want %v", tc.id, held, err, tc.want)
		}
	}
}
