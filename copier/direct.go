package copier

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Direct copies with O_DIRECT on both files: the source is read into a ring
// of aligned buffers by directReaders goroutines while the calling goroutine
// writes the buffers already filled, in order, so the read of chunk n+1
// overlaps the write of chunk n and nothing of the copy goes through the
// page cache. Allocating page-cache pages is where a cold buffered copy
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
// directBudgetBytes/ringBytes files with Direct at once (Auto takes another
// strategy for the others; a forced Direct waits for a ring).
//
// Sizes from the sweep TestDirectSweep (README, "Direct I/O";
// docs/measurements.md).
//
// Variables, not constants, only so that the sweep (TestDirectSweep) and
// the power-cut test's build (checkpoint_crashfs.go, tag fastcp_crashfs) can
// set them; nothing else changes them.
var (
	directBufBytes = 4 << 20
	directBufs     = 2
	directReaders  = 2
)

const (
	directBudgetBytes = 16 << 20
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
	DirectUnflushed    // no flush at the end, and smaller than the dirty limit
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
		why = fmt.Sprintf("skipped: no --sync flush, and size %d < %d, the dirty page limit (a buffered copy returns before the device has it)", d.Size, d.Threshold)
	case DirectCached:
		why = fmt.Sprintf("skipped: source %s cached (cachestat), copied faster from memory", d.share())
	case DirectResidency:
		why = fmt.Sprintf("skipped: residency unknown: %s", ErrnoText(d.CacheErr))
	case DirectSyncWrites:
		why = "skipped: O_SYNC/O_DSYNC destination"
	case DirectZeros:
		why = "skipped: --sparse=always needs the rw loop"
	case DirectBusy:
		why = fmt.Sprintf("skipped: the %d MiB of direct I/O buffers are in use by other copies", directBudgetBytes>>20)
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
}

// ring is one copy's buffers: one anonymous mapping (page aligned, so
// aligned for any O_DIRECT memory alignment up to the page size).
type ring struct {
	mem  []byte
	bufs [][]byte
}

// rings hands out the run's ring memory: at most directBudgetBytes mapped,
// a ring kept mapped for the next file once a copy is done with it.
var rings struct {
	sync.Mutex
	cond  *sync.Cond
	inUse int
	free  []*ring
}

func ringBytes() int { return directBufs * directBufBytes }

// maxRings is how many rings the budget holds (at least one).
func maxRings() int { return max(directBudgetBytes/ringBytes(), 1) }

