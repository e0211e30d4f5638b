package realtiming_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
)

// TestFanOutCallBudget: 100 connections reading in 5 languages cost, per
// change, one Query of the connections, and for the translations landing
// one write to the channel's change log (for reconnecting readers) and one
// BatchGetItem of 4 keys (the English readers read the original), not 100
// reads; every connection gets one push per message state.
func TestFanOutCallBudget(t *testing.T) {
	st, d := wiringtest.DemoAs(t, realtiming.RealtimePushFunction)
	var mu sync.Mutex
	pushes := map[string]int{}
	mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pushes[r.URL.Path]++
		mu.Unlock()
	}))
	defer mgmt.Close()
	// Built on the stack's configuration, whose calls are counted.
	a := app.New(st.AWS, st.Table)
	sender := wsapi.NewClientFromConfig(st.AWS, mgmt.URL+"/live")
	ctx := context.Background()
	const channel, message = "01JD9N0Z50BAKDWE0FBRMSFD5P", "01JDA0000000000000000000MS"
	langs := []string{"en-US", "es-ES", "fr-FR", "de-DE", "ja-JP"}
	user, token := wiringtest.ChannelMember(t, d, channel)
	for i := range 100 {
		id := "conn" + strings.Repeat("x", i%3) + string(rune('A'+i%26)) + string(rune('a'+i/26))
		if err := storetest.New(a.DB, a.Table).Conns.PutConnection(ctx, realtime.Connection{ID: id, ChannelID: channel, Kind: realtime.KindMember, SubjectID: user, Token: token, Language: langs[i%5], ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	var ts []chat.Translation
	for _, l := range []string{"es", "fr", "de", "ja"} {
		ts = append(ts, chat.Translation{MessageID: message, Language: l, Content: "(" + l + ")", SourceLanguage: "en", CreatedAt: time.Now()})
	}
	if err := storetest.New(a.DB, a.Table).Translation.SaveTranslations(ctx, channel, message, ts, false); err != nil {
		t.Fatal(err)
	}
	ev := wiringtest.Event[events.DynamoDBEvent](t, "realtime-push.json")
	// The MODIFY record of the sample gained Spanish only; make it gain all four.
	mod := ev.Records[1]
	mod.Change.NewImage["translated_languages"] = events.NewStringSetAttribute([]string{"es", "fr", "de", "ja"})
	h := realtiming.Push(a, sender, "")
	for i, want := range [][]string{{"DynamoDB.Query"}, {"DynamoDB.UpdateItem", "DynamoDB.Query", "DynamoDB.BatchGetItem"}} {
		st.Calls.Reset()
		resp, err := h.HandleStream(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{ev.Records[0], mod}[i : i+1]})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("record %d: %+v %v", i, resp, err)
		}
		var got []string
		for _, c := range st.Calls.Calls() {
			if strings.HasPrefix(c, "DynamoDB.") {
				got = append(got, c)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("record %d called %v, want %v", i, got, want)
		}
	}
	total := 0
	for path, n := range pushes {
		total += n
		if n > 2 {
			t.Fatalf("%s pushed %d times, want at most 2", path, n)
		}
	}
	if len(pushes) != 100 || total != 180 {
		t.Fatalf("%d connections got %d pushes, want 100 and 180 (the 20 English readers have nothing new on the update)", len(pushes), total)
	}
}

// TestBatchReadsEachAudienceOnce: a stream batch of ten new messages to one
// channel (a bot's burst) reads the channel's audience with one Query, not
// one a message, and every connection still gets the ten, in order.
func TestBatchReadsEachAudienceOnce(t *testing.T) {
	st, d := wiringtest.DemoAs(t, realtiming.RealtimePushFunction)
	var mu sync.Mutex
	pushes := map[string][]string{}
	mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f struct{ Data struct{ ID string } }
		_ = json.NewDecoder(r.Body).Decode(&f)
		mu.Lock()
		pushes[r.URL.Path] = append(pushes[r.URL.Path], f.Data.ID)
		mu.Unlock()
	}))
	defer mgmt.Close()
	a := app.New(st.AWS, st.Table)
	ctx := context.Background()
	const channel = "01JD9N0Z50BAKDWE0FBRMSFD5P"
	user, token := wiringtest.ChannelMember(t, d, channel)
	for i := range 20 {
		id := "conn" + string(rune('A'+i))
		if err := storetest.New(a.DB, a.Table).Conns.PutConnection(ctx, realtime.Connection{ID: id, ChannelID: channel, Kind: realtime.KindMember, SubjectID: user, Token: token, Language: "en", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	sample := wiringtest.Event[events.DynamoDBEvent](t, "realtime-push.json").Records[0]
	var batch events.DynamoDBEvent
	var want []string
	ids := chat.NewIDs()
	for i := range 10 {
		id := ids.New(time.Now())
		rec := sample
		rec.EventID = "event-" + id
		rec.Change.SequenceNumber = fmt.Sprintf("%021d", i+1)
		rec.Change.Keys = map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("CHAN#" + channel), "sk": events.NewStringAttribute("MSG#" + id)}
		img := maps.Clone(sample.Change.NewImage)
		img["sk"], img["id"] = events.NewStringAttribute("MSG#"+id), events.NewStringAttribute(id)
		rec.Change.NewImage = img
		batch.Records = append(batch.Records, rec)
		want = append(want, id)
	}
	st.Calls.Reset()
	resp, err := realtiming.Push(a, wsapi.NewClientFromConfig(st.AWS, mgmt.URL+"/live"), "").HandleStream(ctx, batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	queries := 0
	for _, c := range st.Calls.Calls() {
		if c == "DynamoDB.Query" {
			queries++
		}
	}
	if queries != 1 {
		t.Fatalf("a batch of 10 messages to one channel made %d Queries, want 1 (calls %v)", queries, st.Calls.Calls())
	}
	if len(pushes) != 20 {
		t.Fatalf("%d connections pushed to, want 20", len(pushes))
	}
	for path, got := range pushes {
		if !slices.Equal(got, want) {
			t.Fatalf("%s got %v, want the ten in order %v", path, got, want)
		}
	}
}
