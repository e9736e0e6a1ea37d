// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"fastcp/internal/sysx"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultBufferSize is the rw loop's buffer when --buffer-size is not given,
// the smallest that was as fast as any bigger one, while bigger ones now
// and then made a copy several times slower (docs/measurements.md). It also
// keeps the memory of -j N small.
const DefaultBufferSize = 512 << 10

// Copy copies src into dst and reports what it did. dst must be empty (a new
// or truncated regular file) or a stream or device written in place, with
// its file position at 0 (as any file freshly opened without O_APPEND); src is
// read until end of file, whatever its st_size says (files in /proc and /sys
// lie), but for the call that would only say so (endsHere). On error, Result still holds the counters up to the failure and the
// error is an *Error naming the strategy, the call and the errno.
func Copy(dst, src sysx.Descriptor, opts Options) (Result, error) {
	// An *os.File must outlive the raw calls on its descriptor.
	defer runtime.KeepAlive(src)
	defer runtime.KeepAlive(dst)
	c := copiers.Get().(*copier)
	*c = copier{opts: opts, sys: opts.sysOf(), src: int(src.Fd()), dst: int(dst.Fd()), ckpt: newCheckpointer(opts)}
	c.res = &c.result
	defer func() {
		*c = copier{}
		copiers.Put(c)
	}()
	c.dio.src = -1
	c.hash = newHasher(opts, opts.Start)
	if c.hash != nil {
		c.hash.src = c.src
		if opts.HashSnapshots != nil {
			opts.HashSnapshots(c.hash.snapshot)
		}
	}
	err := c.run()
	if derr := c.odirect().directEnd(); derr != nil && err == nil {
		err = derr
	}
	switch k := c.hash; {
	case k == nil:
	case err == nil && opts.HashLater:
		// The caller waits later, after the flush it starts meanwhile;
		// only reads of the source can still be queued (the buffers of
		// rw, splice and direct are hashed before they come back).
		c.res.Hashed = true
		c.res.HashWait = k.finish
	default:
		// The hash is complete before the copy returns: the caller's
		// check that the source did not change covers it.
		hs, herr := k.finish(err != nil)
		c.res.Hash, c.res.Hashed = hs, true
		if err == nil {
			err = herr
		}
	}
	if cerr := c.checkpointEnd(); err == nil {
		err = cerr
	}
	c.fast().closePipe()
	c.fast().releaseBuffer()
	// The descriptors are used as plain ints above: keep the files (and
	// their finalizers) away until every call is done.
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return c.result, err
}

// copiers are the copiers of copies that ended, for the next: a tree of
// small files would otherwise allocate one (a kilobyte) a file.
var copiers = sync.Pool{New: func() any { return new(copier) }}

type copier struct {
	opts   Options
	sys    *sysCalls
	res    *Result
	result Result // what res points to

	src, dst       int
	srcSt, dstSt   unix.Stat_t
	srcPos, dstPos bool // positional (regular file, block device): explicit offsets; else a stream
	srcFIFO        bool
	dstFIFO        bool
	dstRegular     bool

	chain  []Strategy
	chainA [numStrategies]Strategy // chain's backing array: no allocation a file
	cur    int
	forced bool
	// directPending: Reflink comes first, and whether Direct follows it
	// is decided only once Reflink is refused (nextStrategy): the
	// decision asks the source's residency (cachestat walks every page
	// of it: docs/measurements.md), which a clone does not need.
	directPending bool
	seqAdvice     bool                // POSIX_FADV_SEQUENTIAL is due unless Direct is chosen
	proven        [numStrategies]bool // the strategy moved bytes of this file: a 0 return now means EOF

	zeros     bool // the rw loop turns zero blocks into holes
	blockSize int  // hole granularity: the destination's st_blksize
	bufSize   int
	buf       []byte
	zeroBlock []byte

	pipe     [2]int
	havePipe bool
	// hashPipe is where tee(2) duplicates the pipe's bytes for the hash
	// (--checksum with splice).
	hashPipe     [2]int
	haveHashPipe bool
	dstFilePos   int64 // the destination's file position (sendfile writes there)
	dstEnd       int64 // highest destination offset written
	dstSize      int64 // the size the destination was given before the copy
	hookErr      error // what the Written hook returned: ends the copy

	ckpt *checkpointer // nil: no checkpoints
	hash *hasher       // nil: no --checksum

	dio directState
}

