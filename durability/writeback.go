// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/sysx"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Pipelined writeback. Left alone, the kernel starts writing a file's dirty
// pages back only when they are dirty_expire_centisecs old or the dirty
// pages pass dirty_background_ratio (a share of memory), so `cp && sync`
// first fills the page cache at memory speed and only then writes
// everything at device speed: the two phases add up. With
// sync_file_range(SYNC_FILE_RANGE_WRITE) on each window just written the
// device is busy from the first window on, and the final fdatasync finds at
// most a few windows still in flight: the copy takes about as long as the
// device needs to write the file.
//
// Waiting (WAIT_BEFORE|WRITE|WAIT_AFTER) for the window that is depth
// windows back keeps depth windows queued at the device while bounding the
// dirty and under-writeback memory this copy holds to about
// (depth+1)*window, so a big copy neither floods the dirty limits (which
// throttle every writer on the machine in balance_dirty_pages) nor, with
// --nocache, keeps its pages cached: a window waited for is clean and
// POSIX_FADV_DONTNEED drops it.
//
// sync_file_range writes no metadata and flushes no disk cache ("This
// system call is extremely dangerous ... there are no guarantees that the
// data will be available after a crash", sync_file_range(2)): it only moves
// the work earlier. Durability still comes from the final fdatasync/fsync
// and the directory fsync.

// Background flushes (off by default, see below). On a disk with a
// volatile write cache the data written back by sync_file_range is in the
// device's cache, and the fdatasync's cache flush (REQ_PREFLUSH) is what
// waits for the media (figures: docs/measurements.md). With
// Options.FlushEvery a goroutine runs fdatasync on the file every so many
// bytes started (one at a time, while the copy continues), and the final
// flush finds only the tail still in the cache. Each of these flushes is a
// first flush of new data, not a retry: the first one that fails ends the
// pipeline, and Commit reports its error without flushing again.

// Window, depth and flush interval, chosen from --sync=data sweeps
// (integration_test/durabench -sweep; figures in docs/measurements.md).
// The window is half of copy_file_range's call, so that each call starts
// two windows, and depth*window stays within what --nocache may leave
// cached (docs/measurements.md). Background flushes
// stall the reads of a cold source behind the device's cache flush: they
// gain a little with a warm source and lose more with a cold one, so by
// default they run only when the source is in the page cache
// (sourceCached, asked once per file with cachestat(2)).
// Options.FlushEvery sets the interval (or, < 0, turns them off) whatever
// the source.
const (
	DefaultWritebackWindow = 32 << 20
	DefaultWritebackDepth  = 4
	// noCacheWritebackDepth is the default depth with --nocache: what the
	// copy may hold cached at once is then at most (depth+1) windows, the
	// copier's call not yet reported and the source's readahead; depth 2
	// keeps that within what --nocache allows (docs/measurements.md).
	noCacheWritebackDepth = 2
	// DefaultFlushEvery is how many bytes are started between background
	// fdatasyncs (--sync modes and --verify) when the source is not known
	// to be cached: none, see above.
	DefaultFlushEvery = -1
)

// cachedFlushEvery is the background flush interval for a source that is
// in the page cache (sourceCached): see above.
const cachedFlushEvery = 128 << 20

// The writeback in flight is bounded by time as well as bytes. A fatal
// signal removes the temporary file without flushing it, but the kernel,
// when it frees the unlinked file at exit, still waits for every page of
// it that is under writeback, which on a slow device took seconds after
// Ctrl-C (docs/measurements.md). So with the default window and depth, the pipeline
// starts small and sizes itself from the rate at which the device
// completes the windows: at most about inflightTime of it in flight
// (window = half of that, within [minWindow, DefaultWritebackWindow]; depth
// = what fits, within [1, the default depth]). A device that writes 1 GB/s
// gets the defaults after its first windows. What the kernel's own flusher
// puts under writeback (a copy without --sync or --nocache, once the
// dirty pages pass dirty_background_ratio) is outside fastcp's hands.
const (
	inflightTime = 250 * time.Millisecond
	minWindow    = 2 << 20
	// startWindow and startDepth are used until the first window
	// completes: 16 MiB in flight before the device's speed is known.
	startWindow = 8 << 20
	startDepth  = 1
)

// sourceCached reports whether the regular file fd is all but entirely in
// the page cache (cachestat(2), Linux 6.5), so that copying it reads
// nothing from a disk that background flushes could stall. Where the call
// is refused (older kernels: ENOSYS; a file the caller neither owns nor may
// write: EPERM) the answer is no.
func (sys *sysCalls) sourceCached(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size == 0 {
		return false
	}
	cached, err := sys.cachestatPages(fd, st.Size)
	if err != nil {
		return false
	}
	pages := (st.Size + int64(os.Getpagesize()) - 1) / int64(os.Getpagesize())
	return cached >= pages-pages/64
}

