// SPDX-License-Identifier: MIT

package durability

import (
	"os"
	"runtime"
	"unsafe"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// sourceCache is what --nocache may drop of the source: the pages the copy
// brought into the page cache, not those that were there before it. A
// source that another program keeps in memory (a database file, a build's
// inputs) is left as it was found; a cold source leaves nothing behind.
//
// Which pages were cached is asked once, when the destination is created,
// before the copy reads anything: cachestat(2) over the whole file first
// (none cached, the common case, needs no more), then mincore(2) over a
// read-only mapping for the pages themselves. Both answer only for a file
// the caller owns or may write (or for root, Linux 5.2's rule for mincore,
// cachestat's from the start); for anyone else mincore says "not cached"
// for every page not mapped by the caller, which cannot be told from the
// truth. Such a source is not dropped at all: --nocache's auto strategy
// reads it with O_DIRECT anyway (direct.go), which brings nothing in.
type sourceCache struct {
	sys  *sysCalls
	src  sysx.Descriptor
	mode cacheMode
	// kept are the byte ranges that were cached before the copy,
	// sorted and disjoint (mode dropOutside).
	kept []span
}

type cacheMode int

const (
	dropAll     cacheMode = iota // nothing was cached: drop every page
	dropNone                     // all was cached, or nobody can say: drop nothing
	dropOutside                  // drop all but kept
)

// maxKeptSpans bounds the ranges remembered: past it, neighbouring ranges
// are merged across ever larger gaps, so a source cached page by page
// keeps a little more than it had rather than costing memory by its size.
const maxKeptSpans = 1 << 14

// mincoreWindow is how much of the source one mapping covers while its
// residency is read.
const mincoreWindow = 1 << 30

// Variables for the tests.
var (
	residencyMincore = mincore
	residencyTrusted = mincoreTrusted
)

// newSourceCache records which of src's pages are in the page cache now.
func newSourceCache(sys *sysCalls, src sysx.Descriptor) *sourceCache {
	c := &sourceCache{sys: sys, src: src, mode: dropNone}
	defer runtime.KeepAlive(src)
	fd := int(src.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return c
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size == 0 {
		// A FIFO, a device: posix_fadvise refuses it or it has no
		// cache of its own to keep; an empty file has no page.
		c.mode = dropAll
		return c
	}
	page := int64(os.Getpagesize())
	pages := (st.Size + page - 1) / page
	cached, err := sys.cachestatPages(fd, st.Size)
	switch {
	case err == nil && cached == 0:
		c.mode = dropAll
		return c
	case err == nil && cached >= pages:
		return c // all of it: drop nothing
	case err == unix.ENOSYS:
		// Before Linux 6.5: mincore alone, if it tells the truth here.
		if !residencyTrusted(&st) {
			return c
		}
	case err != nil:
		// EPERM: neither owner nor writer, and mincore would lie.
		return c
	}
	kept, ok := residencyMincore(fd, st.Size)
	if !ok {
		return c
	}
	if len(kept) == 0 {
		c.mode = dropAll
	} else {
		c.mode, c.kept = dropOutside, kept
	}
	return c
}

// mincoreTrusted reports whether mincore tells this process the truth
// about the file st: its owner, or root (CAP_FOWNER, broadly). A writable
// file it does not own also qualifies in the kernel's rule, but asking
// would take a name; counting it out only keeps more in the cache.
func mincoreTrusted(st *unix.Stat_t) bool {
	uid := uint32(unix.Geteuid())
	return uid == 0 || uid == st.Uid
}

// mincore reads the residency of the first size bytes of fd as cached
// ranges (in whole pages), at most maxKeptSpans of them; ok is false when
// the file cannot be mapped.
func mincore(fd int, size int64) (kept []span, ok bool) {
	page := int64(os.Getpagesize())
	vec := make([]byte, min(mincoreWindow, size+page)/page)
	var r rangeSet
	for off := int64(0); off < size; off += mincoreWindow {
		n := min(mincoreWindow, size-off)
		m, err := unix.Mmap(fd, off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil, false
		}
		pages := (n + page - 1) / page
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(n), uintptr(unsafe.Pointer(&vec[0])))
		unix.Munmap(m)
		if errno != 0 {
			return nil, false
		}
		for i, v := range vec[:pages] {
			if v&1 != 0 {
				r.add(off+int64(i)*page, page)
			}
		}
	}
	return r.spans, true
}

// rangeSet collects ranges in increasing order, merging a range with the
// last one when the gap between them is at most gap; when there are too
// many, the gap doubles and the set is merged again.
type rangeSet struct {
	spans []span
	gap   int64
}

func (r *rangeSet) add(off, n int64) {
	if k := len(r.spans); k > 0 {
		last := &r.spans[k-1]
		if off-(last.off+last.n) <= r.gap {
			last.n = max(last.n, off+n-last.off)
			return
		}
	}
	r.spans = append(r.spans, span{off, n})
	for len(r.spans) > maxKeptSpans {
		r.gap = max(2*r.gap, int64(os.Getpagesize()))
		merged := r.spans[:1]
		for _, s := range r.spans[1:] {
			last := &merged[len(merged)-1]
			if s.off-(last.off+last.n) <= r.gap {
				last.n = max(last.n, s.off+s.n-last.off)
				continue
			}
			merged = append(merged, s)
		}
		r.spans = merged
	}
}

// drop drops the source's pages in [off, off+n) (n 0: to the end) that
// were not cached before the copy. It is advice: errors change nothing.
func (c *sourceCache) drop(off, n int64) {
	if c == nil || c.mode == dropNone {
		return
	}
	defer runtime.KeepAlive(c.src)
	fd := int(c.src.Fd())
	if c.mode == dropAll {
		c.sys.fadvise(fd, off, n, unix.FADV_DONTNEED)
		return
	}
	end := int64(-1) // to the end of the file
	if n > 0 {
		end = off + n
	}
	for _, k := range c.kept {
		if end >= 0 && k.off >= end {
			break
		}
		if k.off+k.n <= off {
			continue
		}
		if k.off > off {
			c.sys.fadvise(fd, off, k.off-off, unix.FADV_DONTNEED)
		}
		off = k.off + k.n
	}
	switch {
	case end < 0:
		c.sys.fadvise(fd, off, 0, unix.FADV_DONTNEED)
	case end > off:
		c.sys.fadvise(fd, off, end-off, unix.FADV_DONTNEED)
	}
}
