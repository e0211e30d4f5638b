// Package relay is the transactional outbox's relay: it turns the inserts
// of message items on the table's stream into translation jobs on the
// queue. A message item and the request that accepted it commit in one
// transaction; DynamoDB Streams keeps every insert for 24 hours and Lambda
// retries a record until the relay reports it sent. A record the queue
// refuses for good is set aside rather than retried, so that it never holds
// back its shard; its message keeps the marker that the sweep (Sweep)
// re-queues from, as it does for any message the relay never got to
// (docs/delivery.md). Records it could not finish are also parked in the
// table, so that a replay of Lambda's failure records (Replayer) redoes
// their work, jobs and events alike, without reading the stream.
package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/messages"
)

// Sender puts jobs on the translation queue.
type Sender interface {
	// SendJobs sends jobs and says which were not sent: to be retried, or
	// poison (refused for good). err is set when nothing could be sent.
	SendJobs(ctx context.Context, jobs []messages.Job) (messages.SendResult, error)
}

// Entry is one stream record that holds a message.
type Entry struct {
	// ID identifies the record to the caller (its sequence number).
	ID      string
	Message chat.Message
}

// Relay forwards messages to the queue.
type Relay struct {
	Queue Sender
	// Events, when set, also turns the stream's changes into webhook
	// deliveries (fanout.go): the one stream consumer does both, as a shard
	// allows only two concurrent readers.
	Events *Fanout
	// Parking, when set, keeps the records that failed (HandleStream).
	Parking Parking
	// Translations, when set, removes the stored translations of each
	// deleted message (contract section 13), off the request path.
	Translations TranslationRemover

	// parked remembers what this environment parked (park).
	parked parkedSet
}

// TranslationRemover removes a deleted message's translations.
type TranslationRemover interface {
	// DeleteTranslations removes every stored translation of message id;
	// removing none is no error. Errors: EUnavailable.
	DeleteTranslations(ctx context.Context, id string) error
}

// Forward sends the entries' jobs and returns the ids of the entries that
// were not sent, to be retried. An entry whose job the queue refuses for
// good is logged as poison and not returned: retrying it would only block
// the entries behind it. Its message is still marked untranslated, so the
// sweep tries it again later, a bounded number of times.
func (r *Relay) Forward(ctx context.Context, entries []Entry) []string {
	if len(entries) == 0 {
		return nil
	}
	jobs := make([]messages.Job, len(entries))
	for i, e := range entries {
		jobs[i] = messages.JobOf(e.Message)
	}
	res, err := r.Queue.SendJobs(ctx, jobs)
	if err != nil {
		slog.WarnContext(ctx, "relay: send jobs", "error", err.Error(), "jobs", len(jobs))
	}
	for i, cause := range res.Poison {
		slog.ErrorContext(ctx, "relay: poison record set aside; the sweep will retry its message",
			"sequence_number", entries[i].ID, "message_id", jobs[i].MessageID, "channel_id", jobs[i].ChannelID,
			"error", cause.Error())
	}
	ids := make([]string, 0, len(res.Retry))
	for _, i := range res.Retry {
		ids = append(ids, entries[i].ID)
	}
	return ids
}

// Parking keeps the stream records the relay could not finish, so that a
// replay of its failures (Replayer) restores them without reading the
// stream: Lambda's failure record only says where they were, and a read of
// the shard by the replay would be a third reader beside the two stream
// functions.
type Parking interface {
	// ParkStreamRecords keeps recs of stream; parking one again is
	// harmless. Errors: EUnavailable; EInternal.
	ParkStreamRecords(ctx context.Context, stream string, recs []dynamo.StreamRecord, now time.Time) error
	// ParkedStreamRecords returns the records of stream parked with
	// sequence numbers from to to, inclusive, in order. Errors: EUnavailable.
	ParkedStreamRecords(ctx context.Context, stream, from, to string) ([]dynamo.StreamRecord, error)
}

// parkReserve is the part of the invocation's time kept for parking the
// records that failed: sends still running then are cut short, so a slow
// queue cannot take the relay to its timeout with nothing parked.
const parkReserve = 2 * time.Second

