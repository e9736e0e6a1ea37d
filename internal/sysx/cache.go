// SPDX-License-Identifier: MIT

package sysx

import (
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Evict makes f's pages leave the page cache, so that the next read of it
// comes from the device ("cold cache" for benchmarks and tests). Dirty pages
// are written back first: POSIX_FADV_DONTNEED drops only clean pages ("Any
// unwritten dirty pages will not be freed. If the application wishes to
// ensure that dirty pages will be released, it should call fsync(2) or
// fdatasync(2) first", posix_fadvise(2)). Pages mapped by some process stay.
func Evict(f Descriptor) error {
	defer runtime.KeepAlive(f)
	fd := int(f.Fd())
	if err := IgnoringEINTR(func() error { return unix.Fdatasync(fd) }); err != nil && err != unix.EINVAL {
		// EINVAL: a file that cannot be synced (a FIFO): nothing cached.
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil && err != unix.ESPIPE {
		return &os.PathError{Op: "posix_fadvise", Path: f.Name(), Err: err}
	}
	return nil
}

// ResidentBytes is how many bytes of the file fd are in the page cache:
// mincore(2) over a read-only shared mapping, 1 GiB at a time, in whole
// pages (the last one counted whole).
func ResidentBytes(fd int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	const piece = 1 << 30
	page := int64(os.Getpagesize())
	vec := make([]byte, min(piece, st.Size+page)/page)
	var total int64
	for off := int64(0); off < st.Size; off += piece {
		n := min(piece, st.Size-off)
		m, err := unix.Mmap(fd, off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return 0, err
		}
		pages := (n + page - 1) / page
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(n), uintptr(unsafe.Pointer(&vec[0])))
		unix.Munmap(m)
		if errno != 0 {
			return 0, errno
		}
		for _, v := range vec[:pages] {
			if v&1 != 0 {
				total += page
			}
		}
	}
	return total, nil
}
