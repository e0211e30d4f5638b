package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/chatbridge/chat/pkg/dynamo"
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

// ParkedRecords reads the records the relay parked (Parking).
type ParkedRecords interface {
	ParkedStreamRecords(ctx context.Context, stream, from, to string) ([]dynamo.StreamRecord, error)
}

// Replayer replays RelayFailureQueue without reading the stream: each
// failure record names a range of a shard, and the relay parked the records
// of that range it could not finish (HandleStream); the replay runs them
// through the relay's own work again (Relay.Process: the translation jobs
// and every event, with the same event and delivery ids). A failure record
// is deleted only once all its parked records went through. One whose
// range holds no parked record (the relay could not park it, or crashed
// before it could) cannot be restored from the table: a sweep run re-queues
// the translations of every unfinished message, and the record stays in
// the queue, counted as Unparked, for an operator to look at.
type Replayer struct {
	Failures FailureQueue
	Parked   ParkedRecords
	// Relay does the work; it needs its Events to restore events.
	Relay *Relay
	Sweep *Sweep
}

// ReplayResult counts what a replay did.
type ReplayResult struct {
	// Records is the number of failure records read.
	Records int `json:"records"`
	// Replayed failure records had their StreamRecords parked records
	// processed and were deleted.
	Replayed      int `json:"replayed"`
	StreamRecords int `json:"stream_records"`
	// Unparked failure records had no parked record; they stay in the queue.
	Unparked int `json:"unparked"`
	// Left could not be replayed now and stay in the failure queue.
	Left int `json:"left"`
	// Sweep is the sweep run's result, when one ran (for Unparked records).
	Sweep *SweepResult `json:"sweep,omitempty"`
}

// Run replays every record in the failure queue. Errors: the failure
// queue's or the sweep's, when nothing more can be done.
func (r *Replayer) Run(ctx context.Context) (ReplayResult, error) {
	var res ReplayResult
	if r.Relay == nil || r.Relay.Events == nil {
		return res, errors.New("relay: replay: the relay needs its event fan-out, or the records' events would be lost")
	}
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
			case errors.Is(err, errUnparked):
				res.Unparked++
				slog.ErrorContext(ctx, "relay: replay: no parked record in a failure record's range; its events cannot be restored from the table, its translations are the sweep's",
					"failure_record", m.ID, "error", err.Error())
			case err != nil:
				res.Left++
				slog.WarnContext(ctx, "relay: replay: record left in the failure queue", "failure_record", m.ID, "error", err.Error())
			default:
				res.Replayed++
				res.StreamRecords += n
				if err := r.Failures.Delete(ctx, m.Handle); err != nil {
					return res, fmt.Errorf("relay: replay: delete failure record %s: %w", m.ID, err)
				}
			}
		}
		if fresh == 0 {
			break
		}
	}
	if res.Unparked > 0 && r.Sweep != nil {
		sw, err := r.Sweep.Run(ctx)
		if err != nil {
			return res, err
		}
		res.Sweep = &sw
	}
	return res, nil
}

// errUnparked: a failure record's range holds no parked record.
var errUnparked = errors.New("no parked record in the range")

// replay processes the parked records of one failure record and returns
// how many there were.
func (r *Replayer) replay(ctx context.Context, m Received) (int, error) {
	rec, err := ParseFailureRecord(m.Body)
	if err != nil {
		return 0, err
	}
	b := rec.Batch
	recs, err := r.Parked.ParkedStreamRecords(ctx, b.StreamARN, b.StartSequenceNumber, b.EndSequenceNumber)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, fmt.Errorf("%w: stream %s, shard %s, %s to %s", errUnparked, b.StreamARN, b.ShardID, b.StartSequenceNumber, b.EndSequenceNumber)
	}
	if failed := r.Relay.Process(ctx, recs); len(failed) > 0 {
		return 0, fmt.Errorf("relay: replay: %d of %d record(s) not sent", len(failed), len(recs))
	}
	return len(recs), nil
}
