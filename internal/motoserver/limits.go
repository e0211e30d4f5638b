package motoserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The limits the proxy keeps in front of moto, which keeps none of them
// (limits_dynamo.go, limits_sqs.go, limits_streams.go). Each refusal is the
// answer AWS gives: same error code, same shape.
const (
	// DefaultInFlight is SQS's limit of messages in flight per queue.
	DefaultInFlight = 120000
	// DefaultReaderWindow is how recently a caller must have read a stream
	// shard to count as one of its readers.
	DefaultReaderWindow = 5 * time.Second
)

// InfoPath answers GET with what the proxy is and the limits it keeps: the
// mark that an endpoint is this faithful proxy and not a plain moto_server.
const InfoPath = "/_local-aws/info"

// limitsPath takes POSTed Overrides.
const limitsPath = "/_local-aws/limits"

// Service is the "service" InfoPath answers.
const Service = "chatctl local-aws"

// limit makes an Option that changes a limit of the proxy Start puts in
// front of moto.
func limit(set func(*limiter)) Option {
	return func(o *options) { o.limits = append(o.limits, set) }
}

// InFlightLimit sets the number of messages in flight per queue above which
// ReceiveMessage answers as SQS does (DefaultInFlight unless set).
func InFlightLimit(n int) Option { return limit(func(l *limiter) { l.inFlight = n }) }

// ReaderWindow sets how recently a caller must have read a stream shard to
// count as one of its (at most two) readers.
func ReaderWindow(d time.Duration) Option { return limit(func(l *limiter) { l.readerWindow = d }) }

// TransactionHold keeps every TransactWriteItems in flight for d before it
// runs, its items held: a test mode in which two transactions sent within d
// of each other overlap for sure.
func TransactionHold(d time.Duration) Option { return limit(func(l *limiter) { l.hold = d }) }

// TransactionWindow sets how long after its arrival a TransactWriteItems
// overlaps the requests that touch its items (DefaultTransactionWindow
// unless set; 0 leaves conflicts to TransactionHold alone).
func TransactionWindow(d time.Duration) Option { return limit(func(l *limiter) { l.window = d }) }

// Override is a change of the limits for one queue or table, sent to a
// running proxy (SetLimits), so that a test sharing one moto_server with
// others changes only its own resources.
type Override struct {
	// Queue (its URL or name) gets InFlight as its in-flight limit.
	Queue    string `json:",omitempty"`
	InFlight int    `json:",omitempty"`
	// Table gets TransactionHold: its transactions stay in flight that long.
	Table           string        `json:",omitempty"`
	TransactionHold time.Duration `json:",omitempty"`
	// Throughput, in an Override that names neither a Queue nor a Table,
	// sets the scale factor of DynamoDB's per-partition throughput for the
	// whole proxy (see Throughput; 0 turns it off).
	Throughput float64 `json:",omitempty"`
}