// cachestatPages is how many pages of the first size bytes of fd are in the
// page cache (cachestat(2), Linux 6.5).
func (sys *sysCalls) cachestatPages(fd int, size int64) (int64, error) {
	var cs unix.Cachestat_t
	if err := sys.cachestat(uint(fd), &unix.CachestatRange{Off: 0, Len: uint64(size)}, &cs, 0); err != nil {
		return 0, err
	}
	return int64(cs.Cache), nil
}

// CachedBytes reports how many bytes of the first size bytes of f are in
// the page cache (cachestat(2); ENOSYS before Linux 6.5, EPERM for a file
// the caller may neither write nor owns), in whole pages, at most size.
func CachedBytes(f sysx.Descriptor, size int64) (int64, error) {
	defer runtime.KeepAlive(f)
	pages, err := defaultSys.cachestatPages(int(f.Fd()), size)
	if err != nil {
		return 0, os.NewSyscallError("cachestat", err)
	}
	return min(pages*int64(os.Getpagesize()), size), nil
}

// span is a byte range of the destination.
type span struct{ off, n int64 }

// writeback is the state of the pipeline of one destination.
type writeback struct {
	active bool
	fd     int
	sys    *sysCalls    // the destination's
	src    *sourceCache // the source, for --nocache drop-behind; nil when unknown
	drop   bool
	window int64
	depth  int

	lo, hi   int64  // written, write-out not started yet
	inflight []span // write-out started, not waited for; oldest first

	err         error // a writeback error (EIO, ENOSPC): final, Commit reports it
	errOp       Op    // the call that returned err
	unsupported error // why the pipeline stopped: the kernel or file refuses the call

	flushEvery int64      // bytes started between background fdatasyncs; 0: none
	nextFlush  int64      // started count at which the next one is due
	flushing   bool       // a background fdatasync is running
	flushDone  chan error // its result
	flushes    int

	calls   int
	started int64
	waited  time.Duration

	// With the default window and depth, both follow the device's
	// completion rate (see inflightTime).
	adaptive   bool
	maxWindow  int64
	maxDepth   int
	firstStart time.Time // when the first window was started
	completed  int64     // bytes of windows waited for
}

func (w *writeback) init(d *Destination, o Options) {
	w.fd, w.sys = d.fd, d.sys
	// --verify needs the data on the device before it reads it back, so
	// it writes back behind the copy as the --sync modes do, and it drops
	// the windows written back: the read-back must not find them cached,
	// and evicting them here, while the copy waits for the device, costs
	// less than one POSIX_FADV_DONTNEED over the whole file afterwards.
	w.drop = o.NoCache || o.Verify
	w.active = (o.Sync != SyncNone || o.NoCache || o.Verify) && d.syncable()
	w.window = o.WritebackWindow
	if w.window <= 0 {
		w.window = DefaultWritebackWindow
	}
	w.depth = o.WritebackDepth
	if w.depth <= 0 {
		w.depth = DefaultWritebackDepth
		if o.NoCache {
			w.depth = noCacheWritebackDepth
		}
	}
	if o.WritebackWindow <= 0 && o.WritebackDepth <= 0 {
		w.adaptive, w.maxWindow, w.maxDepth = true, w.window, w.depth
		w.window, w.depth = min(w.window, startWindow), min(w.depth, startDepth)
	}
	w.src = d.srcCache
	if o.Sync != SyncNone || o.Verify {
		w.flushEvery = o.FlushEvery
		if w.flushEvery == 0 {
			w.flushEvery = DefaultFlushEvery
			if o.Source != nil && w.sys.sourceCached(int(o.Source.Fd())) {
				w.flushEvery = cachedFlushEvery
			}
		}
		w.flushEvery = max(w.flushEvery, 0)
		w.nextFlush = w.flushEvery
		w.flushDone = make(chan error, 1)
	}
}

// written records that [off, off+n) was just written and starts the
// write-out of every full window.
func (w *writeback) written(off, n int64) {
	if !w.active || n <= 0 {
		return
	}
	switch {
	case w.hi == w.lo:
		w.lo = off
	case off != w.hi:
		// Not where the last write ended (a hole was skipped): start
		// what is pending and begin a new run here.
		w.start(w.lo, w.hi-w.lo)
		w.lo = off
	}
	w.hi = off + n
	for w.active && w.hi-w.lo >= w.window {
		w.start(w.lo, w.window)
		w.lo += w.window
	}
}

