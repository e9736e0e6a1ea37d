// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// The temp directory of these tests is on the root filesystem (ext4 here),
// which takes O_DIRECT.

// directSizes cross every alignment edge and the ring's chunk size.
var directSizes = []int{0, 1, 511, 4095, 4096, 4097, 1<<20 + 1, 9<<20 + 3}

// statusFlags returns f's file status flags.
func statusFlags(t *testing.T, f *os.File) int {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func TestDirectCopiesExactly(t *testing.T) {
	t.Parallel()
	for _, n := range directSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			// pair writes the source just before the copy: its pages are
			// still dirty, and the O_DIRECT read must see them.
			data := randomBytes(t, n)
			dst, src := pair(t, data)
			var cnt countingCounter
			res, err := Copy(dst, src, Options{Strategy: Direct, Progress: &cnt})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if res.Strategy != Direct || len(res.Fallbacks) != 0 || res.StatOf(Direct).Bytes != int64(n) || res.Size != int64(n) {
				t.Errorf("strategy %v fallbacks %v, direct moved %d bytes, size %d; want direct, none, %d", res.Strategy, res.Fallbacks, res.StatOf(Direct).Bytes, res.Size, n)
			}
			if cnt.n != int64(n) {
				t.Errorf("progress counted %d bytes, want %d", cnt.n, n)
			}
			if statusFlags(t, dst)&unix.O_DIRECT != 0 || statusFlags(t, src)&unix.O_DIRECT != 0 {
				t.Error("O_DIRECT left set on a descriptor of the caller")
			}
			if res.Direct.OffsetAlign == 0 || res.Direct.Choice != DirectForced {
				t.Errorf("direct info %+v: want the alignment and DirectForced", res.Direct)
			}
		})
	}
}

func TestDirectPipelineKeepsOrderWithSlowReads(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Readers finish out of order (every other chunk's read is cut into
	// small aligned pieces); the writer must still write each chunk at its
	// own offset. Four chunks, two of them slow, and an unaligned tail.
	data := randomBytes(t, 4*directBufBytes+100)
	dst, src := pair(t, data)
	var calls atomic.Int64
	inject(t, &sys.pread, func(fd int, p []byte, off int64) (int, error) {
		if fd != int(src.Fd()) && (off/int64(directBufBytes))%2 == 0 && calls.Add(1)%3 != 0 {
			p = p[:min(len(p), 64<<10)]
		}
		return defaultSys.pread(fd, p, off)
	})
	if _, err := Copy(dst, src, Options{sys: sys, Strategy: Direct}); err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
}

// autoCold is what the caller passes for a cold source and a flushed copy.
func autoCold(sys *sysCalls) Options {
	return Options{sys: sys, Flush: true, SourceCached: func() (int64, error) { return 0, nil }}
}

func TestAutoPicksDirectForALargeColdSource(t *testing.T) {
	t.Parallel()
	sys := testSys()
	sources := newSourceFiles(t)
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	// A block past the threshold (and an unaligned tail more for the
	// cold case), or a byte short of it.
	large := int(sys.directMinBytes) + 4096
	for _, tc := range []struct {
		name   string
		size   int
		opts   func(*Options)
		want   DirectChoice
		direct bool
	}{
		{"cold", large + 5, func(*Options) {}, DirectChosen, true},
		{"small", int(sys.directMinBytes) - 1, func(*Options) {}, DirectSmall, false},
		{"cached", large, func(o *Options) { o.SourceCached = func() (int64, error) { return int64(2 * large / 3), nil } }, DirectCached, false},
		{"residency unknown", large, func(o *Options) { o.SourceCached = func() (int64, error) { return 0, unix.ENOSYS } }, DirectResidency, false},
		{"osync", large, func(o *Options) { o.SyncWrites = true }, DirectSyncWrites, false},
		{"sparse always", large, func(o *Options) { o.Sparse = SparseAlways }, DirectZeros, false},
		{"nocache cached", large, func(o *Options) {
			o.NoCache = true
			o.SourceCached = func() (int64, error) { return int64(large), nil }
		}, DirectNoCacheFirst, true},
		{"no flush", large, func(o *Options) { o.Flush = false }, DirectUnflushed, false},
		// --resume's checkpoints flush every GiB: the copy waits for the device.
		{"no flush, checkpoints", large, func(o *Options) {
			o.Flush = false
			o.Checkpoint, o.CheckpointFlush = func(int64) error { return nil }, testFlush
		}, DirectChosen, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, path := sources.of(t, tc.size)
			dst, src := pairFrom(t, path)
			o := autoCold(sys)
			tc.opts(&o)
			res, err := Copy(dst, src, o)
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if res.Direct.Choice != tc.want {
				t.Errorf("choice %v (%s), want %v", res.Direct.Choice, res.Direct, tc.want)
			}
			if got := res.StatOf(Direct).Bytes == int64(tc.size); got != tc.direct {
				t.Errorf("direct moved %d of %d bytes (strategy %v)", res.StatOf(Direct).Bytes, tc.size, res.Strategy)
			}
		})
	}
}

