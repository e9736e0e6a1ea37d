// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"hash"
	"sync"
	"time"

	"fastcp/checksum"
	"fastcp/internal/sysx"
)

// --checksum: Options.Hash is given every byte of the source once, in
// order, in the same pass as the copy.
//
//   - Bytes that pass through a buffer of the copier (the rw loop's, the
//     direct pipeline's ring, the pipe that splice fills, which tee(2)
//     duplicates for the hash) are hashed from that buffer: the bytes
//     that were written are the bytes hashed.
//   - Bytes the kernel moves without showing them (a reflink,
//     copy_file_range, sendfile) are read again from the source, through
//     the page cache where the copy just put them (or where they still
//     are), by a goroutine that follows the copy, never ahead of it, so
//     the reading and hashing overlap the copy. The change detection that
//     guards the copy (the source's size and mtime after it, in cp) comes
//     after the hash is complete, so it guards the hash too.
//   - A hole is hashed as the zeros it reads as, from one shared buffer of
//     zeros, without a read.
//
// One hash per read: the hash is fed where the source's bytes come in,
// never where they go out, so a copy that writes one read to several
// destinations hashes each buffer once.
//
// The pieces come in order: a copy moves from its start to its end, a
// sparse source's holes between its extents, and a strategy that falls
// back hands over at the exact offset it reached. So the hash is a queue
// of spans, each one either read again, zeros, or a buffer, consumed in
// order by one goroutine; a buffer hashed in the copier's own goroutine
// (the rw loop's, which is reused at once) first waits for the queue to
// drain.

// hashSpanKind says where a span's bytes come from.
type hashSpanKind int

const (
	spanRead   hashSpanKind = iota // read again from the source
	spanZeros                      // a hole: zeros
	spanBuffer                     // a buffer of the copy's, released once hashed
)

// hashSpan is bytes [off, off+n) of the source.
type hashSpan struct {
	kind    hashSpanKind
	off, n  int64
	buf     []byte
	release func([]byte)
}

// hashBackgroundBytes is the size from which a source's bytes moved by
// the kernel are hashed by a goroutine beside the copy; a smaller one is
// read and hashed after it, in the copier's goroutine, which costs less
// than a goroutine's start and the hand-overs for a few KiB.
const hashBackgroundBytes = 4 << 20

// hashReadBytes is the size of the reads of bytes the kernel moved.
const hashReadBytes = 1 << 20

// ErrHashShort is a source that ended, when read again for the hash,
// before the end of the bytes the copy moved: it shrank meanwhile.
var ErrHashShort = errors.New("the source ended before the bytes copied were hashed")

// hasher feeds Options.Hash.
type hasher struct {
	sys *sysCalls
	h   hash.Hash
	src int
	bg  bool // spans are hashed by the goroutine

	mu      sync.Mutex
	cond    sync.Cond // on mu
	queue   []hashSpan
	busy    bool  // the goroutine is hashing a span taken off the queue
	running bool  // the goroutine runs
	closing bool  // no more spans: the goroutine ends once the queue is empty
	end     int64 // the end of the last span queued or hashed
	next    int64 // hashed below next
	err     error // a read's error: nothing more is hashed

	buf     []byte
	pool    *sync.Pool // where buf goes back
	stats   HashStats
	waiting func() // Options.HashWaiting

	// snap, with snapEvery > 0, is the hash's state at the latest
	// multiple of snapEvery passed (checkpoints of --resume).
	snapEvery int64
	snapLock  sync.Mutex // guards snap: whoever hashes takes it, with or without mu
	snap      HashState
}

// HashStats says what the hash of one copy cost.
type HashStats struct {
	Bytes  int64         // bytes hashed (the source's, holes included)
	Reread int64         // bytes read again from the source (moved by the kernel)
	Zeros  int64         // bytes of holes hashed as zeros
	Tee    int64         // bytes read from the duplicate of splice's pipe
	Time   time.Duration // time spent reading again and hashing
	Wait   time.Duration // time the copy waited for the hash (at its end, or before hashing a buffer)
}

// HashState is a hash's saved state after Off bytes (checksum.SaveState).
type HashState struct {
	Off   int64
	State []byte
}

func newHasher(o Options, start int64) *hasher {
	if o.Hash == nil {
		return nil
	}
	k := &hasher{sys: o.sysOf(), h: o.Hash, end: start, next: start, snapEvery: o.HashSnapshotEvery, waiting: o.HashWaiting}
	k.cond.L = &k.mu
	if k.snapEvery > 0 && start%k.snapEvery == 0 {
		k.takeSnapshot()
	}
	return k
}

