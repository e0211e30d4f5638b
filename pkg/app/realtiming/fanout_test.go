package realtiming_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	h := realtiming.Push(a, sender)
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
