// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Direct copies with O_DIRECT on both files: the source is read into a ring
// of aligned buffers by reader goroutines, and each buffer is written at its
// own offset by a writer goroutine as soon as it is read, so reads and
// writes overlap, several of each in flight, and the writes go out of order;
// the copier's goroutine accounts for the chunks in order (pipeline).
// Nothing of the copy goes through the page cache. Allocating page-cache pages is where a cold buffered copy
// spends much of its time (docs/measurements.md): a source that is not
// cached is copied at the device's speed, and the copy pushes no one else's
// pages out.
//
// Alignment comes from statx(STATX_DIOALIGN) of both files (Linux 6.1+);
// where statx does not report it, the larger st_blksize stands in for the
// logical block size (a multiple of it on every filesystem here). A file
// whose filesystem takes no O_DIRECT (EINVAL from open or fcntl, or a
// reported alignment of 0) is a refusal: Auto goes on with the next
// strategy. The source gets a second descriptor of its own with O_DIRECT
// (reopen), so the caller's descriptor and its users (--verify's reader)
// keep their buffered reads; the destination's descriptor gets O_DIRECT with
// fcntl(F_SETFL), which changes O_DIRECT (fcntl(2)), and has it cleared
// again to write an unaligned tail buffered and when the copy ends, or
// hands over to another strategy.

// The pipeline's sizes. The ring is directBufs buffers of directBufBytes:
// its memory counts in the resident size of a run, and -j N copies at most
// DirectBudgetBytes/ringBytes files with Direct at once (Auto takes another
// strategy for the others; a forced Direct waits for a ring).
//
// Sizes from the sweep TestDirectSweep (docs/performance.md, "Direct I/O sweep";
// docs/measurements.md).
//
// Variables, not constants, only so that the sweep (TestDirectSweep) and
// the power-cut test's build (checkpoint_crashfs.go, tag fastcp_crashfs) can
// set them; nothing else changes them.
var (
	directBufBytes = 3 << 20
	directBufs     = 8 // the most chunks in flight
	directDepth    = 4 // chunks in flight at first (depthGrower)
	// directHugePages: the ring is advised MADV_HUGEPAGE.
	directHugePages = true
)

const (
	// DirectBudgetBytes bounds the rings of all the copies of a run
	// together; with the rw loop's buffers (bounded by the caller) a run
	// holds at most 64 MiB of buffers, whatever -j.
	DirectBudgetBytes = 32 << 20
	// DirectMinBytes is the smallest source Auto copies with Direct when
	// it is mostly not in the page cache and the copy is flushed at the
	// end (--sync=data|full, --verify): below it copy_file_range with
	// writeback started behind it was as fast or faster
	// (docs/measurements.md).
	DirectMinBytes int64 = 256 << 20
	// directNoCacheMinBytes is the same with --nocache, which prefers
	// Direct whatever the residency: nothing of the copy enters the cache.
	directNoCacheMinBytes int64 = 1 << 20
	// directMaxCachedShare: Auto picks Direct only when less than
	// 1/directMaxCachedShare of the source is cached (cachestat). An
	// O_DIRECT read ignores cached pages, so a mostly cached source is
	// copied faster from memory by copy_file_range or sendfile.
	directMaxCachedShare = 2
	// setflMask is the file status flags fcntl(F_SETFL) changes on Linux;
	// the others (O_SYNC, O_DSYNC) are left out of the argument, which
	// ignores them anyway (they stay set from the open).
	setflMask = unix.O_APPEND | unix.O_ASYNC | unix.O_NOATIME | unix.O_NONBLOCK | unix.O_DIRECT
)

// DirectChoice is what Auto decided about Direct for one file.
type DirectChoice int

// Auto's decisions about Direct.
const (
	DirectNotConsidered DirectChoice = iota // forced strategy, empty or special file
	DirectChosen
	DirectSmall        // smaller than the threshold
	DirectUnflushed    // no flush at the end, and smaller than 1 GiB or the dirty limit
	DirectCached       // mostly in the page cache
	DirectResidency    // residency unknown (cachestat refused)
	DirectSyncWrites   // O_SYNC/O_DSYNC destination: every write waits anyway
	DirectZeros        // --sparse=always: only the rw loop finds zero blocks
	DirectBusy         // every ring of the run's budget in use by other copies
	DirectForced       // --strategy=direct
	DirectNotRegular   // a stream or device on either side
	DirectNoCacheFirst // --nocache: chosen whatever the residency
)

// DirectInfo says why Auto chose or skipped Direct, and what alignment a
// Direct copy used, for --debug.
type DirectInfo struct {
	Choice    DirectChoice
	Size      int64 // the source's data bytes when the copy began (st_blocks for a sparse file)
	Threshold int64 // the size from which Auto picks Direct
	Cached    int64 // source bytes in the page cache; -1 when not asked
	CacheErr  error // why residency is unknown
	// The alignment used (0 if Direct never set up): memory, offset,
	// and whether statx(STATX_DIOALIGN) gave it.
	MemAlign, OffsetAlign int
	FromStatx             bool
}