// add queues span s (which starts at the end of the last one).
func (k *hasher) add(s hashSpan) {
	if s.n <= 0 {
		if s.release != nil {
			s.release(s.buf)
		}
		return
	}
	k.mu.Lock()
	if k.err != nil {
		k.mu.Unlock()
		if s.release != nil {
			s.release(s.buf)
		}
		return
	}
	if s.off != k.end {
		// A bug, not the source: the copy's pieces are contiguous.
		k.err = errors.New("checksum: bytes out of order")
	}
	if n := len(k.queue); n > 0 && s.kind == spanRead && k.queue[n-1].kind == spanRead {
		k.queue[n-1].n += s.n
	} else {
		k.queue = append(k.queue, s)
	}
	k.end = s.off + s.n
	if k.bg && !k.running {
		k.running = true
		go k.run()
	}
	k.cond.Broadcast()
	k.mu.Unlock()
}

// moved queues bytes [off, off+n) that the kernel moved: read again.
// From hashBackgroundBytes on, by the goroutine.
func (k *hasher) moved(c *copier, off, n int64) {
	if !k.bg && c.srcSt.Size >= hashBackgroundBytes {
		k.bg = true
	}
	k.add(hashSpan{kind: spanRead, off: off, n: n})
}

// hole queues n bytes of a hole at off.
func (k *hasher) hole(off, n int64) { k.add(hashSpan{kind: spanZeros, off: off, n: n}) }

// buffer queues buf (the source's bytes at off) for the goroutine, which
// calls release(buf) once it hashed it.
func (k *hasher) buffer(off int64, buf []byte, release func([]byte)) {
	k.mu.Lock()
	if !k.bg {
		k.bg = true
	}
	k.mu.Unlock()
	k.add(hashSpan{kind: spanBuffer, off: off, n: int64(len(buf)), buf: buf, release: release})
}

// data hashes buf, the source's bytes at off, now, in the caller's
// goroutine: what is queued before it is hashed first.
func (k *hasher) data(off int64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	if err := k.drain(); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if off != k.end {
		k.err = errors.New("checksum: bytes out of order")
		return k.err
	}
	t := time.Now()
	k.write(buf)
	k.stats.Time += time.Since(t)
	k.end = off + int64(len(buf))
	return nil
}

// drain waits until every span queued is hashed: by the goroutine, or
// here when there is none. It returns the error that stopped the hash.
func (k *hasher) drain() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.running {
		for len(k.queue) > 0 && k.err == nil {
			k.hashSpan(k.take())
		}
		return k.err
	}
	if len(k.queue) > 0 || k.busy {
		t := time.Now()
		for (len(k.queue) > 0 || k.busy) && k.err == nil {
			k.cond.Wait()
		}
		k.stats.Wait += time.Since(t)
	}
	return k.err
}

// errAbandoned stops the hash of a copy that failed.
var errAbandoned = errors.New("checksum: the copy failed")

// finish hashes what is left (abandon: nothing more, the copy failed) and
// ends the goroutine; it returns the error that stopped the hash, and what
// the hash cost.
func (k *hasher) finish(abandon bool) (HashStats, error) {
	var err error
	if abandon {
		k.mu.Lock()
		if k.err == nil {
			k.err = errAbandoned
		}
		k.mu.Unlock()
	} else {
		if k.waiting != nil {
			k.mu.Lock()
			behind := len(k.queue) > 0 || k.busy
			k.mu.Unlock()
			if behind {
				k.waiting()
			}
		}
		err = k.drain()
	}
	k.mu.Lock()
	k.closing = true
	k.cond.Broadcast()
	for k.running {
		k.cond.Wait()
	}
	// Buffers the goroutine never took (after an error) go back.
	for _, s := range k.queue {
		if s.release != nil {
			s.release(s.buf)
		}
	}
	k.queue = nil
	if err == nil {
		err = k.err
	}
	k.mu.Unlock()
	if k.buf != nil {
		b := k.buf
		k.pool.Put(&b)
	}
	k.buf = nil
	return k.stats, err
}

// hashBufs are the buffers bytes are read again into, and
// hashSmallBufs those of the files of hashSmallBytes at most, read
// again after their copy: a tree of small files would otherwise
// allocate (and collect) a buffer per file, several times the memory
// the rest of each file's copy allocates.
var (
	hashBufs = sync.Pool{New: func() any {
		b := make([]byte, hashReadBytes)
		return &b
	}}
	hashSmallBufs = sync.Pool{New: func() any {
		b := make([]byte, hashSmallBytes)
		return &b
	}}
)

// hashSmallBytes is the size of the buffers of small files' reads.
const hashSmallBytes = 64 << 10

