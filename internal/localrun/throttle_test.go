package localrun

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestAPIGatewayRate sends 600 requests at one instant at k = 10 (1,000 a
// second, a burst of 500): 500 are served and 100 answered 429 as API
// Gateway answers; 0.1 s later 100 more are served.
func TestAPIGatewayRate(t *testing.T) {
	th := NewThrottles(10)
	now := time.Now()
	th.API.now = func() time.Time { return now }
	th.API.last = now
	h := th.APIGateway(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	count := func(n int) map[int]int {
		got := map[int]int{}
		for range n {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks/x/messages", nil))
			got[rec.Code]++
			if rec.Code == http.StatusTooManyRequests && rec.Body.String() != `{"message":"Too Many Requests"}` {
				t.Fatalf("429 body %q", rec.Body.String())
			}
		}
		return got
	}
	if got := count(600); got[http.StatusAccepted] != 500 || got[http.StatusTooManyRequests] != 100 {
		t.Fatalf("600 at once: %v; want 500 served and 100 answered 429", got)
	}
	now = now.Add(100 * time.Millisecond)
	if got := count(150); got[http.StatusAccepted] != 100 || got[http.StatusTooManyRequests] != 50 {
		t.Fatalf("150 a tenth of a second later: %v; want 100 served, 50 answered 429", got)
	}
}

// TestLambdaConcurrency holds 100 invocations in flight at k = 10 (100
// concurrent executions): the 101st request is throttled (API Gateway's
// 500), an event source's invocation is refused with ErrThrottled without
// running its handler; once one returns, the next runs.
func TestLambdaConcurrency(t *testing.T) {
	th := NewThrottles(10)
	th.API = NewTokenBucket(1e9, 1e9) // the rate is not under test
	hold, entered := make(chan struct{}), make(chan struct{}, 200)
	h := th.APIGateway(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-hold
		w.WriteHeader(http.StatusOK)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	codes := make(chan int, 100)
	for range 100 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	for range 100 {
		<-entered
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || string(body) != `{"message":"Internal Server Error"}` {
		t.Fatalf("the 101st request in flight: %d %s; want 500 Internal Server Error", resp.StatusCode, body)
	}
	ran := false
	_, err = Invoke(context.Background(), Function{Name: "RelayFunction", Timeout: time.Second, Concurrency: th.Concurrency},
		func(context.Context, int) (int, error) { ran = true; return 0, nil }, 1)
	if !errors.Is(err, ErrThrottled) || ran {
		t.Fatalf("an event source's invocation past the limit: %v (ran %v); want ErrThrottled, not run", err, ran)
	}
	close(hold)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Fatalf("a request within the limit answered %d", c)
		}
	}
	if _, err := Invoke(context.Background(), Function{Name: "RelayFunction", Timeout: time.Second, Concurrency: th.Concurrency},
		func(context.Context, int) (int, error) { return 0, nil }, 1); err != nil {
		t.Fatalf("an invocation once the others returned: %v", err)
	}
	if th.Concurrency.Peak() != 100 || th.Concurrency.Throttled() != 2 {
		t.Fatalf("peak %d, throttled %d; want 100 and 2", th.Concurrency.Peak(), th.Concurrency.Throttled())
	}
}

// TestNoThrottlesByDefault: k = 0 keeps nothing.
func TestNoThrottlesByDefault(t *testing.T) {
	var th *Throttles = NewThrottles(0)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	if th != nil || th.APIGateway(h) == nil {
		t.Fatal("k = 0 made throttles")
	}
}
