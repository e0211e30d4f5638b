package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
)

// FailureRecord is what Lambda sends to RelayFailureQueue, the stream
// mapping's on-failure destination, for a batch of stream records it gave
// up on: where the records are, not the records.
type FailureRecord struct {
	RequestContext struct {
		Condition string `json:"condition"`
	} `json:"requestContext"`
	Batch StreamBatch `json:"DDBStreamBatchInfo"`
}

// StreamBatch is a failure record's DDBStreamBatchInfo.
type StreamBatch struct {
	StreamARN           string `json:"streamArn"`
	ShardID             string `json:"shardId"`
	StartSequenceNumber string `json:"startSequenceNumber"`
	EndSequenceNumber   string `json:"endSequenceNumber"`
	BatchSize           int    `json:"batchSize"`
}

// ParseFailureRecord reads a RelayFailureQueue message body.
func ParseFailureRecord(body string) (FailureRecord, error) {
	var r FailureRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return FailureRecord{}, fmt.Errorf("relay: failure record: %w", err)
	}
	b := r.Batch
	if b.StreamARN == "" || b.ShardID == "" || b.StartSequenceNumber == "" || b.EndSequenceNumber == "" {
		return FailureRecord{}, errors.New("relay: failure record lacks DDBStreamBatchInfo's stream, shard or sequence numbers")
	}
	return r, nil
}

// Received is one message taken from the failure queue.
type Received struct {
	ID     string
	Body   string
	Handle string
}

// FailureQueue is RelayFailureQueue.
type FailureQueue interface {
	// Receive takes up to ten messages, hidden from other readers for a
	// while; none when the queue is empty.
	Receive(ctx context.Context) ([]Received, error)
	// Delete removes a received message for good.
	Delete(ctx context.Context, handle string) error
}

// StreamReader reads the table's stream.
type StreamReader interface {
	// Messages returns the messages inserted in shard of stream at
	// sequence numbers from to to, inclusive. Errors: ENotFound when the
	// stream no longer holds them (records live 24 hours).
	Messages(ctx context.Context, stream, shard, from, to string) ([]chat.Message, error)
}

// Replayer replays RelayFailureQueue: each failure record's messages are
// queued again, read from the stream while it still holds them; when it
// no longer does, from the sweep's index, by one sweep run. A record is
// deleted from the failure queue only once its messages are queued (or the
// sweep ran); one that could not be is left for the next replay.
type Replayer struct {
	Failures FailureQueue
	Stream   StreamReader
	Relay    *Relay
	Sweep    *Sweep
}

// ReplayResult counts what a replay did.
type ReplayResult struct {
	// Records is the number of failure records read.
	Records int `json:"records"`
	// FromStream were replayed from the stream: Messages messages queued.
	FromStream int `json:"from_stream"`
	Messages   int `json:"messages"`
	// Swept were no longer in the stream: their messages are the sweep's.
	Swept int `json:"swept"`
	// Left could not be replayed now and stay in the failure queue.
	Left int `json:"left"`
	// Sweep is the sweep run's result, when one ran.
	Sweep *SweepResult `json:"sweep,omitempty"`
}

// Run replays every record in the failure queue. Errors: the failure
// queue's or the sweep's, when nothing more can be done.
func (r *Replayer) Run(ctx context.Context) (ReplayResult, error) {
	var res ReplayResult
	var gone []Received
	seen := map[string]bool{}
	for {
		batch, err := r.Failures.Receive(ctx)
		if err != nil {
			return res, fmt.Errorf("relay: replay: receive failure records: %w", err)
		}
		fresh := 0
		for _, m := range batch {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			fresh++
			res.Records++
			switch n, err := r.replay(ctx, m); {
			case chat.IsCode(err, chat.ENotFound):
				slog.InfoContext(ctx, "relay: replay: records no longer in the stream; the sweep re-queues their messages",
					"failure_record", m.ID, "error", err.Error())
				gone = append(gone, m)
			case err != nil:
				res.Left++
				slog.WarnContext(ctx, "relay: replay: record left in the failure queue", "failure_record", m.ID, "error", err.Error())
			default:
				res.FromStream++
				res.Messages += n
				if err := r.Failures.Delete(ctx, m.Handle); err != nil {
					return res, fmt.Errorf("relay: replay: delete failure record %s: %w", m.ID, err)
				}
			}
		}
		if fresh == 0 {
			break
		}
	}
	if len(gone) > 0 {
		sw, err := r.Sweep.Run(ctx)
		if err != nil {
			res.Left += len(gone)
			return res, err
		}
		res.Sweep = &sw
		for _, m := range gone {
			if err := r.Failures.Delete(ctx, m.Handle); err != nil {
				return res, fmt.Errorf("relay: replay: delete failure record %s: %w", m.ID, err)
			}
			res.Swept++
		}
	}
	return res, nil
}

// replay queues the messages of one failure record from the stream and
// returns how many there were.
func (r *Replayer) replay(ctx context.Context, m Received) (int, error) {
	rec, err := ParseFailureRecord(m.Body)
	if err != nil {
		return 0, err
	}
	b := rec.Batch
	msgs, err := r.Stream.Messages(ctx, b.StreamARN, b.ShardID, b.StartSequenceNumber, b.EndSequenceNumber)
	if err != nil {
		return 0, err
	}
	entries := make([]Entry, len(msgs))
	for i, msg := range msgs {
		entries[i] = Entry{ID: strconv.Itoa(i), Message: msg}
	}
	if failed := r.Relay.Forward(ctx, entries); len(failed) > 0 {
		return 0, fmt.Errorf("relay: replay: %d of %d message(s) not sent", len(failed), len(entries))
	}
	return len(msgs), nil
}
