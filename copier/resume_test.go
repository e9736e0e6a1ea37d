// SPDX-License-Identifier: MIT

package copier

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// prefilled opens the source file at path (srcFile), which holds data,
// and makes a destination holding a marker pattern of start bytes: what a
// continued copy must keep below start. want is what the destination must
// hold after the copy, in parts (for mustHold): the marker's pieces, then
// data past start; no copy of either.
func prefilled(t *testing.T, path string, data []byte, start int) (dst, src *os.File, want [][]byte) {
	t.Helper()
	dst, src = pairFrom(t, path)
	for off := 0; off < start; off += len(markerPiece) {
		p := markerPiece[:min(len(markerPiece), start-off)]
		if _, err := dst.WriteAt(p, int64(off)); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	return dst, src, append(want, data[start:])
}

// markerPiece is prefilled's marker pattern, written a piece at a time:
// a marker of the whole start in fresh memory for each case was much of
// the resumed copies' tests' time.
var markerPiece = bytes.Repeat([]byte{0xA5}, 64<<10)

// Start: every strategy continues at the offset and writes nothing below it.
func TestStartContinuesAtOffset(t *testing.T) {
	t.Parallel()
	// Two of splice's pipes and a tail: the start past the first pipe
	// has more than a pipe after it (and every start several buffers).
	const n = 2*pipeBytes + 17
	data := randomBytes(t, n) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, Splice, RW} {
		for _, start := range []int{1, 4096, pipeBytes + 3, n - 1, n} {
			t.Run(fmt.Sprintf("%s/%d", s, start), func(t *testing.T) {
				dst, src, want := prefilled(t, path, data, start)
				var counted countingCounter
				res, err := Copy(dst, src, Options{Strategy: s, Start: int64(start), BufferSize: 256 << 10, Progress: &counted})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, want...)
				if res.Size != n || res.Bytes != int64(n-start) {
					t.Errorf("Size %d Bytes %d, want %d and %d", res.Size, res.Bytes, n, n-start)
				}
				if counted.n != n {
					t.Errorf("progress counted %d bytes, want %d (the start included)", counted.n, n)
				}
			})
		}
	}
}

// Start on a sparse source: the walk goes on from the offset, in a hole or
// in data, and the holes after it stay holes.
func TestStartInSparseSource(t *testing.T) {
	t.Parallel()
	// Four extents of a MiB. The holes after the first are two MiB, more
	// than the check of the destination's blocks below leaves past the
	// data (a MiB): any one of them filled fails it.
	const size = 11 << 20
	chunks := map[int64][]byte{}
	for _, off := range []int64{0, 2 << 20, 5 << 20, 8 << 20} {
		chunks[off] = randomBytes(t, 1<<20)
	}
	// Every case's source; none changes it.
	path := filepath.Join(t.TempDir(), "src")
	makeSparse(t, path, size, chunks)
	full := sparseParts(size, chunks) // what the source holds
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, RW} {
		// In a hole, in data, in a hole before the last extent.
		for _, start := range []int64{1<<20 + 4096, 2<<20 + 12288, 6<<20 + 4096} {
			t.Run(fmt.Sprintf("%s/%d", s, start), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				// What an interrupted copy left: the source's extents up to start.
				left := map[int64][]byte{}
				for off, b := range chunks {
					if off < start {
						left[off] = b[:min(int64(len(b)), start-off)]
					}
				}
				makeSparse(t, filepath.Join(dir, "dst"), start, left)
				src, _ := os.Open(path)
				defer src.Close()
				dst, _ := os.OpenFile(filepath.Join(dir, "dst"), os.O_RDWR, 0)
				defer dst.Close()
				res, err := Copy(dst, src, Options{Strategy: s, Start: start})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, full...)
				var data int64
				for off, b := range chunks {
					data += max(0, min(off+int64(len(b)), size)-max(off, start))
				}
				if res.Bytes != data || res.Sparse != DetectSeekHole {
					t.Errorf("Bytes %d sparse %v, want %d data bytes after the start and SEEK_HOLE", res.Bytes, res.Sparse, data)
				}
				if db := blocks(t, dst.Name()); db*512 > 5<<20 {
					t.Errorf("destination has %d blocks, want the holes kept", db)
				}
			})
		}
	}
}

func TestStartOutsideTheSourceIsRefused(t *testing.T) {
	t.Parallel()
	dst, src := pair(t, randomBytes(t, 4096))
	for _, start := range []int64{4097, -1} {
		_, err := Copy(dst, src, Options{Start: start})
		if !errors.Is(err, errBadStart) {
			t.Errorf("Start %d: err %v, want errBadStart", start, err)
		}
	}
}