// String is the --debug line's text ("" when there is nothing to say).
func (d DirectInfo) String() string {
	var why string
	switch d.Choice {
	case DirectNotConsidered, DirectNotRegular:
		if d.OffsetAlign == 0 {
			return ""
		}
	case DirectChosen:
		why = fmt.Sprintf("chosen: source %s cached (cachestat), size %d >= %d", d.share(), d.Size, d.Threshold)
	case DirectNoCacheFirst:
		why = fmt.Sprintf("chosen for --nocache: source %s cached, size %d >= %d", d.share(), d.Size, d.Threshold)
	case DirectSmall:
		why = fmt.Sprintf("skipped: size %d < %d", d.Size, d.Threshold)
	case DirectUnflushed:
		why = fmt.Sprintf("skipped: no --sync flush, and size %d < %d (a buffered copy returns before the device has it)", d.Size, d.Threshold)
	case DirectCached:
		why = fmt.Sprintf("skipped: source %s cached (cachestat), copied faster from memory", d.share())
	case DirectResidency:
		why = fmt.Sprintf("skipped: residency unknown: %s", ErrnoText(d.CacheErr))
	case DirectSyncWrites:
		why = "skipped: O_SYNC/O_DSYNC destination"
	case DirectZeros:
		why = "skipped: --sparse=always needs the rw loop"
	case DirectBusy:
		why = fmt.Sprintf("skipped: the %d MiB of direct I/O buffers are in use by other copies", DirectBudgetBytes>>20)
	case DirectForced:
		why = "forced"
	}
	if d.OffsetAlign > 0 {
		from := "statx STATX_DIOALIGN"
		if !d.FromStatx {
			from = "st_blksize: statx reports no STATX_DIOALIGN"
		}
		if why != "" {
			why += "; "
		}
		why += fmt.Sprintf("alignment: memory %d, offset %d (%s)", d.MemAlign, d.OffsetAlign, from)
	}
	return why
}

func (d DirectInfo) share() string {
	if d.Cached < 0 || d.Size <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f%% (%d of %d bytes)", 100*float64(d.Cached)/float64(d.Size), d.Cached, d.Size)
}

// errUnalignedExtent: a data extent starts where O_DIRECT cannot read.
var errUnalignedExtent = errors.New("data extent not aligned for O_DIRECT")

// ErrShortRead stands for an O_DIRECT read that ended at an unaligned
// offset (or at 0) before the end the source had when the copy began: the
// next read would have to start unaligned, so the next strategy goes on
// from there.
var ErrShortRead = errors.New("short O_DIRECT read before the end of the file")

// unavailable marks an error of Direct's setup as "not here" whatever its
// errno: reopening the source (no /proc, EMFILE...) failed, or the files
// cannot be aligned. The other strategies work with the descriptors as they
// are, so the copy goes on with them.
type unavailable struct{ err error }

func (u *unavailable) Error() string { return u.err.Error() }
func (u *unavailable) Unwrap() error { return u.err }

// directState is Direct's part of one copy.
type directState struct {
	setUp    bool
	setupErr error
	src      int // the source's O_DIRECT descriptor; -1 when none
	dstFlags int // the destination's status flags before (F_GETFL & setflMask)
	dstOn    bool
	memAlign int
	offAlign int
	ring     *ring
	grow     depthGrower
	// preallocated: preallocate ran (once per copy).
	preallocated bool
}

// ring is one copy's buffers: one anonymous mapping (page aligned, so
// aligned for any O_DIRECT memory alignment up to the page size).
type ring struct {
	mem  []byte
	bufs [][]byte
	pool *ringPool // where it goes back
}

// ringPool hands out ring memory: at most DirectBudgetBytes mapped, a ring
// kept mapped for the next file once a copy is done with it. A run has
// one, runRings (sysCalls.rings); a test may give its copies one of their
// own, so that what other tests hold does not decide its copies' choice.
type ringPool struct {
	sync.Mutex
	cond  *sync.Cond
	inUse int
	free  []*ring
}

// runRings is the run's ring memory.
var runRings ringPool

func ringBytes() int { return directBufs * directBufBytes }

// maxRings is how many rings the budget holds (at least one).
func maxRings() int { return max(DirectBudgetBytes/ringBytes(), 1) }

