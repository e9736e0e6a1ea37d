// SPDX-License-Identifier: MIT

package sysx

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelSigaction is the kernel's struct sigaction for rt_sigaction(2) on
// the architectures that have sa_restorer (amd64, arm64, 386, arm...).
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// DefaultAction sets sig's disposition to SIG_DFL, past Go's runtime: its
// handler does nothing for some signals that no channel wants (SIGPIPE), so
// signal.Reset is not enough to die of them.
func DefaultAction(sig unix.Signal) error {
	act := kernelSigaction{} // handler 0 is SIG_DFL
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, unsafe.Sizeof(act.mask), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
