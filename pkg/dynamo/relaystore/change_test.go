package relaystore_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
)

// TestRoomChanges: a room's stream record is a room.created when it is
// inserted active and not yet expired, a room.closed when it is modified
// to closed, and nothing else: a room inserted closed or past its expiry
// (the demo fixture's "Closed onboarding call" and "Expired launch call")
// was never open to a guest.
func TestRoomChanges(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	room := func(status string, expires time.Time) dynamo.RoomRecord {
		const id = "01JD9N113GQYDPWDARF68MKWR7"
		return dynamo.RoomRecord{RoomItem: dynamo.RoomItem{PK: dynamo.RoomPK(id), SK: dynamo.MetaSK, ID: id, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4",
			ChannelID: "01JD9N1048PXK951NGC7NEMZX9", Name: "Support call", Status: status, ExpiresAt: expires, ExpiresEpoch: expires.Unix()}, CreatedAt: created}
	}
	cases := []struct {
		name  string
		event string
		rec   dynamo.RoomRecord
		want  string // the change's kind, "" for none
	}{
		{"inserted active", "INSERT", room(chat.RoomActive, created.Add(2*time.Hour)), relaystore.ChangeRoom},
		{"inserted closed", "INSERT", room(chat.RoomClosed, created.Add(2*time.Hour)), ""},
		{"inserted past its expiry", "INSERT", room(chat.RoomActive, created.Add(-time.Hour)), ""},
		{"inserted expiring as it is created", "INSERT", room(chat.RoomActive, created), ""},
		{"modified to closed", "MODIFY", room(chat.RoomClosed, created.Add(2*time.Hour)), relaystore.ChangeRoomClosed},
		{"modified, still active", "MODIFY", room(chat.RoomActive, created.Add(2*time.Hour)), ""},
		{"removed", "REMOVE", room(chat.RoomActive, created.Add(2*time.Hour)), ""},
	}
	for _, c := range cases {
		image, err := attributevalue.MarshalMap(c.rec)
		if err != nil {
			t.Fatal(err)
		}
		ch, ok := relaystore.ChangeFromImage(c.event, image)
		got := ""
		if ok {
			got = ch.Kind
		}
		if got != c.want {
			t.Errorf("%s: got change %q, want %q", c.name, got, c.want)
		}
		if ok && (ch.Room.ID != c.rec.ID || !ch.RoomCreated.Equal(created)) {
			t.Errorf("%s: got room %+v created %v, want %s created %v", c.name, ch.Room, ch.RoomCreated, c.rec.ID, created)
		}
	}
}
