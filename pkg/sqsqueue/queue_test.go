package sqsqueue_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

var ids = chat.NewIDs()

func job(source string) messages.Job {
	now := time.Now()
	return messages.Job{MessageID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now),
		Content: strings.Repeat("<", 40000), SourceLanguage: source, AuthorType: chat.AuthorBot, CreatedAt: now}
}

func TestCheckBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"tab, newline, carriage return", "a\tb\nc\rd", true},
		{"DEL and C1 controls", "\x7f\u0085\u009f", true},
		{"U+D7FF, U+E000, U+FFFD", "\ud7ff\ue000\ufffd", true},
		{"U+2028 raw", "\u2028", true},
		{"emoji (U+10000 and up)", "😀\U00010000\U0010ffff", true},
		{"NUL", "a\x00b", false},
		{"lone control U+001F", "\x1f", false},
		{"U+FFFE", "\ufffe", false},
		{"U+FFFF", "\uffff", false},
		{"invalid UTF-8", "a\xffb", false},
		{"at the size limit", strings.Repeat("a", sqsqueue.MaxBatchBytes), true},
		{"one byte past", strings.Repeat("a", sqsqueue.MaxBatchBytes+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sqsqueue.CheckBody(tc.body)
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, sqsqueue.ErrRefusedBody) {
				t.Fatalf("CheckBody: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestEncodeNeverYieldsARefusedBody encodes jobs whose every string holds
// what SQS refuses: the body passes CheckBody, is small, and decodes back.
func TestEncodeNeverYieldsARefusedBody(t *testing.T) {
	for _, nasty := range []string{"\uffff", "\ufffe", "\x00\x01\x1f", "\u2028\u2029", "<>&", "a\xffb", "😀", strings.Repeat("\uffff", 100)} {
		j := job("en" + nasty)
		j.AuthorType = nasty
		body := j.Encode()
		if err := sqsqueue.CheckBody(body); err != nil {
			t.Fatalf("%q: body refused: %v", nasty, err)
		}
		if strings.Contains(body, "<<<") || len(body) > 4096 {
			t.Fatalf("%q: body of %d bytes carries the content, want ids only", nasty, len(body))
		}
		got, err := messages.DecodeJob(body)
		// Invalid UTF-8 is the one thing that cannot come back as it was.
		wantSource, wantAuthor := strings.ToValidUTF8(j.SourceLanguage, "\ufffd"), strings.ToValidUTF8(j.AuthorType, "\ufffd")
		if err != nil || got.MessageID != j.MessageID || got.ChannelID != j.ChannelID || got.Content != "" ||
			got.SourceLanguage != wantSource || got.AuthorType != wantAuthor || !got.CreatedAt.Equal(j.CreatedAt) {
			t.Fatalf("%q: decoded %+v %v, want the job's ids and %q back, no content", nasty, got, err, wantSource)
		}
	}
}

// TestSendJobsOneCallPerTen: 25 jobs of 40,000-character messages are
// three SendMessageBatch calls, every job on the queue.
func TestSendJobsOneCallPerTen(t *testing.T) {
	st := stacktest.New(t)
	url := st.Resources.Queues["TranslationQueue"]
	q := sqsqueue.New(st.SQS, url)
	jobs := make([]messages.Job, 25)
	for i := range jobs {
		jobs[i] = job("en\uffff")
	}
	res, err := q.SendJobs(context.Background(), jobs)
	if err != nil || len(res.Retry) != 0 || len(res.Poison) != 0 {
		t.Fatalf("SendJobs: %+v %v, want all sent", res, err)
	}
	if got, want := st.Calls.Calls(), []string{"SQS.SendMessageBatch", "SQS.SendMessageBatch", "SQS.SendMessageBatch"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	seen := map[string]bool{}
	for len(seen) < len(jobs) {
		out, err := st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
		if err != nil || len(out.Messages) == 0 {
			t.Fatalf("received %d of %d jobs (%v)", len(seen), len(jobs), err)
		}
		for _, m := range out.Messages {
			j, err := messages.DecodeJob(aws.ToString(m.Body))
			if err != nil || j.SourceLanguage != "en\uffff" {
				t.Fatalf("job %+v %v, want source en\\uffff back", j, err)
			}
			seen[j.MessageID] = true
		}
	}
}

// TestSendJobsSetsAsidePoison: a job whose body could never be sent is
// poison before any call; the others go in one call. A missing queue is
// the queue's trouble: every job is to be retried, none is poison.
func TestSendJobsSetsAsidePoison(t *testing.T) {
	st := stacktest.New(t)
	q := sqsqueue.New(st.SQS, st.Resources.Queues["TranslationQueue"])
	jobs := []messages.Job{job("en"), job(strings.Repeat("x", sqsqueue.MaxBatchBytes)), job("en")}
	res, err := q.SendJobs(context.Background(), jobs)
	if err != nil || len(res.Retry) != 0 || len(res.Poison) != 1 || !errors.Is(res.Poison[1], sqsqueue.ErrRefusedBody) {
		t.Fatalf("SendJobs: %+v %v, want job 1 poison, refused before sending", res, err)
	}
	if got := st.Calls.Calls(); !reflect.DeepEqual(got, []string{"SQS.SendMessageBatch"}) {
		t.Fatalf("calls %v, want one SendMessageBatch", got)
	}

	missing := sqsqueue.New(st.SQS, st.Resources.Queues["TranslationQueue"]+"-missing")
	res, err = missing.SendJobs(context.Background(), jobs[:1])
	if !chat.IsCode(err, chat.EUnavailable) || !reflect.DeepEqual(res.Retry, []int{0}) || len(res.Poison) != 0 {
		t.Fatalf("missing queue: %+v %v, want job 0 to retry, EUnavailable", res, err)
	}
}