// run is the goroutine: it hashes the spans in order as they come.
func (k *hasher) run() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		for len(k.queue) == 0 && !k.closing {
			k.cond.Wait()
		}
		if len(k.queue) == 0 || k.err != nil {
			// Stopped by an error: the buffers queued go back
			// unhashed, so that their copy can end.
			for _, s := range k.queue {
				if s.release != nil {
					s.release(s.buf)
				}
			}
			k.queue = nil
			k.running = false
			k.cond.Broadcast()
			return
		}
		s := k.take()
		k.busy = true
		k.hashSpan(s)
		k.busy = false
		k.cond.Broadcast()
	}
}

// take takes the next span off the queue; k.mu is held. A span to read
// again is taken a read at a time, so that a copy that fails or waits
// for the queue to drain waits for one read at most.
func (k *hasher) take() hashSpan {
	s := k.queue[0]
	if s.kind == spanRead && s.n > hashReadBytes {
		k.queue[0].off += hashReadBytes
		k.queue[0].n -= hashReadBytes
		s.n = hashReadBytes
		return s
	}
	k.queue = k.queue[1:]
	return s
}

// hashSpan hashes s; k.mu is held, and is let go while a span is read and
// hashed (only the one goroutine that took s off the queue touches the
// hash meanwhile).
func (k *hasher) hashSpan(s hashSpan) {
	k.mu.Unlock()
	t := time.Now()
	var err error
	switch s.kind {
	case spanZeros:
		k.zeros(s.n)
		k.stats.Zeros += s.n
	case spanBuffer:
		k.write(s.buf)
	case spanRead:
		err = k.reread(s.off, s.n)
		k.stats.Reread += s.n
	}
	k.stats.Time += time.Since(t)
	if s.release != nil {
		s.release(s.buf)
	}
	k.mu.Lock()
	if err != nil && k.err == nil {
		k.err = err
	}
}

// write hashes b, taking the snapshots due on the way.
func (k *hasher) write(b []byte) {
	for len(b) > 0 {
		n := len(b)
		if k.snapEvery > 0 {
			n = int(min(int64(n), k.snapEvery-k.next%k.snapEvery))
		}
		k.h.Write(b[:n])
		k.next += int64(n)
		k.stats.Bytes += int64(n)
		b = b[n:]
		if k.snapEvery > 0 && k.next%k.snapEvery == 0 {
			k.takeSnapshot()
		}
	}
}

// zeros hashes n zero bytes.
func (k *hasher) zeros(n int64) {
	if k.snapEvery == 0 {
		checksum.Zeros(k.h, n)
		k.next += n
		k.stats.Bytes += n
		return
	}
	for n > 0 {
		m := min(n, k.snapEvery-k.next%k.snapEvery)
		checksum.Zeros(k.h, m)
		k.next += m
		k.stats.Bytes += m
		n -= m
		if k.next%k.snapEvery == 0 {
			k.takeSnapshot()
		}
	}
}

// reread reads bytes [off, off+n) of the source again and hashes them.
// (With --nocache, durability drops what the copy brought into the page
// cache at the end: these pages are among them.)
func (k *hasher) reread(off, n int64) error {
	if k.buf == nil {
		k.pool = &hashBufs
		if !k.bg && n <= hashSmallBytes {
			// A small file's few KiB: not a MiB each (the pools are
			// emptied by the collections, which come more often in
			// a tree of small files).
			k.pool = &hashSmallBufs
		}
		k.buf = *k.pool.Get().(*[]byte)
	}
	for n > 0 {
		want := min(n, int64(len(k.buf)))
		m, err := k.sys.preadFull(k.src, k.buf[:want], off)
		if m > 0 {
			k.write(k.buf[:m])
			off += int64(m)
			n -= int64(m)
		}
		if err != nil {
			return &Error{Side: SideRead, Offset: off, Err: syscallErr("pread64", err), final: true}
		}
		if int64(m) < want {
			return &Error{Side: SideRead, Offset: off, Err: ErrHashShort, final: true}
		}
	}
	return nil
}

// takeSnapshot saves the hash's state at next. It is called by whoever
// hashes (the goroutine, or the copier's with the queue drained), which
// alone touches the hash then; the snapshot is published under snapLock.
func (k *hasher) takeSnapshot() {
	st, err := checksum.SaveState(k.h)
	if err != nil {
		return
	}
	s := HashState{Off: k.next, State: st}
	k.snapLock.Lock()
	k.snap = s
	k.snapLock.Unlock()
}

// snapshot returns the latest snapshot (Off -1: none yet).
func (k *hasher) snapshot() HashState {
	k.snapLock.Lock()
	defer k.snapLock.Unlock()
	if k.snap.State == nil {
		return HashState{Off: -1}
	}
	return k.snap
}

// preadFull reads len(b) bytes at off, or fewer at the end of the file,
// with the copy's pread.
func (s *sysCalls) preadFull(fd int, b []byte, off int64) (int, error) {
	return sysx.PreadFull(s.pread, fd, b, off)
}
