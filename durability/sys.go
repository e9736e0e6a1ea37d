package durability

import (
	"os"

	"golang.org/x/sys/unix"
)

// The system calls the durability steps make, as package-level variables so
// that unit tests can inject errnos (EIO from fdatasync, EINVAL from
// sync_file_range, a failing rename) deterministically, as copier/sys.go does.
var (
	fsync         = unix.Fsync
	fdatasync     = unix.Fdatasync
	syncFileRange = unix.SyncFileRange
	fadvise       = unix.Fadvise
	renameat      = unix.Renameat
	unlinkat      = unix.Unlinkat
	openat        = openatRetry
	flock         = unix.Flock
	closeFile     = (*os.File).Close
	dupFd         = func(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }
	openFile      = openatRetry   // the read-back of --verify
	resident      = residentBytes // how much of a file is cached (mincore)
	cachestat     = unix.Cachestat
	// openDir opens DEST's directory, once per destination, for the
	// calls relative to it and its fsync.
	openDir = func(path string) (int, error) {
		return openatRetry(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
)

// openPathDir opens a directory that cannot be read (write and search
// permission only) as O_PATH, which is enough for the *at calls.
func openPathDir(path string) (int, error) {
	return openatRetry(unix.AT_FDCWD, path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// openDirAt opens name in dirfd as a directory for reading, without
// following a symbolic link.
func openDirAt(dirfd int, name string) (int, error) {
	return openatRetry(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// openatRetry is openat(2), called again when a signal interrupted it (a
// FIFO's open waits for its peer, and FUSE can be interrupted).
func openatRetry(dirfd int, path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, path, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
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

// ignoringEINTR calls f until it fails with something other than EINTR.
// fsync, fdatasync and sync_file_range are not restarted by the kernel when
// a signal handler interrupts them (signal(7)), and the Go runtime sends
// itself SIGURG for preemption. An EINTR from fsync means the call was cut
// short before it reported anything, so calling it again is the same call,
// not the "retry after failure" that fsync(2) warns against.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
