//go:build !linux

package childproc

import "syscall"

// setDeathSignal does nothing: only Linux has a parent-death signal, so
// elsewhere a child outlives a parent that dies without calling Stop.
func setDeathSignal(*syscall.SysProcAttr) {}
