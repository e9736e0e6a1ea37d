// SPDX-License-Identifier: MIT

package copier

import (
	"crypto/sha256"
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

// many makes a source holding data and n empty destinations.
func many(t *testing.T, data []byte, n int) (src *os.File, dsts []*os.File) {
	t.Helper()
	return manyFrom(t, srcFile(t, data), n)
}

// manyFrom opens the source file at path (srcFile) and makes n empty
// destinations of t's own.
func manyFrom(t *testing.T, path string, n int) (src *os.File, dsts []*os.File) {
	t.Helper()
	return openMany(t, path, t.TempDir(), n)
}

// openMany opens the source file at path and makes n empty destinations
// in dir.
func openMany(t *testing.T, path, dir string, n int) (src *os.File, dsts []*os.File) {
	t.Helper()
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	for i := range n {
		d, err := os.Create(filepath.Join(dir, fmt.Sprintf("dst%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		dsts = append(dsts, d)
	}
	return src, dsts
}

func destsOf(fs []*os.File) []Dest {
	var ds []Dest
	for _, f := range fs {
		ds = append(ds, Dest{File: f})
	}
	return ds
}

// sizes cross a small copy, the rw buffer, the ring's chunk and several
// chunks: more than the buffered read has in flight, and a tail.
var fanSizes = []int{0, 1, 4095, 4096, 64<<10 + 3, 512 << 10, 3<<20 + 17, fanReadDepthBuffered*directBufBytes + 5}

// Every destination gets every byte, the source is read once, and the hash
// is the source's, given each byte once.
func TestCopyManyCopiesIntoEach(t *testing.T) {
	t.Parallel()
	// By size, for every case, with their SHA-256; no case changes them.
	sources, sums, paths := map[int][]byte{}, map[int][]byte{}, map[int]string{}
	for _, size := range fanSizes {
		sources[size] = randomBytes(t, size)
		sums[size] = sum256(sources[size])
		paths[size] = srcFile(t, sources[size])
	}
	for _, s := range []Strategy{Auto, RW, Direct} {
		for _, n := range []int{2, 3} {
			for _, size := range fanSizes {
				data, sum, path := sources[size], sums[size], paths[size]
				t.Run(fmt.Sprintf("%s/%d/%d", s, n, size), func(t *testing.T) {
					t.Parallel()
					src, dsts := manyFrom(t, path, n)
					h := sha256.New()
					var progress countingCounter
					res, errs := CopyMany(src, destsOf(dsts), Options{Strategy: s, Reflink: ReflinkNever, Hash: h, Progress: &progress})
					for i, d := range dsts {
						if errs[i] != nil {
							t.Fatalf("destination %d: %v", i, errs[i])
						}
						mustHold(t, d, data)
						wantSum(t, h, res[i], sum, len(data))
						r := res[i]
						if r.Shared != n || r.Size != int64(size) {
							t.Errorf("destination %d: shared %d size %d, want %d and %d", i, r.Shared, r.Size, n, size)
						}
						if r.SharedRead.Bytes != int64(size) {
							t.Errorf("destination %d: the source was read for %d bytes, want %d (once)", i, r.SharedRead.Bytes, size)
						}
						if s == Direct && size >= 4096 && r.Stats[Direct].Bytes < int64(size)/4096*4096 {
							t.Errorf("destination %d: %d bytes with O_DIRECT", i, r.Stats[Direct].Bytes)
						}
						if fl := statusFlags(t, d); fl&unix.O_DIRECT != 0 {
							t.Errorf("destination %d: O_DIRECT left set", i)
						}
					}
					if progress.n != int64(size) {
						t.Errorf("progress %d, want %d", progress.n, size)
					}
				})
			}
		}
	}
}

// With one destination CopyMany is Copy.
func TestCopyManyOneIsCopy(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 100000)
	src, dsts := many(t, data, 1)
	res, errs := CopyMany(src, destsOf(dsts), Options{})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	mustHold(t, dsts[0], data)
	if res[0].Shared != 0 {
		t.Errorf("shared %d, want 0: a copy of its own", res[0].Shared)
	}
}

// A sparse source keeps its holes in every destination, and is read only
// where it has data.
func TestCopyManySparse(t *testing.T) {
	t.Parallel()
	// Three extents, one of more than a chunk (directBufBytes), and holes
	// of about a chunk or more between them and after the last. Every
	// case's source; none changes it.
	chunk := int64(directBufBytes)
	size := 4*chunk + 12345
	chunks := map[int64][]byte{
		0:                randomBytes(t, 8192),
		chunk + 64<<10:   randomBytes(t, int(chunk)+4096),
		3*chunk + 64<<10: randomBytes(t, 4096),
	}
	path := filepath.Join(t.TempDir(), "src")
	makeSparse(t, path, size, chunks)
	want := sparseParts(size, chunks)
	sum := sumParts(want)
	for _, s := range []Strategy{Auto, RW, Direct} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			src, dsts := manyFrom(t, path, 3)
			h := sha256.New()
			res, errs := CopyMany(src, destsOf(dsts), Options{Strategy: s, Reflink: ReflinkNever, Hash: h})
			for i, d := range dsts {
				if errs[i] != nil {
					t.Fatalf("destination %d: %v", i, errs[i])
				}
				mustHold(t, d, want...)
				if sb, db := blocks(t, src.Name()), blocks(t, d.Name()); db > sb {
					t.Errorf("destination %d has %d blocks, the source %d: holes were filled", i, db, sb)
				}
				if r := res[i]; r.Sparse != DetectSeekHole || r.Extents != 3 || r.Holes+r.Bytes != size || r.SharedRead.Bytes != r.Bytes {
					t.Errorf("destination %d: sparse %v extents %d holes %d bytes %d read %d", i, r.Sparse, r.Extents, r.Holes, r.Bytes, r.SharedRead.Bytes)
				}
			}
			wantSum(t, h, res[0], sum, int(size))
		})
	}
}

