// Package motoserver starts and stops a local moto_server, which speaks the
// DynamoDB, SQS and S3 protocols on one loopback port, behind a proxy that
// makes it as strict as AWS: writes run one at a time (isolate.go), AWS's
// limits hold (limits.go), and S3 checks presigned URLs, POST policies and
// CORS (s3.go). Tests, `chatctl serve` and `chatctl local-aws`
// use it; it is never part of a deployed function.
package motoserver

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
)

// patch makes moto's TransactWriteItems all-or-nothing without replacing
// the table (see the file's comment). Python loads it at start-up as
// sitecustomize from the directory put first on moto_server's PYTHONPATH.
//
//go:embed sitecustomize.py
var patch []byte

// Server is a running moto_server process behind an isolating proxy
// (isolate.go) that keeps AWS's limits (limits.go). URL is the proxy's:
// clients never talk to moto directly.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once moto_server has been waited for
	err    error         // its exit, once exited is closed
	stop   sync.Once
	proxy  *http.Server
	// moto is moto_server's own URL; patchDir holds the patch.
	moto     string
	patchDir string
}

func itoa(n int) string { return strconv.Itoa(n) }

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start launches moto_server on a free loopback port behind a proxy on
// 127.0.0.1:port (a free port when port is 0), and waits until it answers.
// The binary is MOTO_SERVER, or moto_server on PATH. The proxy keeps AWS's
// limits (limits.go) and, WithIAM, checks function calls (iam.go); opts
// change them.
func Start(ctx context.Context, port int, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := os.Getenv("MOTO_SERVER")
	if bin == "" {
		bin = "moto_server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("motoserver: %s not found (pip install 'moto[server]'): %w", bin, err)
	}
	motoPort, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("motoserver: find a free port: %w", err)
	}
	patchDir, err := os.MkdirTemp("", "motoserver-")
	if err != nil {
		return nil, fmt.Errorf("motoserver: %w", err)
	}
	if err := os.WriteFile(filepath.Join(patchDir, "sitecustomize.py"), patch, 0o600); err != nil {
		os.RemoveAll(patchDir)
		return nil, fmt.Errorf("motoserver: %w", err)
	}
	pythonPath := patchDir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", strconv.Itoa(motoPort))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	cmd.Stdout, cmd.Stderr = nil, nil
	// Its own process group, so that Stop also ends any worker it forks,
	// and killed by the kernel if this process dies without calling Stop.
	if err := childproc.Start(cmd); err != nil {
		os.RemoveAll(patchDir)
		return nil, fmt.Errorf("motoserver: start: %w", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", motoPort), cmd: cmd, exited: make(chan struct{}), patchDir: patchDir}
	s.moto = s.URL
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(60 * time.Second) // a loaded CI machine can take long to import moto
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("motoserver: exited before answering: %v", s.err)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(s.URL + "/moto-api/"); err == nil {
			resp.Body.Close()
			proxy, url, err := serveIsolator(port, s.URL, o)
			if err != nil {
				s.Stop()
				return nil, fmt.Errorf("motoserver: proxy on port %d: %w", port, err)
			}
			s.proxy, s.URL = proxy, url
			for _, set := range o.limits {
				set(proxy.Handler.(*isolator).limits)
			}
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, errors.New("motoserver: did not answer within 60s")
		}
	}
}

// Stop ends the server's process group by its PID (SIGTERM, then SIGKILL
// after five seconds) and returns once moto_server has exited. Calling it
// again does nothing.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.stop.Do(func() {
		defer os.RemoveAll(s.patchDir)
		if s.proxy != nil {
			s.proxy.Close()
		}
		childproc.Stop(s.cmd.Process.Pid, s.exited, 5*time.Second)
	})
}

// PID is moto_server's process id, the id of its process group.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Reset clears all moto state.
func (s *Server) Reset() error {
	resp, err := http.Post(s.URL+"/moto-api/reset", "application/json", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
