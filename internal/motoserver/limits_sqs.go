package motoserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SQS's limits, as its API reference states them.
const (
	sqsPrefix = "AmazonSQS."
	// maxVisibility is how long after its receive a message may stay
	// invisible, however often its visibility is changed.
	maxVisibility = 12 * time.Hour
	// maxDelay bounds DelaySeconds.
	maxDelay = 900
	// maxHandles bounds the receipt handles remembered; older than
	// maxVisibility they are forgotten first.
	maxHandles = 200000
	// inFlightPoll is how often a long poll held back by the in-flight limit
	// looks again.
	inFlightPoll = 200 * time.Millisecond
)

// sqsLimits keeps, for SQS (which speaks its JSON protocol to the SDK v2:
// X-Amz-Target AmazonSQS.<Op>):
//
//   - A message's visibility ends at most 12 hours after its receive.
//     moto measures from the message's send instead (sitecustomize.py turns
//     that off); the proxy notes when each receipt handle was received and
//     refuses a ChangeMessageVisibility, or a batch entry, that would end
//     later: InvalidParameterValue, as SQS answers.
//   - DelaySeconds is at most 900. moto refuses it on SendMessage, but fails
//     a SendMessageBatch entry with a wrong message and a SenderFault the
//     SDK cannot read; the proxy fails those entries itself.
//   - A queue holds a limited number of messages in flight (120,000 unless
//     a test sets fewer). At the limit a short poll answers OverLimit and a
//     long poll waits and answers no messages, as SQS does; below it a
//     receive gets at most the messages left to the limit.
type sqsLimits struct {
	mu       sync.Mutex
	received map[string]time.Time   // receipt handle → when it was received
	reserved map[string]int         // queue → messages promised to receives at moto
	counts   map[string]*queueCount // queue → its in-flight count, as last asked
}

// queueCount is a queue's in-flight count as moto last gave it, and the
// messages received through the proxy since: at most their sum are in
// flight now. While that is far below the limit, a receive need not ask
// moto again (asking costs more than the receive).
type queueCount struct {
	n, wait, since int
	at             time.Time
}

// countFresh bounds how long a queue's count is trusted.
const countFresh = 5 * time.Second

// knownInFlight returns the queue's count when it is known well enough to
// let most more messages through without asking moto.
func (l *limiter) knownInFlight(name string, limit, most int) (n, wait int, fresh bool) {
	l.sqs.mu.Lock()
	defer l.sqs.mu.Unlock()
	c := l.sqs.counts[name]
	if c == nil || time.Since(c.at) > countFresh || c.n+c.since+l.sqs.reserved[name]+most > limit {
		return 0, 0, false
	}
	return c.n + c.since, c.wait, true
}

func (l *limiter) noteInFlight(name string, n, wait int) {
	l.sqs.mu.Lock()
	defer l.sqs.mu.Unlock()
	if len(l.sqs.counts) > 10000 {
		clear(l.sqs.counts)
	}
	l.sqs.counts[name] = &queueCount{n: n, wait: wait, at: time.Now()}
}

// batchFailure is a batch entry refused as SQS refuses it.
type batchFailure struct {
	ID          string `json:"Id"`
	SenderFault bool
	Code        string
	Message     string
}

func (l *limiter) sqsBefore(w http.ResponseWriter, r *http.Request, op string, body []byte, x *exchange) (func(), bool) {
	switch op {
	case "SendMessageBatch":
		return nil, l.splitBatch(w, r, body, x, func(e batchEntry) string {
			if e.DelaySeconds != nil && *e.DelaySeconds > maxDelay {
				return delayMessage(*e.DelaySeconds)
			}
			return ""
		})
	case "ChangeMessageVisibilityBatch":
		return nil, l.splitBatch(w, r, body, x, func(e batchEntry) string {
			return l.visibilityRefusal(e.ReceiptHandle, e.VisibilityTimeout)
		})
	case "ChangeMessageVisibility":
		var in batchEntry
		if json.Unmarshal(body, &in) == nil {
			if msg := l.visibilityRefusal(in.ReceiptHandle, in.VisibilityTimeout); msg != "" {
				writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", msg)
				return nil, true
			}
		}
	case "DeleteMessage":
		var in batchEntry
		if json.Unmarshal(body, &in) == nil {
			l.sqs.mu.Lock()
			delete(l.sqs.received, in.ReceiptHandle)
			l.sqs.mu.Unlock()
		}
	case "ReceiveMessage":
		r.Header.Del("Accept-Encoding") // after reads the receipt handles
		return l.receive(w, r, body, x)
	}
	return nil, false
}