// fastPath holds the strategies other than Direct: one system call each
// (or the rw loop), each returning what it moved, and for Reflink whether it
// handled the whole range, and the error.
type fastPath struct{ *copier }

func (c *copier) fast() fastPath { return fastPath{c} }

// directCopy is the O_DIRECT pipeline: its setup, its ring of buffers, its
// reader and writer, its end.
type directCopy struct{ *copier }

func (c *copier) odirect() directCopy { return directCopy{c} }

func isPositional(mode uint32) bool {
	t := mode & unix.S_IFMT
	return t == unix.S_IFREG || t == unix.S_IFBLK
}

func (c *copier) other() *int64 { return &c.res.Stats[Auto].Calls }

func (c *copier) run() error {
	if err := c.statFiles(); err != nil {
		return err
	}
	srcRegular := c.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
	size := c.srcSt.Size
	start := c.opts.Start
	if start < 0 || start > 0 && (!srcRegular || !c.dstRegular || start > size) {
		return &Error{Side: SideBoth, Err: fmt.Errorf("cannot continue a copy at %d: %w", start, errBadStart)}
	}
	if start > 0 {
		c.dstEnd, c.dstSize = start, start
		if c.opts.Progress != nil {
			c.opts.Progress.Add(start)
		}
		c.reached(start)
	}
	walk, first, err := c.findHoles(start, srcRegular)
	if err != nil {
		return err
	}
	c.buildChain(srcRegular && size == 0 && start == 0)
	c.seqAdvice = srcRegular && size-start >= seqAdviceMinBytes && (!c.forced || c.chain[0] != Reflink)
	if !c.directPending {
		c.adviseSequential()
	}
	if c.zeros && !c.inChain(RW) {
		// Only the rw loop sees zero blocks: a forced offload strategy
		// makes no holes of them, and --debug must not claim it does.
		c.zeros = false
		c.res.Sparse = map[SparseDetection]SparseDetection{DetectSeekHoleZeros: DetectSeekHole, DetectZeros: DetectNone}[c.res.Sparse]
	}

	// Holes are kept by not writing them. Give such a destination its
	// final size first: xfs preallocates past the end of a file that a
	// write extends, and a later write beyond the preallocation keeps it
	// inside the file as allocated blocks where the source has holes.
	// Writes below the end of file are not extended that way.
	if c.dstRegular && srcRegular && size > start && (walk || c.zeros) {
		if err := retryErr(c.other(), func() error { return ftruncate(c.dst, size) }); err != nil {
			return &Error{Strategy: c.chain[0], Side: SideWrite, Err: syscallErr("ftruncate", err)}
		}
		c.dstSize = size
	}

	var end int64
	switch {
	case walk && first < 0 && c.forced:
		// Nothing but holes: no data call would ever run, so a forced
		// strategy that cannot work here would seem to. Probe it.
		if err = c.probe(); err == nil {
			end, err = c.copyExtents(start, first, size)
		}
	case walk:
		end, err = c.copyExtents(start, first, size)
	default:
		end, _, err = c.copyRange(start, -1)
	}
	c.res.Size = end
	if err != nil {
		return err
	}
	// A trailing hole (or trailing zeros made holes) still counts in the
	// size; a source that shrank below the size set first does not.
	if c.dstRegular && max(c.dstEnd, c.dstSize) != end {
		if err := retryErr(c.other(), func() error { return ftruncate(c.dst, end) }); err != nil {
			return &Error{Strategy: c.chain[c.cur], Side: SideWrite, Offset: end, Err: syscallErr("ftruncate", err)}
		}
	}
	return nil
}

