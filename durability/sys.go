// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// sysCalls are the system calls the durability steps make that tests
// replace, to inject errnos (EIO from fdatasync, EINVAL from
// sync_file_range, a failing rename or close) and to
// record the calls made: a value per destination, as copier's sysCalls,
// so that tests replacing them run side by side. Options.sys names a
// destination's (its temporary file, writeback, record and read-back use
// the same); nil is defaultSys. DirSync has its own.
type sysCalls struct {
	fsync         func(fd int) error
	fdatasync     func(fd int) error
	syncFileRange func(fd int, off, n int64, flags int) error
	fadvise       func(fd int, off, n int64, advice int) error
	renameat      func(olddirfd int, oldpath string, newdirfd int, newpath string) error
	closeFile     func(f *sysx.File) error
	dupFd         func(fd int) (int, error)
	openFile      func(dirfd int, path string, flags int, mode uint32) (int, error) // the read-back of --verify
	resident      func(fd int) (int64, error)                                       // how much of a file is cached (mincore)
	cachestat     func(fd uint, crange *unix.CachestatRange, cstat *unix.Cachestat_t, flags uint) error
	// openDir opens DEST's directory, once per destination, for the
	// calls relative to it and its fsync.
	openDir func(path string) (int, error)
	// beforeVerify, when set, runs on the destination (opened read-write
	// by the caller's description: dirfd and name) right before --verify
	// reads it back. Only test builds set it (corrupt_testhooks.go, build
	// tag fastcp_testhooks, and the package's own tests): the shipped
	// binary has no way to change a copy's bytes.
	beforeVerify func(dirfd int, name string) error
}

// defaultSys is every destination's sysCalls but a test's.
var defaultSys = sysCalls{
	fsync:         unix.Fsync,
	fdatasync:     unix.Fdatasync,
	syncFileRange: unix.SyncFileRange,
	fadvise:       unix.Fadvise,
	renameat:      unix.Renameat,
	closeFile:     (*sysx.File).Close,
	dupFd:         func(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) },
	openFile:      sysx.Openat,
	resident:      sysx.ResidentBytes,
	cachestat:     unix.Cachestat,
	openDir: func(path string) (int, error) {
		return sysx.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	},
}

// The calls of the sweep of leftovers, of --resume's record and of the
// side records, as package-level variables that tests replace to inject
// failures (ENOTSUP from the xattr calls, a race at the lock): a test
// that replaces one runs alone (no t.Parallel).
var (
	unlinkat = unix.Unlinkat
	openat   = sysx.Openat
	flock    = unix.Flock
)

// sysOf is o's sysCalls.
func (o *Options) sysOf() *sysCalls {
	if o.sys != nil {
		return o.sys
	}
	return &defaultSys
}

// ignoringEINTR retries a call that a signal cut short (sysx.Retry). A
// function, not a variable: a call through a variable makes every
// closure and pointer passed to it escape to the heap.
func ignoringEINTR(f func() error) error { return sysx.IgnoringEINTR(f) }

// openPathDir opens a directory that cannot be read (write and search
// permission only) as O_PATH, which is enough for the *at calls.
func openPathDir(path string) (int, error) {
	return sysx.Openat(unix.AT_FDCWD, path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// openDirAt opens name in dirfd as a directory for reading, without
// following a symbolic link.
func openDirAt(dirfd int, name string) (int, error) {
	return sysx.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// Flags of sync_file_range(2).
const (
	// sfrStart starts write-out of the dirty pages of a range and returns
	// without waiting: "an asynchronous flush-to-disk operation" (it may
	// still block when the device's request queue is full).
	sfrStart = unix.SYNC_FILE_RANGE_WRITE
	// sfrWait is the man page's "write-for-data-integrity operation":
	// wait for pages already under write-out, write whatever is still
	// dirty, wait for all of it.
	sfrWait = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
)