// Process does the relay's work for recs: the translation job of every
// message insert and the events of every change. It returns the sequence
// numbers of the records to retry; nothing of a record is lost when it is
// retried, and a record processed twice queues the same job, event ids and
// delivery ids again (receivers dedupe on the delivery id).
func (r *Relay) Process(ctx context.Context, recs []dynamo.StreamRecord) []string {
	var entries, deleted []Entry
	var changes []ChangeEntry
	for _, rec := range recs {
		if r.Events != nil {
			if c, ok := relaystore.ChangeFromImage(rec.EventName, rec.Image); ok {
				changes = append(changes, ChangeEntry{ID: rec.Seq, Change: c, At: rec.At})
			} else if c, ok := relaystore.ReactionChangeOf(rec.EventName, rec.OldImage, rec.Image, rec.At); ok {
				changes = append(changes, ChangeEntry{ID: rec.Seq, Change: c, At: rec.At})
			}
		}
		m, ok := dynamo.MessageFromImage(rec.Image)
		switch {
		case !ok:
		case rec.EventName == string(events.DynamoDBOperationTypeInsert):
			entries = append(entries, Entry{ID: rec.Seq, Message: m})
		case rec.EventName != string(events.DynamoDBOperationTypeModify):
		case dynamo.OutboxOf(rec.Image) == dynamo.OutboxEdited:
			// An edit: its new revision is translated like a new message.
			entries = append(entries, Entry{ID: rec.Seq, Message: m})
		case dynamo.OutboxOf(rec.Image) == dynamo.OutboxDeleted && r.Translations != nil:
			deleted = append(deleted, Entry{ID: rec.Seq, Message: m})
		}
	}
	failed := r.Forward(ctx, entries)
	for _, e := range deleted {
		if err := r.Translations.DeleteTranslations(ctx, e.Message.ID); err != nil {
			slog.WarnContext(ctx, "relay: translations of a deleted message", "message_id", e.Message.ID, "error", err.Error())
			failed = append(failed, e.ID)
		}
	}
	if len(changes) > 0 {
		failed = append(failed, r.Events.Send(ctx, changes)...)
	}
	seen := map[string]bool{}
	out := failed[:0]
	for _, id := range failed {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// HandleStream is the Lambda handler of the table's stream. Records that
// report nothing are skipped (the event source mapping's filter already
// drops most in AWS). Failed records are reported as batch item failures,
// so that Lambda retries from the first of them, and parked (Parking), so
// that when Lambda gives up on them and sends their position to
// RelayFailureQueue, a replay finds them (docs/delivery.md).
func (r *Relay) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	recs := make([]dynamo.StreamRecord, len(ev.Records))
	for i, rec := range ev.Records {
		recs[i] = dynamo.StreamRecordOf(rec)
	}
	work := ctx
	if deadline, ok := ctx.Deadline(); ok && r.Parking != nil {
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(ctx, deadline.Add(-parkReserve))
		defer cancel()
	}
	failed := r.Process(work, recs)
	var resp events.DynamoDBEventResponse
	for _, id := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
	}
	if len(failed) > 0 && r.Parking != nil {
		r.park(ctx, ev, recs, failed)
	}
	slog.InfoContext(ctx, "batch", "source", "table-stream", "records", len(ev.Records),
		"failures", len(resp.BatchItemFailures), "duration_ms", time.Since(start).Milliseconds())
	return resp, nil
}

// park keeps the failed records, each once in this execution environment:
// a retry of the batch (Lambda retries it until the records succeed or
// age out, usually in the same environment) does not write them again. A
// failure to park is logged as an error: the records are still retried,
// but if Lambda gives up on them a replay cannot restore their events.
func (r *Relay) park(ctx context.Context, ev events.DynamoDBEvent, recs []dynamo.StreamRecord, failed []string) {
	bad := map[string]bool{}
	for _, id := range failed {
		bad[id] = true
	}
	byStream := map[string][]dynamo.StreamRecord{}
	for i, rec := range recs {
		stream := ev.Records[i].EventSourceArn
		if bad[rec.Seq] && !r.parked.has(stream, rec.Seq) {
			byStream[stream] = append(byStream[stream], rec)
		}
	}
	for stream, rs := range byStream {
		if err := r.Parking.ParkStreamRecords(ctx, stream, rs, time.Now()); err != nil {
			slog.ErrorContext(ctx, "relay: failed records not parked; if Lambda gives up on them, a replay cannot restore them",
				"stream", stream, "records", len(rs), "first_sequence_number", rs[0].Seq, "error", err.Error())
			continue
		}
		for _, rec := range rs {
			r.parked.add(stream, rec.Seq)
		}
	}
}

// parkedSet remembers the records an environment parked, at most
// maxParkedMemo (then it starts again: a record parked twice is only a
// write more).
type parkedSet struct {
	mu   sync.Mutex
	seqs map[string]bool
}

const maxParkedMemo = 100000

func (p *parkedSet) has(stream, seq string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seqs[stream+" "+seq]
}

func (p *parkedSet) add(stream, seq string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seqs == nil || len(p.seqs) >= maxParkedMemo {
		p.seqs = map[string]bool{}
	}
	p.seqs[stream+" "+seq] = true
}