// TestAutoDirectWithoutFlush: without a flush, a cold source goes direct
// from directUnflushedMinBytes on, or from the dirty limit when that is
// smaller (but never below directMinBytes).
func TestAutoDirectWithoutFlush(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	inject(t, &sys.directUnflushedMinBytes, 4<<20)
	sources := newSourceFiles(t)
	for _, tc := range []struct {
		name      string
		size      int
		limit     int64 // what dirtyLimit says
		threshold int64
		direct    bool
	}{
		{"below the threshold", 3 << 20, 0, 4 << 20, false},
		{"at the threshold", 4 << 20, 0, 4 << 20, true},
		{"a larger dirty limit changes nothing", 3 << 20, 64 << 20, 4 << 20, false},
		{"a smaller dirty limit lowers it", 3 << 20, 2 << 20, 2 << 20, true},
		{"never below directMinBytes", 3 << 20, 1<<20 - 1, 4 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inject(t, &sys.dirtyLimit, func() int64 { return tc.limit })
			data, path := sources.of(t, tc.size)
			dst, src := pairFrom(t, path)
			o := autoCold(sys)
			o.Flush = false
			res, err := Copy(dst, src, o)
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if res.Direct.Threshold != tc.threshold {
				t.Errorf("threshold %d, want %d", res.Direct.Threshold, tc.threshold)
			}
			want := DirectUnflushed
			if tc.direct {
				want = DirectChosen
			}
			if res.Direct.Choice != want || (res.Strategy == Direct) != tc.direct {
				t.Errorf("choice %v strategy %v, want %v (%s)", res.Direct.Choice, res.Strategy, want, res.Direct)
			}
		})
	}
}

func TestAutoSkipsDirectWhenTheRingsAreTaken(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	var held []*ring
	for range maxRings() {
		r, err := sys.rings.get(false)
		if err != nil || r == nil {
			t.Fatalf("get: %v %v", r, err)
		}
		held = append(held, r)
	}
	defer func() {
		for _, r := range held {
			putRing(r)
		}
	}()
	data := randomBytes(t, 3<<20)
	dst, src := pair(t, data)
	res, err := Copy(dst, src, autoCold(sys))
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Direct.Choice != DirectBusy || res.StatOf(Direct).Calls != 0 {
		t.Errorf("choice %v, %d direct calls: want DirectBusy and none", res.Direct.Choice, res.StatOf(Direct).Calls)
	}
}

