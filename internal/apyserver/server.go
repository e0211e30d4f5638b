// Package apyserver starts apertium-apy, the Apertium HTTP server, for
// local runs and tests: listening on 127.0.0.1 only and dying with its
// parent. Only local tooling links it; the translation function talks to
// a running APY through pkg/apertium.Client.
package apyserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
)

// DefaultModesDir is where Debian's apertium-* packages install their pairs'
// mode files.
const DefaultModesDir = "/usr/share/apertium/modes"

// loopbackShim runs the apertium-apy console script (argv[1]) with
// Tornado's TCPServer.bind forced to 127.0.0.1.
const loopbackShim = `import runpy, sys
import tornado.tcpserver as t
_bind = t.TCPServer.bind
def bind(self, port, address=None, *args, **kwargs):
    return _bind(self, port, "127.0.0.1", *args, **kwargs)
t.TCPServer.bind = bind
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
`

// Server is a running apertium-apy process, listening on 127.0.0.1 only.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	log    *capped
	stop   sync.Once
}

// binary returns the apertium-apy to run: APERTIUM_APY, else the one on PATH.
func binary() (string, error) {
	bin := os.Getenv("APERTIUM_APY")
	if bin == "" {
		bin = "apertium-apy"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("apertium: %s is not installed (Debian: apt-get install apertium-apy)", bin)
	}
	return path, nil
}

// Missing reports what a local APY translating the pairs (APY codes, such as
// "eng-spa") from modesDir lacks: nil when the binary and every pair's mode
// file are there, else an error naming each missing piece.
func Missing(modesDir string, pairs ...string) error {
	var errs []error
	if _, err := binary(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range pairs {
		mode := filepath.Join(modesDir, p+".mode")
		if _, err := os.Stat(mode); err != nil {
			errs = append(errs, fmt.Errorf("apertium: pair %s is not installed: no %s (Debian: apt-get install apertium-%s)", p, mode, p))
		}
	}
	return errors.Join(errs...)
}

// Start runs apertium-apy with the pairs in modesDir on port (a free one when
// 0) in its own process group, and waits until it lists its pairs.
func Start(ctx context.Context, port int, modesDir string) (*Server, error) {
	path, err := binary()
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, fmt.Errorf("apertium: find a free port: %w", err)
		}
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), exited: make(chan struct{}), log: &capped{max: 8 << 10}}
	// apertium-apy binds its port on every interface and has no option to
	// choose one; its console script is Python, so run it with Tornado's
	// bind pinned to loopback.
	python, err := interpreter(path)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(python, "-c", loopbackShim, path, "-p", strconv.Itoa(port), modesDir)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Its own process group, so that Stop also ends the pipelines it forks,
	// and killed by the kernel if this process dies without calling Stop.
	if err := childproc.Start(s.cmd); err != nil {
		return nil, fmt.Errorf("apertium: start %s: %w", path, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("apertium: apertium-apy exited before answering (%v): %s", s.err, s.log)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(s.URL + "/listPairs"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("apertium: apertium-apy did not answer within 60s: %s", s.log)
		}
	}
}

// Stop ends the server's process group by its PID: SIGTERM, then SIGKILL
// after five seconds, then SIGKILL to any pipeline left in the group. It
// returns once apertium-apy has exited; calling it again does nothing.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.stop.Do(func() { childproc.Stop(s.cmd.Process.Pid, s.exited, 5*time.Second) })
}

// PID is apertium-apy's process id, the id of its process group.
func (s *Server) PID() int { return s.cmd.Process.Pid }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// capped keeps the first max bytes written to it: enough to explain a failed
// start, bounded however long the server runs.
type capped struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// interpreter returns the interpreter of script's "#!" line: the Python
// that has apertium-apy's modules.
func interpreter(script string) (string, error) {
	f, err := os.Open(script)
	if err != nil {
		return "", fmt.Errorf("apertium: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		return "", fmt.Errorf("apertium: %s is not a script with a #! line", script)
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return "", fmt.Errorf("apertium: %s has an empty #! line", script)
	}
	return fields[0], nil
}
