// SPDX-License-Identifier: MIT

// Package copier moves the bytes of one file into another, in kernel space
// where the kernel allows it: FICLONE reflinks, copy_file_range, O_DIRECT
// reads and writes (direct.go), sendfile, splice through a pipe, and a
// read/write loop as the last resort. Offsets are
// explicit, so a mechanism refused part-way hands over to the next one at the
// exact offset it reached; holes are walked with SEEK_DATA/SEEK_HOLE.
package copier

import (
	"fmt"
	"hash"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Strategy names a copy mechanism.
type Strategy int

// The strategies, in the order --strategy lists them. Auto tries them in
// this order, except that it puts Direct right after Reflink when it picks
// it (a large source mostly not in the page cache, see direct.go) and
// leaves it out otherwise.
const (
	Auto Strategy = iota
	Reflink
	CopyFileRange
	Direct
	Sendfile
	Splice
	RW
	numStrategies
)

var strategyNames = [numStrategies]string{"auto", "reflink", "copy_file_range", "direct", "sendfile", "splice", "rw"}

func (s Strategy) String() string {
	if s < 0 || s >= numStrategies {
		return fmt.Sprintf("Strategy(%d)", int(s))
	}
	return strategyNames[s]
}

// Strategies returns the concrete strategies in the order --strategy lists
// them.
func Strategies() []Strategy {
	return []Strategy{Reflink, CopyFileRange, Direct, Sendfile, Splice, RW}
}

// StrategyNames returns every value --strategy accepts, "auto" first.
func StrategyNames() []string { return strategyNames[:] }

// ReflinkMode says when extents may be shared with the source (cp's --reflink).
type ReflinkMode int

// Reflink modes.
const (
	ReflinkAuto   ReflinkMode = iota // clone when the filesystem can, else copy
	ReflinkAlways                    // clone or fail
	ReflinkNever                     // never share extents (also avoids copy_file_range, which may clone)
)

// ReflinkNames lists the --reflink values, indexed by ReflinkMode.
var ReflinkNames = []string{"auto", "always", "never"}

func (m ReflinkMode) String() string { return nameOf(ReflinkNames, int(m), "ReflinkMode") }

// SparseMode says how holes are handled (cp's --sparse).
type SparseMode int

// Sparse modes.
const (
	SparseAuto   SparseMode = iota // keep the source's holes (SEEK_DATA/SEEK_HOLE)
	SparseAlways                   // also turn runs of zero blocks read by the rw loop into holes
	SparseNever                    // write every byte, holes included
)

// SparseNames lists the --sparse values, indexed by SparseMode.
var SparseNames = []string{"auto", "always", "never"}

func (m SparseMode) String() string { return nameOf(SparseNames, int(m), "SparseMode") }

// nameOf is names[i], or TYPE(i) for a value out of range.
func nameOf(names []string, i int, typ string) string {
	if i < 0 || i >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, i)
	}
	return names[i]
}

// Counter receives progress: bytes of the source accounted for (copied, or
// skipped as a hole). Implementations must be safe for concurrent use.
type Counter interface {
	Add(n int64)
}

