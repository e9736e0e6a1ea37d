// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"fastcp/checksum"
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// ErrMismatch is the error inside a verify Error when the destination read
// back differs from the source.
var ErrMismatch = errors.New("checksums differ")

// verifyChunk is the size of one read on each side, and the granularity at
// which a mismatch is located: reads of 4 MiB reach a disk's full O_DIRECT
// speed (docs/measurements.md); two buffers per side let a read and the
// checksumming of the previous chunk overlap.
const verifyChunk = 4 << 20

// castagnoli is CRC-32C: crc32.MakeTable(crc32.Castagnoli) uses the SSE4.2
// CRC32 instruction on amd64 (and the CRC instructions on arm64), several
// GB/s per core, so checksumming costs far less than the read.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// sums are the CRC-32C of every verifyChunk of one side, and its length;
// or, when the side was given to a hash (--checksum), that hash's digest.
type sums struct {
	crcs   []uint32
	digest []byte
	size   int64
	how    string // ReadEvicted, ReadDirect or ReadPageCache
	err    error
}

// verify reads the destination back from the device, not the page cache,
// and the source, checksums both per chunk and compares. The data has been
// fdatasynced before, so the device holds it.
//
// When the copy was a reflink (FICLONE, or copy_file_range on xfs/btrfs,
// which shares extents), the destination's blocks are the source's blocks:
// reading both compares the clone's block map and the source's cached
// pages with what is on the media, which still catches a broken clone,
// but it cannot catch bad media under a block both files share.
func (d *Destination) verify(src sysx.Descriptor) error {
	if src == nil {
		return &Error{Op: OpVerify, Err: errors.New("no source to compare with")}
	}
	var sst unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &sst); err != nil {
		return &Error{Op: OpVerify, Err: err}
	}
	runtime.KeepAlive(src)
	st := sst.Mode & unix.S_IFMT
	if st != unix.S_IFREG && st != unix.S_IFBLK {
		return &Error{Op: OpVerify, Err: errors.New("the source is not a regular file: it cannot be read again")}
	}
	if !d.syncable() {
		return &Error{Op: OpVerify, Err: errors.New("the destination is not a regular file: it cannot be read back")}
	}
	// The file read back is the one written: the temporary name relative
	// to DEST's directory, never followed, and checked to be the same
	// inode; an unnamed one through /proc/self/fd; in place, DEST.
	dirfd, name, flags := unix.AT_FDCWD, d.Path, 0
	if d.unnamed {
		name = sysx.FdPath(d.fd, "")
	} else if d.entry != nil {
		dirfd, name, flags = d.dir.Fd(), d.entry.name, unix.O_NOFOLLOW
	} else if d.dir != nil {
		dirfd, name = d.dir.Fd(), d.base
	}
	if d.sys.beforeVerify != nil {
		if err := d.sys.beforeVerify(dirfd, name); err != nil {
			return &Error{Op: OpVerify, Err: fmt.Errorf("test hook: %w", err)}
		}
	}
	limit, err := d.verifyLimit(src, &sst)
	if err != nil {
		return &Error{Op: OpVerify, Err: err}
	}
	if d.digest != nil {
		return d.verifyDigest(src, dirfd, name, flags, limit)
	}
	srcDone := make(chan sums, 1)
	if ss := d.srcSums; ss != nil && src == d.opts.Source {
		d.srcSums = nil
		go func() { srcDone <- ss.result() }()
	} else {
		drop := d.sourceDrop(src)
		go func() { srcDone <- d.sys.sumSource(src, drop, nil) }()
	}
	dst := d.sys.sumReadBack(dirfd, name, flags, d.Stat, limit, nil)
	ss := <-srcDone
	d.stats.VerifyRead = dst.how
	if ss.err != nil {
		return &Error{Op: OpVerify, Err: fmt.Errorf("reading the source: %w", ss.err)}
	}
	if dst.err != nil {
		return &Error{Op: OpVerify, Err: fmt.Errorf("reading the copy back: %w", dst.err)}
	}
	return compareSums(ss, dst, limit)
}