// batchEntry holds the members of any batch entry (and of the single
// operations) that the limits look at.
type batchEntry struct {
	ID                string `json:"Id"`
	DelaySeconds      *int
	ReceiptHandle     string
	VisibilityTimeout int
}

// splitBatch fails the entries refuse refuses; moto gets the others, and
// after adds the failures to its answer. When none is left the proxy
// answers alone.
func (l *limiter) splitBatch(w http.ResponseWriter, r *http.Request, body []byte, x *exchange, refuse func(batchEntry) string) bool {
	var in map[string]json.RawMessage
	var entries []json.RawMessage
	if json.Unmarshal(body, &in) != nil || json.Unmarshal(in["Entries"], &entries) != nil {
		return false
	}
	kept := entries[:0:0]
	for _, raw := range entries {
		var e batchEntry
		if json.Unmarshal(raw, &e) != nil {
			return false
		}
		if msg := refuse(e); msg != "" {
			x.failed = append(x.failed, batchFailure{ID: e.ID, SenderFault: true, Code: "InvalidParameterValue", Message: msg})
			continue
		}
		kept = append(kept, raw)
	}
	switch {
	case len(x.failed) == 0:
		return false
	case len(kept) == 0:
		writeJSON(w, map[string]any{"Successful": []any{}, "Failed": x.failed})
		return true
	}
	in["Entries"], _ = json.Marshal(kept)
	data, _ := json.Marshal(in)
	setBody(r, data)
	r.Header.Del("Accept-Encoding") // after adds to the answer
	return false
}

// visibilityRefusal is SQS's message refusing visibility seconds for the
// message received with handle, or "" when SQS accepts it. A handle the
// proxy has not seen is left to moto.
func (l *limiter) visibilityRefusal(handle string, seconds int) string {
	l.sqs.mu.Lock()
	at, ok := l.sqs.received[handle]
	l.sqs.mu.Unlock()
	if !ok || !l.clock().Add(time.Duration(seconds)*time.Second).After(at.Add(maxVisibility)) {
		return ""
	}
	return fmt.Sprintf("Value %d for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [%d seconds]",
		seconds, int(maxVisibility.Seconds()))
}

func delayMessage(seconds int) string {
	return fmt.Sprintf("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= %d.", seconds, maxDelay)
}