// Options tune one copy.
type Options struct {
	Strategy   Strategy    // Auto, or one forced strategy (refusal is an error)
	Reflink    ReflinkMode // ReflinkAlways behaves as a forced Reflink
	Sparse     SparseMode
	BufferSize int     // rw loop buffer; 0 picks DefaultBufferSize aligned to st_blksize
	Progress   Counter // may be nil
	// Written, when set, is called after bytes [off, off+n) of the destination
	// were written by a data-moving call (not for clones, which write nothing).
	// The durability layer uses it to start writeback behind the copy; an
	// error it returns (a failed writeback) ends the copy with that error.
	Written func(off, n int64) error
	// SyncWrites says the destination was opened with O_SYNC or O_DSYNC:
	// every write waits for the device. copy_file_range, sendfile and
	// splice then write (and wait) a 64 KiB pipe buffer at a time, so Auto
	// goes from reflink straight to the rw loop, whose large writes wait
	// far less often.
	SyncWrites bool
	// SourceStat, when set, is an fstat of src the caller just made; the
	// copier then does not make its own.
	SourceStat *unix.Stat_t
	// DestStat, likewise, is an fstat of dst made since it was opened.
	DestStat *unix.Stat_t
	// NoCache (--nocache) makes Auto prefer Direct for any source of
	// directNoCacheMinBytes or more, cached or not: nothing of the copy
	// then enters the page cache.
	NoCache bool
	// Flush says the destination is flushed (fdatasync/fsync) when the
	// copy ends: the copy waits for the device anyway, so Auto picks
	// Direct for a cold source from DirectMinBytes on; without it only
	// from the dirty page limit on. Checkpoints (Checkpoint) count as
	// flushes: they fdatasync the destination every GiB. With Flush the
	// copy's end waits for a checkpoint still running, whose error the
	// final flush could otherwise miss.
	Flush bool
	// SourceCached, when set, tells how many bytes of the source are in
	// the page cache (cachestat(2)); Auto asks it only for a source large
	// enough for Direct. Without it (or when it fails) Auto never picks
	// Direct unless NoCache asks for it.
	SourceCached func() (int64, error)
	// WrittenDirect, when set, is called instead of Written for bytes that
	// Direct wrote with O_DIRECT: they are on their way to the device
	// already, with no dirty page left to write back.
	WrittenDirect func(off, n int64) error
	// Memo, when set, remembers mechanisms a filesystem pair refused, so a
	// run over many files does not pay for the same refusal on every file.
	Memo *Memo

	// Start, when > 0, continues an interrupted copy (--resume): src and
	// dst are regular files, dst already holds src's bytes [0, Start) and
	// has the size Start, and every strategy, extent walk and hole starts
	// at Start. The Progress counter is given Start first.
	Start int64
	// Checkpoint, when set, is called with an offset below which the
	// destination holds the source's data on stable storage (fdatasync
	// returned): at least every CheckpointBytes bytes written and every
	// CheckpointInterval (see checkpoint.go). An error it returns ends the
	// copy with that error.
	Checkpoint func(off int64) error
	// CheckpointFlush makes the data written through a descriptor of the
	// destination durable (fdatasync, EINTR retried: durability's
	// FlushCheckpoint); it runs on a goroutine of its own, on a duplicate
	// of dst's descriptor. Required with Checkpoint or HashCheckpoint; its
	// error is final: the copy ends with it, and the offset it would have
	// covered is never recorded.
	CheckpointFlush    func(fd int) error
	CheckpointBytes    int64         // 0: DefaultCheckpointBytes
	CheckpointInterval time.Duration // 0: DefaultCheckpointInterval
	// Reached, when set, is kept at the offset below which the destination
	// holds the source's data (written, not necessarily durable), after
	// every call: a signal handler reads it to record a last checkpoint.
	Reached *atomic.Int64

	// Hash, when set (--checksum), is given every byte of the source
	// from Start on, once and in order, in the same pass as the copy
	// (hash.go); its state must cover [0, Start) already. The copy
	// returns once it is complete. Result.Hash says what it cost.
	Hash hash.Hash
	// HashSnapshotEvery, when > 0, makes the hash keep its state at the
	// latest multiple of it that it passed; HashSnapshots, when set, is
	// given at the start of the copy a function that returns that state
	// (Off -1 when there is none yet), safe to call from any goroutine,
	// during the copy and after it: --resume's checkpoints record it.
	HashSnapshotEvery int64
	HashSnapshots     func(latest func() HashState)
	// HashCheckpoint, when set with Hash, records checkpoints instead of
	// Checkpoint, each with the hash's latest snapshot when its fdatasync
	// began (Off -1: none yet), which is at most the offset recorded.
	HashCheckpoint func(off int64, h HashState) error
	// HashWaiting, when set, is called once the bytes are all copied if
	// the hash still has some to read or hash: the copy then waits for
	// it (the progress bar says so).
	HashWaiting func()
	// HashLater makes a successful copy return without waiting for the
	// hash to catch up with it (what the kernel moved may still be being
	// read again): Result.HashWait waits, and must be called, before the
	// source is closed. The caller can then flush the destination
	// meanwhile.
	HashLater bool

	now func() time.Time // the checkpoints' clock, for tests
	sys *sysCalls        // nil: defaultSys; a test's own calls
}

