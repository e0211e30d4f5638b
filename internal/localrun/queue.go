package localrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// SQSHandler is a Lambda handler of SQS events with partial batch
// responses.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// QueueMapping does locally what an SQS event source mapping does in AWS.
// It long-polls the queue for up to BatchSize messages, waiting at most
// BatchingWindow to fill a batch, and invokes the function (see Invoke:
// under its Timeout). After a successful invocation it deletes the batch's
// messages, except, with ReportBatchItemFailures, those the response names;
// a response naming a message not in the batch fails the whole batch, as in
// AWS. After a failed invocation (an error, a panic or a timeout) it
// deletes nothing: the messages reappear after the queue's visibility
// timeout, and its redrive policy moves poison ones to the dead-letter
// queue. One batch is in flight at a time (AWS runs up to
// ScalingConfig.MaximumConcurrency).
type QueueMapping struct {
	Function Function
	Source   samtemplate.EventSource
	SQS      *sqs.Client
	QueueURL string
	QueueARN string
	Handler  SQSHandler
}

// NewQueueMapping is function's SQS event source mapping as tmpl declares
// it, reading the queue at queueURL with handler h.
func NewQueueMapping(tmpl *samtemplate.Template, function string, q *sqs.Client, queueURL, queueARN string, h SQSHandler) (*QueueMapping, error) {
	es, err := tmpl.EventSource(function, "SQS")
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	return &QueueMapping{Function: FunctionOf(tmpl, function), Source: es, SQS: q, QueueURL: queueURL, QueueARN: queueARN, Handler: h}, nil
}

// NewQueueMappings is every SQS event source mapping of function as tmpl
// declares them (a function may read several queues: the delivery
// function reads its two lanes), each on its queue in res, with handler h.
func NewQueueMappings(tmpl *samtemplate.Template, function string, q *sqs.Client, res Resources, h SQSHandler) ([]*QueueMapping, error) {
	all, err := tmpl.EventSources(function)
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	var out []*QueueMapping
	for _, es := range all {
		if es.Type != "SQS" {
			continue
		}
		url, arn := res.Queues[es.Source], res.QueueARNs[es.Source]
		if url == "" || arn == "" {
			return nil, fmt.Errorf("localrun: %s event %s reads %s, which was not created", function, es.Name, es.Source)
		}
		out = append(out, &QueueMapping{Function: FunctionOf(tmpl, function), Source: es, SQS: q, QueueURL: url, QueueARN: arn, Handler: h})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("localrun: %s has no SQS event", function)
	}
	return out, nil
}

// ConsumeQueue runs a QueueMapping of batch messages with partial batch
// responses and no timeout, for callers that have no template function.
// Prefer NewQueueMapping.
func ConsumeQueue(ctx context.Context, q *sqs.Client, queueURL, queueARN string, batch int32, h SQSHandler) error {
	m := &QueueMapping{Function: Function{Name: "local-consumer", Timeout: 24 * time.Hour}, SQS: q, QueueURL: queueURL, QueueARN: queueARN, Handler: h,
		Source: samtemplate.EventSource{Type: "SQS", BatchSize: int(batch), ReportBatchItemFailures: true}}
	return m.Run(ctx)
}

// Run polls and invokes until ctx ends; it returns nil then.
func (m *QueueMapping) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		msgs, err := m.receive(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil
			}
			slog.WarnContext(ctx, "local queue mapping: receive", "function", m.Function.Name, "error", err.Error())
			sleep(ctx, time.Second)
			continue
		}
		if len(msgs) > 0 {
			m.invoke(ctx, msgs)
		}
	}
	return nil
}

// receive takes up to BatchSize messages: the first receive long-polls,
// then more are taken until the batch is full or BatchingWindow has passed
// since the first message came.
func (m *QueueMapping) receive(ctx context.Context) ([]sqstypes.Message, error) {
	size := max(1, m.Source.BatchSize)
	var window time.Time // from the first message received
	var msgs []sqstypes.Message
	for len(msgs) < size {
		wait := int32(1)
		if len(msgs) > 0 {
			if !time.Now().Before(window) {
				break
			}
			wait = 0
		}
		out, err := m.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &m.QueueURL, MaxNumberOfMessages: int32(min(10, size-len(msgs))), WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if len(msgs) > 0 {
				// What was taken is in flight: hand it to the function.
				return msgs, nil
			}
			return nil, err
		}
		if len(out.Messages) == 0 {
			if len(msgs) == 0 {
				return nil, nil
			}
			sleep(ctx, min(100*time.Millisecond, time.Until(window)))
			continue
		}
		if len(msgs) == 0 {
			window = time.Now().Add(m.Source.BatchingWindow)
		}
		msgs = append(msgs, out.Messages...)
		if m.Source.BatchingWindow == 0 {
			break
		}
	}
	return msgs, nil
}

func (m *QueueMapping) invoke(ctx context.Context, msgs []sqstypes.Message) {
	ev := events.SQSEvent{}
	for _, msg := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle),
			Body: aws.ToString(msg.Body), Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes,
			MessageAttributes: messageAttributes(msg.MessageAttributes),
			EventSource:       "aws:sqs", EventSourceARN: m.QueueARN, AWSRegion: "us-east-1",
		})
	}
	resp, err := Invoke(ctx, m.Function, m.Handler, ev)
	if err != nil {
		// A failed invocation: Lambda deletes nothing; every message
		// reappears after the visibility timeout.
		if ctx.Err() == nil {
			slog.WarnContext(ctx, "local queue mapping: invocation failed", "function", m.Function.Name, "messages", len(msgs), "error", err.Error())
		}
		return
	}
	keep, ok := m.failed(ev, resp)
	if !ok {
		slog.WarnContext(ctx, "local queue mapping: invalid batch item failures; the whole batch failed", "function", m.Function.Name)
		return
	}
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, msg := range msgs {
		if !keep[aws.ToString(msg.MessageId)] {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: msg.ReceiptHandle})
		}
	}
	for len(del) > 0 {
		n := min(10, len(del))
		if _, err := m.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &m.QueueURL, Entries: del[:n]}); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "local queue mapping: delete", "function", m.Function.Name, "error", err.Error())
		}
		del = del[n:]
	}
}

// failed is the set of messages to leave on the queue, and false when the
// response is invalid (an empty or unknown item identifier): then the
// whole batch failed. Without ReportBatchItemFailures the response is
// ignored, as Lambda ignores it.
func (m *QueueMapping) failed(ev events.SQSEvent, resp events.SQSEventResponse) (map[string]bool, bool) {
	keep := map[string]bool{}
	if !m.Source.ReportBatchItemFailures {
		return keep, true
	}
	in := map[string]bool{}
	for _, r := range ev.Records {
		in[r.MessageId] = true
	}
	for _, f := range resp.BatchItemFailures {
		if !in[f.ItemIdentifier] {
			return nil, false
		}
		keep[f.ItemIdentifier] = true
	}
	return keep, true
}

func messageAttributes(in map[string]sqstypes.MessageAttributeValue) map[string]events.SQSMessageAttribute {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]events.SQSMessageAttribute, len(in))
	for k, v := range in {
		out[k] = events.SQSMessageAttribute{StringValue: v.StringValue, BinaryValue: v.BinaryValue, DataType: aws.ToString(v.DataType)}
	}
	return out
}

// throttleBackoff is how long a stream mapping waits before invoking a
// throttled batch again.
const throttleBackoff = 100 * time.Millisecond

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