// A destination whose writes fail (ENOSPC part-way) fails alone: the
// others get every byte.
func TestCopyManyOneFails(t *testing.T) {
	t.Parallel()
	// Under the rw buffer, and several chunks (as fanSizes): the failure
	// comes part-way, with chunks still to read.
	ns := []int{100000, fanReadDepthBuffered*directBufBytes + 5}
	// By size, for every strategy, with their SHA-256; no case changes them.
	sources, sums, paths := map[int][]byte{}, map[int][]byte{}, map[int]string{}
	for _, size := range ns {
		sources[size] = randomBytes(t, size)
		sums[size] = sum256(sources[size])
		paths[size] = srcFile(t, sources[size])
	}
	for _, s := range []Strategy{Auto, RW, Direct} {
		for _, size := range ns {
			data, sum, path := sources[size], sums[size], paths[size]
			t.Run(fmt.Sprintf("%s/%d", s, size), func(t *testing.T) {
				t.Parallel()
				sys := testSys()
				src, dsts := manyFrom(t, path, 3)
				bad := int(dsts[1].Fd())
				var written atomic.Int64
				inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
					if fd == bad && written.Add(int64(len(b))) > int64(size)/2 {
						return 0, unix.ENOSPC
					}
					return defaultSys.pwrite(fd, b, off)
				})
				h := sha256.New()
				res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Strategy: s, Reflink: ReflinkNever, Hash: h})
				if !errors.Is(errs[1], unix.ENOSPC) {
					t.Fatalf("the full destination: %v, want ENOSPC", errs[1])
				}
				var ce *Error
				if !errors.As(errs[1], &ce) || ce.Side != SideWrite {
					t.Errorf("the error %#v should name the write side", errs[1])
				}
				for _, i := range []int{0, 2} {
					if errs[i] != nil {
						t.Fatalf("destination %d: %v", i, errs[i])
					}
					mustHold(t, dsts[i], data)
					wantSum(t, h, res[i], sum, len(data))
				}
			})
		}
	}
}