// Debug values for GNU cp's --debug line.
type Debug int

// Debug values, printed as cp prints them.
const (
	DebugNo Debug = iota
	DebugYes
	DebugAvoided
	DebugUnsupported
)

func (d Debug) String() string {
	return [...]string{"no", "yes", "avoided", "unsupported"}[d]
}

// SparseDetection is how holes were found (cp --debug's "sparse detection").
type SparseDetection int

// Sparse detection kinds.
const (
	DetectNone SparseDetection = iota
	DetectZeros
	DetectSeekHole
	DetectSeekHoleZeros
)

func (d SparseDetection) String() string {
	return [...]string{"no", "zeros", "SEEK_HOLE", "SEEK_HOLE + zeros"}[d]
}

// Stat counts what one strategy did.
type Stat struct {
	Bytes int64 // bytes it moved into the destination
	Calls int64 // system calls it made (EINTR retries included)
}

// Fallback records one hand-over from a refused strategy to the next.
type Fallback struct {
	From, To Strategy
	Offset   int64 // where the next strategy resumed
	Err      error // why: the errno (or ErrZeroReturn), wrapped with the call's name
	Memo     bool  // skipped because the same filesystem pair refused it before
}

// Result describes a finished (or failed) copy.
type Result struct {
	Bytes     int64 // data bytes written or cloned into the destination (holes not counted)
	Size      int64 // the destination's final size (the end of the source as read)
	Strategy  Strategy
	Stats     [numStrategies]Stat // indexed by Strategy; Stats[Auto] counts the engine's own calls (fstat, lseek, ftruncate, pipe setup)
	Fallbacks []Fallback
	Offload   Debug // copy_file_range: yes, unsupported, avoided, no
	Reflink   Debug // clone: yes, unsupported, no
	Sparse    SparseDetection
	Extents   int   // data extents copied in SEEK_HOLE mode
	Holes     int64 // bytes left as holes in the destination
	// Checkpoints counts the checkpoints started (fdatasyncs, Stats[Auto]
	// counts them too); Checkpoint is the last offset recorded.
	Checkpoints int
	Checkpoint  int64
	Direct      DirectInfo
	// Shared, for a copy of CopyMany's shared read, is how many
	// destinations shared it (0: a copy of its own); SharedRead is what
	// that read did (the same in each); Paced is how long the read waited
	// for this destination, the slowest, to let go of a buffer.
	Shared     int
	SharedRead Stat
	Paced      time.Duration
	// Each, for a copy of CopyMany that the kernel made on its own from
	// the page cache (faneach.go), is how many destinations were copied
	// so (0: none).
	Each int
	// Hashed says Options.Hash was given the bytes; Hash what it cost.
	Hashed bool
	Hash   HashStats
	// HashWait, with Options.HashLater and a successful copy, waits for
	// the hash to be complete (abandon: stops it, the copy is given up)
	// and returns what it cost (Hash is then zero) and the error that
	// stopped it. It must be called once.
	HashWait func(abandon bool) (HashStats, error)
}

// Syscalls is the total number of system calls the copy made.
func (r *Result) Syscalls() int64 {
	var n int64
	for _, s := range r.Stats {
		n += s.Calls
	}
	return n
}

// StatOf returns the counters of one strategy (Auto: the engine's own calls).
func (r *Result) StatOf(s Strategy) Stat { return r.Stats[s] }
