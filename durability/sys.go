// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// The system calls the durability steps make, as package-level variables so
// that unit tests can inject errnos (EIO from fdatasync, EINVAL from
// sync_file_range, a failing rename) deterministically. A test that
// replaces one runs alone (no t.Parallel); copier's tests give each copy
// calls of its own instead (copier/sys.go).
var (
	fsync         = unix.Fsync
	fdatasync     = unix.Fdatasync
	syncFileRange = unix.SyncFileRange
	fadvise       = unix.Fadvise
	renameat      = unix.Renameat
	unlinkat      = unix.Unlinkat
	openat        = sysx.Openat
	flock         = unix.Flock
	closeFile     = (*sysx.File).Close
	dupFd         = func(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }
	openFile      = sysx.Openat        // the read-back of --verify
	resident      = sysx.ResidentBytes // how much of a file is cached (mincore)
	cachestat     = unix.Cachestat
	// openDir opens DEST's directory, once per destination, for the
	// calls relative to it and its fsync.
	openDir = func(path string) (int, error) {
		return sysx.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
)

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