// verifyDigest is --verify with --checksum: the destination read back
// is hashed and its digest compared with the one the copy made of the
// source as it read it, so the source is not read again; with
// Options.VerifySource (--verify=source) it is, and hashed too, at the
// same time as the destination.
func (d *Destination) verifyDigest(src sysx.Descriptor, dirfd int, name string, flags int, limit int64) error {
	alg := d.opts.Checksum
	srcDone := make(chan sums, 1)
	if d.opts.VerifySource {
		drop := d.sourceDrop(src)
		go func() { srcDone <- d.sys.sumSource(src, drop, alg.New()) }()
	}
	dst := d.sys.sumReadBack(dirfd, name, flags, d.Stat, limit, alg.New())
	d.stats.VerifyRead = dst.how
	if dst.err != nil {
		return &Error{Op: OpVerify, Err: fmt.Errorf("reading the copy back: %w", dst.err)}
	}
	if d.opts.VerifySource {
		ss := <-srcDone
		if ss.err != nil {
			return &Error{Op: OpVerify, Err: fmt.Errorf("reading the source: %w", ss.err)}
		}
		if !bytes.Equal(ss.digest, d.digest) {
			return &Error{Op: OpVerify, Err: fmt.Errorf("%w: %s of the source read again %s, of the source as copied %s (the source changed)",
				ErrMismatch, alg, checksum.Hex(ss.digest), checksum.Hex(d.digest))}
		}
	}
	if !bytes.Equal(dst.digest, d.digest) {
		return &Error{Op: OpVerify, Err: fmt.Errorf("%w: %s of the copy read back %s, of the source as copied %s",
			ErrMismatch, alg, checksum.Hex(dst.digest), checksum.Hex(d.digest))}
	}
	return nil
}

// sourceDrop is what is called behind --verify's reads of src: nothing,
// or with --nocache a drop of the pages the copy brought in.
func (d *Destination) sourceDrop(src sysx.Descriptor) func(off, n int64) {
	drop := func(off, n int64) {}
	if d.opts.NoCache {
		drop = func(off, n int64) { d.sys.fadvise(int(src.Fd()), off, n, unix.FADV_DONTNEED) }
		if d.srcCache != nil && src == d.opts.Source {
			drop = d.srcCache.drop
		}
	}
	return drop
}

// sumSource checksums src from offset 0 with pread (or gives its bytes
// to h), leaving its file position alone. Its pages are most likely still
// cached from the copy, which is fine: the question is whether the device
// holds what the source says. drop is called behind the reads (--nocache
// drops the pages the copy brought in).
func (sys *sysCalls) sumSource(src sysx.Descriptor, drop func(off, n int64), h hash.Hash) sums {
	fd := int(src.Fd())
	holes := sys.newHoleMap(fd)
	defer holes.close()
	bufs, put := chunkBufPair(1)
	defer put()
	s := sumChunks(func(b []byte, off int64) (int, error) {
		n, err := readFull(fd, b, off)
		if n > 0 {
			drop(off, int64(n))
		}
		return n, err
	}, bufs, -1, holes, h)
	runtime.KeepAlive(src)
	return s
}

// How --verify read the destination back (Stats.VerifyRead).
const (
	ReadEvicted   = "evicted"    // its pages dropped from the cache, then read with readahead
	ReadDirect    = "O_DIRECT"   // read past the cache with O_DIRECT
	ReadPageCache = "page cache" // neither was possible (tmpfs: the memory is the device)
)

