package queueapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/queueapi"
)

// Jobs of two revisions of one edited message in one batch: the newest is
// processed, once, whatever their order, and both records share its
// outcome.
func TestBatchKeepsTheNewestRevision(t *testing.T) {
	for _, order := range [][]int{{1, 2}, {2, 1}} {
		job := messages.Job{MessageID: ids.New(time.Now()), ChannelID: ids.New(time.Now()), SourceLanguage: "en"}
		var recs []events.SQSMessage
		for _, rev := range order {
			j := job
			j.Revision = rev
			recs = append(recs, events.SQSMessage{MessageId: "sqs-" + string(rune('0'+rev)), Body: j.Encode()})
		}
		var revs []int
		svc := &fakeService{process: func(_ context.Context, j messages.Job) error {
			revs = append(revs, j.Rev())
			return nil
		}}
		resp, err := queueapi.NewTranslateHandler(svc)(context.Background(), events.SQSEvent{Records: recs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("order %v: %+v %v", order, resp, err)
		}
		if len(revs) != 1 || revs[0] != 2 {
			t.Fatalf("order %v: processed revisions %v, want [2]", order, revs)
		}
	}
}
