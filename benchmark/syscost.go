// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// plainCall is the function whose call is timed: //go:noinline keeps it a
// real call (CALL, frame set-up, RET), as a C function in another file is.
//
//go:noinline
func plainCall(x int) int { return x + 1 }

// rawGetpid is one getpid(2) straight into the kernel: RawSyscall does not
// tell the Go scheduler (entersyscall), so the time is the kernel's entry
// and exit, not Go's bookkeeping around it.
func rawGetpid() { syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0) }

// threadClock is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID):
// unlike the wall clock it does not run while the thread waits for a CPU,
// so a busy machine does not make a call look slower than it is.
func threadClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func timeSyscalls(n int64) time.Duration {
	t := threadClock()
	for range n {
		rawGetpid()
	}
	return threadClock() - t
}

func timeCalls(n int64) time.Duration {
	x := 0
	t := threadClock()
	for range n {
		x = plainCall(x)
	}
	d := threadClock() - t
	// x is used, so the calls cannot be dropped, and proves they all ran.
	if int64(x) != n {
		panic(fmt.Sprintf("benchmark: %d function calls counted %d", n, x))
	}
	return d
}

// syscostTarget is how long one timed loop of section 4 should take.
const syscostTarget = 100 * time.Millisecond

// calibrate picks how many iterations of f fill about syscostTarget.
func calibrate(f func(int64) time.Duration, start int64) int64 {
	n := start
	for {
		d := f(n)
		if d >= syscostTarget/10 || n >= 1<<34 {
			per := float64(d) / float64(n)
			if per <= 0 {
				return n
			}
			return max(int64(float64(syscostTarget)/per), 1)
		}
		n *= 10
	}
}

// measureSyscallCost is section 4: runs timed loops of raw getpid calls and
// of plain function calls, each about syscostTarget long.
func measureSyscallCost(runs int, progress func(run int)) SyscallCost {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ns := calibrate(timeSyscalls, 1000)
	nf := calibrate(timeCalls, 100000)
	var sysNs, funcNs, users, syss []float64
	for i := range runs {
		progress(i + 1)
		c0 := threadCPU()
		d := timeSyscalls(ns)
		cpu := threadCPU().sub(c0)
		sysNs = append(sysNs, float64(d.Nanoseconds())/float64(ns))
		users = append(users, cpu.user.Seconds())
		syss = append(syss, cpu.sys.Seconds())
		d = timeCalls(nf)
		funcNs = append(funcNs, float64(d.Nanoseconds())/float64(nf))
	}
	s, f := summarize(sysNs), summarize(funcNs)
	c := SyscallCost{
		Section: 4, Runs: runs,
		Syscalls: ns, SyscallNs: s.median, SyscallMinNs: s.min, SyscallMaxNs: s.max,
		SyscallUserS: summarize(users).median, SyscallSysS: summarize(syss).median,
		FuncCalls: nf, FuncNs: f.median, FuncMinNs: f.min, FuncMaxNs: f.max,
		SyscallMethod: "raw syscall",
		Clock:         "CLOCK_THREAD_CPUTIME_ID",
	}
	if f.median > 0 {
		c.Ratio = s.median / f.median
	}
	return c
}
