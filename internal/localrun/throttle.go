package localrun

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The account's limits the local run keeps when scaled (Throttles), as
// AWS documents them: API Gateway's throttle quota of 10,000 requests a
// second per account and Region, with a token bucket of 5,000 requests,
// and Lambda's 1,000 concurrent executions per account and Region.
const (
	APIGatewayRate     = 10000
	APIGatewayBurst    = 5000
	AccountConcurrency = 1000
)

// Throttles are the account's limits scaled down by a factor k, as the
// local AWS scales DynamoDB's (motoserver.Throughput): with k = 10, 1,000
// requests a second with a burst of 500, and 100 concurrent executions.
type Throttles struct {
	API         *TokenBucket
	Concurrency *Concurrency
}

// NewThrottles is the account's limits divided by k; k of 0 or less keeps
// none (a nil *Throttles, whose methods let everything through).
func NewThrottles(k float64) *Throttles {
	if k <= 0 {
		return nil
	}
	return &Throttles{
		API:         NewTokenBucket(APIGatewayRate/k, APIGatewayBurst/k),
		Concurrency: NewConcurrency(max(1, int(AccountConcurrency/k))),
	}
}

// Executions is t's Concurrency, nil (no limit) when t is nil.
func (t *Throttles) Executions() *Concurrency {
	if t == nil {
		return nil
	}
	return t.Concurrency
}

// TokenBucket is a rate with a burst, API Gateway's algorithm: a request
// takes a token; tokens come back at the rate up to the burst.
type TokenBucket struct {
	mu          sync.Mutex
	rate, burst float64
	tokens      float64
	last        time.Time
	now         func() time.Time
}

// NewTokenBucket is a full bucket of burst tokens refilled at rate a second.
func NewTokenBucket(rate, burst float64) *TokenBucket {
	return &TokenBucket{rate: rate, burst: burst, tokens: burst, last: time.Now(), now: time.Now}
}

// Take takes a token, and reports false when there is none.
func (b *TokenBucket) Take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if d := now.Sub(b.last).Seconds(); d > 0 {
		b.tokens = min(b.burst, b.tokens+d*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Concurrency counts the account's executions in flight against a limit,
// whatever the function.
type Concurrency struct {
	limit     int64
	inFlight  atomic.Int64
	peak      atomic.Int64
	throttled atomic.Int64
}

// NewConcurrency is a limit of n executions at once.
func NewConcurrency(n int) *Concurrency { return &Concurrency{limit: int64(n)} }

// Acquire takes an execution slot, and reports false (a throttle, counted)
// when all are in use; release gives a taken one back. A nil *Concurrency
// has no limit.
func (c *Concurrency) Acquire() (release func(), ok bool) {
	if c == nil {
		return func() {}, true
	}
	n := c.inFlight.Add(1)
	if n > c.limit {
		c.inFlight.Add(-1)
		c.throttled.Add(1)
		return nil, false
	}
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	var once sync.Once
	return func() { once.Do(func() { c.inFlight.Add(-1) }) }, true
}

// Throttled is how many invocations were refused; Peak the most executions
// that ran at once.
func (c *Concurrency) Throttled() int64 { return c.throttled.Load() }

// Peak is the most executions that ran at once.
func (c *Concurrency) Peak() int64 { return c.peak.Load() }

// ErrThrottled is what Invoke returns for an invocation past the account's
// concurrency: Lambda's TooManyRequestsException (429, Reason
// ReservedFunctionConcurrentInvocationLimitExceeded or
// ConcurrentInvocationLimitExceeded). An event source mapping retries it:
// a stream's batch is invoked again, a queue's messages come back after
// their visibility timeout.
var ErrThrottled = errors.New("rate exceeded: TooManyRequestsException (concurrent executions)")

// APIGateway is h behind what API Gateway and Lambda do to an HTTP API's
// request as traffic arrives: past the account's rate, API Gateway answers
// 429 {"message":"Too Many Requests"} without invoking anything; a request
// is an invocation of its route's function, and one past the account's
// concurrency is throttled by Lambda (429 TooManyRequestsException to API
// Gateway), which API Gateway answers as an integration failure: 500
// {"message":"Internal Server Error"} (AWS Knowledge Center, "API Gateway
// internal server error": a throttled backend Lambda surfaces as Internal
// Server Error). A nil t is h.
func (t *Throttles) APIGateway(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.API.Take() {
			gatewayError(w, http.StatusTooManyRequests, `{"message":"Too Many Requests"}`)
			return
		}
		release, ok := t.Concurrency.Acquire()
		if !ok {
			gatewayError(w, http.StatusInternalServerError, `{"message":"Internal Server Error"}`)
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// gatewayError answers as API Gateway answers a request it refuses itself.
func gatewayError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("apigw-requestid", requestID()[:16])
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
