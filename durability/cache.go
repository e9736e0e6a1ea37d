package durability

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Evict makes f's pages leave the page cache, so that the next read of it
// comes from the device ("cold cache" for benchmarks and tests). Dirty pages
// are written back first: POSIX_FADV_DONTNEED drops only clean pages ("Any
// unwritten dirty pages will not be freed. If the application wishes to
// ensure that dirty pages will be released, it should call fsync(2) or
// fdatasync(2) first", posix_fadvise(2)). Pages mapped by some process stay.
func Evict(f *os.File) error {
	defer runtime.KeepAlive(f)
	fd := int(f.Fd())
	if err := ignoringEINTR(func() error { return fdatasync(fd) }); err != nil && err != unix.EINVAL {
		// EINVAL: a file that cannot be synced (a FIFO): nothing cached.
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	if err := fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil && err != unix.ESPIPE {
		return &os.PathError{Op: "posix_fadvise", Path: f.Name(), Err: err}
	}
	return nil
}

// EvictPath is Evict for the file at path (opened read-only: fdatasync and
// posix_fadvise need no write access).
func EvictPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Evict(f)
}