// TestDirectFaults injects each fault into an auto copy that picked Direct:
// a refusal hands over to the next strategy at the exact offset Direct
// reached, a failure ends the copy there.
func TestDirectFaults(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	chunk := int64(directBufBytes)
	// The cases' two sources; none changes them. The faults part-way
	// copy four chunks and an unaligned tail: a whole chunk past the
	// last fault (the read at 3*chunk). Those at 0 copy the least that
	// Auto takes Direct for, and an unaligned tail.
	large, small := randomBytes(t, int(4*chunk)+7), randomBytes(t, int(sys.directMinBytes)+7)
	largePath, smallPath := srcFile(t, large), srcFile(t, small)
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, src *os.File)
		fallback bool  // else a failure
		offset   int64 // where Direct stopped
		errno    error
	}{
		{"EINVAL on the O_DIRECT open", func(t *testing.T, _ *os.File) {
			inject(t, &sys.reopen, func(fd, flags int) (int, error) { return -1, unix.EINVAL })
		}, true, 0, unix.EINVAL},
		{"no /proc", func(t *testing.T, _ *os.File) {
			inject(t, &sys.reopen, func(fd, flags int) (int, error) { return -1, unix.ENOENT })
		}, true, 0, unix.ENOENT},
		{"EINVAL from F_SETFL O_DIRECT", func(t *testing.T, _ *os.File) {
			inject(t, &sys.fcntl, func(fd, cmd, arg int) (int, error) {
				if cmd == unix.F_SETFL && arg&unix.O_DIRECT != 0 {
					return 0, unix.EINVAL
				}
				return defaultSys.fcntl(fd, cmd, arg)
			})
		}, true, 0, unix.EINVAL},
		{"EINVAL on the first pread", func(t *testing.T, src *os.File) {
			inject(t, &sys.pread, func(fd int, p []byte, off int64) (int, error) {
				if fd != int(src.Fd()) {
					return 0, unix.EINVAL
				}
				return defaultSys.pread(fd, p, off)
			})
		}, true, 0, unix.EINVAL},
		{"EINVAL on the first pwrite", func(t *testing.T, src *os.File) {
			inject(t, &sys.pwrite, func(fd int, p []byte, off int64) (int, error) { return 0, unix.EINVAL })
			// The fallback (copy_file_range) does not call pwrite.
		}, true, 0, unix.EINVAL},
		{"short unaligned read part-way", func(t *testing.T, src *os.File) {
			inject(t, &sys.pread, func(fd int, p []byte, off int64) (int, error) {
				if fd != int(src.Fd()) && off == 2*chunk {
					// As if the file ended there (an O_DIRECT read of an
					// unaligned count would be refused).
					m, err := defaultSys.pread(fd, p, off)
					return min(m, 1000), err
				}
				return defaultSys.pread(fd, p, off)
			})
		}, true, 2*chunk + 1000, ErrShortRead},
		// The writes go out of order: the faults are at offsets, and what
		// counts is the prefix below them.
		{"EIO on pwrite after progress", func(t *testing.T, _ *os.File) {
			inject(t, &sys.pwrite, func(fd int, p []byte, off int64) (int, error) {
				if off == 2*chunk {
					return 0, unix.EIO
				}
				return defaultSys.pwrite(fd, p, off)
			})
		}, false, 2 * chunk, unix.EIO},
		{"ENOSPC after a short write", func(t *testing.T, _ *os.File) {
			inject(t, &sys.pwrite, func(fd int, p []byte, off int64) (int, error) {
				switch off {
				case chunk:
					return defaultSys.pwrite(fd, p[:64<<10], off)
				case chunk + 64<<10:
					return 0, unix.ENOSPC
				}
				return defaultSys.pwrite(fd, p, off)
			})
		}, false, chunk + 64<<10, unix.ENOSPC},
		{"EIO on pread after progress", func(t *testing.T, src *os.File) {
			inject(t, &sys.pread, func(fd int, p []byte, off int64) (int, error) {
				if fd != int(src.Fd()) && off == 3*chunk {
					return 0, unix.EIO
				}
				return defaultSys.pread(fd, p, off)
			})
		}, false, 3 * chunk, unix.EIO},
	} {
		data, path := large, largePath
		if tc.offset == 0 {
			data, path = small, smallPath
		}
		t.Run(tc.name, func(t *testing.T) {
			dst, src := pairFrom(t, path)
			tc.setup(t, src)
			res, err := Copy(dst, src, autoCold(sys))
			if statusFlags(t, dst)&unix.O_DIRECT != 0 {
				t.Error("O_DIRECT left set on the destination")
			}
			if tc.fallback {
				if err != nil {
					t.Fatalf("want a fallback, got %v", err)
				}
				mustHold(t, dst, data)
				f := findFallback(res, Direct)
				if f == nil || f.Offset != tc.offset || !errors.Is(f.Err, tc.errno) {
					t.Fatalf("fallbacks %+v: want direct -> next at %d with %v", res.Fallbacks, tc.offset, tc.errno)
				}
				if res.StatOf(Direct).Bytes != tc.offset {
					t.Errorf("direct moved %d bytes, want %d", res.StatOf(Direct).Bytes, tc.offset)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || !errors.Is(err, tc.errno) || ce.Refused || ce.Strategy != Direct || ce.Offset != tc.offset {
				t.Fatalf("err %v (%+v): want a direct failure with %v at %d", err, ce, tc.errno, tc.offset)
			}
			if len(res.Fallbacks) != 1 || res.Fallbacks[0].From != Reflink {
				// (reflink -> direct is the only hand-over: ext4)
				t.Errorf("fallbacks %+v: a failure must not fall back", res.Fallbacks)
			}
			if res.StatOf(Direct).Bytes != tc.offset || res.Bytes != tc.offset {
				t.Errorf("counted %d/%d bytes, want %d", res.StatOf(Direct).Bytes, res.Bytes, tc.offset)
			}
			// The prefix only: what is past it is not checked (and the
			// preallocation made the file the source's size).
			mustBegin(t, dst, data[:tc.offset])
		})
	}
}

func TestForcedDirectRefusedIsAnError(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 8192)
	dst, src := pair(t, data)
	inject(t, &sys.reopen, func(fd, flags int) (int, error) { return -1, unix.EINVAL })
	_, err := Copy(dst, src, Options{sys: sys, Strategy: Direct})
	var ce *Error
	if !errors.As(err, &ce) || !ce.Refused || !errors.Is(err, unix.EINVAL) || ce.Strategy != Direct {
		t.Fatalf("err %v: want a refusal of direct with EINVAL", err)
	}
}

