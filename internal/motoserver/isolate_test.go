package motoserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxyTo starts the isolating proxy in front of handler.
func proxyTo(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	backend := httptest.NewServer(handler)
	t.Cleanup(backend.Close)
	srv, url, err := serveIsolator(0, backend.URL, options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return url
}

func send(ctx context.Context, url, target, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

// TestWritesRunAlone checks the proxy's promise: while a DynamoDB write (a
// transaction or a single-item write) is at moto, no other DynamoDB request
// is; reads run together.
func TestWritesRunAlone(t *testing.T) {
	var inFlight, maxWithWrite, maxReads atomic.Int32
	var writing atomic.Int32
	url := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if target := r.Header.Get("X-Amz-Target"); !readOnly[target] {
			writing.Add(1)
			defer writing.Add(-1)
		} else if n > maxReads.Load() {
			maxReads.Store(n)
		}
		if writing.Load() > 0 && n > maxWithWrite.Load() {
			maxWithWrite.Store(n)
		}
		time.Sleep(5 * time.Millisecond)
	})
	targets := []string{transactionTarget, dynamoPrefix + "PutItem", dynamoPrefix + "UpdateItem", dynamoPrefix + "GetItem", dynamoPrefix + "Query", streamsPrefix + "GetRecords"}
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := send(context.Background(), url, targets[i%len(targets)], "{}"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := maxWithWrite.Load(); got != 1 {
		t.Fatalf("%d requests were at the backend together with a write, want 1", got)
	}
	if got := maxReads.Load(); got < 2 {
		t.Fatalf("at most %d reads ran together, want reads to share the backend", got)
	}
}

// TestWriteHoldsTheLockAfterItsClientLeft: a client that gives up on a
// transaction does not let the next write reach moto while moto still runs
// the first.
func TestWriteHoldsTheLockAfterItsClientLeft(t *testing.T) {
	var txnDone atomic.Bool
	var overlapped atomic.Bool
	url := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == transactionTarget {
			time.Sleep(300 * time.Millisecond)
			txnDone.Store(true)
			return
		}
		if !txnDone.Load() {
			overlapped.Store(true)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := send(ctx, url, transactionTarget, "{}"); err == nil {
		t.Fatalf("the transaction answered within 50ms; the test needs it to be cut off")
	}
	if _, err := send(context.Background(), url, dynamoPrefix+"PutItem", "{}"); err != nil {
		t.Fatal(err)
	}
	if overlapped.Load() {
		t.Fatalf("a write reached the backend while an abandoned transaction was still running there")
	}
}

// TestSQSIsNotHeldBack: an SQS long poll does not delay DynamoDB writes.
func TestSQSIsNotHeldBack(t *testing.T) {
	release := make(chan struct{})
	url := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "AmazonSQS.ReceiveMessage" {
			<-release
		}
	})
	defer close(release)
	go send(context.Background(), url, "AmazonSQS.ReceiveMessage", "{}")
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := send(ctx, url, transactionTarget, "{}"); err != nil {
		t.Fatalf("a transaction during an SQS long poll: %v", err)
	}
}

// TestIteratorsExpireWhenATransactionFails: an iterator issued before a
// failed transaction is refused (moto would read a discarded copy of the
// shard); one issued after is served.
func TestIteratorsExpireWhenATransactionFails(t *testing.T) {
	var n atomic.Int32
	var failTxn atomic.Bool
	url := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Amz-Target") {
		case transactionTarget:
			if failTxn.Load() {
				w.WriteHeader(http.StatusBadRequest)
			}
		case streamsPrefix + "GetShardIterator", streamsPrefix + "GetRecords":
			io.WriteString(w, `{"ShardIterator":"it-`+itoa(int(n.Add(1)))+`","NextShardIterator":"next-`+itoa(int(n.Load()))+`","Records":[]}`)
		}
	})
	getRecords := func(it string) int {
		t.Helper()
		resp, err := send(context.Background(), url, streamsPrefix+"GetRecords", `{"ShardIterator":"`+it+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if _, err := send(context.Background(), url, streamsPrefix+"GetShardIterator", "{}"); err != nil {
		t.Fatal(err)
	}
	// it-1 is issued; a transaction that succeeds leaves it valid.
	send(context.Background(), url, transactionTarget, "{}")
	if got := getRecords("it-1"); got != http.StatusOK {
		t.Fatalf("iterator after a successful transaction: status %d, want 200", got)
	}
	// next-2 was issued by that GetRecords; a failed transaction expires it.
	failTxn.Store(true)
	send(context.Background(), url, transactionTarget, "{}")
	if got := getRecords("next-2"); got != http.StatusBadRequest {
		t.Fatalf("iterator issued before a failed transaction: status %d, want 400 ExpiredIteratorException", got)
	}
	send(context.Background(), url, streamsPrefix+"GetShardIterator", "{}")
	if got := getRecords("it-3"); got != http.StatusOK {
		t.Fatalf("iterator issued after the failed transaction: status %d, want 200", got)
	}
	// An iterator the proxy never saw is left to moto.
	if got := getRecords("unknown"); got != http.StatusOK {
		t.Fatalf("unknown iterator: status %d, want it passed to the backend", got)
	}
}