// Every destination failing ends the read early.
func TestCopyManyAllFail(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Several times what the shared read can hold once every destination
	// failed (the whole ring, read ahead). Its bytes are not checked: a
	// file of holes does, read byte by byte (--sparse=never: no walk),
	// and only what is read costs.
	size := int64(4 * ringBytes())
	dir := t.TempDir()
	makeSparse(t, filepath.Join(dir, "src"), size, nil)
	src, dsts := openMany(t, filepath.Join(dir, "src"), dir, 2)
	inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) { return 0, unix.EIO })
	res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Strategy: RW, Sparse: SparseNever})
	for i := range dsts {
		if !errors.Is(errs[i], unix.EIO) {
			t.Errorf("destination %d: %v, want EIO", i, errs[i])
		}
	}
	if res[0].SharedRead.Bytes >= size-int64(ringBytes()) {
		t.Errorf("read %d bytes of %d after every destination failed", res[0].SharedRead.Bytes, size)
	}
}

// A read error fails every destination, naming the read side.
func TestCopyManyReadError(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 10<<20)
	src, dsts := many(t, data, 2)
	inject(t, &sys.pread, func(fd int, b []byte, off int64) (int, error) {
		if off >= 4<<20 {
			return 0, unix.EIO
		}
		return defaultSys.pread(fd, b, off)
	})
	_, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Strategy: RW})
	for i := range dsts {
		var ce *Error
		if !errors.As(errs[i], &ce) || ce.Side != SideRead || !errors.Is(errs[i], unix.EIO) {
			t.Errorf("destination %d: %#v, want EIO on the read side", i, errs[i])
		}
	}
}

// --resume: each destination goes on from its own start; the read begins
// at the smallest, and the hash (given the bytes below it) is the whole
// source's.
func TestCopyManyStarts(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 9<<20+99)
	src, dsts := many(t, data, 3)
	starts := []int64{4 << 20, 0, 7<<20 + 5}
	for i, s := range starts {
		if _, err := dsts[i].WriteAt(data[:s], 0); err != nil {
			t.Fatal(err)
		}
	}
	ds := destsOf(dsts)
	var reached [3]atomic.Int64
	for i := range ds {
		ds[i].Start = starts[i]
		ds[i].Reached = &reached[i]
	}
	h := sha256.New()
	res, errs := CopyMany(src, ds, Options{Strategy: RW, Hash: h})
	for i, d := range dsts {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, d, data)
		if got, want := res[i].Bytes, int64(len(data))-starts[i]; got != want {
			t.Errorf("destination %d wrote %d bytes, want %d", i, got, want)
		}
		if reached[i].Load() != int64(len(data)) {
			t.Errorf("destination %d reached %d", i, reached[i].Load())
		}
	}
	wantDigest(t, h, res[0], data)
}

// Each destination's Written hook sees its bytes, in order; an error it
// returns fails that destination alone.
func TestCopyManyWrittenHooks(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 8<<20+1)
	src, dsts := many(t, data, 2)
	ds := destsOf(dsts)
	var mu sync.Mutex
	var ends [2]int64
	for i := range ds {
		ds[i].Written = func(off, n int64) error {
			mu.Lock()
			defer mu.Unlock()
			if off != ends[i] {
				return fmt.Errorf("hook %d: bytes at %d after %d", i, off, ends[i])
			}
			ends[i] = off + n
			if i == 1 && ends[i] > 4<<20 {
				return unix.EIO
			}
			return nil
		}
	}
	_, errs := CopyMany(src, ds, Options{Strategy: RW})
	if errs[0] != nil || ends[0] != int64(len(data)) {
		t.Errorf("destination 0: %v, hook saw %d bytes", errs[0], ends[0])
	}
	if !errors.Is(errs[1], unix.EIO) {
		t.Errorf("destination 1: %v, want the hook's EIO", errs[1])
	}
	mustHold(t, dsts[0], data)
}

