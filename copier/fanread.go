// SPDX-License-Identifier: MIT

package copier

import (
	"fastcp/internal/sysx"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The shared read of CopyMany (fanout.go): readers fill the ring's buffers
// (several reads in flight for a regular source, one for a stream), the
// loop's goroutine hands each buffer, in order, to every destination's
// writer and to the hash, and a buffer goes back to the readers once each
// of them let go of it.

// fanChunk is one buffer's trip: read at off, then written by every
// destination.
type fanChunk struct {
	seq  int
	buf  []byte
	off  int64
	want int   // bytes asked for
	n    int   // bytes read
	eof  bool  // the read found the end of the source
	hole int64 // bytes of hole between the chunk before and this one
	rerr error
	refs atomic.Int32
}

// fanLoop is the shared read of one CopyMany.
type fanLoop struct {
	f     *fan
	live  []*fanDest
	walk  bool // a sparse source: only its data extents are read
	ring  *ring
	bufs  [][]byte
	depth int
	pos   bool // the source takes offsets (regular file, block device)

	direct   bool // O_DIRECT reads
	dsrc     int  // the O_DIRECT descriptor, -1
	srcAlign int
	noDirect atomic.Bool // an O_DIRECT read was refused: buffered from then on

	reads   chan *fanChunk
	done    chan *fanChunk
	freed   chan *fanChunk
	readers sync.WaitGroup
	writers sync.WaitGroup
	free    [][]byte
	pending map[int]*fanChunk

	seq, dispatched int
	inflight        int // reads in flight
	outstanding     int // chunks handed out, not all let go of
	next            int64
	extEnd          int64        // the current extent's end; -1: until EOF
	allIssued       bool         // no data extent left to read
	halted          bool         // EOF, a read error, or no destination left
	end             int64        // the source's end as read
	prevEnd         int64        // the end of the last chunk handed out
	high            int64        // the highest offset read
	readCalls       int64        // the loop's own reads (small) and lseeks
	readCallsShared atomic.Int64 // the readers' calls
	readBytes       int64
	readErr         error
	inExtent        bool  // l.next is inside a data extent (extEnd)
	nextData        int64 // the next data extent's start when known, else -1
	holes           int64 // bytes of holes passed
	extents         int
	targets         []*fanDest
	out             []*fanChunk // the chunks handed out, not yet let go of, in order
	holders         []*fanDest  // the destinations the readers wait for (startWait)
	waitSince       time.Time   // the readers wait for the slowest destination since
}

// shared copies the source into the destinations not done yet with one
// read, and returns the end of the source as read (-1: nothing was read).
func (f *fan) shared() int64 {
	live := f.live()
	switch {
	case len(live) == 0:
		return -1
	case len(live) == 1 && f.opts.Strategy == Auto && live[0].c.opts.Start == f.start:
		return f.alone(live[0])
	}
	if f.opts.Strategy == Auto {
		if each, parallel := f.eachWanted(live); each {
			return f.each(live, parallel)
		}
	}
	for _, d := range live {
		d.shared = true
		d.c.res.Shared = len(live)
	}
	f.startHash()
	l, end := f.newLoop(live)
	if l == nil {
		return end
	}
	return l.run()
}

// alone copies the source into the one destination left (the others were
// cloned), with every strategy Copy has: copy_file_range and sendfile too.
func (f *fan) alone(d *fanDest) int64 {
	o := d.c.opts
	o.Progress, o.Hash, o.HashSnapshots, o.HashWaiting, o.HashSnapshotEvery = f.opts.Progress, f.opts.Hash, f.opts.HashSnapshots, f.opts.HashWaiting, f.opts.HashSnapshotEvery
	o.HashLater = false
	r, err := f.copyOwn(d, o)
	if o.Hash != nil {
		f.hashed = true
		for _, x := range f.dests {
			x.c.res.Hashed, x.c.res.Hash = true, r.Hash
		}
	}
	if err != nil {
		return -1
	}
	return r.Size
}

// copyOwn copies the source into d on its own with Copy and options o,
// after what cloneAll did for it (its fallback, the reflink refused).
func (f *fan) copyOwn(d *fanDest, o Options) (Result, error) {
	prev := d.c.result
	r, err := Copy(d.file, f.srcD, o)
	r.Fallbacks = append(prev.Fallbacks, r.Fallbacks...)
	if prev.Reflink == DebugUnsupported {
		r.Reflink = DebugUnsupported
	}
	d.c.result = r
	d.done = true
	if err != nil {
		d.fail(err)
	}
	return r, err
}

// newLoop sets the shared read up: holes, direct I/O, the ring, each
// destination's size and O_DIRECT. It returns nil when there is nothing
// more to do: the copy is done (a small source, copied at once: the end of
// the source as read) or every destination failed (-1).
func (f *fan) newLoop(live []*fanDest) (*fanLoop, int64) {
	o := f.opts
	l := &fanLoop{f: f, live: live, dsrc: -1, end: -1, nextData: -1, pos: isPositional(f.srcSt.Mode)}
	lead := live[0].c
	srcRegular := f.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
	allRegular := srcRegular
	for _, d := range live {
		allRegular = allRegular && d.c.dstRegular
	}
	size := f.srcSt.Size
	first := int64(-1)
	if allRegular {
		walk, data, err := lead.findHoles(f.start, true)
		if err != nil {
			f.failAll(live, err)
			return nil, -1
		}
		l.walk, first = walk, data
		for _, d := range live[1:] {
			d.c.zeros, d.c.res.Sparse = lead.zeros, lead.res.Sparse
		}
	} else if srcRegular && o.Sparse != SparseNever {
		// A device or FIFO among the destinations takes every byte:
		// the regular ones find the holes as zero blocks.
		for _, d := range live {
			if d.c.dstRegular && (o.Sparse == SparseAlways || f.srcSt.Blocks*512 < size) {
				d.c.zeros, d.c.res.Sparse = true, DetectZeros
			}
		}
	}
	zeros := false
	for _, d := range live {
		zeros = zeros || d.c.zeros
	}
	// Direct I/O: the rule of one destination, for the lead.
	switch {
	case o.Strategy == Direct:
		if !allRegular {
			f.failAll(live, &Error{Strategy: Direct, Side: SideBoth, Err: syscallErr("O_DIRECT", unix.EINVAL), Refused: true})
			return nil, -1
		}
		l.direct = true
		lead.res.Direct.Choice = DirectForced
	case o.Strategy == Auto && !zeros:
		l.direct = lead.odirect().chooseDirect(allRegular)
		l.ring, lead.dio.ring = lead.dio.ring, nil
	default:
		lead.res.Direct.Choice = DirectNotConsidered
	}
	for _, d := range live[1:] {
		d.c.res.Direct = lead.res.Direct
	}
	if !l.walk && srcRegular && !l.direct && size > f.start && size-f.start < int64(lead.bufSize) && size > 0 {
		if end, ok := l.small(); ok {
			return nil, end
		}
	}
	if l.direct && !l.openDirect() {
		if o.Strategy == Direct {
			return nil, -1
		}
		l.direct = false
	}
	if l.ring == nil && (l.direct || size-f.start > int64(lead.bufSize) || !srcRegular) {
		if r, err := f.sys.rings.get(o.Strategy == Direct); err == nil && r != nil {
			l.ring = r
		}
	}
	if l.ring != nil {
		l.bufs = l.ring.bufs
	} else {
		n := max(alignUp(lead.bufSize/fanHeapBufs, 4096), fanMinChunk)
		mem := make([]byte, n*fanHeapBufs)
		for i := range fanHeapBufs {
			l.bufs = append(l.bufs, mem[i*n:(i+1)*n:(i+1)*n])
		}
	}
	for _, d := range live {
		l.setupDest(d, size)
	}
	if len(f.live()) == 0 {
		l.releaseRing()
		return nil, -1
	}
	if !l.direct && srcRegular && size-f.start >= seqAdviceMinBytes {
		_, _ = retry(&f.calls, func() (struct{}, error) { return struct{}{}, f.sys.fadvise(f.src, 0, 0, unix.FADV_SEQUENTIAL) })
	}
	l.depth = fanReadDepthBuffered
	if l.direct {
		l.depth = fanReadDepthDirect
	}
	if !l.pos {
		l.depth = 1
	}
	l.depth = min(l.depth, len(l.bufs))
	l.next, l.prevEnd, l.high, l.extEnd, l.inExtent = f.start, f.start, f.start, -1, true
	if l.walk {
		// The extent at first is looked at when its first chunk is
		// issued.
		l.inExtent, l.nextData = false, first
		l.allIssued = first < 0
	}
	return l, 0
}

// failAll fails every destination of live with err.
func (f *fan) failAll(live []*fanDest, err error) {
	for _, d := range live {
		d.fail(err)
	}
}

// small copies a source smaller than the rw loop's buffer: one read, then
// each destination written in turn, in this goroutine. It reports false
// (nothing done) when the source turned out larger.
func (l *fanLoop) small() (int64, bool) {
	f := l.f
	lead := l.live[0].c
	var buf []byte
	pooled := lead.bufSize == defaultPoolSize
	if pooled {
		buf = *bufPool.Get().(*[]byte)
		defer bufPool.Put(&buf)
	} else {
		buf = make([]byte, lead.bufSize)
	}
	n, err := f.sys.preadFullCount(f.src, buf, f.start, &l.readCalls)
	l.readBytes += int64(n)
	if err != nil {
		f.failAll(l.live, &Error{Strategy: RW, Side: SideRead, Offset: f.start + int64(n), Err: syscallErr("pread64", err)})
		return -1, true
	}
	if n == len(buf) {
		// It grew: the shared read, from the start.
		return 0, false
	}
	data := buf[:n]
	if f.hash != nil {
		if err := f.hash.data(f.start, data); err != nil {
			f.failAll(l.live, &Error{Strategy: RW, Side: SideRead, Offset: f.start, Err: err, final: true})
			return -1, true
		}
	}
	end := f.start + int64(n)
	for _, d := range l.live {
		ch := &fanChunk{buf: buf, off: f.start, want: len(buf), n: n, eof: true}
		if err := d.write(ch); err != nil {
			d.fail(err)
		}
	}
	if f.opts.Progress != nil {
		f.opts.Progress.Add(int64(n))
	}
	l.end = end
	l.finish()
	return end, true
}

// preadFullCount is preadFull counting its calls, each attempt one.
func (s *sysCalls) preadFullCount(fd int, b []byte, off int64, calls *int64) (int, error) {
	return sysx.PreadFull(func(fd int, p []byte, off int64) (int, error) {
		*calls++
		return s.pread(fd, p, off)
	}, fd, b, off)
}

// openDirect opens the source again with O_DIRECT, for the reads. false:
// not here (every destination failed, when Direct was forced).
func (l *fanLoop) openDirect() bool {
	f := l.f
	var sx unix.Statx_t
	refuse := func(call string, err error) bool {
		if f.opts.Strategy == Direct {
			f.failAll(l.live, &Error{Strategy: Direct, Side: SideRead, Err: syscallErr(call, err), Refused: refusal(err)})
		}
		return false
	}
	if err := retryErr(&l.readCalls, func() error {
		return statx(f.src, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &sx)
	}); err != nil {
		return refuse("statx", err)
	}
	l.srcAlign = int(max(f.srcSt.Blksize, 512))
	if sx.Mask&unix.STATX_DIOALIGN != 0 {
		if sx.Dio_offset_align == 0 || sx.Dio_mem_align > uint32(pageSize) {
			return refuse("statx(STATX_DIOALIGN)", unix.EINVAL)
		}
		l.srcAlign = int(sx.Dio_offset_align)
	}
	if directBufBytes%l.srcAlign != 0 {
		return refuse("O_DIRECT", unix.EINVAL)
	}
	fd, err := retry(&l.readCalls, func() (int, error) { return f.sys.reopen(f.src, unix.O_RDONLY|unix.O_DIRECT) })
	if err != nil {
		return refuse("open(O_DIRECT)", err)
	}
	var rs unix.Stat_t
	if err := retryErr(&l.readCalls, func() error { return fstat(fd, &rs) }); err != nil || rs.Dev != f.srcSt.Dev || rs.Ino != f.srcSt.Ino {
		closeFd(fd)
		if err == nil {
			err = unix.ESTALE
		}
		return refuse("open(O_DIRECT)", err)
	}
	l.dsrc = fd
	return true
}

// setupDest readies one destination: O_DIRECT writes where the read is
// direct and the destination takes them (else it writes buffered, from the
// same ring; with --strategy=direct it fails), its blocks preallocated
// then, and its size set first where holes are kept (as Copy does).
func (l *fanLoop) setupDest(d *fanDest, size int64) {
	c := d.c
	start := c.opts.Start
	if l.direct {
		if err := d.setupDirect(len(l.bufs[0])); err != nil {
			if l.f.opts.Strategy == Direct {
				d.fail(err)
				return
			}
		} else if err := c.odirect().preallocate(start); err != nil {
			d.fail(err)
			return
		}
	}
	srcRegular := l.f.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
	if c.dstRegular && srcRegular && size > start && (l.walk || c.zeros) && c.dstSize < size {
		if err := retryErr(c.other(), func() error { return ftruncate(c.dst, size) }); err != nil {
			d.fail(&Error{Strategy: RW, Side: SideWrite, Err: syscallErr("ftruncate", err)})
			return
		}
		c.dstSize = size
	}
}

// setupDirect turns O_DIRECT on for the destination's writes, if its
// filesystem takes it with the ring's buffers of bufBytes.
func (d *fanDest) setupDirect(bufBytes int) error {
	c := d.c
	st := &c.res.Stats[Direct]
	var dx unix.Statx_t
	if err := retryErr(&st.Calls, func() error {
		return statx(c.dst, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &dx)
	}); err != nil {
		return directFail(SideWrite, "statx", err)
	}
	info := &c.res.Direct
	d.align = int(max(c.dstSt.Blksize, 512))
	d.memAl = d.align
	info.FromStatx = false
	if dx.Mask&unix.STATX_DIOALIGN != 0 {
		if dx.Dio_offset_align == 0 {
			return directFail(SideWrite, "statx(STATX_DIOALIGN)", unix.EINVAL)
		}
		d.align, d.memAl = int(dx.Dio_offset_align), int(dx.Dio_mem_align)
		info.FromStatx = true
	}
	if d.memAl > pageSize || d.memAl <= 0 || d.memAl&(d.memAl-1) != 0 || d.align > bufBytes || bufBytes%d.align != 0 {
		return directFail(SideWrite, "O_DIRECT", unix.EINVAL)
	}
	fl, err := retry(&st.Calls, func() (int, error) { return c.sys.fcntl(c.dst, unix.F_GETFL, 0) })
	if err != nil {
		return directFail(SideWrite, "fcntl(F_GETFL)", err)
	}
	c.dio.dstFlags = fl & setflMask
	if err := c.odirect().directDst(true); err != nil {
		return err
	}
	info.MemAlign, info.OffsetAlign = d.memAl, d.align
	d.direct = true
	return nil
}

// pageSize bounds an O_DIRECT memory alignment the ring (page aligned)
// can meet.
var pageSize = unix.Getpagesize()

// run reads the source into the ring and hands each buffer to the
// destinations until the end of the source, a read error, or no
// destination left. It returns the end of the source as read (-1: none).
func (l *fanLoop) run() int64 {
	n := len(l.bufs)
	l.reads = make(chan *fanChunk, n)
	l.done = make(chan *fanChunk, n)
	l.freed = make(chan *fanChunk, n)
	l.free = append([][]byte(nil), l.bufs...)
	l.pending = make(map[int]*fanChunk, n)
	l.readers.Add(l.depth)
	for range l.depth {
		go func() {
			defer l.readers.Done()
			for ch := range l.reads {
				l.read(ch)
				l.done <- ch
			}
		}()
	}
	for _, d := range l.live {
		d.queue = make(chan *fanChunk, n)
		l.writers.Add(1)
		go d.run(l)
	}
	for {
		for l.issue() {
		}
		if (l.halted || l.allIssued) && l.inflight == 0 && len(l.pending) == 0 && l.outstanding == 0 {
			break
		}
		if len(l.free) == 0 && !l.halted && !l.allIssued && l.waitSince.IsZero() {
			l.startWait()
		}
		select {
		case ch := <-l.done:
			l.inflight--
			l.readBytes += int64(ch.n)
			l.pending[ch.seq] = ch
			l.dispatch()
		case ch := <-l.freed:
			l.outstanding--
			if i := slices.Index(l.out, ch); i >= 0 {
				l.out = slices.Delete(l.out, i, i+1)
			}
			l.free = append(l.free, ch.buf)
			l.paced()
			if p := l.f.opts.Progress; p != nil {
				p.Add(ch.hole + int64(ch.n))
			}
		}
	}
	close(l.reads)
	l.readers.Wait()
	for _, d := range l.live {
		close(d.queue)
	}
	l.writers.Wait()
	if l.readErr == nil && l.end < 0 && l.walk && l.allIssued {
		// The data ended before the size: a trailing hole.
		l.end = max(l.prevEnd, l.f.srcSt.Size)
	}
	if l.end > l.prevEnd && l.readErr == nil {
		hole := l.end - l.prevEnd
		l.holes += hole
		if k := l.f.hash; k != nil {
			k.hole(l.prevEnd, hole)
		}
		if p := l.f.opts.Progress; p != nil {
			p.Add(hole)
		}
	}
	l.finish()
	l.releaseRing()
	return l.end
}

// issue hands the next chunk to the readers; false when none is due.
func (l *fanLoop) issue() bool {
	if l.halted || l.allIssued || len(l.free) == 0 || l.inflight >= l.depth {
		return false
	}
	f := l.f
	size := f.srcSt.Size
	switch {
	case !l.pos:
		// A stream: one read at a time, each where the last ended.
		if len(l.pending) > 0 {
			return false
		}
	case l.walk && !l.inExtent:
		data := l.nextData
		if data < 0 {
			off, err := retry(&f.calls, func() (int64, error) { return seek(f.src, l.next, unix.SEEK_DATA) })
			if err == unix.ENXIO {
				l.allIssued = true
				return false
			}
			if err != nil {
				l.fatal(&Error{Strategy: l.mech(), Side: SideRead, Offset: l.next, Err: syscallErr("lseek", err)})
				return false
			}
			data = off
		}
		l.nextData = -1
		hole, err := retry(&f.calls, func() (int64, error) { return seek(f.src, data, unix.SEEK_HOLE) })
		if err == unix.ENXIO {
			// It shrank below data since SEEK_DATA answered.
			l.allIssued = true
			return false
		}
		if err != nil {
			l.fatal(&Error{Strategy: l.mech(), Side: SideRead, Offset: data, Err: syscallErr("lseek", err)})
			return false
		}
		l.next, l.extEnd, l.inExtent = data, hole, true
		if hole >= size {
			l.extEnd = -1 // the last extent: until EOF, in case it grew
		}
		l.extents++
	}
	if l.pos && l.extEnd < 0 && l.next > max(size, l.high) {
		// Past the end the source had: the chunk before says whether
		// it goes on.
		return false
	}
	buf := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	want := len(buf)
	if l.extEnd >= 0 {
		want = int(min(int64(want), l.extEnd-l.next))
	}
	ch := &fanChunk{seq: l.seq, buf: buf, off: l.next, want: want}
	l.seq++
	if l.pos {
		l.next += int64(want)
		if l.extEnd >= 0 && l.next >= l.extEnd {
			l.inExtent = false
		}
	}
	l.inflight++
	l.reads <- ch
	return true
}

// fatal ends the read with err, which every destination then reports.
func (l *fanLoop) fatal(err error) {
	if l.readErr == nil {
		l.readErr = err
	}
	l.halted = true
}

// mech is the strategy the copy is reported as: Direct for O_DIRECT
// reads, else RW.
func (l *fanLoop) mech() Strategy {
	if l.direct {
		return Direct
	}
	return RW
}

// read fills ch from the source: with O_DIRECT where the read is direct
// and ch is aligned (the unaligned rest, and a read the filesystem
// refuses, buffered), else through the page cache; a stream until the
// buffer is full or its end.
func (l *fanLoop) read(ch *fanChunk) {
	f := l.f
	var calls int64
	defer func() { l.readCallsShared.Add(calls) }()
	if !l.pos {
		for ch.n < ch.want {
			m, err := retry(&calls, func() (int, error) { return read(f.src, ch.buf[ch.n:ch.want]) })
			if err != nil {
				ch.rerr = syscallErr("read", err)
				return
			}
			if m == 0 {
				ch.eof = true
				return
			}
			ch.n += m
		}
		return
	}
	if l.direct && !l.noDirect.Load() && ch.off%int64(l.srcAlign) == 0 {
		dc := chunk{buf: ch.buf, off: ch.off, want: ch.want}
		f.sys.directRead(l.dsrc, &dc, l.srcAlign)
		calls += dc.calls
		switch {
		case dc.rerr != nil && refusal(dc.rerr):
			// EINVAL: not with O_DIRECT after all; buffered from now.
			l.noDirect.Store(true)
		case dc.rerr != nil:
			ch.rerr = dc.rerr
			return
		default:
			ch.n = dc.n
		}
		if ch.n == ch.want {
			return
		}
		if ch.off+int64(ch.n) >= f.srcSt.Size && dc.rerr == nil {
			ch.eof = true
			return
		}
	}
	m, err := f.sys.preadFullCount(f.src, ch.buf[ch.n:ch.want], ch.off+int64(ch.n), &calls)
	ch.n += m
	if err != nil {
		ch.rerr = syscallErr("pread64", err)
		return
	}
	ch.eof = ch.n < ch.want
}

// dispatch hands the chunks read, in order, to every destination still
// written and to the hash.
func (l *fanLoop) dispatch() {
	f := l.f
	for {
		ch, ok := l.pending[l.dispatched]
		if !ok {
			return
		}
		delete(l.pending, l.dispatched)
		l.dispatched++
		if l.halted {
			// After the end, an error, or the last destination failed:
			// read for nothing.
			l.free = append(l.free, ch.buf)
			continue
		}
		if ch.rerr != nil {
			l.fatal(&Error{Strategy: l.mech(), Side: SideRead, Offset: ch.off + int64(ch.n), Err: ch.rerr})
			l.free = append(l.free, ch.buf)
			continue
		}
		if ch.eof {
			l.halted = true
			l.end = ch.off + int64(ch.n)
		}
		l.high = max(l.high, ch.off+int64(ch.n))
		if !l.pos {
			l.next = ch.off + int64(ch.n)
		}
		if ch.n == 0 {
			l.free = append(l.free, ch.buf)
			continue
		}
		l.targets = l.targets[:0]
		for _, d := range l.live {
			if !d.failed.Load() {
				l.targets = append(l.targets, d)
			}
		}
		if len(l.targets) == 0 {
			l.halted = true
			l.end = -1
			l.free = append(l.free, ch.buf)
			continue
		}
		ch.hole = ch.off - l.prevEnd
		l.holes += ch.hole
		refs := len(l.targets)
		if f.hash != nil {
			refs++
			if ch.hole > 0 {
				f.hash.hole(l.prevEnd, ch.hole)
			}
		}
		l.prevEnd = ch.off + int64(ch.n)
		ch.refs.Store(int32(refs))
		l.outstanding++
		l.out = append(l.out, ch)
		for _, d := range l.targets {
			d.queue <- ch
		}
		if f.hash != nil {
			f.hash.buffer(ch.off, ch.buf[:ch.n], func([]byte) { l.release(ch) })
		}
	}
}

// release lets go of ch for one of its holders; the last one gives its
// buffer back.
func (l *fanLoop) release(ch *fanChunk) {
	if ch.refs.Add(-1) == 0 {
		l.freed <- ch
	}
}

// startWait notes that the readers wait for a buffer, and which
// destinations hold the oldest one handed out: those that have not
// written it yet, when another has (all of them behind is no one
// destination pacing the others; the hash holding it, neither).
func (l *fanLoop) startWait() {
	l.waitSince = time.Now()
	l.holders = l.holders[:0]
	if len(l.out) == 0 {
		return
	}
	oldest := l.out[0]
	end := oldest.off + int64(oldest.n)
	ahead := false
	for _, d := range l.live {
		if d.failed.Load() {
			continue
		}
		if d.written.Load() < end {
			l.holders = append(l.holders, d)
		} else {
			ahead = true
		}
	}
	if !ahead {
		l.holders = l.holders[:0]
	}
}

// paced charges the time the readers waited for a free buffer to the
// destinations that held it (startWait): the slowest, which the others
// wait for.
func (l *fanLoop) paced() {
	if l.waitSince.IsZero() {
		return
	}
	waited := time.Since(l.waitSince)
	l.waitSince = time.Time{}
	for _, d := range l.holders {
		d.c.res.Paced += waited
	}
}

// run is a destination's writer: it writes the chunks in order, and after
// a failure only lets go of them.
func (d *fanDest) run(l *fanLoop) {
	defer l.writers.Done()
	for ch := range d.queue {
		if !d.failed.Load() {
			if err := d.write(ch); err != nil {
				d.fail(err)
			}
		}
		l.release(ch)
	}
}

// write writes the chunk's bytes at and after the destination's start,
// with O_DIRECT where it can, and accounts for them (hooks, checkpoints).
func (d *fanDest) write(ch *fanChunk) error {
	c := d.c
	from, to := max(ch.off, c.opts.Start), ch.off+int64(ch.n)
	if to <= from {
		return nil
	}
	b := ch.buf[from-ch.off : to-ch.off]
	if d.direct {
		k := 0
		if from%int64(d.align) == 0 && (from-ch.off)%int64(d.memAl) == 0 {
			k = len(b) / d.align * d.align
		}
		if k > 0 {
			if err := c.odirect().directDst(true); err != nil {
				return err
			}
			st := &c.res.Stats[Direct]
			w := 0
			for w < k {
				m, err := retry(&st.Calls, func() (int, error) { return c.sys.pwrite(c.dst, b[w:k], from+int64(w)) })
				if err == nil && m == 0 {
					err = errShortWrite
				}
				if err != nil {
					if w > 0 {
						c.odirect().directWritten(from, int64(w), true)
					}
					return &Error{Strategy: Direct, Side: SideWrite, Offset: from + int64(w), Err: syscallErr("pwrite64", err)}
				}
				w += m
			}
			c.odirect().directWritten(from, int64(k), true)
			if c.hookErr != nil {
				return &Error{Strategy: Direct, Side: SideWrite, Offset: from + int64(k), Err: c.hookErr, final: true}
			}
		}
		if k < len(b) {
			if err := c.odirect().directDst(false); err != nil {
				return err
			}
			if err := c.writeAll(&c.res.Stats[Direct], Direct, b[k:], from+int64(k)); err != nil {
				return err
			}
			c.odirect().directWritten(from+int64(k), int64(len(b)-k), false)
			if c.hookErr != nil {
				return &Error{Strategy: Direct, Side: SideWrite, Offset: to, Err: c.hookErr, final: true}
			}
		}
		d.written.Store(to)
		return nil
	}
	st := &c.res.Stats[RW]
	var err error
	if c.zeros {
		err = c.fast().writeSparse(b, from)
	} else {
		err = c.writeAll(st, RW, b, from)
	}
	if err != nil {
		return err
	}
	st.Bytes += int64(len(b))
	c.res.Bytes += int64(len(b))
	c.reached(to)
	if c.hookErr != nil {
		return &Error{Strategy: RW, Side: SideWrite, Offset: to, Err: c.hookErr, final: true}
	}
	if c.ckpt != nil {
		if err := c.checkpointStep(RW, to); err != nil {
			return err
		}
	}
	d.written.Store(to)
	return nil
}

// finish ends each destination's part: O_DIRECT cleared, its size set
// where it ends in a hole, its result filled in.
func (l *fanLoop) finish() {
	for _, d := range l.live {
		c := d.c
		if d.direct {
			if err := c.odirect().directDst(false); err != nil && d.err == nil {
				d.fail(err)
			}
		}
		c.res.Strategy = l.mech()
		if !d.direct {
			c.res.Strategy = RW
		}
		if c.res.Reflink == DebugNo && l.f.opts.Reflink != ReflinkNever {
			c.res.Reflink = DebugNo
		}
		c.res.Offload = DebugAvoided
		c.res.SharedRead = Stat{Bytes: l.readBytes, Calls: l.readCalls + l.readCallsShared.Load()}
		c.res.Holes += l.holes
		c.res.Extents = l.extents
		switch {
		case d.err != nil:
			continue
		case l.readErr != nil:
			d.fail(l.readErr)
			continue
		case l.end < 0:
			continue
		}
		c.res.Size = l.end
		if c.dstRegular && max(c.dstEnd, c.dstSize) != l.end {
			if err := retryErr(c.other(), func() error { return ftruncate(c.dst, l.end) }); err != nil {
				d.fail(&Error{Strategy: c.res.Strategy, Side: SideWrite, Offset: l.end, Err: syscallErr("ftruncate", err)})
			}
		}
	}
}

// releaseRing gives back the ring and the O_DIRECT descriptor.
func (l *fanLoop) releaseRing() {
	if l.dsrc >= 0 {
		closeFd(l.dsrc)
		l.dsrc = -1
	}
	if l.ring != nil {
		putRing(l.ring)
		l.ring = nil
	}
}