func TestDirectShortAlignedReadsContinue(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 5<<20+4097)
	dst, src := pair(t, data)
	inject(t, &sys.pread, func(fd int, p []byte, off int64) (int, error) {
		return defaultSys.pread(fd, p[:min(len(p), 12288)], off)
	})
	res, err := Copy(dst, src, Options{sys: sys, Strategy: Direct})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if len(res.Fallbacks) != 0 || res.StatOf(Direct).Bytes != int64(len(data)) {
		t.Errorf("fallbacks %v, direct %d bytes", res.Fallbacks, res.StatOf(Direct).Bytes)
	}
}

func TestDirectSetflNeverCarriesSyncFlags(t *testing.T) {
	t.Parallel()
	sys := testSys()
	dir := t.TempDir()
	data := randomBytes(t, 3<<20+1)
	if err := os.WriteFile(filepath.Join(dir, "src"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, "dst"), os.O_WRONLY|os.O_CREATE|unix.O_DSYNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var setfl []int
	inject(t, &sys.fcntl, func(fd, cmd, arg int) (int, error) {
		if cmd == unix.F_SETFL {
			setfl = append(setfl, arg)
		}
		return defaultSys.fcntl(fd, cmd, arg)
	})
	if _, err := Copy(dst, src, Options{sys: sys, Strategy: Direct}); err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	// On, off for the tail (a second "off" at the end is not needed).
	if len(setfl) != 2 || setfl[0]&unix.O_DIRECT == 0 || setfl[1]&unix.O_DIRECT != 0 {
		t.Errorf("F_SETFL calls %#x: want O_DIRECT set, then cleared for the tail", setfl)
	}
	for _, a := range setfl {
		if a&(unix.O_DSYNC|unix.O_SYNC) != 0 {
			t.Errorf("F_SETFL with %#x carries O_SYNC/O_DSYNC", a)
		}
	}
	if statusFlags(t, dst)&unix.O_DSYNC == 0 {
		t.Error("O_DSYNC lost")
	}
}

func TestDirectSparseKeepsHoles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "src")
	a, b := randomBytes(t, 1<<20), randomBytes(t, 12345)
	// Holes of more than two chunks between the extents and after the
	// second, neither aligned to a chunk.
	chunk := int64(directBufBytes)
	off := 3*chunk + 1<<20
	size := off + 3*chunk
	chunks := map[int64][]byte{0: a, off: b}
	makeSparse(t, path, size, chunks)
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	res, err := Copy(dst, src, Options{Strategy: Direct})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, sparseParts(size, chunks)...)
	// The second extent is whole blocks: its zeros after b are data.
	if res.Sparse != DetectSeekHole || res.Extents != 2 || res.StatOf(Direct).Bytes != int64(len(a)+alignUp(len(b), 4096)) {
		t.Errorf("sparse %v, %d extents, direct %d bytes", res.Sparse, res.Extents, res.StatOf(Direct).Bytes)
	}
	if got := blocks(t, dst.Name()); got > blocks(t, path)+8 {
		t.Errorf("destination has %d blocks, source %d: holes were filled", got, blocks(t, path))
	}
}

