package motoserver

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransactionsRunAlone checks the proxy's promise: while a
// TransactWriteItems is at moto, no other request is.
func TestTransactionsRunAlone(t *testing.T) {
	var inFlight, maxWithTxn atomic.Int32
	var txnActive atomic.Bool
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		isTxn := r.Header.Get("X-Amz-Target") == transactionTarget
		if isTxn {
			txnActive.Store(true)
			defer txnActive.Store(false)
		}
		if txnActive.Load() && n > maxWithTxn.Load() {
			maxWithTxn.Store(n)
		}
		time.Sleep(5 * time.Millisecond)
	}))
	defer backend.Close()
	srv, url, err := serveIsolator(0, backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, url, nil)
			if i%3 == 0 {
				req.Header.Set("X-Amz-Target", transactionTarget)
			} else {
				req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	if got := maxWithTxn.Load(); got != 1 {
		t.Fatalf("%d requests were at the backend together with a transaction, want 1", got)
	}
}
