// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"runtime"
	"sync/atomic"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// One read, many writes (CopyMany): a source copied into several
// destinations is read once, into a ring of buffers that every destination
// drains, each at its own pace; a buffer is read again only once every
// destination wrote it, so the slowest destination paces the others (the
// ring is bounded: a run holds no more buffers whatever the number of
// destinations). Each destination is a copy of its own in every other way:
// its own descriptor, hooks (writeback, --resume's checkpoints), O_DIRECT
// where it takes it, holes kept, its own error. A destination that fails is
// dropped: its writer stops writing and lets go of the buffers it holds,
// and the others go on.
//
// Where the kernel can make a destination without reading the source (a
// reflink: FICLONE on xfs or btrfs, the source's filesystem), it does so
// first, and that destination is done; the others share the read.
// copy_file_range is not used beside the shared read: where it does not
// share extents it reads the source again inside the kernel, from the
// device for a cold source (docs/measurements.md, "One read, many
// writes"). A source already in the page cache, or small, is not read
// into the ring: the kernel copies it into each destination on its own
// (faneach.go).
//
// The read is the direct pipeline's where Auto would pick Direct for one
// destination (a large source mostly not cached, ring and alignment as in
// direct.go): several O_DIRECT reads in flight, and O_DIRECT writes on the
// destinations that take them (the others write buffered from the same
// ring). Otherwise the source is read through the page cache. --checksum's
// hash is given each buffer once, as it is read, whatever the number of
// destinations.

// Dest is one destination of CopyMany and the options that are its own
// (the copier.Options fields of the same names, which CopyMany ignores;
// CheckpointFlush, given the descriptor, serves them all).
type Dest struct {
	File          sysx.Descriptor
	Stat          *unix.Stat_t // DestStat
	Written       func(off, n int64) error
	WrittenDirect func(off, n int64) error
	Start         int64
	Checkpoint    func(off int64) error
	Reached       *atomic.Int64
}

// options are o with d's own fields.
func (d *Dest) options(o Options) Options {
	o.DestStat, o.Written, o.WrittenDirect = d.Stat, d.Written, d.WrittenDirect
	o.Start, o.Checkpoint, o.Reached = d.Start, d.Checkpoint, d.Reached
	return o
}

// ErrStreamOnce: a forced strategy other than rw, direct and reflink copies
// each destination on its own, which a stream source (a FIFO, a character
// device) cannot give twice.
var ErrStreamOnce = errors.New("a stream is read only once, and this strategy copies one destination at a time")

// Sizes of the shared read.
const (
	// fanReadDepth is how many reads of the ring's buffers may be in
	// flight at once: direct (the device wants several requests at once,
	// as for one destination) and buffered.
	fanReadDepthDirect   = 4
	fanReadDepthBuffered = 2
	// fanMinChunk is the smallest buffer of a ring made of the rw loop's
	// buffer when no direct ring is free (-j).
	fanMinChunk = 64 << 10
	fanHeapBufs = 4
)

// CopyMany copies src into every destination of dsts, reading src once
// (see above), and returns each destination's result and error, in order.
// opts apply to every destination as to Copy, but for the fields that
// Dest holds; Progress is given the bytes that reached every destination
// still being written; Hash (whose state covers the source's bytes below
// the smallest Start) is given every byte once, and is complete when
// CopyMany returns (HashLater is ignored). With one destination it is Copy.
func CopyMany(src sysx.Descriptor, dsts []Dest, opts Options) ([]Result, []error) {
	defer runtime.KeepAlive(src)
	defer runtime.KeepAlive(dsts)
	opts.HashLater = false
	if len(dsts) == 1 {
		r, err := Copy(dsts[0].File, src, dsts[0].options(opts))
		return []Result{r}, []error{err}
	}
	f := &fan{opts: opts, sys: opts.sysOf(), srcD: src, src: int(src.Fd())}
	f.init(dsts)
	f.run()
	res := make([]Result, len(f.dests))
	errs := make([]error, len(f.dests))
	for i, d := range f.dests {
		res[i], errs[i] = d.c.result, d.err
	}
	return res, errs
}

