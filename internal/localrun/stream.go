package localrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// StreamHandler is a Lambda handler of DynamoDB stream events with partial
// batch responses.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// The wait before the nth retry of a batch: retryBackoff doubled n-1
// times, at most maxRetryBackoff.
const (
	retryBackoff    = 100 * time.Millisecond
	maxRetryBackoff = 5 * time.Second
)

// Conditions of a discarded batch's invocation record.
const (
	ConditionRetriesExhausted = "RetryAttemptsExhausted"
	ConditionRecordAge        = "RecordAgeExceeded"
)

// StreamMapping does locally what a DynamoDB stream event source mapping
// does in AWS, with the template's settings:
//
//   - It reads each shard in order, from StartingPosition (LATEST: the
//     stream's end when Start is called), drops the records that pass none
//     of the FilterCriteria, and invokes the function (see Invoke: under
//     its Timeout) with batches of at most BatchSize records, waiting up to
//     MaximumBatchingWindowInSeconds to fill one.
//   - A success checkpoints past the batch. With ReportBatchItemFailures, a
//     response naming records checkpoints before the lowest named one and
//     retries from it; with BisectBatchOnFunctionError the retry is only the
//     rest of that batch. A response naming a record not in the batch, or
//     an empty identifier, fails the whole batch.
//   - A failed invocation (an error, a panic or a timeout) is retried,
//     after a backoff from 100 ms doubling to 5 s; with
//     BisectBatchOnFunctionError the batch is first split in two halves,
//     tried in order, which uses no retry. After MaximumRetryAttempts
//     retries of a batch (a retry from a partial response that checkpointed
//     nothing counts; one that moved the checkpoint starts a new batch), or
//     once its first records are older than MaximumRecordAgeInSeconds, the
//     records are discarded and an invocation record naming them is sent to
//     DestinationConfig.OnFailure, in the shape Lambda sends.
//
// Shards are read one after the other by one goroutine; AWS reads them in
// parallel (ParallelizationFactor batches each). Locally a table has one.
type StreamMapping struct {
	Function  Function
	Source    samtemplate.EventSource
	Streams   *dynamodbstreams.Client
	StreamARN string
	Handler   StreamHandler
	// SQS and OnFailureURL send discarded batches' invocation records; the
	// records are only logged when OnFailureURL is "".
	SQS          *sqs.Client
	OnFailureURL string
	// Poll is how often a shard is read (default 250 ms: Lambda polls a
	// shard four times a second).
	Poll time.Duration

	filter filter
	shards map[string]*shard
	order  []string
}

// NewStreamMapping is function's DynamoDB event source mapping as tmpl
// declares it, on res's stream, its on-failure destination resolved among
// res's queues.
func NewStreamMapping(tmpl *samtemplate.Template, function string, streams *dynamodbstreams.Client, q *sqs.Client, res Resources, h StreamHandler) (*StreamMapping, error) {
	es, err := tmpl.EventSource(function, "DynamoDB")
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	m := &StreamMapping{Function: FunctionOf(tmpl, function), Source: es, Streams: streams, StreamARN: res.StreamARN, Handler: h, SQS: q}
	if es.OnFailure != "" {
		url, ok := res.Queues[es.OnFailure]
		if !ok {
			return nil, fmt.Errorf("localrun: %s: on-failure destination %s is not a queue of the template", function, es.OnFailure)
		}
		m.OnFailureURL = url
	}
	return m, nil
}

// shard is one shard's reader and the records read but not checkpointed.
type shard struct {
	id string
	// iter is the next iterator; nil to open one after last.
	iter *string
	// last is the sequence number of the last record read ("" for none).
	last    string
	closed  bool
	pending []record
	// plan holds the sizes of the next batches, after a bisection.
	plan []int
	// retries counts the failed invocations of the head batch.
	retries int
	// lastErr is whether the head batch's last invocation was an error
	// (rather than a partial batch response).
	lastErr bool
}

type record struct {
	ev   events.DynamoDBEventRecord
	seq  string
	at   time.Time // approximate creation time
	read time.Time
}

// Start positions the mapping on the stream (so a LATEST mapping sees
// every record written after Start returns) and runs it until ctx ends.
// done is closed when it has stopped.
func (m *StreamMapping) Start(ctx context.Context) (done <-chan struct{}, err error) {
	if err := m.open(ctx); err != nil {
		return nil, err
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		m.run(ctx)
	}()
	return ch, nil
}

// Run is Start, returning when ctx ends (nil then) or at once when the
// stream cannot be read.
func (m *StreamMapping) Run(ctx context.Context) error {
	if err := m.open(ctx); err != nil {
		return err
	}
	m.run(ctx)
	return nil
}

func (m *StreamMapping) open(ctx context.Context) error {
	f, err := newFilter(m.Source.Filters)
	if err != nil {
		return err
	}
	m.filter, m.shards = f, map[string]*shard{}
	if err := m.refresh(ctx, m.Source.StartingPosition == "LATEST"); err != nil {
		return fmt.Errorf("localrun: %s: %w", m.Function.Name, err)
	}
	return nil
}