// get returns a ring, or nil when none is free and wait is false.
func (p *ringPool) get(wait bool) (*ring, error) {
	p.Lock()
	defer p.Unlock()
	if p.cond == nil {
		p.cond = sync.NewCond(&p.Mutex)
	}
	for p.inUse >= maxRings() {
		if !wait {
			return nil, nil
		}
		p.cond.Wait()
	}
	p.inUse++
	if n := len(p.free); n > 0 {
		r := p.free[n-1]
		p.free = p.free[:n-1]
		if len(r.mem) == ringBytes() && len(r.bufs) == directBufs {
			return r, nil
		}
		munmap(r.mem) // the sweep changed the sizes
	}
	mem, err := mmap(-1, 0, ringBytes(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		p.inUse--
		p.cond.Signal()
		return nil, err
	}
	if directHugePages {
		// Advice: transparent huge pages make each buffer a few
		// physically contiguous segments, so a request of a whole buffer
		// is not split at the device's segment limit. An error changes
		// nothing.
		_ = madvise(mem, unix.MADV_HUGEPAGE)
	}
	r := &ring{mem: mem, pool: p}
	for i := range directBufs {
		r.bufs = append(r.bufs, mem[i*directBufBytes:(i+1)*directBufBytes:(i+1)*directBufBytes])
	}
	return r, nil
}

// putRing gives r back to its pool.
func putRing(r *ring) {
	p := r.pool
	p.Lock()
	p.inUse--
	p.free = append(p.free, r)
	p.cond.Signal()
	p.Unlock()
}

// chooseDirect is Auto's decision: Direct after Reflink for a large source
// that is mostly not in the page cache (or any source of some size with
// --nocache), when a ring is free. It takes the ring.
func (c directCopy) chooseDirect(regular bool) bool {
	o := c.opts
	d := &c.res.Direct
	// A sparse source counts by its data: holes are neither read nor
	// cached.
	d.Size, d.Cached = c.srcSt.Size, -1
	if c.srcSt.Blocks*512 < d.Size {
		d.Size = c.srcSt.Blocks * 512
	}
	d.Threshold = c.sys.directMinBytes
	small := DirectSmall
	switch {
	case o.NoCache:
		d.Threshold = directNoCacheMinBytes
	case !o.Flush && o.Checkpoint == nil:
		// Without a flush at the end, a buffered copy returns once the
		// data is in the page cache, before a direct one has it on the
		// device. But a cold buffered copy still reads the source at
		// the device's pace and pays for a fresh page of cache for
		// every page of both files: from directUnflushedMinBytes on,
		// direct was as fast or faster (docs/measurements.md). Past the
		// dirty limit the kernel
		// throttles a buffered copy to the device's speed anyway, so
		// a smaller limit lowers the threshold. (Read only for a
		// source that could be as large: a small copy makes no /proc
		// reads.)
		d.Threshold = c.sys.directUnflushedMinBytes
		if d.Size >= c.sys.directMinBytes {
			if lim := c.sys.dirtyLimit(); lim >= c.sys.directMinBytes && lim < d.Threshold {
				d.Threshold = lim
			}
		}
		small = DirectUnflushed
	}
	switch {
	case !regular:
		d.Choice = DirectNotRegular
		return false
	case c.zeros:
		d.Choice = DirectZeros
		return false
	case o.SyncWrites:
		d.Choice = DirectSyncWrites
		return false
	case d.Size < d.Threshold:
		d.Choice = small
		return false
	}
	if o.SourceCached != nil {
		d.Cached, d.CacheErr = o.SourceCached()
		if d.CacheErr != nil {
			d.Cached = -1
		}
	} else {
		d.CacheErr = errors.New("not asked")
	}
	switch {
	case o.NoCache:
		d.Choice = DirectNoCacheFirst
	case d.CacheErr != nil:
		d.Choice = DirectResidency
		return false
	case d.Cached*directMaxCachedShare >= d.Size:
		d.Choice = DirectCached
		return false
	default:
		d.Choice = DirectChosen
	}
	r, err := c.sys.rings.get(false)
	if r == nil || err != nil {
		d.Choice = DirectBusy
		return false
	}
	c.dio.ring = r
	return true
}

// directUnflushedMinBytes is the smallest cold source Auto copies with
// Direct when nothing flushes the copy (no --sync, --verify or --resume),
// unless the dirty limit is smaller (tests give their own: sysCalls).
const directUnflushedMinBytes = 1 << 30

// dirtyLimit estimates the kernel's dirty page limit: vm.dirty_bytes, or
// vm.dirty_ratio percent of the memory that can hold dirty pages (free and
// file pages, /proc/meminfo), as mm/page-writeback.c computes it. A writer
// past it is throttled to the device's write speed. 0 when unknown. Read
// once per run, and only for a large cold source.
var dirtyLimit = sync.OnceValue(func() int64 {
	if b := readProcInt("/proc/sys/vm/dirty_bytes"); b > 0 {
		return b
	}
	ratio := readProcInt("/proc/sys/vm/dirty_ratio")
	info := readProc("/proc/meminfo")
	var kib int64
	for _, key := range []string{"MemFree:", "Active(file):", "Inactive(file):"} {
		i := strings.Index(info, key)
		if i < 0 {
			return 0
		}
		f := strings.Fields(info[i+len(key):])
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		kib += n
	}
	return kib << 10 * ratio / 100
})

func readProcInt(path string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(readProc(path)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// readProc reads a small /proc file with plain system calls ("" on error).
func readProc(path string) string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	buf := make([]byte, 8192)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return string(buf[:n])
}

// directSetup opens the way for Direct once per copy: the alignment, the
// source's O_DIRECT descriptor, O_DIRECT on the destination, the ring.
// Its error is a refusal unless it says otherwise.
func (c directCopy) directSetup() error {
	d := &c.dio
	if d.setUp {
		return nil
	}
	if d.setupErr != nil {
		return d.setupErr
	}
	d.setupErr = c.directOpen()
	if d.setupErr != nil {
		c.directEnd()
		return d.setupErr
	}
	d.setUp = true
	return nil
}

// directOpen does directSetup's work: it checks both files take O_DIRECT
// with the same alignment, opens the source again with O_DIRECT, sets it on
// the destination and takes a ring when Auto did not.
func (c directCopy) directOpen() error {
	d := &c.dio
	if c.srcSt.Mode&unix.S_IFMT != unix.S_IFREG || !c.dstRegular {
		// Devices and streams: not for this pipeline (and a FIFO must
		// never be opened a second time).
		return directFail(SideBoth, "O_DIRECT", &unavailable{unix.EINVAL})
	}
	if err := c.directAlign(); err != nil {
		return err
	}
	if err := c.directSource(); err != nil {
		return err
	}
	fl, err := retry(&c.res.Stats[Direct].Calls, func() (int, error) { return c.sys.fcntl(c.dst, unix.F_GETFL, 0) })
	if err != nil {
		return directFail(SideWrite, "fcntl(F_GETFL)", &unavailable{err})
	}
	d.dstFlags = fl & setflMask
	if err := c.directDst(true); err != nil {
		return err
	}
	if d.ring == nil {
		// Forced: wait for a ring (Auto took one when it chose).
		r, err := c.sys.rings.get(true)
		if err != nil {
			return directFail(SideBoth, "mmap", &unavailable{err})
		}
		d.ring = r
	}
	return nil
}

// directFail is a Direct setup error of one side's call.
func directFail(side Side, call string, err error) error {
	return &Error{Strategy: Direct, Side: side, Err: syscallErr(call, err)}
}

// directAlign sets the memory and offset alignment both files need
// (STATX_DIOALIGN, else the block size) and refuses one the ring's buffers
// cannot meet.
func (c directCopy) directAlign() error {
	d := &c.dio
	st := &c.res.Stats[Direct]
	var sx, dx unix.Statx_t
	for _, f := range []struct {
		fd   int
		x    *unix.Statx_t
		side Side
	}{{c.src, &sx, SideRead}, {c.dst, &dx, SideWrite}} {
		if err := retryErr(&st.Calls, func() error {
			return statx(f.fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, f.x)
		}); err != nil {
			return directFail(f.side, "statx", &unavailable{err})
		}
	}
	info := &c.res.Direct
	if sx.Mask&dx.Mask&unix.STATX_DIOALIGN != 0 {
		if sx.Dio_offset_align == 0 || dx.Dio_offset_align == 0 {
			// "0 if direct I/O is not supported on this file" (statx(2)).
			side := SideRead
			if dx.Dio_offset_align == 0 {
				side = SideWrite
			}
			return directFail(side, "statx(STATX_DIOALIGN)", unix.EINVAL)
		}
		d.memAlign = int(max(sx.Dio_mem_align, dx.Dio_mem_align))
		d.offAlign = int(max(sx.Dio_offset_align, dx.Dio_offset_align))
		info.FromStatx = true
	} else {
		// No STATX_DIOALIGN (before 6.1, or a filesystem that does not
		// fill it in): the block size is a multiple of the logical block
		// size O_DIRECT needs; memory aligned the same way is enough.
		d.offAlign = int(max(c.srcSt.Blksize, c.dstSt.Blksize, 512))
		d.memAlign = d.offAlign
	}
	info.MemAlign, info.OffsetAlign = d.memAlign, d.offAlign
	if d.memAlign > os.Getpagesize() || d.offAlign > directBufBytes || directBufBytes%d.offAlign != 0 || d.memAlign&(d.memAlign-1) != 0 {
		return directFail(SideBoth, "O_DIRECT", &unavailable{unix.EINVAL})
	}
	return nil
}

// directSource opens the source again with O_DIRECT into dio.src and checks
// it is the same file.
func (c directCopy) directSource() error {
	d := &c.dio
	st := &c.res.Stats[Direct]
	fd, err := retry(&st.Calls, func() (int, error) { return c.sys.reopen(c.src, unix.O_RDONLY|unix.O_DIRECT) })
	if err != nil {
		if err == unix.EINVAL {
			// The filesystem takes no O_DIRECT: tmpfs before 6.6,
			// some FUSE and network filesystems.
			return directFail(SideRead, "open(O_DIRECT)", err)
		}
		return directFail(SideRead, "open(O_DIRECT)", &unavailable{err})
	}
	d.src = fd
	var rs unix.Stat_t
	if err := retryErr(&st.Calls, func() error { return fstat(fd, &rs) }); err != nil || rs.Dev != c.srcSt.Dev || rs.Ino != c.srcSt.Ino {
		if err == nil {
			err = unix.ESTALE
		}
		return directFail(SideRead, "open(O_DIRECT)", &unavailable{err})
	}
	return nil
}

// directDst sets or clears O_DIRECT on the destination's descriptor.
func (c directCopy) directDst(on bool) error {
	d := &c.dio
	if d.dstOn == on {
		return nil
	}
	arg := d.dstFlags &^ unix.O_DIRECT
	if on {
		arg |= unix.O_DIRECT
	}
	if _, err := retry(&c.res.Stats[Direct].Calls, func() (int, error) { return c.sys.fcntl(c.dst, unix.F_SETFL, arg) }); err != nil {
		e := &Error{Strategy: Direct, Side: SideWrite, Err: syscallErr("fcntl(F_SETFL)", err)}
		if !on {
			// O_DIRECT stuck on: nothing else may write the file.
			e.final = true
		}
		return e
	}
	d.dstOn = on
	return nil
}

// directEnd undoes the setup: O_DIRECT cleared, the source's descriptor
// closed, the ring given back. It returns an error only when O_DIRECT could
// not be cleared.
func (c directCopy) directEnd() error {
	d := &c.dio
	var err error
	if d.dstOn {
		err = c.directDst(false)
	}
	if d.src >= 0 {
		closeFd(d.src)
		c.res.Stats[Direct].Calls++
		d.src = -1
	}
	if d.ring != nil {
		putRing(d.ring)
		d.ring = nil
	}
	d.setUp = false
	if d.setupErr == nil {
		d.setupErr = errDirectEnded
	}
	return err
}

var errDirectEnded = &unavailable{errors.New("direct I/O already ended for this copy")}

// chunk is one buffer's trip through the pipeline: read at off by a reader,
// its aligned part written at off by a writer as soon as it is read, then
// accounted for by the copier's goroutine once every chunk before it is.
type chunk struct {
	seq   int
	buf   []byte
	off   int64
	want  int   // bytes of the source this chunk stands for
	n     int   // bytes read (at most want)
	w     int   // bytes written with O_DIRECT (at most n)
	calls int64 // pread64 and pwrite64 calls made
	rerr  error // the read's error
	werr  error // the write's error
}

// pipeline is one run of Direct over a range. Readers and writers work at
// once, each on its own chunk, so reads and writes overlap and several of
// each are in flight; a chunk is written at its own offset as soon as it is
// read, so the writes go out of order. The copier's goroutine alone
// accounts for the chunks, in order: the destination is complete below
// prefix, and only prefix ever reaches the progress, the hooks, Reached and
// the checkpoints. A chunk that did not come back whole (an error, the end
// of the file, a short write) is the tail: nothing more is issued, the
// writers skip the chunks after it, and once every request has returned the
// tail is finished by directTail.
type pipeline struct {
	c         directCopy
	reads     chan *chunk
	writes    chan *chunk
	done      chan *chunk
	readers   sync.WaitGroup
	writers   sync.WaitGroup
	free      [][]byte
	window    int64 // how far past prefix chunks may be issued
	next      int64 // the offset of the next chunk to issue
	end       int64 // -1: until EOF
	prefix    int64 // the destination is complete below it
	moved     int64 // bytes accounted for
	seq       int   // the next chunk's sequence number
	accounted int   // chunks accounted for, in order
	pending   map[int]*chunk
	inflight  int
	halted    bool
	halt      atomic.Int64 // writers skip the chunks at or past it
	// --checksum: the buffers of whole chunks go to the hash once
	// accounted for, and come back on hashed once hashed; hashing counts
	// those out.
	hashed  chan []byte
	hashing int
}

// Depth: the pipeline starts with directDepth chunks in flight and adds
// directDepthStep more after each window of directWindowChunks chunks per
// chunk in flight whose throughput beat the window before it by the factor
// directGrowth, up to the whole ring.
const (
	directDepthStep    = 2
	directWindowChunks = 2
	directGrowth       = 1.05
)

// depthGrower is the pipeline's depth and how it grows: it lives in the
// copy's directState, so the extents of a sparse file go on at the depth
// reached.
type depthGrower struct {
	depth  int
	frozen bool
	t0     time.Time
	b0     int64   // bytes accounted for when the window began
	last   float64 // bytes a second of the window before
}

func (c directCopy) newPipeline(off, end int64) *pipeline {
	bufs := c.dio.ring.bufs
	n := len(bufs)
	p := &pipeline{
		c: c, reads: make(chan *chunk, n), writes: make(chan *chunk, n), done: make(chan *chunk, n),
		free: append([][]byte(nil), bufs...), window: 2 * int64(n) * int64(len(bufs[0])),
		next: off, end: end, prefix: off, pending: make(map[int]*chunk, n),
	}
	if c.hash != nil {
		p.hashed = make(chan []byte, n)
	}
	p.halt.Store(1<<63 - 1)
	g := &c.dio.grow
	if g.depth == 0 {
		g.depth = min(max(directDepth, 1), n)
	}
	g.t0, g.b0 = time.Now(), c.res.Bytes
	src, dst, align := c.dio.src, c.dst, c.dio.offAlign
	p.readers.Add(n)
	p.writers.Add(n)
	for range n {
		go func() {
			defer p.readers.Done()
			for ch := range p.reads {
				c.sys.directRead(src, ch, align)
				p.writes <- ch
			}
		}()
		go func() {
			defer p.writers.Done()
			for ch := range p.writes {
				if ch.rerr == nil && ch.off < p.halt.Load() {
					c.sys.directWriteAligned(dst, ch, align)
				}
				p.done <- ch
			}
		}()
	}
	return p
}

// run issues and accounts for chunks until the range is done or a tail is
// found, and returns when every request has come back (the tail, or nil).
func (p *pipeline) run() (tail *chunk) {
	g := &p.c.dio.grow
	for p.inflight < g.depth && p.issue() {
	}
	for p.inflight > 0 || p.hashing > 0 {
		// Every buffer the depth allows is with the hash: the copy
		// waits for it (--debug says how long).
		starved := p.hashing > 0 && len(p.free) == 0 && p.inflight < g.depth && !p.halted
		var t0 time.Time
		if starved {
			t0 = time.Now()
		}
		select {
		case b := <-p.hashed:
			p.hashing--
			p.free = append(p.free, b)
			if starved {
				p.c.hash.stats.Wait += time.Since(t0)
			}
		case ch := <-p.done:
			p.inflight--
			p.completed(ch)
			if tail == nil && !p.halted {
				tail = p.account()
				switch {
				case tail != nil:
					p.stop(tail.off + int64(tail.want))
				case p.c.hookErr != nil:
					p.stop(p.prefix)
				}
			}
			p.adapt()
		}
		for p.inflight < g.depth && p.issue() {
		}
	}
	close(p.reads)
	p.readers.Wait()
	close(p.writes)
	p.writers.Wait()
	return tail
}

// issue hands the next chunk to the readers; false when none is due.
func (p *pipeline) issue() bool {
	if p.halted || len(p.free) == 0 || p.end >= 0 && p.next >= p.end || p.next-p.prefix >= p.window {
		return false
	}
	buf := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	want := int64(len(buf))
	if p.end >= 0 {
		want = min(want, p.end-p.next)
	}
	p.reads <- &chunk{seq: p.seq, buf: buf, off: p.next, want: int(want)}
	p.seq++
	p.next += want
	p.inflight++
	return true
}

// completed takes a chunk back from the writers: its calls and its extent
// are counted, and its buffer is free again unless the chunk still has an
// unaligned rest to write (which only a tail has).
func (p *pipeline) completed(ch *chunk) {
	c := p.c
	c.res.Stats[Direct].Calls += ch.calls
	if ch.w > 0 {
		c.dstEnd = max(c.dstEnd, ch.off+int64(ch.w))
	}
	whole := ch.rerr == nil && ch.werr == nil && ch.w == ch.want
	switch {
	case ch.off >= p.halt.Load() || ch.rerr != nil || ch.werr != nil:
		p.free = append(p.free, ch.buf)
	case whole && p.hashed != nil:
		// Free once hashed (account).
	case ch.w == ch.n:
		p.free = append(p.free, ch.buf)
	}
	p.pending[ch.seq] = ch
}

// account accounts for the whole chunks that follow prefix, in order, and
// returns the first one that is not whole (nil when it has not come back).
func (p *pipeline) account() *chunk {
	for {
		ch, ok := p.pending[p.accounted]
		if !ok {
			return nil
		}
		delete(p.pending, p.accounted)
		p.accounted++
		if ch.rerr != nil || ch.werr != nil || ch.w < ch.want {
			return ch
		}
		p.prefix = ch.off + int64(ch.w)
		p.moved += int64(ch.w)
		if h := p.c.hash; h != nil {
			p.hashing++
			h.buffer(ch.off, ch.buf[:ch.w], func(b []byte) { p.hashed <- b[:cap(b)] })
		}
		p.c.directWritten(ch.off, int64(ch.w), true)
		if p.c.hookErr != nil {
			return nil
		}
	}
}

// stop ends the issuing; the writers skip the chunks at or past off.
func (p *pipeline) stop(off int64) {
	p.halted = true
	p.halt.Store(off)
}

// adapt grows the depth while the throughput grows (depthGrower).
func (p *pipeline) adapt() {
	g := &p.c.dio.grow
	if g.frozen || p.halted {
		return
	}
	n := len(p.c.dio.ring.bufs)
	span := p.c.res.Bytes - g.b0
	if span < int64(g.depth)*int64(len(p.c.dio.ring.bufs[0]))*directWindowChunks {
		return
	}
	now := time.Now()
	rate := float64(span) / max(now.Sub(g.t0).Seconds(), 1e-9)
	if g.depth >= n || g.last > 0 && rate < g.last*directGrowth {
		g.frozen = true
		return
	}
	g.last, g.t0, g.b0 = rate, now, p.c.res.Bytes
	g.depth = min(g.depth+directDepthStep, n)
}

// direct copies length bytes at off (length < 0: until EOF) with the
// pipeline and returns the bytes written, whether EOF was seen, and an
// error (a refusal hands over at off+moved: every byte before it is in
// the destination; bytes after it may be too, and are written again).
func (c directCopy) direct(off, length int64) (moved int64, eof bool, err error) {
	if err := c.directSetup(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			e := *ce
			e.Offset = off
			return 0, false, &e
		}
		return 0, false, err
	}
	if off%int64(c.dio.offAlign) != 0 {
		return 0, false, &Error{Strategy: Direct, Side: SideRead, Offset: off, Err: syscallErr("pread64", &unavailable{errUnalignedExtent})}
	}
	if err := c.preallocate(off); err != nil {
		return 0, false, err
	}
	end := int64(-1)
	if length >= 0 {
		end = off + length
	}
	for {
		if err = c.directDst(true); err != nil {
			err.(*Error).Offset = off
			break
		}
		p := c.newPipeline(off, end)
		tail := p.run()
		moved += p.moved
		off += p.moved
		if c.hookErr != nil {
			return moved, false, &Error{Strategy: Direct, Side: SideWrite, Offset: off, Err: c.hookErr, final: true}
		}
		if tail == nil {
			return moved, false, nil
		}
		var m int64
		var restart bool
		m, eof, restart, err = c.directTail(tail, end)
		moved += m
		off += m
		if err != nil || !restart {
			break
		}
	}
	if err != nil {
		// Another strategy may go on from here: the destination's
		// descriptor must be as it was.
		if cerr := c.directDst(false); cerr != nil {
			return moved, false, cerr
		}
	}
	return moved, eof, err
}

// directTail finishes the tail chunk, once nothing else is in flight: its
// error, or its aligned part accounted for and its unaligned rest written
// buffered (O_DIRECT cleared); then the end of the file, or (a whole chunk
// whose write ended unaligned) restart: a new pipeline goes on after it.
func (c directCopy) directTail(ch *chunk, end int64) (moved int64, eof, restart bool, err error) {
	if ch.rerr != nil {
		return 0, false, false, &Error{Strategy: Direct, Side: SideRead, Offset: ch.off, Err: ch.rerr}
	}
	if ch.w > 0 {
		if err := c.hashTail(ch, 0, ch.w); err != nil {
			return 0, false, false, err
		}
		c.directWritten(ch.off, int64(ch.w), true)
		if c.hookErr != nil {
			return int64(ch.w), false, false, &Error{Strategy: Direct, Side: SideWrite, Offset: ch.off + int64(ch.w), Err: c.hookErr, final: true}
		}
	}
	if ch.werr != nil {
		return int64(ch.w), false, false, &Error{Strategy: Direct, Side: SideWrite, Offset: ch.off + int64(ch.w), Err: ch.werr}
	}
	if ch.w < ch.n {
		if err := c.directDst(false); err != nil {
			e := err.(*Error)
			e.Offset = ch.off + int64(ch.w)
			return int64(ch.w), false, false, e
		}
		if err := c.writeAll(&c.res.Stats[Direct], Direct, ch.buf[ch.w:ch.n], ch.off+int64(ch.w)); err != nil {
			return int64(ch.w), false, false, err
		}
		if err := c.hashTail(ch, ch.w, ch.n); err != nil {
			return int64(ch.w), false, false, err
		}
		c.directWritten(ch.off+int64(ch.w), int64(ch.n-ch.w), false)
		if c.hookErr != nil {
			return int64(ch.n), false, false, &Error{Strategy: Direct, Side: SideWrite, Offset: ch.off + int64(ch.n), Err: c.hookErr, final: true}
		}
	}
	reached := ch.off + int64(ch.n)
	if ch.n < ch.want {
		// The end of the file, or a read that stopped unaligned.
		if reached < c.srcSt.Size && (!c.forced || !c.proven[Direct]) {
			return int64(ch.n), false, false, &Error{Strategy: Direct, Side: SideRead, Offset: reached, Err: syscallErr("pread64", ErrShortRead)}
		}
		return int64(ch.n), true, false, nil
	}
	return int64(ch.n), false, end < 0 || reached < end, nil
}

// hashTail hashes bytes [from, to) of the tail chunk ch, in the copier's
// goroutine, after the whole chunks before it.
func (c directCopy) hashTail(ch *chunk, from, to int) error {
	if c.hash == nil {
		return nil
	}
	if err := c.hash.data(ch.off+int64(from), ch.buf[from:to]); err != nil {
		return &Error{Strategy: Direct, Side: SideRead, Offset: ch.off + int64(from), Err: err, final: true}
	}
	return nil
}

// preallocate gives the destination its blocks for the source's bytes from
// off on before the first write, once per copy: the O_DIRECT writes then
// land inside the file, where they run side by side (writes that extend a
// file are serialised), and a copy that cannot fit fails before it starts.
// Only for a source without holes (a sparse one keeps them) and a regular
// destination; a filesystem without fallocate is copied without it.
func (c directCopy) preallocate(off int64) error {
	d := &c.dio
	if d.preallocated {
		return nil
	}
	d.preallocated = true
	size := c.srcSt.Size
	if !c.dstRegular || size <= off || c.srcSt.Blocks*512 < size {
		return nil
	}
	err := retryErr(&c.res.Stats[Direct].Calls, func() error { return c.sys.fallocate(c.dst, 0, off, size-off) })
	switch err {
	case nil:
		c.dstSize = max(c.dstSize, size)
		return nil
	case unix.ENOSPC, unix.EDQUOT, unix.EFBIG:
		return &Error{Strategy: Direct, Side: SideWrite, Offset: off, Err: syscallErr("fallocate", err), final: true}
	}
	// EOPNOTSUPP (no fallocate here), and anything else: the copy does
	// without (the writes find the same errors, if any).
	return nil
}

// directRead fills ch from the O_DIRECT descriptor fd: whole aligned
// blocks, continuing after a short read that ended aligned, until want
// bytes (rounded up to align: the count must be aligned too), the end of
// the file, or an unaligned end.
func (s *sysCalls) directRead(fd int, ch *chunk, align int) {
	toRead := alignUp(ch.want, align)
	for ch.n < toRead {
		m, err := retry(&ch.calls, func() (int, error) { return s.pread(fd, ch.buf[ch.n:toRead], ch.off+int64(ch.n)) })
		if err != nil {
			ch.rerr = syscallErr("pread64", err)
			break
		}
		if m <= 0 {
			break
		}
		ch.n += m
		if ch.n%align != 0 {
			break
		}
	}
	ch.n = min(ch.n, ch.want)
}

// directWriteAligned writes the aligned part of what ch read, at its
// offset, with O_DIRECT, continuing after a short write that ended aligned;
// what is left (an unaligned rest) is for directTail.
func (s *sysCalls) directWriteAligned(fd int, ch *chunk, align int) {
	aligned := ch.n / align * align
	for ch.w < aligned {
		m, err := retry(&ch.calls, func() (int, error) { return s.pwrite(fd, ch.buf[ch.w:aligned], ch.off+int64(ch.w)) })
		if err == nil && m == 0 {
			err = errShortWrite
		}
		if err != nil {
			ch.werr = syscallErr("pwrite64", err)
			return
		}
		ch.w += m
		if ch.w%align != 0 {
			return
		}
	}
}

// directWritten accounts for n bytes written at off, the destination being
// complete below off+n: counters, progress, and the durability hook
// (WrittenDirect for O_DIRECT writes; the buffered tail went through
// writeAll, which already called Written), Reached and the checkpoints.
func (c directCopy) directWritten(off, n int64, odirect bool) {
	c.res.Stats[Direct].Bytes += n
	c.res.Bytes += n
	c.proven[Direct] = true
	if c.opts.Progress != nil {
		c.opts.Progress.Add(n)
	}
	c.reached(off + n)
	if odirect {
		if end := off + n; end > c.dstEnd {
			c.dstEnd = end
		}
		hook := c.opts.WrittenDirect
		if hook == nil {
			hook = c.opts.Written
		}
		if hook != nil && c.hookErr == nil {
			c.hookErr = hook(off, n)
		}
	}
	// --resume: the destination is complete below off+n (the pipeline
	// accounts in order), so a checkpoint may be due.
	if c.ckpt != nil && c.hookErr == nil {
		if err := c.checkpointStep(Direct, off+n); err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				err = ce.Err
			}
			c.hookErr = err
		}
	}
}
