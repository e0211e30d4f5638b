package childproc

import (
	"bytes"
	"sync"
)

// Output collects what is written to it from several goroutines at once:
// a child process's two streams (set it as cmd.Stdout and cmd.Stderr), or
// the log lines of handlers serving concurrently.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