// statFiles looks at both files (or takes the caller's stats) and sizes the
// copy's blocks and buffer.
func (c *copier) statFiles() error {
	if c.opts.SourceStat != nil {
		c.srcSt = *c.opts.SourceStat
	} else if err := retryErr(c.other(), func() error { return fstat(c.src, &c.srcSt) }); err != nil {
		return &Error{Side: SideRead, Err: syscallErr("fstat", err)}
	}
	if c.opts.DestStat != nil {
		c.dstSt = *c.opts.DestStat
	} else if err := retryErr(c.other(), func() error { return fstat(c.dst, &c.dstSt) }); err != nil {
		return &Error{Side: SideWrite, Err: syscallErr("fstat", err)}
	}
	srcType, dstType := c.srcSt.Mode&unix.S_IFMT, c.dstSt.Mode&unix.S_IFMT
	c.srcPos, c.dstPos = isPositional(c.srcSt.Mode), isPositional(c.dstSt.Mode)
	c.srcFIFO, c.dstFIFO = srcType == unix.S_IFIFO, dstType == unix.S_IFIFO
	c.dstRegular = dstType == unix.S_IFREG

	c.blockSize = int(c.dstSt.Blksize)
	if c.blockSize <= 0 || c.blockSize > 1<<20 {
		c.blockSize = 4096
	}
	c.bufSize = c.opts.BufferSize
	if c.bufSize <= 0 {
		c.bufSize = alignUp(DefaultBufferSize, c.blockSize)
	}
	c.bufSize = min(c.bufSize, maxRWCount)
	return nil
}

// findHoles decides how the source's holes are kept: walk its extents with
// SEEK_DATA/SEEK_HOLE (walk, from the first data at or after start:
// first, -1 for none) when it looks sparse (fewer blocks than its size
// needs), as cp does, or detect zero blocks in the rw loop (a filesystem
// without SEEK_DATA, or --sparse=always).
func (c *copier) findHoles(start int64, srcRegular bool) (walk bool, first int64, err error) {
	size := c.srcSt.Size
	first = -1
	if c.opts.Sparse != SparseNever && srcRegular && c.dstRegular && size > start && c.srcSt.Blocks*512 < size {
		off, err := retry(c.other(), func() (int64, error) { return seek(c.src, start, unix.SEEK_DATA) })
		switch {
		case err == nil || err == unix.ENXIO:
			walk, first = true, off
			if err == unix.ENXIO {
				first = -1
			}
			c.res.Sparse = DetectSeekHole
		case err == unix.EINVAL || err == unix.EOPNOTSUPP:
			c.zeros = true
			c.res.Sparse = DetectZeros
		default:
			return false, -1, &Error{Side: SideRead, Err: syscallErr("lseek", err)}
		}
	}
	if c.opts.Sparse == SparseAlways && c.dstRegular {
		c.zeros = true
		if walk {
			c.res.Sparse = DetectSeekHoleZeros
		} else {
			c.res.Sparse = DetectZeros
		}
	}
	return walk, first, nil
}

// adviseSequential doubles the readahead of a buffered read of a large
// file, as cp does (with a cold source the read is most of the copy's
// time), once it is known that Direct will not read it. Advice: an error
// changes nothing.
func (c *copier) adviseSequential() {
	if !c.seqAdvice || c.inChain(Direct) {
		return
	}
	c.seqAdvice = false
	_, _ = retry(c.other(), func() (struct{}, error) { return struct{}{}, c.sys.fadvise(c.src, 0, 0, unix.FADV_SEQUENTIAL) })
}

// nextStrategy moves on to the strategy after the current one, refused.
// When that is Reflink and Direct was left to decide (directPending), it
// decides now, and Direct, if chosen, comes next.
func (c *copier) nextStrategy() {
	if c.directPending && c.chain[c.cur] == Reflink {
		c.directPending = false
		if c.odirect().chooseDirect(true) {
			c.chain = slices.Insert(c.chain, c.cur+1, Direct)
		}
		c.adviseSequential()
	}
	c.cur++
}