// start starts the write-out of [off, off+n) and waits for the windows
// older than depth.
func (w *writeback) start(off, n int64) {
	if !w.active {
		return
	}
	if !w.call(off, n, sfrStart) {
		return
	}
	if w.firstStart.IsZero() {
		w.firstStart = time.Now()
	}
	w.started += n
	w.inflight = append(w.inflight, span{off, n})
	if w.drop && w.src != nil {
		// The source's pages of this range were only read: clean, so
		// they can go at once, but those cached before the copy.
		w.src.drop(off, n)
	}
	if w.flushEvery > 0 && w.started >= w.nextFlush {
		w.backgroundFlush()
	}
	for w.active && len(w.inflight) > w.depth {
		s := w.inflight[0]
		w.inflight = w.inflight[1:]
		t := time.Now()
		ok := w.call(s.off, s.n, sfrWait)
		w.waited += time.Since(t)
		if ok && w.drop {
			w.sys.fadvise(w.fd, s.off, s.n, unix.FADV_DONTNEED)
		}
		if ok {
			w.completed += s.n
			w.resize()
		}
	}
}

// resize sets the window and depth from the rate at which the windows
// completed so far: about inflightTime of the device's writing in flight.
func (w *writeback) resize() {
	if !w.adaptive {
		return
	}
	el := time.Since(w.firstStart)
	if el <= 0 {
		return
	}
	budget := int64(float64(w.completed) * float64(inflightTime) / float64(el))
	win := min(max(budget/2, minWindow), w.maxWindow)
	w.window = win &^ (1<<20 - 1)
	w.depth = int(min(max(budget/w.window, 1), int64(w.maxDepth)))
}

// backgroundFlush starts an fdatasync of the file in a goroutine, unless
// the previous one is still running (then this one is skipped: the next
// will cover its data).
func (w *writeback) backgroundFlush() {
	if w.flushing {
		select {
		case err := <-w.flushDone:
			w.flushing = false
			if w.flushFailed(err) {
				return
			}
		default:
			return
		}
	}
	// On a descriptor of its own, so that Abort can close the file
	// without waiting for the flush (which may take seconds on a slow
	// device): the flush then ends on its own and closes its duplicate.
	fd, err := w.sys.dupFd(w.fd)
	if err != nil {
		return // no descriptor to spare: the final flush does the work
	}
	w.flushing = true
	w.flushes++
	w.nextFlush = w.started + w.flushEvery
	call, done := w.sys.fdatasync, w.flushDone
	go func() {
		err := ignoringEINTR(func() error { return call(fd) })
		unix.Close(fd)
		done <- err
	}()
}

// abandon stops the pipeline without waiting for anything: for Abort. A
// background fdatasync still running finishes on its own descriptor.
func (w *writeback) abandon() {
	w.active = false
	w.inflight = nil
	w.flushing = false
}

// waitFlush waits for the background fdatasync, if one is running, and
// returns the pipeline's error, if any. The file must not be closed before.
func (w *writeback) waitFlush() error {
	if w.flushing {
		w.flushFailed(<-w.flushDone)
		w.flushing = false
	}
	return w.err
}

// flushFailed records a background fdatasync's error as final.
func (w *writeback) flushFailed(err error) bool {
	if err == nil {
		return false
	}
	if w.err == nil {
		w.err, w.errOp = err, OpFdatasync
	}
	w.active = false
	w.inflight = nil
	return true
}

// drain starts what is pending and waits for everything in flight: for
// --nocache without a --sync flush, so that the last windows can be
// dropped too. It returns a writeback error, if one happened.
func (w *writeback) drain() error {
	if w.active && w.hi > w.lo {
		w.start(w.lo, w.hi-w.lo)
		w.lo = w.hi
	}
	for w.active && len(w.inflight) > 0 {
		s := w.inflight[0]
		w.inflight = w.inflight[1:]
		w.call(s.off, s.n, sfrWait)
	}
	return w.waitFlush()
}

// call makes one sync_file_range call and reports whether it succeeded. A
// failure ends the pipeline: an unsupported call quietly (the final flush
// does all the work, as without the pipeline), any other error for good
// (Commit reports it).
func (w *writeback) call(off, n int64, flags int) bool {
	w.calls++
	err := ignoringEINTR(func() error { return w.sys.syncFileRange(w.fd, off, n, flags) })
	if err == nil {
		return true
	}
	w.active = false
	w.inflight = nil
	if refused(err) {
		w.unsupported = err
	} else if w.err == nil {
		w.err, w.errOp = err, OpSyncFileRange
	}
	return false
}

// refused reports whether sync_file_range's error means "not here" rather
// than "the write-out failed".
func refused(err error) bool {
	switch err {
	case unix.ESPIPE:
		// Not a regular file, block device, directory or symlink: a FIFO,
		// socket or character device (fs/sync.c: ksys_sync_file_range).
		return true
	case unix.ENOSYS:
		// No such system call: a seccomp filter (some container
		// runtimes), gVisor, or a kernel built without it.
		return true
	case unix.EINVAL:
		// Flags or range refused: our flags and ranges are valid, so
		// this is an emulation or filesystem that does not take them.
		return true
	case unix.EOPNOTSUPP:
		// Not implemented by the filesystem or emulation layer.
		return true
	}
	// EIO, ENOSPC, EDQUOT...: the wait found a write-out that failed.
	// The file's error cursor has moved past it, so it must not be lost.
	return false
}