// sumReadBack checksums the file at path as the device holds it. The data
// was flushed before, so every page is clean, and POSIX_FADV_DONTNEED
// drops clean pages ("If the application wishes to ensure that dirty pages
// will be released, it should call fsync(2) or fdatasync(2) first",
// posix_fadvise(2)); mincore(2) then confirms that none is left, and the
// file is read sequentially with readahead (POSIX_FADV_SEQUENTIAL doubles
// the readahead window): every byte comes from the device. That was
// faster than O_DIRECT reads (docs/measurements.md). When pages stay cached (a process maps the file,
// mincore is not allowed, tmpfs), the file is read with O_DIRECT instead,
// which bypasses the cache (open(2)), with buffers and offsets aligned as
// statx(STATX_DIOALIGN) says (Linux 6.1+; otherwise the page size, which
// satisfies any logical block size up to 4096). Where O_DIRECT is refused
// too (EINVAL at open or first read: some FUSE and network filesystems,
// tmpfs before Linux 6.6), the cache is all there is to read.
//
// The pages the read-back brings in are dropped behind it: they were read
// only to be checked, and reusing them instead of taking new page cache
// for every GiB verified keeps the read-back steady while page reclaim
// comes and goes (docs/measurements.md). So after --verify the copy is not in the page cache. limit < 0
// reads to end of file. With h, the bytes are given to h instead of
// checksummed per chunk.
func (sys *sysCalls) sumReadBack(dirfd int, path string, flags int, want *unix.Stat_t, limit int64, h hash.Hash) sums {
	fd, err := sys.openFile(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return sums{err: &os.PathError{Op: "open", Path: path, Err: err}}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return sums{err: &os.PathError{Op: "fstat", Path: path, Err: err}}
	}
	if want != nil && identityOf(&st) != identityOf(want) {
		return sums{err: &os.PathError{Op: "open", Path: path, Err: errReplaced}}
	}
	holes := sys.newHoleMap(fd)
	defer holes.close()
	sys.fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	if n, err := sys.residentIn(fd, holes); err == nil && n == 0 {
		sys.fadvise(fd, 0, 0, unix.FADV_SEQUENTIAL)
		bufs, put := chunkBufPair(1)
		defer put()
		s := sumChunks(func(b []byte, off int64) (int, error) {
			n, err := readFull(fd, b, off)
			if n > 0 {
				sys.fadvise(fd, off, int64(n), unix.FADV_DONTNEED)
			}
			return n, err
		}, bufs, limit, holes, h)
		s.how = ReadEvicted
		return s
	}

	dfd, err := sys.openFile(dirfd, path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC|flags, 0)
	if err == nil {
		// The name opened a second time: still the file checked above?
		var dst unix.Stat_t
		if err := unix.Fstat(dfd, &dst); err != nil || identityOf(&dst) != identityOf(&st) {
			unix.Close(dfd)
			return sums{err: &os.PathError{Op: "open", Path: path, Err: errReplaced}}
		}
		align := dioAlign(dfd)
		if align > 0 {
			bufs, put := chunkBufPair(align)
			defer put()
			var hd hash.Hash
			if h != nil {
				// A fresh hash: the state of h must stay unused should
				// O_DIRECT be refused at the first read.
				hd = newLike(h)
			}
			s := sumChunks(func(b []byte, off int64) (int, error) { return readFull(dfd, b, off) }, bufs, limit, holes, hd)
			unix.Close(dfd)
			if !(errors.Is(s.err, unix.EINVAL) && s.size == 0) {
				s.how = ReadDirect
				return s
			}
		} else {
			unix.Close(dfd)
		}
	} else if err != unix.EINVAL {
		return sums{err: &os.PathError{Op: "open", Path: path, Err: err}}
	}
	bufs, put := chunkBufPair(1)
	defer put()
	s := sumChunks(func(b []byte, off int64) (int, error) { return readFull(fd, b, off) }, bufs, limit, holes, h)
	s.how = ReadPageCache
	return s
}

// dioAlign returns the alignment O_DIRECT needs on fd for memory, offsets
// and lengths, or 0 when the file cannot do direct I/O.
func dioAlign(fd int) int {
	pageSize := os.Getpagesize()
	var stx unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx)
	if err != nil || stx.Mask&unix.STATX_DIOALIGN == 0 {
		return pageSize
	}
	if stx.Dio_mem_align == 0 || stx.Dio_offset_align == 0 {
		// statx(2): "If direct I/O is not supported on the file, both
		// fields are 0."
		return 0
	}
	a := max(int(stx.Dio_mem_align), int(stx.Dio_offset_align))
	if a > verifyChunk || verifyChunk%a != 0 {
		return 0
	}
	return a
}

// chunkBufs are --verify's buffers of a chunk, with room to align one for
// O_DIRECT, kept for the next file: made fresh for each, two or three
// chunks a file were zeroed, most of the time of --verify on a tree of
// small files (docs/measurements.md).
var chunkBufs = sync.Pool{New: func() any {
	b := make([]byte, verifyChunk+maxPooledAlign)
	return &b
}}

// maxPooledAlign is the largest alignment a buffer of chunkBufs serves; a
// larger one (no device asks for it) gets a buffer of its own.
const maxPooledAlign = 64 << 10

// chunkBuf returns verifyChunk bytes starting at a multiple of align (a
// power of two; 1: anywhere), and put, which gives them back: call it
// once nothing reads into them or checksums them any more (sumChunks
// returns only then).
func chunkBuf(align int) (b []byte, put func()) {
	if align > maxPooledAlign {
		return alignIn(make([]byte, verifyChunk+align), align), func() {}
	}
	p := chunkBufs.Get().(*[]byte)
	return alignIn(*p, align), func() { chunkBufs.Put(p) }
}

// chunkBufPair is two chunkBufs, for sumChunks, and the put of both.
func chunkBufPair(align int) (bufs [2][]byte, put func()) {
	a, putA := chunkBuf(align)
	b, putB := chunkBuf(align)
	return [2][]byte{a, b}, func() { putA(); putB() }
}

// alignIn returns the verifyChunk bytes of raw that start at its first
// multiple of align; raw has room for them. Go's heap never moves an
// object, so the address stays aligned.
func alignIn(raw []byte, align int) []byte {
	shift := 0
	if rem := int(uintptr(unsafe.Pointer(&raw[0])) & uintptr(align-1)); rem != 0 {
		shift = align - rem
	}
	return raw[shift : shift+verifyChunk : shift+verifyChunk]
}