// A stream (a pipe) is read once and written to each destination.
func TestCopyManyStream(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 5<<20+3)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		for b := data; len(b) > 0; {
			n := min(len(b), 70000)
			w.Write(b[:n])
			b = b[n:]
		}
		w.Close()
	}()
	_, dsts := many(t, nil, 2)
	res, errs := CopyMany(r, destsOf(dsts), Options{})
	for i, d := range dsts {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, d, data)
		if res[i].Size != int64(len(data)) {
			t.Errorf("size %d", res[i].Size)
		}
	}
}

// A forced kernel strategy copies each destination on its own; a stream
// cannot be read twice for it.
func TestCopyManyForcedKernelStrategy(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 300000)
	src, dsts := many(t, data, 2)
	res, errs := CopyMany(src, destsOf(dsts), Options{Strategy: Sendfile})
	for i, d := range dsts {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, d, data)
		if res[i].Strategy != Sendfile || res[i].Shared != 0 {
			t.Errorf("destination %d: %v shared %d", i, res[i].Strategy, res[i].Shared)
		}
	}
	r, w, _ := os.Pipe()
	defer r.Close()
	go func() { w.Write(data); w.Close() }()
	_, dsts = many(t, nil, 2)
	_, errs = CopyMany(r, destsOf(dsts), Options{Strategy: Splice})
	if errs[0] != nil || !errors.Is(errs[1], ErrStreamOnce) {
		t.Errorf("errors %v, want the first copied and ErrStreamOnce", errs)
	}
}

// The slowest destination paces the others, and the result says which.
func TestCopyManyPaced(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys) // the ring, whatever the tests beside hold
	// More than the ring holds, so that the readers wait for a buffer.
	// Its bytes are not checked: a file of holes does, read byte by byte
	// (--sparse=never: no walk).
	size := int64(ringBytes() + 2*directBufBytes)
	dir := t.TempDir()
	makeSparse(t, filepath.Join(dir, "src"), size, nil)
	src, dsts := openMany(t, filepath.Join(dir, "src"), dir, 2)
	slow := int(dsts[1].Fd())
	inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
		if fd == slow {
			// Long enough that the other is done with its buffer when
			// the reader waits, however loaded the machine.
			time.Sleep(20 * time.Millisecond)
		}
		return defaultSys.pwrite(fd, b, off)
	})
	res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Strategy: RW, Sparse: SparseNever})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if res[1].Paced <= res[0].Paced {
		t.Errorf("paced: the slow destination %v, the other %v", res[1].Paced, res[0].Paced)
	}
}

// A destination that was given a bad start fails alone.
func TestCopyManyBadStart(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 1000)
	src, dsts := many(t, data, 2)
	ds := destsOf(dsts)
	ds[0].Start = 5000
	_, errs := CopyMany(src, ds, Options{})
	if !errors.Is(errs[0], errBadStart) || errs[1] != nil {
		t.Fatalf("errors %v", errs)
	}
	mustHold(t, dsts[1], data)
}

