// SPDX-License-Identifier: MIT

package copier

import (
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// sysCalls are the system calls of one copy that tests replace, to inject
// errnos, short counts and zero returns, the sizes from which Auto
// picks Direct, which tests make small, and the pool of Direct's rings,
// which a test may give its copies alone: a value per copy, as
// internal/poll's hooks but held by the copy, so that tests replacing
// them run side by side. Options.sys names a copy's; nil is defaultSys.
type sysCalls struct {
	ficlone       func(dst, src int) error
	copyFileRange func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error)
	sendfile      func(out, in int, off *int64, n int) (int, error)
	splice        func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error)
	tee           func(rfd, wfd, n, flags int) (int64, error)
	pread         func(fd int, b []byte, off int64) (int, error)
	pwrite        func(fd int, b []byte, off int64) (int, error)
	fcntl         func(fd, cmd, arg int) (int, error)
	fallocate     func(fd int, mode uint32, off, n int64) error
	fadvise       func(fd int, off, n int64, advice int) error
	// reopen opens the file behind descriptor fd again, as a new open
	// file description with its own flags (Direct's O_DIRECT source),
	// through the /proc/self/fd magic link: no name another user could
	// swap is resolved.
	reopen func(fd, flags int) (int, error)

	// directMinBytes is DirectMinBytes; directUnflushedMinBytes and
	// dirtyLimit are described where they are defined (direct.go).
	directMinBytes          int64
	directUnflushedMinBytes int64
	dirtyLimit              func() int64

	// rings is where Direct's buffers come from (direct.go).
	rings *ringPool
}

// defaultSys is every copy's sysCalls but a test's.
var defaultSys = sysCalls{
	ficlone:       unix.IoctlFileClone,
	copyFileRange: unix.CopyFileRange,
	sendfile:      unix.Sendfile,
	splice: func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
		m, err := unix.Splice(rfd, roff, wfd, woff, n, flags)
		return int64(m), err
	},
	tee:       func(rfd, wfd, n, flags int) (int64, error) { return unix.Tee(rfd, wfd, n, flags) },
	pread:     unix.Pread,
	pwrite:    unix.Pwrite,
	fcntl:     func(fd, cmd, arg int) (int, error) { return unix.FcntlInt(uintptr(fd), cmd, arg) },
	fallocate: unix.Fallocate,
	fadvise:   unix.Fadvise,
	reopen: func(fd, flags int) (int, error) {
		return unix.Open(sysx.FdPath(fd, ""), flags|unix.O_CLOEXEC, 0)
	},
	directMinBytes:          DirectMinBytes,
	directUnflushedMinBytes: directUnflushedMinBytes,
	dirtyLimit:              dirtyLimit,
	rings:                   &runRings,
}

// sysOf is o's sysCalls.
func (o *Options) sysOf() *sysCalls {
	if o.sys != nil {
		return o.sys
	}
	return &defaultSys
}

// The calls no test replaces.
func ficloneRange(fd int, r *unix.FileCloneRange) error { return unix.IoctlFileCloneRange(fd, r) }
func read(fd int, b []byte) (int, error)                { return unix.Read(fd, b) }
func write(fd int, b []byte) (int, error)               { return unix.Write(fd, b) }
func seek(fd int, off int64, whence int) (int64, error) { return unix.Seek(fd, off, whence) }
func ftruncate(fd int, n int64) error                   { return unix.Ftruncate(fd, n) }
func fstat(fd int, st *unix.Stat_t) error               { return unix.Fstat(fd, st) }
func pipe2(p []int, flags int) error                    { return unix.Pipe2(p, flags) }
func closeFd(fd int) error                              { return unix.Close(fd) }
func statx(dirfd int, path string, flags, mask int, x *unix.Statx_t) error {
	return unix.Statx(dirfd, path, flags, mask, x)
}
func mmap(fd int, off int64, n, prot, flags int) ([]byte, error) {
	return unix.Mmap(fd, off, n, prot, flags)
}
func munmap(b []byte) error              { return unix.Munmap(b) }
func madvise(b []byte, advice int) error { return unix.Madvise(b, advice) }

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
// that count nothing retry EINTR themselves: the hash's reads of the
// source (preadFull) and readProc's (the checkpoints' flush is
// durability's, Options.CheckpointFlush).
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