// receive lets a ReceiveMessage through to moto only below the queue's
// in-flight limit, and for no more messages than the limit leaves.
func (l *limiter) receive(w http.ResponseWriter, r *http.Request, body []byte, x *exchange) (func(), bool) {
	var in map[string]json.RawMessage
	if json.Unmarshal(body, &in) != nil {
		return nil, false
	}
	var queueURL string
	_ = json.Unmarshal(in["QueueUrl"], &queueURL)
	most, wait := 1, -1
	_ = json.Unmarshal(in["MaxNumberOfMessages"], &most)
	if raw, ok := in["WaitTimeSeconds"]; ok {
		_ = json.Unmarshal(raw, &wait)
	}
	if most < 1 || most > 10 || wait > 20 {
		return nil, false // moto refuses these itself
	}
	name := queueName(queueURL)
	limit := l.inFlightOf(name)
	auth := r.Header.Get("Authorization")
	x.queue = name
	var err error
	inFlight := func() (n, queueWait int, err error) {
		var out struct{ Attributes map[string]string }
		err = l.callMoto(r.Context(), auth, sqsPrefix+"GetQueueAttributes", map[string]any{"QueueUrl": queueURL,
			"AttributeNames": []string{"ApproximateNumberOfMessagesNotVisible", "ReceiveMessageWaitTimeSeconds"}}, &out)
		n, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesNotVisible"])
		queueWait, _ = strconv.Atoi(out.Attributes["ReceiveMessageWaitTimeSeconds"])
		return n, queueWait, err
	}
	n, queueWait, fresh := l.knownInFlight(name, limit, most)
	if !fresh {
		if n, queueWait, err = inFlight(); err != nil {
			return nil, false // no such queue: moto answers
		}
		l.noteInFlight(name, n, queueWait)
	}
	if wait < 0 {
		wait = queueWait
	}
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for waited := false; ; waited = true {
		l.sqs.mu.Lock()
		free := limit - n - l.sqs.reserved[name]
		if free > 0 {
			take := min(most, free)
			l.sqs.reserved[name] += take
			l.sqs.mu.Unlock()
			in["MaxNumberOfMessages"], _ = json.Marshal(take)
			if waited && wait > 0 {
				in["WaitTimeSeconds"], _ = json.Marshal(max(0, int(time.Until(deadline).Seconds())))
			}
			data, _ := json.Marshal(in)
			setBody(r, data)
			return func() {
				l.sqs.mu.Lock()
				defer l.sqs.mu.Unlock()
				if l.sqs.reserved[name] -= take; l.sqs.reserved[name] <= 0 {
					delete(l.sqs.reserved, name)
				}
			}, false
		}
		l.sqs.mu.Unlock()
		if n >= limit && wait == 0 {
			writeSQSError(w, http.StatusForbidden, "OverLimit",
				fmt.Sprintf("Maximum number of in-flight messages (%d) reached for queue %s.", limit, name))
			return nil, true
		}
		// A long poll at the limit (or a short poll whose room is promised
		// to receives already at moto) gets no messages, without an error.
		if !time.Now().Add(inFlightPoll).Before(deadline) || r.Context().Err() != nil {
			if d := time.Until(deadline); d > 0 {
				time.Sleep(d)
			}
			writeJSON(w, map[string]any{})
			return nil, true
		}
		time.Sleep(inFlightPoll)
		if n, queueWait, err = inFlight(); err != nil {
			return nil, false
		}
		l.noteInFlight(name, n, queueWait)
	}
}

// sqsAfter notes the receipt handles moto gave and adds the batch entries
// the proxy refused to moto's answer.
func (l *limiter) sqsAfter(resp *http.Response, op string, x *exchange) error {
	if resp.StatusCode != http.StatusOK || (op != "ReceiveMessage" && len(x.failed) == 0) {
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if op == "ReceiveMessage" {
		var out struct {
			Messages []struct{ ReceiptHandle string }
		}
		_ = json.Unmarshal(data, &out)
		now := l.clock()
		l.sqs.mu.Lock()
		if len(l.sqs.received)+len(out.Messages) > maxHandles {
			for h, at := range l.sqs.received {
				if now.Sub(at) > maxVisibility {
					delete(l.sqs.received, h)
				}
			}
			if len(l.sqs.received)+len(out.Messages) > maxHandles {
				clear(l.sqs.received) // moto still bounds each by 43,200 s
			}
		}
		for _, m := range out.Messages {
			l.sqs.received[m.ReceiptHandle] = now
		}
		if c := l.sqs.counts[x.queue]; c != nil {
			c.since += len(out.Messages)
		}
		l.sqs.mu.Unlock()
	}
	if len(x.failed) > 0 {
		var out map[string]json.RawMessage
		var failed []json.RawMessage
		if json.Unmarshal(data, &out) == nil {
			_ = json.Unmarshal(out["Failed"], &failed)
			for _, f := range x.failed {
				raw, _ := json.Marshal(f)
				failed = append(failed, raw)
			}
			out["Failed"], _ = json.Marshal(failed)
			data, _ = json.Marshal(out)
		}
	}
	setResponseBody(resp, data)
	return nil
}

// queueName is the name in a queue URL (or the name itself).
func queueName(s string) string {
	return s[strings.LastIndexByte(s, '/')+1:]
}

// writeSQSError answers as SQS's JSON protocol does, with the query
// protocol's code in x-amzn-query-error, which the SDK reads.
func writeSQSError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("x-amzn-query-error", code+";Sender")
	writeJSONError(w, status, "com.amazonaws.sqs#"+code, message, nil)
}