// readFull preads len(b) bytes at off, or fewer at end of file.
func readFull(fd int, b []byte, off int64) (int, error) {
	return sysx.PreadFull(unix.Pread, fd, b, off)
}

// newLike returns a new hash of h's algorithm.
func newLike(h hash.Hash) hash.Hash {
	if h.Size() == sha512.Size {
		return checksum.SHA512.New()
	}
	return checksum.SHA256.New()
}

// sumChunks reads chunk after chunk with read (which returns fewer bytes
// only at end of file) into the two buffers in turn, checksumming each
// chunk in a second goroutine while the next is read (or, with h, giving
// it to h there). limit < 0 reads to end of file. A chunk that holes (nil:
// none) says is a hole is not read: it gets the checksum of zeros.
func sumChunks(read func(b []byte, off int64) (int, error), bufs [2][]byte, limit int64, holes *holeMap, h hash.Hash) sums {
	type chunk struct {
		b   []byte
		idx int // -1: a hole of len(b) bytes, not read
	}
	full := make(chan chunk, 1)
	free := make(chan int, 2)
	free <- 0
	free <- 1
	result := make(chan []uint32, 1)
	go func() {
		var crcs []uint32
		for c := range full {
			switch {
			case c.idx < 0 && h != nil:
				checksum.Zeros(h, int64(len(c.b)))
				continue
			case c.idx < 0:
				crcs = append(crcs, zeroSum(len(c.b)))
				continue
			case h != nil:
				h.Write(c.b)
			default:
				crcs = append(crcs, crc32.Checksum(c.b, castagnoli()))
			}
			free <- c.idx
		}
		result <- crcs
	}()
	var s sums
	for limit < 0 || s.size < limit {
		if n, ok := holes.hole(s.size, len(bufs[0])); ok && limit < 0 {
			full <- chunk{bufs[0][:n:n], -1}
			s.size += int64(n)
			if n < len(bufs[0]) {
				break
			}
			continue
		}
		i := <-free
		b := bufs[i]
		if limit >= 0 && limit-s.size < int64(len(b)) {
			// Whole aligned reads past limit are fine on a device;
			// only the part up to limit is checksummed.
			n, err := read(b, s.size)
			n = int(min(int64(n), limit-s.size))
			if err != nil {
				s.err = err
			}
			if n > 0 {
				full <- chunk{b[:n], i}
				s.size += int64(n)
			}
			break
		}
		n, err := read(b, s.size)
		if err != nil && err != io.EOF {
			s.err = err
			break
		}
		if n > 0 {
			full <- chunk{b[:n], i}
			s.size += int64(n)
		}
		if n < len(b) {
			break
		}
	}
	close(full)
	s.crcs = <-result
	if h != nil {
		s.digest = h.Sum(nil)
	}
	return s
}

// verifyLimit is how much of the destination --verify compares: all of it
// (-1), or for a block device, which is larger than the copy, the
// source's length (sst; a block device source's from its end, since fstat
// gives it st_size 0).
func (d *Destination) verifyLimit(src sysx.Descriptor, sst *unix.Stat_t) (int64, error) {
	if d.ftype != unix.S_IFBLK {
		return -1, nil
	}
	if sst.Mode&unix.S_IFMT != unix.S_IFBLK {
		return sst.Size, nil
	}
	fd := int(src.Fd())
	defer runtime.KeepAlive(src)
	cur, err := unix.Seek(fd, 0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	limit, err := unix.Seek(fd, 0, io.SeekEnd)
	unix.Seek(fd, cur, io.SeekStart)
	return limit, err
}

// compareSums compares the source's checksums with the read-back's, limit
// bytes of it (-1: all).
func compareSums(ss, dst sums, limit int64) error {
	if limit >= 0 && dst.size < ss.size {
		return &Error{Op: OpVerify, Err: fmt.Errorf("%w: the device holds %d bytes, the source %d", ErrMismatch, dst.size, ss.size)}
	}
	for i := range min(len(ss.crcs), len(dst.crcs)) {
		if ss.crcs[i] != dst.crcs[i] {
			lo := int64(i) * verifyChunk
			hi := min(lo+verifyChunk, ss.size, dst.size)
			return &Error{Op: OpVerify, Err: fmt.Errorf("%w in bytes %d-%d: crc32c %08x in the source, %08x read back",
				ErrMismatch, lo, hi-1, ss.crcs[i], dst.crcs[i])}
		}
	}
	if ss.size != dst.size {
		return &Error{Op: OpVerify, Err: fmt.Errorf("%w: the source has %d bytes, the copy %d", ErrMismatch, ss.size, dst.size)}
	}
	return nil
}