func TestDirectWrittenDirectHook(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 9<<20+5)
	dst, src := pair(t, data)
	var direct, buffered int64
	_, err := Copy(dst, src, Options{
		Strategy:      Direct,
		Written:       func(off, n int64) error { buffered += n; return nil },
		WrittenDirect: func(off, n int64) error { direct += n; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if direct != 9<<20 || buffered != 5 {
		t.Errorf("WrittenDirect %d, Written %d: want %d and the 5-byte tail", direct, buffered, 9<<20)
	}
}

// A hook's error during Direct ends the copy with it, whatever its errno:
// that of the chunks written with O_DIRECT (WrittenDirect), of the tail's
// aligned part (WrittenDirect too) or of its unaligned end, written through
// the cache (Written); an EINVAL as much as an EIO. It is no refusal for
// Auto to fall back from.
func TestDirectHookErrorStopsTheCopy(t *testing.T) {
	t.Parallel()
	chunk := int64(directBufBytes)
	// Two chunks, then a tail of a block and 5 bytes. Every case's source;
	// none changes it.
	path := srcFile(t, randomBytes(t, int(2*chunk)+4096+5))
	for _, tc := range []struct {
		name     string
		errno    unix.Errno
		failPast int64 // WrittenDirect fails once past this many bytes (-1: never)
		buffered bool  // Written fails
	}{
		{"chunk/EIO", unix.EIO, 0, false},
		{"chunk/EINVAL", unix.EINVAL, 0, false},
		{"tail's block/EINVAL", unix.EINVAL, 2 * chunk, false},
		{"tail's end/EINVAL", unix.EINVAL, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sys := testSys()
			ownRings(t, sys)
			inject(t, &sys.directMinBytes, chunk)
			dst, src := pairFrom(t, path)
			hookErr := os.NewSyscallError("sync_file_range", tc.errno)
			var direct atomic.Int64
			o := autoCold(sys)
			o.WrittenDirect = func(off, n int64) error {
				if direct.Add(n) > tc.failPast && tc.failPast >= 0 {
					return hookErr
				}
				return nil
			}
			o.Written = func(off, n int64) error {
				if tc.buffered {
					return hookErr
				}
				return nil
			}
			res, err := Copy(dst, src, o)
			var ce *Error
			if !errors.As(err, &ce) || ce.Refused || ce.Side != SideWrite || ce.Strategy != Direct || !errors.Is(err, tc.errno) {
				t.Fatalf("err = %#v, want the hook's %v, from direct, on the write side", err, tc.errno)
			}
			if f := findFallback(res, Direct); f != nil {
				t.Errorf("fell back from direct: %+v", res.Fallbacks)
			}
		})
	}
}

// TestSequentialAdviceForBufferedCopies: a buffered copy of a large file
// first advises POSIX_FADV_SEQUENTIAL on the source, as cp does (a larger
// readahead for a cold source); Direct, which bypasses the cache, and a
// small file do not.
func TestSequentialAdviceForBufferedCopies(t *testing.T) {
	t.Parallel()
	sys := testSys()
	sources := newSourceFiles(t)
	for _, tc := range []struct {
		name   string
		size   int
		opts   Options
		advice bool
	}{
		{"auto, large", 5 << 20, Options{sys: sys}, true},
		{"rw, large", 5 << 20, Options{sys: sys, Strategy: RW}, true},
		{"direct, large", 5 << 20, Options{sys: sys, Strategy: Direct}, false},
		{"auto, small", 1 << 20, Options{sys: sys}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, path := sources.of(t, tc.size)
			dst, src := pairFrom(t, path)
			var advised []int
			inject(t, &sys.fadvise, func(fd int, off, n int64, advice int) error {
				if fd == int(src.Fd()) {
					advised = append(advised, advice)
				}
				return unix.Fadvise(fd, off, n, advice)
			})
			if _, err := Copy(dst, src, tc.opts); err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if got := len(advised) == 1 && advised[0] == unix.FADV_SEQUENTIAL; got != tc.advice || len(advised) > 1 {
				t.Errorf("advice on the source %v, want FADV_SEQUENTIAL: %v", advised, tc.advice)
			}
		})
	}
}

