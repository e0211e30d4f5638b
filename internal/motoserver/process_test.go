//go:build linux

package motoserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
)

// helperEnv makes TestServerDiesWithItsParent's binary the helper process:
// it starts moto_server, prints its PID, and then dies as its value says.
const helperEnv = "MOTOSERVER_TEST_HELPER"

// TestServerDiesWithItsParent runs this test binary as a helper that starts
// moto_server and then dies without calling Stop: by a panic in a goroutine
// (what -timeout does) or by SIGKILL. moto_server must be gone afterwards.
func TestServerDiesWithItsParent(t *testing.T) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helper(mode)
		return
	}
	for _, mode := range []string{"panic", "kill"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsParent$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+mode)
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := readPID(t, bufio.NewScanner(stdout), cmd)
			t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // only if the test fails
			if !childproc.Alive(pid) {
				t.Fatalf("moto_server %d is not running while its parent runs", pid)
			}
			if mode == "kill" {
				_ = cmd.Process.Kill()
			} else {
				fmt.Fprintln(stdin, "die")
			}
			if err := cmd.Wait(); err == nil {
				t.Fatalf("helper exited 0, want it to die (%s)", mode)
			}
			deadline := time.Now().Add(5 * time.Second)
			for childproc.Alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("moto_server %d still runs 5s after its parent died (%s)", pid, mode)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// readPID reads the helper's "PID <n>" line.
func readPID(t *testing.T, sc *bufio.Scanner, cmd *exec.Cmd) int {
	t.Helper()
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("helper printed %q", sc.Text())
			}
			return pid
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t.Fatalf("helper printed no PID: %v", sc.Err())
	return 0
}

// helper starts moto_server, prints its PID, waits for a line on stdin
// (when mode is "panic") and panics in a goroutine, as the testing
// package's -timeout alarm does, so that no deferred call or cleanup runs.
func helper(mode string) {
	s, err := Start(context.Background(), 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("PID %d\n", s.PID())
	if mode == "panic" {
		bufio.NewReader(os.Stdin).ReadString('\n')
		go panic("helper: dying without stopping moto_server")
	}
	time.Sleep(time.Minute)
	os.Exit(4)
}