// buildChain decides which strategies may run, in order, and what cp's
// --debug line says about the ones left out.
func (c *copier) buildChain(empty bool) {
	o := c.opts
	c.res.Reflink, c.res.Offload = DebugNo, DebugNo
	c.chain = c.chainA[:0]
	switch {
	case o.Strategy != Auto:
		c.forced = true
		c.chain = append(c.chain, o.Strategy)
		if o.Strategy == Direct {
			c.res.Direct.Choice = DirectForced
		}
	case o.Reflink == ReflinkAlways:
		c.forced = true
		c.chain = append(c.chain, Reflink)
	case empty:
		// st_size 0: an empty file or a pseudo file that lies about its
		// size. Either way only reading until EOF tells; offload calls
		// would each return 0 and fall back.
		c.chain = append(c.chain, RW)
	default:
		regular := c.dstRegular && c.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
		// --sparse=never writes every zero: a clone or copy_file_range
		// could share extents or punch holes, so cp avoids both.
		share := o.Reflink != ReflinkNever && o.Sparse != SparseNever && regular
		if share {
			c.chain = append(c.chain, Reflink)
			c.directPending = true // share implies regular
		} else if c.odirect().chooseDirect(regular) {
			c.chain = append(c.chain, Direct)
		}
		if !c.zeros && !o.SyncWrites {
			// copy_file_range may share extents (xfs, btrfs, NFS): cp
			// avoids it under --reflink=never, and so do we.
			if share {
				c.chain = append(c.chain, CopyFileRange)
			}
			if o.Hash == nil || c.srcPos {
				// (--checksum reads again what sendfile moved, which
				// a stream cannot give twice.)
				c.chain = append(c.chain, Sendfile)
			}
			c.chain = append(c.chain, Splice)
		}
		c.chain = append(c.chain, RW)
	}
	if !c.inChain(CopyFileRange) && (o.Reflink == ReflinkNever || o.Sparse == SparseNever || c.zeros || o.SyncWrites) {
		c.res.Offload = DebugAvoided
	}
	c.res.Strategy = c.chain[0]
}

func (c *copier) inChain(s Strategy) bool {
	for _, x := range c.chain {
		if x == s {
			return true
		}
	}
	return false
}

// copyExtents copies the data extents of a sparse source from off on (data
// is the first at or after it), leaving holes as holes, and returns the end
// of the source as read.
func (c *copier) copyExtents(off, data, size int64) (int64, error) {
	for data >= 0 {
		hole, err := retry(c.other(), func() (int64, error) { return seek(c.src, data, unix.SEEK_HOLE) })
		if err == unix.ENXIO {
			// The file shrank below data since SEEK_DATA answered.
			return off, nil
		}
		if err != nil {
			return off, &Error{Strategy: c.chain[c.cur], Side: SideRead, Offset: data, Err: syscallErr("lseek", err)}
		}
		c.skip(off, data-off)
		length := hole - data
		last := hole >= size
		if last {
			length = -1 // the last extent runs until EOF, in case the file grew
		}
		reached, eof, err := c.copyRange(data, length)
		c.res.Extents++
		off = reached
		if err != nil {
			return off, err
		}
		if last || eof || reached < hole {
			return off, nil
		}
		data, err = retry(c.other(), func() (int64, error) { return seek(c.src, off, unix.SEEK_DATA) })
		if err == unix.ENXIO {
			break
		}
		if err != nil {
			return off, &Error{Strategy: c.chain[c.cur], Side: SideRead, Offset: off, Err: syscallErr("lseek", err)}
		}
	}
	c.skip(off, size-off)
	return max(off, size), nil
}

// probe makes the forced strategy's call once, moving nothing, so that a
// kernel or filesystem that refuses it says so: a whole-file FICLONE (which
// for a file of holes is the whole copy), or a zero-length copy_file_range,
// sendfile or splice (the kernel checks the files before the length).
func (c *copier) probe() error {
	s := c.chain[0]
	st := &c.res.Stats[s]
	var err error
	switch s {
	case Reflink:
		_, _, err = c.fast().reflink(0, -1)
		if err != nil {
			c.res.Reflink = DebugUnsupported
		}
	case CopyFileRange:
		_, err = retry(&st.Calls, func() (int, error) { return c.sys.copyFileRange(c.src, c.srcOff(0), c.dst, c.dstOff(0), 0, 0) })
	case Sendfile:
		_, err = retry(&st.Calls, func() (int, error) { return c.sys.sendfile(c.dst, c.src, c.srcOff(0), 0) })
	case Splice:
		if err = c.fast().openPipe(); err == nil {
			_, err = retry(&st.Calls, func() (int64, error) { return c.sys.splice(c.src, c.srcOff(0), c.pipe[1], nil, 0, spliceFlags) })
		}
	case Direct:
		err = c.odirect().directSetup()
	}
	if err == nil {
		return nil
	}
	var ce *Error
	if !errors.As(err, &ce) {
		ce = &Error{Strategy: s, Side: SideBoth, Err: syscallErr(callName(s), err)}
	}
	if s != RW && refusal(ce.Err) {
		ce.Refused = true
	}
	return ce
}