// TestDirectSourceChangesUnderThePipeline: the source grows, shrinks or
// was shorter than its fstat said by the time the pipeline reads it (the
// preallocation, made first, gave the destination the old size, and
// several chunks are read past the new end at once): the copy holds the
// source as it is when read, with its size exact, forced or not.
func TestDirectSourceChangesUnderThePipeline(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	// Three chunks and an unaligned tail: the pipeline's first requests
	// (directDepth) reach past every new end below.
	chunk := directBufBytes
	size := 3*chunk + 7
	// Every case's source as it was written; what a change leaves is
	// given in parts (mustHold): a prefix of it, or it and what "grows"
	// appends (two chunks and an unaligned tail, past the preallocation).
	data := randomBytes(t, size)
	more := randomBytes(t, 2*chunk+5)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string) [][]byte
	}{
		{"grows", func(t *testing.T, path string) [][]byte {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(more); err != nil {
				t.Fatal(err)
			}
			return [][]byte{data, more}
		}},
		{"shrinks unaligned", func(t *testing.T, path string) [][]byte {
			n := chunk + chunk/2 + 1 // inside the second chunk
			if err := os.Truncate(path, int64(n)); err != nil {
				t.Fatal(err)
			}
			return [][]byte{data[:n]}
		}},
		{"shrinks to a chunk edge", func(t *testing.T, path string) [][]byte {
			n := 2 * chunk
			if err := os.Truncate(path, int64(n)); err != nil {
				t.Fatal(err)
			}
			return [][]byte{data[:n]}
		}},
	} {
		for _, forced := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/forced=%v", tc.name, forced), func(t *testing.T) {
				inject(t, &sys.directMinBytes, int64(chunk)) // Auto takes Direct
				dst, src := pair(t, data)
				want := [][]byte{data}
				var preallocated atomic.Bool
				inject(t, &sys.fallocate, func(fd int, mode uint32, off, n int64) error {
					if !preallocated.Swap(true) {
						want = tc.change(t, src.Name())
					}
					return unix.Fallocate(fd, mode, off, n)
				})
				o := autoCold(sys)
				if forced {
					o = Options{sys: sys, Strategy: Direct}
				}
				res, err := Copy(dst, src, o)
				if err != nil {
					t.Fatal(err)
				}
				if !preallocated.Load() {
					t.Fatal("no preallocation")
				}
				mustHold(t, dst, want...)
				n := 0
				for _, p := range want {
					n += len(p)
				}
				if res.Size != int64(n) {
					t.Errorf("size %d, want %d", res.Size, n)
				}
			})
		}
	}
}