// Auto reads a large cold source with O_DIRECT for every destination, as
// it would for one, and writes with O_DIRECT where the destination takes
// it; a cached one is read through the page cache.
func TestCopyManyAutoDirect(t *testing.T) {
	t.Parallel()
	sys := testSys()
	ownRings(t, sys)
	inject(t, &sys.directMinBytes, 1<<20)
	for _, cold := range []bool{true, false} {
		t.Run(fmt.Sprint("cold=", cold), func(t *testing.T) {
			data := randomBytes(t, 7<<20+3)
			src, dsts := many(t, data, 2)
			o := autoCold(sys)
			if !cold {
				o.SourceCached = func() (int64, error) { return int64(len(data)), nil }
			}
			var direct [2]int64
			ds := destsOf(dsts)
			for i := range ds {
				ds[i].WrittenDirect = func(off, n int64) error { direct[i] += n; return nil }
			}
			res, errs := CopyMany(src, ds, o)
			for i, d := range dsts {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				mustHold(t, d, data)
				want := DirectCached
				if cold {
					want = DirectChosen
				}
				if res[i].Direct.Choice != want || (res[i].Strategy == Direct) != cold {
					t.Errorf("destination %d: %v, %v (%s)", i, res[i].Strategy, res[i].Direct.Choice, res[i].Direct)
				}
				if cold && direct[i] < int64(len(data))/4096*4096 {
					t.Errorf("destination %d: %d bytes written with O_DIRECT", i, direct[i])
				}
			}
		})
	}
}

// A destination that can share the source's extents is cloned; the
// others share one read, and the hash is given that read.
func TestCopyManyCloneOneShareTheRest(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 6<<20+7)
	src, dsts := many(t, data, 3)
	clonable := int(dsts[1].Fd())
	var clones atomic.Int32
	inject(t, &sys.ficlone, func(dst, s int) error {
		if dst != clonable {
			return unix.EOPNOTSUPP
		}
		clones.Add(1)
		_, err := unix.Pwrite(dst, data, 0) // stands for the clone
		return err
	})
	h := sha256.New()
	// (No Memo: it would take the first refusal for the whole
	// filesystem, which it is outside this test.)
	res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Hash: h})
	sum := sum256(data)
	for i, d := range dsts {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, d, data)
		wantSum(t, h, res[i], sum, len(data))
	}
	if r := res[1]; r.Strategy != Reflink || r.Reflink != DebugYes || r.Shared != 0 {
		t.Errorf("the clonable destination: %v, reflink %v, shared %d", r.Strategy, r.Reflink, r.Shared)
	}
	for _, i := range []int{0, 2} {
		if r := res[i]; r.Reflink != DebugUnsupported || r.Shared != 2 || r.SharedRead.Bytes != int64(len(data)) {
			t.Errorf("destination %d: reflink %v, shared %d, read %d", i, r.Reflink, r.Shared, r.SharedRead.Bytes)
		}
	}
	if clones.Load() != 1 {
		t.Errorf("%d clones", clones.Load())
	}
}

// Every destination cloned: the hash reads the source; one left: it is
// copied alone, with every strategy of Copy.
func TestCopyManyClonedAllOrAllButOne(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Past the size whose hash a goroutine reads beside the copy
	// (hashBackgroundBytes). Both cases' source; neither changes it.
	data := randomBytes(t, hashBackgroundBytes+17)
	sum := sum256(data)
	path := srcFile(t, data)
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprint("all=", all), func(t *testing.T) {
			src, dsts := manyFrom(t, path, 2)
			inject(t, &sys.ficlone, func(dst, s int) error {
				if !all && dst == int(dsts[0].Fd()) {
					return unix.EOPNOTSUPP
				}
				_, err := unix.Pwrite(dst, data, 0)
				return err
			})
			h := sha256.New()
			var progress countingCounter
			res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, Hash: h, Progress: &progress})
			for i, d := range dsts {
				if errs[i] != nil {
					t.Fatalf("destination %d: %v", i, errs[i])
				}
				mustHold(t, d, data)
				wantSum(t, h, res[i], sum, len(data))
				if res[i].Shared != 0 {
					t.Errorf("destination %d: shared %d", i, res[i].Shared)
				}
			}
			if progress.n != int64(len(data)) {
				t.Errorf("progress %d", progress.n)
			}
			if !all && (res[0].Strategy == Reflink || res[0].Reflink != DebugUnsupported) {
				t.Errorf("the destination left: %v, reflink %v", res[0].Strategy, res[0].Reflink)
			}
		})
	}
}