// getRing returns a ring, or nil when none is free and wait is false.
func getRing(wait bool) (*ring, error) {
	rings.Lock()
	defer rings.Unlock()
	if rings.cond == nil {
		rings.cond = sync.NewCond(&rings.Mutex)
	}
	for rings.inUse >= maxRings() {
		if !wait {
			return nil, nil
		}
		rings.cond.Wait()
	}
	rings.inUse++
	if n := len(rings.free); n > 0 {
		r := rings.free[n-1]
		rings.free = rings.free[:n-1]
		if len(r.mem) == ringBytes() && len(r.bufs) == directBufs {
			return r, nil
		}
		munmap(r.mem) // the sweep changed the sizes
	}
	mem, err := mmap(-1, 0, ringBytes(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		rings.inUse--
		rings.cond.Signal()
		return nil, err
	}
	r := &ring{mem: mem}
	for i := range directBufs {
		r.bufs = append(r.bufs, mem[i*directBufBytes:(i+1)*directBufBytes:(i+1)*directBufBytes])
	}
	return r, nil
}

func putRing(r *ring) {
	rings.Lock()
	rings.inUse--
	rings.free = append(rings.free, r)
	rings.cond.Signal()
	rings.Unlock()
}

// chooseDirect is Auto's decision: Direct after Reflink for a large source
// that is mostly not in the page cache (or any source of some size with
// --nocache), when a ring is free. It takes the ring.
func (c *copier) chooseDirect(regular bool) bool {
	o := c.opts
	d := &c.res.Direct
	// A sparse source counts by its data: holes are neither read nor
	// cached.
	d.Size, d.Cached = c.srcSt.Size, -1
	if c.srcSt.Blocks*512 < d.Size {
		d.Size = c.srcSt.Blocks * 512
	}
	d.Threshold = directMinBytes
	small := DirectSmall
	switch {
	case o.NoCache:
		d.Threshold = directNoCacheMinBytes
	case !o.Flush && o.Checkpoint == nil:
		// Without a flush at the end, a buffered copy returns once the
		// data is in the page cache, long before a direct one has it on
		// the device, unless the kernel throttles it to the device's
		// speed because it passes the dirty limit: only then does
		// Direct win.
		if lim := dirtyLimit(); lim > d.Threshold {
			d.Threshold = lim
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
	r, err := getRing(false)
	if r == nil || err != nil {
		d.Choice = DirectBusy
		return false
	}
	c.dio.ring = r
	return true
}

// directMinBytes is DirectMinBytes, a variable for the tests' small files.
var directMinBytes int64 = DirectMinBytes

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
func (c *copier) directSetup() error {
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

func (c *copier) directOpen() error {
	d := &c.dio
	st := &c.res.Stats[Direct]
	fail := func(side Side, call string, err error) error {
		return &Error{Strategy: Direct, Side: side, Err: syscallErr(call, err)}
	}
	if c.srcSt.Mode&unix.S_IFMT != unix.S_IFREG || !c.dstRegular {
		// Devices and streams: not for this pipeline (and a FIFO must
		// never be opened a second time).
		return fail(SideBoth, "O_DIRECT", &unavailable{unix.EINVAL})
	}
	var sx, dx unix.Statx_t
	for _, f := range []struct {
		fd   int
		x    *unix.Statx_t
		side Side
	}{{c.src, &sx, SideRead}, {c.dst, &dx, SideWrite}} {
		if err := retryErr(&st.Calls, func() error {
			return statx(f.fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, f.x)
		}); err != nil {
			return fail(f.side, "statx", &unavailable{err})
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
			return fail(side, "statx(STATX_DIOALIGN)", unix.EINVAL)
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
		return fail(SideBoth, "O_DIRECT", &unavailable{unix.EINVAL})
	}

	fd, err := retry(&st.Calls, func() (int, error) { return reopen(c.src, unix.O_RDONLY|unix.O_DIRECT) })
	if err != nil {
		if err == unix.EINVAL {
			// The filesystem takes no O_DIRECT: tmpfs before 6.6,
			// some FUSE and network filesystems.
			return fail(SideRead, "open(O_DIRECT)", err)
		}
		return fail(SideRead, "open(O_DIRECT)", &unavailable{err})
	}
	d.src = fd
	var rs unix.Stat_t
	if err := retryErr(&st.Calls, func() error { return fstat(fd, &rs) }); err != nil || rs.Dev != c.srcSt.Dev || rs.Ino != c.srcSt.Ino {
		if err == nil {
			err = unix.ESTALE
		}
		return fail(SideRead, "open(O_DIRECT)", &unavailable{err})
	}
	fl, err := retry(&st.Calls, func() (int, error) { return fcntl(c.dst, unix.F_GETFL, 0) })
	if err != nil {
		return fail(SideWrite, "fcntl(F_GETFL)", &unavailable{err})
	}
	d.dstFlags = fl & setflMask
	if err := c.directDst(true); err != nil {
		return err
	}
	if d.ring == nil {
		// Forced: wait for a ring (Auto took one when it chose).
		r, err := getRing(true)
		if err != nil {
			return fail(SideBoth, "mmap", &unavailable{err})
		}
		d.ring = r
	}
	return nil
}

// directDst sets or clears O_DIRECT on the destination's descriptor.
func (c *copier) directDst(on bool) error {
	d := &c.dio
	if d.dstOn == on {
		return nil
	}
	arg := d.dstFlags &^ unix.O_DIRECT
	if on {
		arg |= unix.O_DIRECT
	}
	if _, err := retry(&c.res.Stats[Direct].Calls, func() (int, error) { return fcntl(c.dst, unix.F_SETFL, arg) }); err != nil {
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
func (c *copier) directEnd() error {
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

// chunk is one buffer's trip through the pipeline.
type chunk struct {
	i     int
	buf   []byte
	off   int64
	want  int   // bytes of the source this chunk stands for
	n     int   // bytes read (at most want)
	calls int64 // pread64 calls made
	err   error
}

// direct copies length bytes at off (length < 0: until EOF) with the
// pipeline and returns the bytes written, whether EOF was seen, and an
// error (a refusal hands over at off+moved: every byte before it is in
// the destination, none after it).
func (c *copier) direct(off, length int64) (moved int64, eof bool, err error) {
	if err := c.directSetup(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			e := *ce
			e.Offset = off
			return 0, false, &e
		}
		return 0, false, err
	}
	d := &c.dio
	align := int64(d.offAlign)
	if off%align != 0 {
		return 0, false, &Error{Strategy: Direct, Side: SideRead, Offset: off, Err: syscallErr("pread64", &unavailable{errUnalignedExtent})}
	}
	if err := c.directDst(true); err != nil {
		e := err.(*Error)
		e.Offset = off
		return 0, false, e
	}
	st := &c.res.Stats[Direct]
	bufs := d.ring.bufs
	n := len(bufs)
	req := make(chan *chunk, n)
	done := make([]chan *chunk, n)
	for i := range done {
		done[i] = make(chan *chunk, 1)
	}
	var wg sync.WaitGroup
	for range min(directReaders, n) {
		wg.Go(func() {
			for ch := range req {
				directRead(d.src, ch, d.offAlign)
				done[ch.i%n] <- ch
			}
		})
	}
	end := int64(-1)
	if length >= 0 {
		end = off + length
	}
	next, issued, consumed := off, 0, 0
	stopIssuing := false
	issue := func(buf []byte) {
		if stopIssuing || (end >= 0 && next >= end) {
			return
		}
		want := int64(len(buf))
		if end >= 0 {
			want = min(want, end-next)
		}
		req <- &chunk{i: issued, buf: buf, off: next, want: int(want)}
		issued++
		next += want
	}
	for _, b := range bufs {
		issue(b)
	}
	for consumed < issued && err == nil {
		ch := <-done[consumed%n]
		consumed++
		st.Calls += ch.calls
		if ch.err != nil {
			err = &Error{Strategy: Direct, Side: SideRead, Offset: ch.off, Err: ch.err}
			break
		}
		var w int64
		w, err = c.directWrite(ch.buf[:ch.n], ch.off)
		moved += w
		if err != nil {
			break
		}
		if ch.n < ch.want {
			// The end of the file, or a read that stopped unaligned.
			stopIssuing = true
			reached := ch.off + int64(ch.n)
			if reached < c.srcSt.Size && (!c.forced || !c.proven[Direct]) {
				err = &Error{Strategy: Direct, Side: SideRead, Offset: reached, Err: syscallErr("pread64", ErrShortRead)}
				break
			}
			eof = true
			break
		}
		issue(ch.buf)
	}
	close(req)
	for ; consumed < issued; consumed++ {
		st.Calls += (<-done[consumed%n]).calls
	}
	wg.Wait()
	if err != nil {
		// Another strategy may go on from here: the destination's
		// descriptor must be as it was.
		if cerr := c.directDst(false); cerr != nil {
			return moved, false, cerr
		}
	}
	return moved, eof, err
}

// directRead fills ch from the O_DIRECT descriptor fd: whole aligned
// blocks, continuing after a short read that ended aligned, until want
// bytes (rounded up to align: the count must be aligned too), the end of
// the file, or an unaligned end.
func directRead(fd int, ch *chunk, align int) {
	toRead := alignUp(ch.want, align)
	for ch.n < toRead {
		m, err := retry(&ch.calls, func() (int, error) { return pread(fd, ch.buf[ch.n:toRead], ch.off+int64(ch.n)) })
		if err != nil {
			ch.err = syscallErr("pread64", err)
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

// directWrite writes b at off: its aligned part with O_DIRECT, an unaligned
// rest (the file's tail, or what a short write left) buffered, with
// O_DIRECT cleared. Every write is counted as it returns: the progress
// follows the bytes that reached the device.
func (c *copier) directWrite(b []byte, off int64) (int64, error) {
	st := &c.res.Stats[Direct]
	align := c.dio.offAlign
	aligned := len(b) / align * align
	w := 0
	for w < aligned {
		m, err := retry(&st.Calls, func() (int, error) { return pwrite(c.dst, b[w:aligned], off+int64(w)) })
		if err == nil && m == 0 {
			err = errShortWrite
		}
		if err != nil {
			return int64(w), &Error{Strategy: Direct, Side: SideWrite, Offset: off + int64(w), Err: syscallErr("pwrite64", err)}
		}
		c.directWritten(off+int64(w), int64(m), true)
		w += m
		if c.hookErr != nil {
			return int64(w), &Error{Strategy: Direct, Side: SideWrite, Offset: off + int64(w), Err: c.hookErr, final: true}
		}
		if w%align != 0 {
			break
		}
	}
	if w == len(b) {
		return int64(w), nil
	}
	if err := c.directDst(false); err != nil {
		e := err.(*Error)
		e.Offset = off + int64(w)
		return int64(w), e
	}
	if err := c.writeAll(st, Direct, b[w:], off+int64(w)); err != nil {
		return int64(w), err
	}
	c.directWritten(off+int64(w), int64(len(b)-w), false)
	if c.hookErr != nil {
		return int64(len(b)), &Error{Strategy: Direct, Side: SideWrite, Offset: off + int64(len(b)), Err: c.hookErr, final: true}
	}
	return int64(len(b)), nil
}

// directWritten accounts for n bytes written at off: counters, progress,
// and the durability hook (WrittenDirect for O_DIRECT writes; the buffered
// tail went through writeAll, which already called Written).
func (c *copier) directWritten(off, n int64, odirect bool) {
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
	// --resume: the pipeline writes in order, so the destination is
	// complete below off+n, and a checkpoint may be due.
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
