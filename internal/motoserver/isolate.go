package motoserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// X-Amz-Target prefixes of the two APIs that share moto's table objects.
const (
	dynamoPrefix  = "DynamoDB_20120810."
	streamsPrefix = "DynamoDBStreams_20120810."
)

// transactionTarget is the X-Amz-Target of DynamoDB's TransactWriteItems.
const transactionTarget = dynamoPrefix + "TransactWriteItems"

// readOnly lists the DynamoDB and DynamoDB Streams operations that only
// read: they share the lock; every other DynamoDB operation holds it alone.
var readOnly = map[string]bool{
	dynamoPrefix + "GetItem":                   true,
	dynamoPrefix + "BatchGetItem":              true,
	dynamoPrefix + "Query":                     true,
	dynamoPrefix + "Scan":                      true,
	dynamoPrefix + "TransactGetItems":          true,
	dynamoPrefix + "DescribeTable":             true,
	dynamoPrefix + "ListTables":                true,
	dynamoPrefix + "DescribeTimeToLive":        true,
	dynamoPrefix + "DescribeContinuousBackups": true,
	dynamoPrefix + "ListTagsOfResource":        true,
	streamsPrefix + "DescribeStream":           true,
	streamsPrefix + "ListStreams":              true,
	streamsPrefix + "GetShardIterator":         true,
	streamsPrefix + "GetRecords":               true,
}

// backendTimeout bounds how long the proxy waits for moto while holding
// the lock, whatever the client does meanwhile.
const backendTimeout = 2 * time.Minute

// maxIterators bounds the shard iterators remembered (see isolator.iters).
const maxIterators = 10000

// isolator is a reverse proxy in front of moto_server that gives moto's
// DynamoDB what DynamoDB promises and moto does not:
//
//   - Writes are atomic. moto evaluates a condition and writes without a
//     lock, and rolls a failed TransactWriteItems back by putting back a
//     copy of the whole table taken when it began
//     (moto/dynamodb/models/__init__.py, transact_write_items): a write
//     racing with it is erased, and two conditional writes can both pass.
//     Every DynamoDB write holds the lock alone; reads share it. The lock is
//     held until moto has answered, even when the client gave up (a
//     cancelled request must not let the next write in while moto still
//     runs this one). SQS and the rest of moto take no lock, so an SQS long
//     poll never holds back a write.
//   - A stream keeps its records. The table copy that a failed transaction
//     puts back carries a copy of the stream shard; an iterator taken
//     before reads the discarded shard, which never sees another record and
//     holds the records of the failed transaction's partial writes, which
//     never happened. The proxy remembers when each shard iterator was
//     issued and answers GetRecords on one issued before a failed
//     transaction with ExpiredIteratorException, as DynamoDB Streams
//     answers an iterator past its life: the reader takes a new one from
//     its last sequence number, on the table that is now current.
type isolator struct {
	mu    sync.RWMutex
	proxy *httputil.ReverseProxy

	// gen counts the failed transactions (table copies put back); iters
	// maps each shard iterator issued to the gen it was issued in. Both
	// change only under mu: gen with mu held alone, iters under itersMu.
	gen     int
	itersMu sync.Mutex
	iters   map[string]int

	limits *limiter // AWS's limits (limits.go)
	// iam, when set, checks function calls first (iam.go).
	iam *IAM
	// s3 takes S3's requests, which need no lock (s3.go).
	s3 *s3Gate
}

func newIsolator(target string) (*isolator, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	i := &isolator{iters: map[string]int{}, limits: newLimiter(target)}
	i.proxy = httputil.NewSingleHostReverseProxy(u)
	i.proxy.ModifyResponse = i.observe
	return i, nil
}

func (i *isolator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isS3(r) {
		// S3 checks its own calls (s3.go) and shares nothing with the
		// tables: no lock, no limits.
		i.s3.serve(w, r)
		return
	}
	// IAM first: a denied call never reaches the limits (which may rewrite
	// the body).
	if i.iam != nil && !i.iam.authorize(w, r) {
		return
	}
	r, done, refused := i.limits.before(w, r)
	if refused {
		return
	}
	defer done()
	target := r.Header.Get("X-Amz-Target")
	switch {
	case readOnly[target]:
		i.mu.RLock()
		defer i.mu.RUnlock()
	case strings.HasPrefix(target, dynamoPrefix), strings.HasPrefix(target, streamsPrefix), strings.HasPrefix(r.URL.Path, "/moto-api/"):
		i.mu.Lock()
		defer i.mu.Unlock()
	default:
		i.proxy.ServeHTTP(w, r)
		return
	}
	if target == streamsPrefix+"GetRecords" {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct{ ShardIterator string }
		_ = json.Unmarshal(body, &in)
		if i.expired(in.ShardIterator) {
			writeExpiredIterator(w)
			return
		}
	}
	if target == streamsPrefix+"GetRecords" || target == streamsPrefix+"GetShardIterator" {
		// The answer is read by observe: ask for it uncompressed.
		r.Header.Del("Accept-Encoding")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), backendTimeout)
	defer cancel()
	i.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// observe notes, from moto's answers, the failed transactions and the shard
// iterators issued. It runs while ServeHTTP holds the lock.
func (i *isolator) observe(resp *http.Response) error {
	if err := i.limits.after(resp); err != nil {
		return err
	}
	switch target := resp.Request.Header.Get("X-Amz-Target"); {
	case target == transactionTarget && resp.StatusCode != http.StatusOK, resp.Request.URL.Path == "/moto-api/reset":
		// Held alone: no iterator is being issued or used.
		i.gen++
	case resp.StatusCode == http.StatusOK && (target == streamsPrefix+"GetRecords" || target == streamsPrefix+"GetShardIterator"):
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var out struct{ ShardIterator, NextShardIterator string }
		_ = json.Unmarshal(body, &out)
		i.issued(out.ShardIterator)
		i.issued(out.NextShardIterator)
	}
	return nil
}

func (i *isolator) issued(it string) {
	if it == "" {
		return
	}
	i.itersMu.Lock()
	defer i.itersMu.Unlock()
	if len(i.iters) >= maxIterators {
		// Iterators are used once; those never used are dropped wholesale
		// rather than kept forever.
		clear(i.iters)
	}
	i.iters[it] = i.gen
}

// expired reports whether it was issued before the last failed
// transaction, and forgets it: an iterator is used once.
func (i *isolator) expired(it string) bool {
	i.itersMu.Lock()
	defer i.itersMu.Unlock()
	gen, ok := i.iters[it]
	delete(i.iters, it)
	return ok && gen != i.gen
}

// writeExpiredIterator answers as DynamoDB Streams does for an iterator
// past its life.
func writeExpiredIterator(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Errortype", "ExpiredIteratorException")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ExpiredIteratorException","message":"Iterator expired: the table was restored by a cancelled transaction; get a new shard iterator."}`)
}

// serveIsolator listens on 127.0.0.1:port and proxies to target.
func serveIsolator(port int, target string, o options) (*http.Server, string, error) {
	iso, err := newIsolator(target)
	if err != nil {
		return nil, "", err
	}
	iso.iam = o.iam
	if iso.s3, err = newS3Gate(target, o); err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: iso, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String(), nil
}
