// SPDX-License-Identifier: MIT

package checksum

import (
	"errors"
	"hash"
	"sync"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// zeros is the one buffer of zeros every hole is hashed from: SHA-2 has
// no shortcut for a run of zeros (each block goes through the
// compression function whatever it holds), but the zeros need not be
// read, nor a buffer cleared for each hole. Nothing ever writes to it.
// Made on first use: a copy that hashes no hole (most do not hash at
// all) does not pay for 1 MiB at start-up.
var zeros = sync.OnceValue(func() []byte { return make([]byte, 1<<20) })

// Zeros gives h n zero bytes: a hole of a sparse file, which reads as
// zeros, hashed without being read.
func Zeros(h hash.Hash, n int64) {
	for n > 0 {
		z := zeros()
		k := min(n, int64(len(z)))
		h.Write(z[:k])
		n -= k
	}
}

// readChunk is the size of ReadRange's reads.
const readChunk = 1 << 20

// ErrShort is a file that ended before the range asked for: it shrank.
var ErrShort = errors.New("the file ended before the bytes to hash")

// ReadRange reads bytes [off, end) of the regular file fd with pread and
// gives them to h; the holes of a sparse file (found with SEEK_DATA and
// SEEK_HOLE, which move fd's file position) are given as zeros without
// being read. buf is the
// buffer to read into (nil: one of its own). It returns ErrShort when
// the file ends first.
func ReadRange(h hash.Hash, fd int, off, end int64, buf []byte) error {
	if len(buf) == 0 {
		buf = make([]byte, readChunk)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return err
	}
	short := end > st.Size
	if short && st.Mode&unix.S_IFMT == unix.S_IFREG {
		end = st.Size
	} else {
		short = false
	}
	data := int64(-1) // the next data at or after off; -1: not looked up
	sparse := st.Mode&unix.S_IFMT == unix.S_IFREG
	for off < end {
		if sparse && data < off {
			d, err := seekData(fd, off)
			switch {
			case err == unix.ENXIO:
				d = end // a hole to the end of the file
			case err != nil:
				sparse, d = false, off // no SEEK_DATA here: read it all
			}
			data = min(d, end)
		}
		if sparse && data > off {
			Zeros(h, data-off)
			off = data
			continue
		}
		want := min(int64(len(buf)), end-off)
		if sparse {
			// Up to the next hole at most: read where there is data.
			if hole, err := seekHole(fd, off); err == nil && hole > off {
				want = min(want, hole-off)
			}
		}
		n, err := preadFull(fd, buf[:want], off)
		if n > 0 {
			h.Write(buf[:n])
			off += int64(n)
		}
		if err != nil {
			return err
		}
		if int64(n) < want {
			return ErrShort
		}
		if sparse {
			data = -1
		}
	}
	if short {
		return ErrShort
	}
	return nil
}

// The calls, as variables so that tests can make them fail.
var (
	pread    = unix.Pread
	fstat    = unix.Fstat
	seekData = func(fd int, off int64) (int64, error) { return unix.Seek(fd, off, unix.SEEK_DATA) }
	seekHole = func(fd int, off int64) (int64, error) { return unix.Seek(fd, off, unix.SEEK_HOLE) }
)

// preadFull reads len(b) bytes at off, or fewer at the end of the file,
// with the package's pread (a test may replace it).
func preadFull(fd int, b []byte, off int64) (int, error) {
	return sysx.PreadFull(pread, fd, b, off)
}