func (m *StreamMapping) run(ctx context.Context) {
	poll := m.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	for ctx.Err() == nil {
		if err := m.refresh(ctx, false); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "local stream mapping: describe stream", "function", m.Function.Name, "error", err.Error())
		}
		for _, id := range m.order {
			sh := m.shards[id]
			if err := m.read(ctx, sh); err != nil && ctx.Err() == nil {
				slog.WarnContext(ctx, "local stream mapping: get records", "function", m.Function.Name, "error", err.Error())
			}
			m.process(ctx, sh)
		}
		sleep(ctx, poll)
	}
}

// refresh adds the stream's new shards; at the first call of a LATEST
// mapping they are opened at the stream's end, later ones at their start.
func (m *StreamMapping) refresh(ctx context.Context, latest bool) error {
	desc, err := m.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &m.StreamARN})
	if err != nil {
		return err
	}
	for _, s := range desc.StreamDescription.Shards {
		id := aws.ToString(s.ShardId)
		if _, ok := m.shards[id]; ok {
			continue
		}
		sh := &shard{id: id}
		if latest {
			it, err := m.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &m.StreamARN, ShardId: &sh.id,
				ShardIteratorType: streamtypes.ShardIteratorTypeLatest})
			if err != nil {
				return err
			}
			sh.iter = it.ShardIterator
		}
		m.shards[id] = sh
		m.order = append(m.order, id)
	}
	return nil
}

// read appends the shard's next records that pass the filter. An expired
// iterator (in AWS after 15 minutes; locally after a cancelled
// transaction, see package motoserver) is replaced by one after the last
// record read, so no record is read twice or skipped.
func (m *StreamMapping) read(ctx context.Context, sh *shard) error {
	if sh.closed {
		return nil
	}
	if sh.iter == nil {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &m.StreamARN, ShardId: &sh.id, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
		if sh.last != "" {
			in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(sh.last)
		}
		it, err := m.Streams.GetShardIterator(ctx, in)
		if err != nil {
			return err
		}
		sh.iter = it.ShardIterator
	}
	out, err := m.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: sh.iter})
	var expired *streamtypes.ExpiredIteratorException
	if errors.As(err, &expired) {
		sh.iter = nil
		return nil
	}
	if err != nil {
		return err
	}
	sh.iter = out.NextShardIterator
	sh.closed = out.NextShardIterator == nil
	now := time.Now()
	for _, r := range out.Records {
		if r.Dynamodb == nil {
			continue
		}
		sh.last = aws.ToString(r.Dynamodb.SequenceNumber)
		doc := lambdaRecordJSON(r, m.StreamARN)
		if !m.filter.pass(doc) {
			continue
		}
		ev, err := lambdaRecord(doc)
		if err != nil {
			slog.WarnContext(ctx, "local stream mapping: record not converted", "function", m.Function.Name, "sequence_number", sh.last, "error", err.Error())
			continue
		}
		at := aws.ToTime(r.Dynamodb.ApproximateCreationDateTime)
		if at.IsZero() {
			at = now
		}
		sh.pending = append(sh.pending, record{ev: ev, seq: sh.last, at: at, read: now})
	}
	return nil
}

// process invokes the function with the shard's pending records until
// none is left or the batching window asks to wait for more.
func (m *StreamMapping) process(ctx context.Context, sh *shard) {
	size := max(1, m.Source.BatchSize)
	for len(sh.pending) > 0 && ctx.Err() == nil {
		m.expire(ctx, sh)
		if len(sh.pending) == 0 {
			return
		}
		n := size
		if len(sh.plan) > 0 {
			n = sh.plan[0]
		}
		n = min(n, len(sh.pending))
		fresh := len(sh.plan) == 0 && sh.retries == 0
		if fresh && n < size && time.Since(sh.pending[0].read) < m.Source.BatchingWindow {
			return
		}
		if sh.retries > 0 {
			// Lambda backs off between retries of a batch rather than
			// spinning on a failing function.
			sleep(ctx, min(retryBackoff<<min(sh.retries-1, 10), maxRetryBackoff))
		}
		m.invoke(ctx, sh, n)
	}
}

// expire discards the leading records older than MaximumRecordAge.
func (m *StreamMapping) expire(ctx context.Context, sh *shard) {
	if m.Source.MaximumRecordAge <= 0 {
		return
	}
	n := 0
	for n < len(sh.pending) && time.Since(sh.pending[n].at) > m.Source.MaximumRecordAge {
		n++
	}
	if n == 0 {
		return
	}
	m.discard(ctx, sh, n, ConditionRecordAge)
	sh.pending, sh.plan, sh.retries, sh.lastErr = sh.pending[n:], nil, 0, false
}