// fan is one CopyMany.
type fan struct {
	opts  Options
	sys   *sysCalls
	srcD  sysx.Descriptor
	src   int
	srcSt unix.Stat_t
	err   error // the source's error: every destination fails with it
	dests []*fanDest
	start int64 // the smallest Start: where the read begins
	hash  *hasher
	// hashed: a destination copied alone took the hash (Copy's own).
	hashed bool
	calls  int64 // the shared read's own calls (fstat, lseek)
}

// fanDest is one destination: a copier of its own for the write side (its
// descriptor, options, result, checkpoints, O_DIRECT state).
type fanDest struct {
	file    sysx.Descriptor
	c       *copier
	err     error
	done    bool // nothing more to write: cloned, or failed
	queue   chan *fanChunk
	failed  atomic.Bool
	written atomic.Int64 // the destination holds the source's bytes below it
	direct  bool         // O_DIRECT writes
	align   int          // O_DIRECT offset alignment
	memAl   int          // O_DIRECT memory alignment
	shared  bool         // takes part in the shared read
}

func (f *fan) init(dsts []Dest) {
	o := f.opts
	if o.SourceStat != nil {
		f.srcSt = *o.SourceStat
	} else if err := retryErr(&f.calls, func() error { return fstat(f.src, &f.srcSt) }); err != nil {
		f.err = &Error{Side: SideRead, Err: syscallErr("fstat", err)}
	}
	f.start = -1
	for i := range dsts {
		d := &dsts[i]
		do := d.options(o)
		do.Progress, do.Hash, do.HashSnapshots, do.HashWaiting = nil, nil, nil, nil
		do.SourceStat = &f.srcSt
		c := &copier{opts: do, sys: f.sys, src: f.src, dst: int(d.File.Fd()), ckpt: newCheckpointer(do)}
		c.res = &c.result
		c.dio.src = -1
		fd := &fanDest{file: d.File, c: c}
		f.dests = append(f.dests, fd)
		if f.err != nil {
			fd.fail(f.err)
			continue
		}
		if err := c.statFiles(); err != nil {
			fd.fail(err)
			continue
		}
		start := d.Start
		if start < 0 || start > 0 && (c.srcSt.Mode&unix.S_IFMT != unix.S_IFREG || !c.dstRegular || start > c.srcSt.Size) {
			fd.fail(&Error{Side: SideBoth, Err: errBadStart})
			continue
		}
		if start > 0 {
			c.dstEnd, c.dstSize = start, start
			c.reached(start)
		}
		fd.written.Store(start)
		if f.start < 0 || start < f.start {
			f.start = start
		}
	}
	if f.start < 0 {
		f.start = 0
	}
	if o.Progress != nil && f.start > 0 {
		o.Progress.Add(f.start)
	}
}

// startHash starts feeding Options.Hash from the start of the read.
func (f *fan) startHash() {
	o := f.opts
	f.hash = newHasher(o, f.start)
	if f.hash != nil {
		f.hash.src = f.src
		if o.HashSnapshots != nil {
			o.HashSnapshots(f.hash.snapshot)
		}
	}
}

func (d *fanDest) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.done = true
	d.failed.Store(true)
}

// live returns the destinations still to be written.
func (f *fan) live() []*fanDest {
	var l []*fanDest
	for _, d := range f.dests {
		if !d.done {
			l = append(l, d)
		}
	}
	return l
}