// syncRecorder is the checkpoints' flush (flush): it notes, at the time of each call, how
// far the destination had been written (pwrite's high mark).
type syncRecorder struct {
	mu      sync.Mutex
	written int64   // highest end written so far
	synced  []int64 // written, at each fdatasync
	fail    error   // returned by the fdatasync number failAt (1-based)
	failAt  int
}

func (r *syncRecorder) install(t *testing.T, sys *sysCalls) {
	inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
		n, err := defaultSys.pwrite(fd, b, off)
		r.mu.Lock()
		r.written = max(r.written, off+int64(n))
		r.mu.Unlock()
		return n, err
	})
}

func (r *syncRecorder) flush(fd int) error {
	{
		r.mu.Lock()
		r.synced = append(r.synced, r.written)
		k := len(r.synced)
		r.mu.Unlock()
		if k == r.failAt {
			return r.fail
		}
		return testFlush(fd)
	}
}

// Checkpoints every CheckpointBytes: each recorded offset was covered by an
// fdatasync that started after it was written, they only grow, and the
// last one is within one interval of the end.
func TestCheckpointsEveryBytes(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Eight intervals of four buffers each.
	const every, buf = 1 << 20, 256 << 10
	const n = 8 * every
	data := randomBytes(t, n)
	dst, src := pair(t, data)
	var rec syncRecorder
	rec.install(t, sys)
	var recorded []int64
	var reached atomic.Int64
	res, err := Copy(dst, src, Options{
		sys:      sys,
		Strategy: RW, BufferSize: buf, CheckpointBytes: every, CheckpointInterval: time.Hour,
		CheckpointFlush: rec.flush, Checkpoint: func(off int64) error { recorded = append(recorded, off); return nil },
		Reached: &reached,
		Flush:   true, // the end waits for the last checkpoint
	})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if len(recorded) < 6 || res.Checkpoints != len(rec.synced) || res.Checkpoints < len(recorded) {
		t.Fatalf("recorded %v, %d checkpoints, %d fdatasyncs: want about one per %d bytes", recorded, res.Checkpoints, len(rec.synced), every)
	}
	for i, off := range recorded {
		if i > 0 && off <= recorded[i-1] {
			t.Errorf("checkpoints %v do not grow", recorded)
		}
		covered := false
		for _, w := range rec.synced {
			covered = covered || w >= off
		}
		if !covered {
			t.Errorf("checkpoint %d recorded before an fdatasync covered it (fdatasyncs at %v)", off, rec.synced)
		}
	}
	if last := recorded[len(recorded)-1]; last < n-2*every || last >= n || res.Checkpoint != last {
		t.Errorf("last checkpoint %d (result %d), want within two intervals of %d, and none at the end (the copy's end would wait for it)", last, res.Checkpoint, n)
	}
	if reached.Load() != n {
		t.Errorf("Reached %d, want %d", reached.Load(), n)
	}
}

// Checkpoints every CheckpointInterval, counted by the copy's clock.
func TestCheckpointsEveryInterval(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 4<<20)
	dst, src := pair(t, data)
	var rec syncRecorder
	rec.install(t, sys)
	clock := time.Unix(0, 0)
	var recorded []int64
	res, err := Copy(dst, src, Options{
		sys:      sys,
		Strategy: RW, BufferSize: 512 << 10, // 8 calls
		Flush:           true,
		CheckpointBytes: int64(2 * len(data)), // never due by bytes: by the clock only
		CheckpointFlush: rec.flush, Checkpoint: func(off int64) error { recorded = append(recorded, off); return nil },
		now: func() time.Time {
			clock = clock.Add(3 * time.Second) // every other call passes 5 s
			return clock
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Checkpoints < 3 || res.Checkpoints > 5 || len(recorded) != res.Checkpoints {
		t.Errorf("%d checkpoints, recorded %v: want one about every other call of 8", res.Checkpoints, recorded)
	}
}

// A failed fdatasync ends the copy with its error, never falls back, and
// its offset is not recorded.
func TestCheckpointFdatasyncFailureIsFinal(t *testing.T) {
	t.Parallel()
	sys := testSys()
	path := srcFile(t, randomBytes(t, 8<<20)) // both copies' source; neither changes it
	dst, src := pairFrom(t, path)
	rec := syncRecorder{fail: unix.EIO, failAt: 2}
	rec.install(t, sys)
	var recorded []int64
	_, err := Copy(dst, src, Options{
		sys:        sys,
		BufferSize: 256 << 10, CheckpointBytes: 1 << 20, Strategy: RW, Flush: true,
		CheckpointFlush: rec.flush, Checkpoint: func(off int64) error { recorded = append(recorded, off); return nil },
	})
	var ce *Error
	if !errors.As(err, &ce) || ce.Refused || ce.Side != SideWrite || !errors.Is(err, unix.EIO) {
		t.Fatalf("err = %v, want fdatasync's EIO on the write side", err)
	}
	if len(recorded) > 1 {
		t.Errorf("recorded %v: nothing after the failed fdatasync may be", recorded)
	}
	// auto, where the rw loop is not the first strategy: no fallback either.
	dst, src = pairFrom(t, path)
	rec = syncRecorder{fail: unix.EIO, failAt: 1}
	rec.install(t, sys)
	inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
		return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, 1<<20), flags)
	})
	res, err := Copy(dst, src, Options{sys: sys, CheckpointBytes: 1 << 20, Flush: true, CheckpointFlush: rec.flush, Checkpoint: func(int64) error { return nil }})
	if !errors.Is(err, unix.EIO) || len(res.Fallbacks) != 1 {
		t.Errorf("auto: err %v fallbacks %+v, want EIO and only reflink's refusal", err, res.Fallbacks)
	}
}

