package chatbundle_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// demoServe is `chatctl serve --demo` built from this checkout, on a free
// port of 127.0.0.1, with TRANSLATOR=none.
type demoServe struct {
	// Dir is its working directory; Base its URL; Env its environment,
	// for the shells a test runs beside it.
	Dir, Base string
	Env       []string
}

// startDemoServe builds chatctl, starts `chatctl serve --demo` on a new
// table named after table, its output to stdout and stderr, and waits
// until it serves; it is stopped by its PID when t ends.
func startDemoServe(t *testing.T, table string, stdout, stderr *childproc.Output) demoServe {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "chatctl")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/chatctl").CombinedOutput(); err != nil {
		t.Fatalf("go build chatctl: %v\n%s", err, out)
	}
	port, err := motoserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := append(os.Environ(), "ADDR="+strings.TrimPrefix(base, "http://"), "AWS_ENDPOINT_URL="+os.Getenv(awsenv.EnvEndpoint),
		fmt.Sprintf("TABLE_NAME=%s-%d", table, time.Now().UnixNano()), "TRANSLATOR=none")
	serve := exec.Command(bin, "serve", "--demo")
	serve.Dir, serve.Env = dir, env
	serve.Stdout, serve.Stderr = stdout, stderr
	if err := childproc.Start(serve); err != nil {
		t.Fatalf("start chatctl serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = serve.Wait(); close(exited) }()
	t.Cleanup(func() { childproc.Stop(serve.Process.Pid, exited, 5*time.Second) })
	waitServing(t, base, stdout, exited)
	return demoServe{Dir: dir, Base: base, Env: env}
}