// TestDirectPreallocation: a source without holes is preallocated once,
// from the copy's start to its size; a filesystem without fallocate is
// copied all the same; one without room fails before any data is written,
// with nothing of it counted.
func TestDirectPreallocation(t *testing.T) {
	t.Parallel()
	sys := testSys()
	const size = 9<<20 + 3
	data := randomBytes(t, size) // every case's source; none changes it
	path := srcFile(t, data)
	for _, tc := range []struct {
		name  string
		errno error
	}{{"ok", nil}, {"EOPNOTSUPP", unix.EOPNOTSUPP}, {"ENOSPC", unix.ENOSPC}, {"EDQUOT", unix.EDQUOT}} {
		t.Run(tc.name, func(t *testing.T) {
			dst, src := pairFrom(t, path)
			var calls [][2]int64
			inject(t, &sys.fallocate, func(fd int, mode uint32, off, n int64) error {
				calls = append(calls, [2]int64{off, n})
				if tc.errno != nil {
					return tc.errno
				}
				return unix.Fallocate(fd, mode, off, n)
			})
			var writes atomic.Int64
			inject(t, &sys.pwrite, func(fd int, p []byte, off int64) (int, error) {
				writes.Add(1)
				return defaultSys.pwrite(fd, p, off)
			})
			res, err := Copy(dst, src, Options{sys: sys, Strategy: Direct})
			if len(calls) != 1 || calls[0] != [2]int64{0, size} {
				t.Errorf("fallocate calls %v, want one of [0, %d)", calls, size)
			}
			if tc.errno == unix.ENOSPC || tc.errno == unix.EDQUOT {
				var ce *Error
				if !errors.As(err, &ce) || !errors.Is(err, tc.errno) || ce.Refused || ce.Offset != 0 {
					t.Fatalf("err %v: want a failure with %v at 0", err, tc.errno)
				}
				if writes.Load() != 0 || res.Bytes != 0 {
					t.Errorf("%d writes, %d bytes counted before the failure: want none", writes.Load(), res.Bytes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
		})
	}
}

// TestDirectWritesOverlapAndGoOutOfOrder: with a slow write at one offset
// the other chunks are read and written meanwhile (several requests in
// flight, writes out of order), while the progress, Reached and the
// WrittenDirect hook only ever see the prefix complete below them.
func TestDirectWritesOverlapAndGoOutOfOrder(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// The write at 0 waits until two others began: four chunks and an
	// unaligned tail leave one more, and the tail after them.
	chunk := int64(directBufBytes)
	data := randomBytes(t, int(4*chunk)+11)
	dst, src := pair(t, data)
	// The other chunks' writes wait for the first chunk's to begin:
	// else they could all be done before it, and nothing would release it.
	started, release := make(chan struct{}), make(chan struct{})
	var start sync.Once
	var after atomic.Int64 // writes that returned while the first chunk's waited
	var waiting atomic.Bool
	inject(t, &sys.pwrite, func(fd int, p []byte, off int64) (int, error) {
		if off == 0 {
			waiting.Store(true)
			start.Do(func() { close(started) })
			<-release
			waiting.Store(false)
		} else {
			<-started
			if waiting.Load() && after.Add(1) == 2 {
				close(release)
			}
		}
		return defaultSys.pwrite(fd, p, off)
	})
	var reached atomic.Int64
	var hooks [][2]int64
	o := Options{sys: sys, Strategy: Direct, Reached: &reached, WrittenDirect: func(off, n int64) error {
		hooks = append(hooks, [2]int64{off, n})
		if reached.Load() != off+n {
			t.Errorf("Reached %d in the hook for [%d, %d)", reached.Load(), off, off+n)
		}
		return nil
	}}
	if _, err := Copy(dst, src, o); err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if after.Load() < 2 {
		t.Fatalf("%d writes returned while the first chunk's waited: the writes do not overlap", after.Load())
	}
	next := int64(0)
	for _, h := range hooks {
		if h[0] != next {
			t.Fatalf("hooks %v: not in order from 0", hooks)
		}
		next = h[0] + h[1]
	}
	if next < int64(len(data))/chunk*chunk {
		t.Errorf("hooks end at %d of %d", next, len(data))
	}
}

// TestSmallCopyReadsNoDirtyLimit: the dirty page limit (three /proc reads)
// is asked only for a source large enough for Direct.
func TestSmallCopyReadsNoDirtyLimit(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	for _, tc := range []struct {
		size  int
		calls int
	}{{4096, 0}, {1<<20 - 1, 0}, {3 << 20, 1}} {
		calls := 0
		inject(t, &sys.dirtyLimit, func() int64 { calls++; return 0 })
		data := randomBytes(t, tc.size)
		dst, src := pair(t, data)
		o := autoCold(sys)
		o.Flush = false
		if _, err := Copy(dst, src, o); err != nil {
			t.Fatal(err)
		}
		mustHold(t, dst, data)
		if calls != tc.calls {
			t.Errorf("%d bytes: dirtyLimit asked %d times, want %d", tc.size, calls, tc.calls)
		}
	}
}

// TestResidencyAskedOnlyAfterTheCloneIsRefused: with Reflink first, the
// source's residency (cachestat over the whole file) and the readahead
// advice wait until the clone is refused; a clone that works asks neither,
// and a refused one still goes on to Direct for a cold source.
func TestResidencyAskedOnlyAfterTheCloneIsRefused(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	// Past the size from which readahead is advised (seqAdviceMinBytes).
	const size = seqAdviceMinBytes + 17
	data := randomBytes(t, size) // every case's source; none changes it
	path := srcFile(t, data)
	for _, tc := range []struct {
		name       string
		cloneWorks bool
		cached     int64
		asked      int
		advised    int
		strategy   Strategy
		choice     DirectChoice
	}{
		{"clone works", true, 0, 0, 0, Reflink, DirectNotConsidered},
		{"clone refused, cold", false, 0, 1, 0, Direct, DirectChosen},
		{"clone refused, cached", false, size, 1, 1, CopyFileRange, DirectCached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked, advised := 0, 0
			inject(t, &sys.fadvise, func(fd int, off, n int64, advice int) error {
				advised++
				return unix.Fadvise(fd, off, n, advice)
			})
			inject(t, &sys.ficlone, func(dst, src int) error {
				if !tc.cloneWorks {
					return unix.EOPNOTSUPP
				}
				// Stands for the clone: the bytes are there after it.
				_, err := unix.Pwrite(dst, data, 0)
				return err
			})
			dst, src := pairFrom(t, path)
			o := autoCold(sys)
			o.SourceCached = func() (int64, error) { asked++; return tc.cached, nil }
			res, err := Copy(dst, src, o)
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if asked != tc.asked || advised != tc.advised || res.Strategy != tc.strategy || res.Direct.Choice != tc.choice {
				t.Errorf("residency asked %d times, %d readahead advices, strategy %v, direct %v (%s); want %d, %d, %v, %v",
					asked, advised, res.Strategy, res.Direct.Choice, res.Direct, tc.asked, tc.advised, tc.strategy, tc.choice)
			}
			if !tc.cloneWorks && (len(res.Fallbacks) == 0 || res.Fallbacks[0].From != Reflink || res.Fallbacks[0].To != tc.strategy) {
				t.Errorf("fallbacks %+v, want reflink -> %v first", res.Fallbacks, tc.strategy)
			}
		})
	}
}