// SetLimits sends o to the proxy at endpoint (a URL Start or `chatctl
// local-aws` printed). A plain moto_server answers 404: an error.
func SetLimits(ctx context.Context, endpoint string, o Override) error {
	body, err := json.Marshal(o)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+limitsPath, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("motoserver: set limits: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("motoserver: set limits: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("motoserver: set limits at %s: %s %s", endpoint, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// Info is what InfoPath answers.
type Info struct {
	Service        string
	InFlight       int
	ReaderWindowMS int64
	HoldMS         int64
	WindowMS       int64
	// Throughput is the scale factor of DynamoDB's per-partition
	// throughput (0: not kept; see Throughput).
	Throughput float64
}

// CheckFaithful reports an error unless endpoint is this package's proxy
// (a plain moto_server does not answer InfoPath).
func CheckFaithful(ctx context.Context, endpoint string) (Info, error) {
	var info Info
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+InfoPath, nil)
	if err != nil {
		return info, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return info, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("%s answers %s: not the faithful local AWS", endpoint+InfoPath, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&info); err != nil || info.Service != Service {
		return info, fmt.Errorf("%s does not describe the faithful local AWS", endpoint+InfoPath)
	}
	return info, nil
}

// limiter keeps the limits. Its before runs on every request before the
// isolator takes its lock; its after reads moto's answers.
type limiter struct {
	moto   string
	client *http.Client
	now    func() time.Time

	mu           sync.Mutex
	inFlight     int
	readerWindow time.Duration
	hold         time.Duration
	window       time.Duration
	queueLimits  map[string]int           // queue name → in-flight limit
	tableHolds   map[string]time.Duration // table name → transaction hold

	dynamo  dynamoLimits
	sqs     sqsLimits
	streams streamLimits
	tp      throughputLimits
}

func newLimiter(moto string) *limiter {
	return &limiter{
		moto: moto, client: &http.Client{Timeout: backendTimeout}, now: time.Now,
		inFlight: DefaultInFlight, readerWindow: DefaultReaderWindow, window: DefaultTransactionWindow,
		queueLimits: map[string]int{}, tableHolds: map[string]time.Duration{},
		dynamo:  dynamoLimits{held: map[string]*heldTxn{}, schemas: map[string][]string{}, indexHash: map[string]string{}},
		sqs:     sqsLimits{received: map[string]time.Time{}, reserved: map[string]int{}, counts: map[string]*queueCount{}},
		streams: streamLimits{shardOf: map[string]string{}, readers: map[string]map[string]time.Time{}},
		tp:      newThroughputLimits(),
	}
}

// exchange carries what before learnt about a request to after, through
// the request's context.
type exchange struct {
	shard  string           // GetShardIterator: the shard asked for
	queue  string           // ReceiveMessage: the queue's name
	failed []batchFailure   // batch entries refused before moto saw them
	sizeOf func([]byte) int // TransactGetItems: checks the answer's size
	// readCharges, when set, is what a read cost, from moto's answer
	// (limits_throughput.go).
	readCharges func([]byte) []charge
	// writeFix, when set, charges a single write by moto's answer and
	// returns the answer as the caller asked for it (limits_throughput.go).
	writeFix func([]byte) []byte
	// unprocessed names the member of a batch's answer that gets
	// unprocessedValue: the requests throttled before moto saw them.
	unprocessed      string
	unprocessedValue any
}

type exchangeKey struct{}

// before applies the limits to r. It answers w itself and returns handled
// when the request is refused (or is one of the proxy's own endpoints);
// otherwise r may have a new body and context, and done must be called once
// moto has answered.
func (l *limiter) before(w http.ResponseWriter, r *http.Request) (next *http.Request, done func(), handled bool) {
	done = func() {}
	switch r.URL.Path {
	case InfoPath:
		l.serveInfo(w)
		return r, done, true
	case limitsPath:
		l.serveOverride(w, r)
		return r, done, true
	case StatsPath:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(l.tp.snapshot())
		return r, done, true
	case "/moto-api/reset":
		l.reset()
		return r, done, false
	}
	target := r.Header.Get("X-Amz-Target")
	if !strings.HasPrefix(target, dynamoPrefix) && !strings.HasPrefix(target, streamsPrefix) && !strings.HasPrefix(target, sqsPrefix) {
		return r, done, false
	}
	op := target[strings.IndexByte(target, '.')+1:]
	l.tp.count(serviceOf(target) + "." + op)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return r, done, true
	}
	x := &exchange{}
	r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	setBody(r, body)
	switch {
	case strings.HasPrefix(target, dynamoPrefix):
		done, handled = l.dynamoBefore(w, r, op, body, x)
	case strings.HasPrefix(target, streamsPrefix):
		handled = l.streamsBefore(w, r, op, body, x)
	default:
		done, handled = l.sqsBefore(w, r, op, body, x)
	}
	if done == nil {
		done = func() {}
	}
	return r, done, handled
}

// after reads moto's answer to a request that before let through.
func (l *limiter) after(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil
	}
	target := resp.Request.Header.Get("X-Amz-Target")
	op := target[strings.IndexByte(target, '.')+1:]
	switch {
	case strings.HasPrefix(target, dynamoPrefix):
		return l.dynamoAfter(resp, op, x)
	case strings.HasPrefix(target, streamsPrefix):
		return l.streamsAfter(resp, op, x)
	case strings.HasPrefix(target, sqsPrefix):
		return l.sqsAfter(resp, op, x)
	}
	return nil
}

func (l *limiter) reset() {
	l.dynamo.mu.Lock()
	clear(l.dynamo.schemas)
	clear(l.dynamo.indexHash)
	l.dynamo.mu.Unlock()
	l.tp.mu.Lock()
	clear(l.tp.buckets)
	l.tp.mu.Unlock()
	l.sqs.mu.Lock()
	clear(l.sqs.received)
	clear(l.sqs.counts)
	l.sqs.mu.Unlock()
	l.streams.mu.Lock()
	clear(l.streams.shardOf)
	clear(l.streams.readers)
	l.streams.mu.Unlock()
}

func (l *limiter) serveInfo(w http.ResponseWriter) {
	l.mu.Lock()
	info := Info{Service: Service, InFlight: l.inFlight, ReaderWindowMS: l.readerWindow.Milliseconds(), HoldMS: l.hold.Milliseconds(), WindowMS: l.window.Milliseconds()}
	l.mu.Unlock()
	l.tp.mu.Lock()
	info.Throughput = l.tp.scale
	l.tp.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(info)
}

func (l *limiter) serveOverride(w http.ResponseWriter, r *http.Request) {
	var o Override
	if r.Method != http.MethodPost {
		http.Error(w, "POST an Override", http.StatusMethodNotAllowed)
		return
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&o); err != nil {
		http.Error(w, "limits: "+err.Error(), http.StatusBadRequest)
		return
	}
	if o.Queue == "" && o.Table == "" && o.InFlight == 0 && o.TransactionHold == 0 {
		if o.Throughput < 0 {
			http.Error(w, "limits: Throughput is a scale factor, 0 or more", http.StatusBadRequest)
			return
		}
		l.tp.setScale(o.Throughput)
		w.WriteHeader(http.StatusOK)
		return
	}
	if (o.Queue == "") == (o.Table == "") || o.InFlight < 0 || o.TransactionHold < 0 || o.Throughput != 0 {
		http.Error(w, "limits: name one Queue (with InFlight) or one Table (with TransactionHold), or neither (with Throughput)", http.StatusBadRequest)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.Queue != "" {
		if o.InFlight == 0 {
			delete(l.queueLimits, queueName(o.Queue))
		} else {
			l.queueLimits[queueName(o.Queue)] = o.InFlight
		}
	} else {
		l.tableHolds[tableName(o.Table)] = o.TransactionHold
	}
	w.WriteHeader(http.StatusOK)
}

// serviceOf is the short name of the service an X-Amz-Target calls.
func serviceOf(target string) string {
	switch {
	case strings.HasPrefix(target, dynamoPrefix):
		return "DynamoDB"
	case strings.HasPrefix(target, streamsPrefix):
		return "Streams"
	}
	return "SQS"
}

// clock is the proxy's time (a test may stop it).
func (l *limiter) clock() time.Time {
	l.mu.Lock()
	now := l.now
	l.mu.Unlock()
	return now()
}

// inFlightOf is the in-flight limit of the queue named name.
func (l *limiter) inFlightOf(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.queueLimits[name]; ok {
		return n
	}
	return l.inFlight
}

// windowOf is how long a transaction overlaps others without a hold.
func (l *limiter) windowOf() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.window
}

// holdOf is how long a transaction writing to tables stays in flight.
func (l *limiter) holdOf(tables []string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.hold
	for _, t := range tables {
		if h := l.tableHolds[t]; h > d {
			d = h
		}
	}
	return d
}

// callMoto makes one call of its own to moto, signed as the request it
// serves was (moto picks the region and account from the signature).
func (l *limiter) callMoto(ctx context.Context, auth, target string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.moto+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", target, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

// accessKey is the access key id that signed r: who the caller is.
func accessKey(r *http.Request) string {
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(cred, "/")
	return key
}

// setBody gives r the body b.
func setBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// setResponseBody gives resp the body b.
func setResponseBody(resp *http.Response, b []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
	resp.Header.Del("Content-Encoding")
}

// writeJSONError answers as an AWS JSON-protocol service does: the error's
// type in __type and X-Amzn-Errortype, extra members beside its message.
func writeJSONError(w http.ResponseWriter, status int, typ, message string, extra map[string]any) {
	body := map[string]any{"__type": typ, "message": message}
	for k, v := range extra {
		body[k] = v
	}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.Header().Set("X-Amzn-Errortype", typ[strings.IndexByte(typ, '#')+1:])
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// requestID is an id for an answer the proxy gives itself, as AWS gives
// each answer one (the SDK logs it with the error).
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "local-aws-" + hex.EncodeToString(b[:])
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}