// skip accounts for n bytes of hole at off, left unwritten.
func (c *copier) skip(off, n int64) {
	if n <= 0 {
		return
	}
	if c.hash != nil {
		c.hash.hole(off, n)
	}
	c.res.Holes += n
	if c.opts.Progress != nil {
		c.opts.Progress.Add(n)
	}
}

// fellBack records a fallback in the result. The first one makes room for
// every strategy left in the chain, so that a file that falls back twice
// (reflink, then copy_file_range, remembered for a tree of small files)
// allocates once.
func (c *copier) fellBack(f Fallback) {
	if c.res.Fallbacks == nil {
		c.res.Fallbacks = make([]Fallback, 0, len(c.chain))
	}
	c.res.Fallbacks = append(c.res.Fallbacks, f)
}

// copyRange copies length bytes at off (length < 0: until EOF) through the
// chain, falling back at the exact offset reached when a strategy is refused.
// It returns the offset reached and whether EOF was seen.
func (c *copier) copyRange(off, length int64) (int64, bool, error) {
	for {
		s := c.chain[c.cur]
		var n int64
		var eof bool
		err := c.opts.Memo.lookup(c.srcSt.Dev, c.dstSt.Dev, s)
		memo := err != nil && !c.forced && c.srcSt.Mode&unix.S_IFMT == unix.S_IFREG && c.dstRegular
		if memo && s != RW && c.cur+1 < len(c.chain) {
			// Refused here before, for a file like this one: what
			// was remembered is a refusal (remember), so go on to the
			// next strategy without classifying it again.
			c.noteRefusal(s)
			c.nextStrategy()
			c.fellBack(Fallback{From: s, To: c.chain[c.cur], Offset: off, Err: err, Memo: true})
			continue
		}
		if !memo {
			n, eof, err = c.runStrategy(s, off, length)
			off += n
			if length > 0 {
				length -= n
			}
		}
		if err == nil {
			c.res.Strategy = s
			return off, eof, nil
		}
		cerr, ok := asType[*Error](err)
		if !ok {
			cerr = &Error{Strategy: s, Side: SideBoth, Offset: off, Err: err}
		}
		if s == RW || cerr.final || !refusal(cerr.Err) {
			// The read/write loop is the last resort: whatever it meets
			// is the real error. --debug names the strategy it hit.
			c.res.Strategy = s
			return off, false, cerr
		}
		c.noteRefusal(s)
		if c.cur+1 >= len(c.chain) {
			// A forced strategy, or nothing left to fall back on.
			cerr.Refused = true
			return off, false, cerr
		}
		if !memo {
			c.opts.Memo.remember(c.srcSt.Dev, c.dstSt.Dev, s, cerr.Err)
		}
		c.nextStrategy()
		c.fellBack(Fallback{From: s, To: c.chain[c.cur], Offset: off, Err: cerr.Err, Memo: memo})
	}
}

func (c *copier) noteRefusal(s Strategy) {
	switch s {
	case Reflink:
		c.res.Reflink = DebugUnsupported
	case CopyFileRange:
		if c.res.Offload != DebugYes {
			c.res.Offload = DebugUnsupported
		}
	}
}

// endsHere reports whether a call that moved n of the req bytes asked for
// (req 0: a strategy whose returns say nothing of the end) and left the
// copy at off reached the end of a regular source: a short transfer that
// ends exactly at the size the source had when it was looked at. The call
// that would return 0 is then left out, one system call a small file. (The
// rw loop's reads are done by the buffer, not the file: a short one that
// stops at that size is the end too.) A source that grows meanwhile is
// caught as one that shrinks is, by the caller's fstat after the copy
// (cp.sourceChanged); a pseudo file whose st_size says nothing (0, or 4096
// in sysfs) does not stop there.
func (c *copier) endsHere(off, n, req int64) bool {
	return n > 0 && n < req && off == c.srcSt.Size && c.srcSt.Mode&unix.S_IFMT == unix.S_IFREG
}