func (m *StreamMapping) invoke(ctx context.Context, sh *shard, n int) {
	batch := sh.pending[:n]
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, n)}
	for i, r := range batch {
		ev.Records[i] = r.ev
	}
	resp, err := Invoke(ctx, m.Function, m.Handler, ev)
	if ctx.Err() != nil {
		return // stopping: nothing is checkpointed
	}
	if errors.Is(err, ErrThrottled) {
		// Throttled: the same batch again shortly, not counted as a failure
		// of the function.
		sleep(ctx, throttleBackoff)
		return
	}
	first, valid := -1, true
	if err == nil && m.Source.ReportBatchItemFailures {
		first, valid = firstFailed(batch, resp)
	}
	switch {
	case err != nil || !valid:
		if err == nil {
			err = errors.New("invalid batch item failures")
		}
		slog.WarnContext(ctx, "local stream mapping: invocation failed", "function", m.Function.Name, "records", n, "error", err.Error())
		sh.lastErr = true
		if m.Source.Bisect && n > 1 {
			rest := sh.plan
			if len(rest) > 0 {
				rest = rest[1:]
			}
			sh.plan = append([]int{n / 2, n - n/2}, rest...)
			return
		}
		m.retry(ctx, sh, n)
	case first < 0:
		m.advance(sh, n)
	case first == 0:
		sh.lastErr = false
		m.retry(ctx, sh, n)
	default:
		// The checkpoint moves to the first failed record: the rest is a
		// new batch, only the rest of this one when bisecting.
		m.advance(sh, first)
		if m.Source.Bisect {
			sh.plan = append([]int{n - first}, sh.plan...)
		}
	}
}

// retry counts a failed invocation of the head batch of n records and
// discards them past MaximumRetryAttempts.
func (m *StreamMapping) retry(ctx context.Context, sh *shard, n int) {
	sh.retries++
	if limit := m.Source.MaximumRetryAttempts; limit >= 0 && sh.retries > limit {
		m.discard(ctx, sh, n, ConditionRetriesExhausted)
		m.advance(sh, n)
	}
}

func (m *StreamMapping) advance(sh *shard, n int) {
	sh.pending, sh.retries, sh.lastErr = sh.pending[n:], 0, false
	if len(sh.plan) > 0 {
		sh.plan = sh.plan[1:]
	}
}

// firstFailed is the index of the lowest record a partial batch response
// names (-1 for none), and false when it names one not in the batch.
func firstFailed(batch []record, resp events.DynamoDBEventResponse) (int, bool) {
	index := map[string]int{}
	for i, r := range batch {
		index[r.seq] = i
	}
	first := -1
	for _, f := range resp.BatchItemFailures {
		i, ok := index[f.ItemIdentifier]
		if !ok {
			return -1, false
		}
		if first < 0 || i < first {
			first = i
		}
	}
	return first, true
}

// InvocationRecord is what Lambda sends to a stream mapping's on-failure
// destination for a discarded batch: where its records are, not the
// records.
type InvocationRecord struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionARN            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext"`
	Version   string         `json:"version"`
	Timestamp string         `json:"timestamp"`
	Batch     DDBStreamBatch `json:"DDBStreamBatchInfo"`
}

// DDBStreamBatch is an invocation record's DDBStreamBatchInfo.
type DDBStreamBatch struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamARN                       string `json:"streamArn"`
}

// discard sends the invocation record of the shard's first n pending
// records to the on-failure destination.
func (m *StreamMapping) discard(ctx context.Context, sh *shard, n int, condition string) {
	recs := sh.pending[:n]
	var ir InvocationRecord
	ir.RequestContext.RequestID = requestID()
	ir.RequestContext.FunctionARN = "arn:aws:lambda:us-east-1:123456789012:function:" + m.Function.Name
	ir.RequestContext.Condition = condition
	ir.RequestContext.ApproximateInvokeCount = sh.retries
	ir.ResponseContext.StatusCode, ir.ResponseContext.ExecutedVersion = 200, "$LATEST"
	if sh.lastErr {
		ir.ResponseContext.FunctionError = "Unhandled"
	}
	ir.Version, ir.Timestamp = "1.0", time.Now().UTC().Format(time.RFC3339Nano)
	ir.Batch = DDBStreamBatch{ShardID: sh.id, StartSequenceNumber: recs[0].seq, EndSequenceNumber: recs[n-1].seq,
		ApproximateArrivalOfFirstRecord: recs[0].at.UTC().Format(time.RFC3339), ApproximateArrivalOfLastRecord: recs[n-1].at.UTC().Format(time.RFC3339),
		BatchSize: n, StreamARN: m.StreamARN}
	body, _ := json.Marshal(ir)
	slog.WarnContext(ctx, "local stream mapping: records discarded", "function", m.Function.Name, "condition", condition,
		"records", n, "start", ir.Batch.StartSequenceNumber, "end", ir.Batch.EndSequenceNumber)
	if m.OnFailureURL == "" {
		return
	}
	if _, err := m.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &m.OnFailureURL, MessageBody: aws.String(string(body))}); err != nil {
		slog.ErrorContext(ctx, "local stream mapping: on-failure destination", "function", m.Function.Name, "error", err.Error())
	}
}
