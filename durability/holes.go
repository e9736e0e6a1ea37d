// SPDX-License-Identifier: MIT

package durability

import (
	"hash/crc32"
	"os"
	"sync"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// holeMap finds a regular file's holes with SEEK_DATA, so that --verify
// does not read them: a hole reads as zeros, whose checksum is known, so a
// chunk that lies wholly in a hole gets the checksum of zeros without a
// read, on each side alone. The comparison stays the one of every byte
// (a hole on one side and data on the other is read on the data side and
// compared with the zeros of the hole); only the reading of zeros is
// saved, which for a sparse file is most of it. The lseeks go to a
// descriptor of its own (a new open file description of the same file),
// so the file position of the caller's descriptor, which a copy may be
// using, never moves.
type holeMap struct {
	fd   int
	size int64 // the file's size when the map was made
	data int64 // the first data offset at or after the last chunk asked about
}

// newHoleMap makes the hole map of the open regular file fd, or nil where
// none can be made (not a regular file, no SEEK_DATA): every chunk is
// then read.
func (sys *sysCalls) newHoleMap(fd int) *holeMap {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Blocks*512 >= st.Size {
		return nil // not sparse: nothing to skip
	}
	own, err := sys.openFile(unix.AT_FDCWD, sysx.FdPath(fd, ""), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &holeMap{fd: own, size: st.Size, data: -1}
}

// close releases the map's descriptor.
func (h *holeMap) close() {
	if h != nil {
		unix.Close(h.fd)
	}
}

// hole reports whether the chunk of n bytes at off lies wholly in a hole
// (and within the size the file had), and its length then.
func (h *holeMap) hole(off int64, n int) (int, bool) {
	if h == nil || off >= h.size {
		return 0, false
	}
	l := min(int64(n), h.size-off)
	if h.data < off {
		d, err := unix.Seek(h.fd, off, unix.SEEK_DATA)
		switch {
		case err == unix.ENXIO:
			d = h.size // no data from off on: a hole to the end
		case err != nil:
			h.size = 0 // no SEEK_DATA here: read everything
			return 0, false
		}
		h.data = d
	}
	return int(l), h.data >= off+l
}

// zeroSum is the CRC-32C of n zero bytes.
func zeroSum(n int) uint32 {
	if n == verifyChunk {
		return zeroChunkSum()
	}
	return crc32.Checksum(make([]byte, n), castagnoli())
}

var zeroChunkSum = sync.OnceValue(func() uint32 {
	return crc32.Checksum(make([]byte, verifyChunk), castagnoli())
})

// residentIn is resident for the read-back: for a sparse file (holes not
// nil) one cachestat call, where mincore maps and walks every GiB of its
// holes too (seconds for a file of a TiB); mincore where cachestat is
// refused (before Linux 6.5).
func (sys *sysCalls) residentIn(fd int, holes *holeMap) (int64, error) {
	if holes != nil {
		if pages, err := sys.cachestatPages(fd, holes.size); err == nil {
			return pages * int64(os.Getpagesize()), nil
		}
	}
	return sys.resident(fd)
}