// runStrategy moves bytes with one strategy until length is done, EOF, or
// an error. A zero return before the strategy moved any byte of this file
// is a refusal (ErrZeroReturn), except for rw, where it is EOF.
func (c *copier) runStrategy(s Strategy, off, length int64) (moved int64, eof bool, err error) {
	if s == Direct {
		// One pipeline for the whole range; it counts as it writes.
		return c.odirect().direct(off, length)
	}
	st := &c.res.Stats[s]
	for length != 0 {
		want := int64(maxRWCount)
		if length > 0 {
			want = min(want, length)
		}
		var n, req int64
		var done bool
		switch s {
		case Reflink:
			n, done, err = c.fast().reflink(off, length)
		case CopyFileRange:
			req = min(want, offloadChunkBytes)
			n, err = c.fast().copyFileRange(off, req)
		case Sendfile:
			req = min(want, offloadChunkBytes)
			n, err = c.fast().sendfile(off, req)
		case Splice:
			n, err = c.fast().splice(off, min(want, pipeBytes))
		case RW:
			req = min(want, int64(c.bufSize))
			n, err = c.fast().rw(off, req)
		}
		if n > 0 {
			if c.hash != nil && (s == Reflink || s == CopyFileRange || s == Sendfile) {
				// The kernel moved them: read again for the hash.
				c.hash.moved(c, off, n)
			}
			moved += n
			off += n
			if length > 0 {
				length -= n
			}
			st.Bytes += n
			c.res.Bytes += n
			c.proven[s] = true
			if c.opts.Progress != nil {
				c.opts.Progress.Add(n)
			}
		}
		if err == nil && c.hookErr != nil {
			err = &Error{Strategy: s, Side: SideWrite, Offset: off, Err: c.hookErr, final: true}
		}
		if n > 0 {
			c.reached(off)
			if err == nil && c.ckpt != nil {
				err = c.checkpointStep(s, off)
			}
		}
		if err != nil {
			return moved, false, err
		}
		if done || c.endsHere(off, n, req) {
			return moved, true, nil
		}
		if n == 0 {
			if s != RW {
				if why := c.zeroRefusal(s, off); why != nil {
					return moved, false, &Error{Strategy: s, Side: SideBoth, Offset: off, Err: syscallErr(callName(s), why)}
				}
			}
			return moved, true, nil
		}
	}
	return moved, false, nil
}

// zeroRefusal decides what a 0 return from an offload strategy means: nil
// for end of file, else why it is a refusal. On a strategy's first call it
// is a refusal in auto mode (the next strategy finds out cheaply whether the
// file really ends here); a forced strategy has no next one, so there it is
// EOF unless the source is a regular file known to hold more. After the
// strategy moved bytes, auto still takes a 0 before the source's size (as
// fstat said when the copy began) for a refusal: the next strategy goes on
// from there, and if the file did shrink, or is a sysfs file whose size
// says nothing, the read/write loop finds the same end. A forced strategy
// takes it for EOF, and the caller compares what was copied with the size.
func (c *copier) zeroRefusal(s Strategy, off int64) error {
	short := c.srcSt.Mode&unix.S_IFMT == unix.S_IFREG && off < c.srcSt.Size
	switch {
	case !c.proven[s] && (short || !c.forced):
		return ErrZeroReturn
	case c.proven[s] && short && !c.forced:
		return ErrEarlyZero
	}
	return nil
}

func callName(s Strategy) string {
	switch s {
	case Reflink:
		return "ioctl(FICLONE)"
	case CopyFileRange:
		return "copy_file_range"
	case Sendfile:
		return "sendfile"
	case Splice:
		return "splice"
	case Direct:
		return "pread64"
	}
	return "read"
}

// reached publishes that the destination is complete below off.
func (c *copier) reached(off int64) {
	if c.opts.Reached != nil {
		c.opts.Reached.Store(off)
	}
}

// wrote records that [off, off+n) of the destination now holds data.
func (c *copier) wrote(off, n int64) {
	if end := off + n; end > c.dstEnd {
		c.dstEnd = end
	}
	if c.opts.Written != nil && c.hookErr == nil {
		c.hookErr = c.opts.Written(off, n)
	}
}

// srcOff and dstOff give a syscall its offset argument: a pointer to a copy
// of off for positional files, nil for streams (which move by themselves).
func (c *copier) srcOff(off int64) *int64 {
	if !c.srcPos {
		return nil
	}
	return &off
}

func (c *copier) dstOff(off int64) *int64 {
	if !c.dstPos {
		return nil
	}
	return &off
}

func alignUp(n, a int) int {
	if a <= 0 {
		return n
	}
	return (n + a - 1) / a * a
}
