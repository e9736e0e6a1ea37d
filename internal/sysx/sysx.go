// SPDX-License-Identifier: MIT

// Package sysx holds the system-call helpers that more than one package of
// fastcp needs: the EINTR retry, an open that bypasses the runtime poller,
// page-cache eviction and residency (mincore), /proc/self/fd paths, the
// umask read without setting it. It imports only the standard
// library and golang.org/x/sys/unix, so every other package may import it.
package sysx

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Retry calls f until it fails with something other than EINTR. On FUSE and
// NFS a signal can cut a call short, a FIFO's open waits for its peer, and
// fsync, fdatasync and sync_file_range are not restarted by the kernel when
// a signal handler interrupts them (signal(7)); the Go runtime sends itself
// SIGURG for preemption. A call cut short by EINTR did nothing (an fsync
// reported nothing), so calling it again is the same call, not the "retry
// after failure" that fsync(2) warns against.
func Retry[T any](f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err != unix.EINTR {
			return v, err
		}
	}
}

// IgnoringEINTR is Retry for a call that returns only an error.
func IgnoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// Openat is openat(2), called again when a signal interrupted it.
func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return Retry(func() (int, error) { return unix.Openat(dirfd, path, flags, mode) })
}

// Open opens path with exactly flags (plus O_CLOEXEC) in one open(2),
// retried on EINTR, and wraps the descriptor with os.NewFile. os.OpenFile
// would follow the open with fcntl(F_GETFL) and fcntl(F_SETFL,
// flags|O_NONBLOCK) to try the runtime poller, and (*os.File).Fd with
// F_SETFL again to make it blocking; a directory or a /proc file would
// also set the poller up (epoll_create1, an eventfd, epoll_ctl) for
// nothing. os.NewFile on a blocking descriptor makes no fcntl call that
// changes flags, so O_SYNC and O_DSYNC are set by open and never appear in
// an F_SETFL.
func Open(path string, flags int, perm os.FileMode) (*os.File, error) {
	fd, err := Retry(func() (int, error) { return unix.Open(path, flags|unix.O_CLOEXEC, uint32(perm.Perm())) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// FdPath names the open file fd, or with name the entry name of the open
// directory fd, through the /proc/self/fd magic link, for the calls that
// take a path but no descriptor (the l*xattr calls, chmod of an O_PATH
// descriptor, a second open, linkat of an unnamed file): the link resolves
// to what fd holds, not to a name another user could swap.
func FdPath(fd int, name string) string {
	p := "/proc/self/fd/" + strconv.Itoa(fd)
	if name != "" {
		p += "/" + name
	}
	return p
}

// PreadFull reads len(b) bytes at off with pread, or fewer at the end of
// the file; EINTR is retried. pread is unix.Pread, or a package's test
// hook standing in for it.
func PreadFull(pread func(fd int, p []byte, off int64) (int, error), fd int, b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := pread(fd, b[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