func (f *fan) run() {
	o := f.opts
	var end int64 = -1 // the source's end as read; -1: not read
	switch {
	case f.err != nil:
	case o.Strategy == Reflink || o.Strategy == Auto && o.Reflink == ReflinkAlways:
		f.cloneAll(true)
	case o.Strategy == Auto:
		f.cloneAll(false)
		end = f.shared()
	case o.Strategy == RW || o.Strategy == Direct:
		end = f.shared()
	default:
		f.oneByOne()
	}
	if f.hash == nil && !f.hashed && f.err == nil && f.anyDone() {
		// Bytes the shared read did not give the hash (every
		// destination cloned or copied on its own): read them now.
		if f.startHash(); f.hash != nil {
			f.hash.bg = f.srcSt.Size >= hashBackgroundBytes
			f.hash.add(hashSpan{kind: spanRead, off: f.start, n: f.srcSt.Size - f.start})
		}
	}
	if f.hash != nil {
		hs, herr := f.hash.finish(f.err != nil || !f.anyDone())
		for _, d := range f.dests {
			d.c.res.Hashed = true
			d.c.res.Hash = hs
			if d.err == nil && herr != nil {
				d.err = herr
			}
		}
	}
	if end < 0 && o.Progress != nil {
		if size := f.srcSt.Size; size > f.start && f.anyDone() {
			o.Progress.Add(size - f.start)
		}
	}
	for _, d := range f.dests {
		if cerr := d.c.checkpointEnd(); d.err == nil && cerr != nil {
			d.err = cerr
		}
	}
}

// anyDone reports whether a destination got the copy.
func (f *fan) anyDone() bool {
	for _, d := range f.dests {
		if d.err == nil {
			return true
		}
	}
	return false
}

// cloneAll clones the source into every destination that can share its
// extents (same filesystem, xfs or btrfs): those are done. forced: a
// destination that cannot fails (--reflink=always, --strategy=reflink).
func (f *fan) cloneAll(forced bool) {
	o := f.opts
	for _, d := range f.live() {
		c := d.c
		regular := c.dstRegular && f.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
		share := o.Reflink != ReflinkNever && o.Sparse != SparseNever && regular
		if !share {
			if forced {
				d.fail(&Error{Strategy: Reflink, Side: SideBoth, Err: syscallErr("ioctl(FICLONE)", unix.EINVAL), Refused: true})
			}
			continue
		}
		if err := o.Memo.lookup(f.srcSt.Dev, c.dstSt.Dev, Reflink); err != nil && !forced {
			c.res.Reflink = DebugUnsupported
			continue
		}
		start := c.opts.Start
		n, _, err := c.fast().reflink(start, -1)
		if err == nil {
			c.res.Strategy = Reflink
			c.res.Stats[Reflink].Bytes += n
			c.res.Bytes += n
			c.res.Size = start + n
			c.res.Offload = DebugAvoided
			c.reached(start + n)
			d.written.Store(start + n)
			d.done = true
			continue
		}
		c.res.Reflink = DebugUnsupported
		ce, _ := asType[*Error](err)
		if forced || ce == nil || !refusal(ce.Err) {
			if forced && ce != nil && refusal(ce.Err) {
				ce.Refused = true
			}
			c.res.Strategy = Reflink
			d.fail(err)
			continue
		}
		o.Memo.remember(f.srcSt.Dev, c.dstSt.Dev, Reflink, ce.Err)
		c.res.Fallbacks = append(c.res.Fallbacks, Fallback{From: Reflink, To: RW, Offset: start, Err: ce.Err})
	}
}

// oneByOne copies the source into each destination on its own, with the
// forced strategy (copy_file_range, sendfile, splice), which moves the
// bytes in the kernel and so cannot share a read. The hash reads the
// source once more afterwards (run).
func (f *fan) oneByOne() {
	stream := !isPositional(f.srcSt.Mode)
	first := true
	for _, d := range f.live() {
		if stream && !first {
			d.fail(&Error{Strategy: f.opts.Strategy, Side: SideRead, Err: ErrStreamOnce})
			continue
		}
		o := d.c.opts
		if first {
			o.Progress = f.opts.Progress
		}
		first = false
		r, err := Copy(d.file, f.srcD, o)
		d.c.result = r
		d.done = true
		if err != nil {
			d.fail(err)
		}
	}
}
