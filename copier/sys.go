// SPDX-License-Identifier: MIT

package copier

import (
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// The system calls the copier makes, as package-level variables so that unit
// tests can inject errnos, short counts and zero returns deterministically.
var (
	ficlone       = unix.IoctlFileClone
	ficloneRange  = unix.IoctlFileCloneRange
	copyFileRange = unix.CopyFileRange
	sendfile      = unix.Sendfile
	splice        = func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
		m, err := unix.Splice(rfd, roff, wfd, woff, n, flags)
		return int64(m), err
	}
	tee       = func(rfd, wfd, n, flags int) (int64, error) { return unix.Tee(rfd, wfd, n, flags) }
	pread     = unix.Pread
	pwrite    = unix.Pwrite
	read      = unix.Read
	write     = unix.Write
	seek      = unix.Seek
	ftruncate = unix.Ftruncate
	fallocate = unix.Fallocate
	fstat     = unix.Fstat
	pipe2     = unix.Pipe2
	fcntl     = func(fd, cmd, arg int) (int, error) { return unix.FcntlInt(uintptr(fd), cmd, arg) }
	closeFd   = unix.Close
	fdatasync = unix.Fdatasync // checkpoints (--resume)
	statx     = unix.Statx
	fadvise   = unix.Fadvise
	// reopen opens the file behind descriptor fd again, as a new open
	// file description with its own flags (Direct's O_DIRECT source),
	// through the /proc/self/fd magic link: no name another user could
	// swap is resolved.
	reopen = func(fd, flags int) (int, error) {
		return unix.Open(sysx.FdPath(fd, ""), flags|unix.O_CLOEXEC, 0)
	}
	mmap    = unix.Mmap
	munmap  = unix.Munmap
	madvise = unix.Madvise
)

// Sizes of one call, named with their units.
const (
	// maxRWCount is the most any read/write-like call moves at once
	// (MAX_RW_COUNT: INT_MAX rounded down to a page).
	maxRWCount = 0x7ffff000
	// offloadChunkBytes bounds one copy_file_range/sendfile call so the
	// progress bar moves and the per-call work stays short.
	offloadChunkBytes = 64 << 20
	// pipeBytes is the pipe size asked for with F_SETPIPE_SZ for splice.
	pipeBytes = 1 << 20
	// seqAdviceMinBytes: from this size on a buffered copy first tells
	// the kernel it reads the source sequentially (POSIX_FADV_SEQUENTIAL).
	seqAdviceMinBytes = 4 << 20
)

// retry calls f until it fails with something other than EINTR
// (sysx.Retry), counting every attempt as a system call. The strategies'
// calls go through it, Direct's readers and writers too (each counts into
// its chunk, added to the copy's count as the chunk comes back); the calls
// that count nothing retry EINTR themselves: the background checkpoint
// flush, the hash's reads of the source (preadFull) and readProc's.
func retry[T any](calls *int64, f func() (T, error)) (T, error) {
	return sysx.Retry(func() (T, error) {
		*calls++
		return f()
	})
}

func retryErr(calls *int64, f func() error) error {
	_, err := retry(calls, func() (struct{}, error) { return struct{}{}, f() })
	return err
}