// An error from recording the checkpoint ends the copy.
func TestCheckpointRecordErrorStopsTheCopy(t *testing.T) {
	t.Parallel()
	// Past the second checkpoint's offset, which waits for the first's
	// record. Its bytes are not checked: a file of holes does, read byte
	// by byte (--sparse=never: no walk).
	const every = 1 << 20
	path := filepath.Join(t.TempDir(), "src")
	makeSparse(t, path, 2*every+5, nil)
	dst, src := pairFrom(t, path)
	bad := errors.New("setxattr failed")
	_, err := Copy(dst, src, Options{
		Strategy: RW, BufferSize: 256 << 10, CheckpointBytes: every, Sparse: SparseNever,
		CheckpointFlush: testFlush, Checkpoint: func(int64) error { return bad },
	})
	if !errors.Is(err, bad) {
		t.Errorf("err %v, want the record's error", err)
	}
}

// Start and checkpoints with the direct pipeline: it continues at an
// aligned offset, and takes its checkpoints as it writes (one call moves the
// whole file, so they must come from inside it).
func TestStartAndCheckpointsDirect(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Starts inside the first chunk and a block past the second's start;
	// after either, four chunks and an unaligned tail: a checkpoint is
	// due after each chunk.
	chunk := directBufBytes
	n := chunk + 4096 + 4*chunk + 12345
	data := randomBytes(t, n) // every case's source; none changes it
	path := srcFile(t, data)
	for _, start := range []int{chunk / 3 &^ 4095, chunk + 4096} {
		t.Run(fmt.Sprint(start), func(t *testing.T) {
			dst, src, want := prefilled(t, path, data, start)
			var rec syncRecorder
			rec.install(t, sys)
			var recorded []int64
			res, err := Copy(dst, src, Options{
				sys:      sys,
				Strategy: Direct, Start: int64(start), CheckpointBytes: int64(chunk), Flush: true,
				CheckpointFlush: rec.flush, Checkpoint: func(off int64) error { recorded = append(recorded, off); return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, want...)
			if res.Bytes != int64(n-start) || res.StatOf(Direct).Bytes != int64(n-start) {
				t.Errorf("Bytes %d (direct %d), want %d", res.Bytes, res.StatOf(Direct).Bytes, n-start)
			}
			if len(recorded) < 2 {
				t.Fatalf("checkpoints %v: want several within the one direct call", recorded)
			}
			for _, off := range recorded {
				covered := false
				for _, w := range rec.synced {
					covered = covered || w >= off
				}
				if !covered || off <= int64(start) {
					t.Errorf("checkpoint %d not covered by an fdatasync after it was written (%v), or not past the start", off, rec.synced)
				}
			}
		})
	}
	// An unaligned start is refused by a forced direct.
	dst, src, _ := prefilled(t, path, data, 1000)
	if _, err := Copy(dst, src, Options{sys: sys, Strategy: Direct, Start: 1000}); err == nil {
		t.Error("a forced direct copy started at an unaligned offset")
	}
}

// Without a flush to come (no --sync), the copy's end does not wait for a
// checkpoint still running: it finishes on a descriptor of its own.
func TestCopyEndDoesNotWaitForACheckpoint(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 4<<20)
	dst, src := pair(t, data)
	release := make(chan struct{})
	started := make(chan int, 8)
	flush := func(fd int) error {
		started <- fd
		<-release
		return testFlush(fd)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Copy(dst, src, Options{Strategy: RW, BufferSize: 1 << 20, CheckpointBytes: 3 << 20, CheckpointFlush: flush, Checkpoint: func(int64) error { return nil }})
		done <- err
	}()
	fd := <-started
	if fd == int(dst.Fd()) {
		t.Errorf("the checkpoint flushes the copy's own descriptor %d", fd)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the copy waited for its checkpoint's fdatasync")
	}
	mustHold(t, dst, data)
	close(release)
}
