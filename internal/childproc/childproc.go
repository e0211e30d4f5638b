// Package childproc starts the local servers that tests and `chatctl serve`
// run (moto_server, apertium-apy) so that they never outlive the process
// that started them: each child leads its own process group, which Stop
// ends by the child's PID, and on Linux it gets the parent-death signal
// SIGKILL, which the kernel sends when the parent dies without stopping it
// (a test binary that panics on -timeout, or is killed).
//
// The kernel sends the parent-death signal when the thread that forked the
// child exits, not the process (syscall.SysProcAttr.Pdeathsig,
// https://go.dev/issue/27505). Go ends a thread only when a goroutine exits
// while locked to it, so Start forks from one goroutine locked to its thread
// that never returns: that thread lives exactly as long as the process.
package childproc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// forker is the channel of the goroutine that forks every child.
var forker = sync.OnceValue(func() chan<- startReq {
	ch := make(chan startReq)
	go func() {
		// Never unlocked and never returns: the thread is every child's
		// parent for as long as the process runs.
		runtime.LockOSThread()
		for r := range ch {
			r.done <- r.cmd.Start()
		}
	}()
	return ch
})

// Start starts cmd in a new process group, its leader killed when this
// process dies (on Linux). It keeps cmd.SysProcAttr's other settings.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	done := make(chan error, 1)
	forker() <- startReq{cmd: cmd, done: done}
	return <-done
}

// Stop ends the process group that Start made for the leader pid: SIGTERM,
// then SIGKILL when exited has not closed within grace, then SIGKILL to
// whatever is left of the group (the pipelines a server forks). exited must
// close once the leader has been waited for. Call it once per process.
func Stop(pid int, exited <-chan struct{}, grace time.Duration) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	// A group outlives its leader while a member runs, and the kernel does
	// not reuse the id of a group that still has members; ESRCH when none.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
