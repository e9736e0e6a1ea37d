// SPDX-License-Identifier: MIT

package copier

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fastcp/internal/sysx"
	"fastcp/internal/testdata"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testSys returns calls of a test's own for its copies (Options.sys), the
// real ones until it replaces some: tests that replace calls run side by
// side.
func testSys() *sysCalls {
	s := defaultSys
	return &s
}

// testFlush is the checkpoints' flush (durability's in fastcp).
func testFlush(fd int) error {
	return sysx.IgnoringEINTR(func() error { return unix.Fdatasync(fd) })
}

// ownRings gives sys's copies ring memory of their own (sysCalls.rings),
// unmapped when the test ends: Auto then finds a ring free whatever the
// tests beside it hold, and a test may take them all.
func ownRings(t *testing.T, sys *sysCalls) {
	t.Helper()
	p := new(ringPool)
	sys.rings = p
	t.Cleanup(func() {
		for _, r := range p.free {
			munmap(r.mem)
		}
	})
}

// inject replaces a call or size of a test's sysCalls for the duration of
// the test (a subtest's replacement ends with the subtest).
func inject[T any](t *testing.T, p *T, v T) {
	t.Helper()
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// randomBytes returns n bytes that follow no pattern a copy at a wrong
// offset could match, from seeds of their own: two calls give different
// bytes. They live until t ends.
//
// From a MiB on, they are made in pieces, each from a seed of its own,
// into memory mapped for t and advised huge pages, unmapped when t ends:
// on the test VMs a 4 KiB page fault on fresh memory cost more than
// making its bytes, and the faults of fresh heap memory for these bytes
// were a third of the package's test CPU.
func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	if n < 1<<20 {
		return testdata.Bytes(n, rand.Uint64())
	}
	const huge = 2 << 20 // a huge page; the mapping is aligned to one
	mem, err := unix.Mmap(-1, 0, n+2*huge, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return testdata.Bytes(n, rand.Uint64())
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	skip := (huge - int(uintptr(unsafe.Pointer(&mem[0]))%huge)) % huge
	b := mem[skip : skip+n : skip+n]
	unix.Madvise(mem[skip:], unix.MADV_HUGEPAGE) // a hint: 4 KiB pages without it
	const piece = 16 << 10                       // a small heap allocation, reused
	for off := 0; off < n; off += piece {
		copy(b[off:], testdata.Bytes(min(piece, n-off), rand.Uint64()))
	}
	return b
}

// pair makes a source file holding data and an empty destination file.
func pair(t *testing.T, data []byte) (dst, src *os.File) {
	t.Helper()
	return pairFrom(t, srcFile(t, data))
}

// srcFile writes data into a file of t's own and returns its path: a
// source that the subtests of t share (pairFrom, manyFrom), written once
// rather than once per copy. None of them may change it.
func srcFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sourceFiles are a test's sources by size, each made the first time one
// of its sequential subtests asks for it (of), for the others to share.
type sourceFiles struct {
	t    *testing.T // the test, not a subtest: the bytes live until it ends
	dir  string     // the test's own, not a subtest's
	data map[int][]byte
}

func newSourceFiles(t *testing.T) *sourceFiles {
	return &sourceFiles{t: t, dir: t.TempDir(), data: map[int][]byte{}}
}

// of returns n random bytes and the path of the file holding them.
func (s *sourceFiles) of(t *testing.T, n int) ([]byte, string) {
	t.Helper()
	path := filepath.Join(s.dir, fmt.Sprint(n))
	data, ok := s.data[n]
	if !ok {
		data = randomBytes(s.t, n)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s.data[n] = data
	}
	return data, path
}

// pairFrom opens the source file at path and makes an empty destination
// file of t's own.
func pairFrom(t *testing.T, path string) (dst, src *os.File) {
	t.Helper()
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	dst, err = os.Create(filepath.Join(t.TempDir(), "dst"))
	if err != nil {
		src.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(); dst.Close() })
	return dst, src
}

// mustBegin fails unless the file f begins with want; what follows is
// not looked at. It reads f a piece at a time (testdata.ReadsAs).
func mustBegin(t *testing.T, f *os.File, want []byte) {
	t.Helper()
	r, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, diff, err := testdata.ReadsAs(io.LimitReader(r, int64(len(want))), want)
	if err != nil {
		t.Fatal(err)
	}
	if diff >= 0 {
		t.Fatalf("copy differs: got %d of the first %d bytes, first difference at %d", n, len(want), diff)
	}
}

func contents(t *testing.T, f *os.File) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustHold fails unless the file f holds exactly want, given as one
// slice or as parts one after the other. It reads f a piece at a time
// (testdata.ReadsAs).
func mustHold(t *testing.T, f *os.File, want ...[]byte) {
	t.Helper()
	r, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, diff, err := testdata.ReadsAs(r, want...)
	if err != nil {
		t.Fatal(err)
	}
	if diff >= 0 {
		total := 0
		for _, p := range want {
			total += len(p)
		}
		t.Fatalf("copy differs: got %d bytes, want %d, first difference at %d", n, total, diff)
	}
}

func mustEqual(t *testing.T, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("copy differs: got %d bytes, want %d, first difference at %d", len(got), len(want), i)
	}
}

// The temp directory of these tests is on the root filesystem (ext4 here),
// where FICLONE is refused and copy_file_range works.

var sizes = []int{0, 1, 4095, 4096, 4097, 1<<20 + 1, 3<<20 + 17}

func TestForcedStrategiesCopyExactly(t *testing.T) {
	t.Parallel()
	// By size, for every strategy, and their files; no case changes them.
	sources, paths := map[int][]byte{}, map[int]string{}
	for _, n := range sizes {
		sources[n] = randomBytes(t, n)
		paths[n] = srcFile(t, sources[n])
	}
	for _, s := range []Strategy{CopyFileRange, Sendfile, Splice, RW} {
		for _, n := range sizes {
			data, path := sources[n], paths[n]
			t.Run(fmt.Sprintf("%s/%d", s, n), func(t *testing.T) {
				dst, src := pairFrom(t, path)
				res, err := Copy(dst, src, Options{Strategy: s, BufferSize: 64 << 10})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, data)
				if res.Size != int64(n) || res.Bytes != int64(n) {
					t.Errorf("Size %d Bytes %d, want %d", res.Size, res.Bytes, n)
				}
				if res.Strategy != s || len(res.Fallbacks) != 0 {
					t.Errorf("strategy %v fallbacks %v, want %v and none", res.Strategy, res.Fallbacks, s)
				}
				if n > 0 && res.StatOf(s).Bytes != int64(n) {
					t.Errorf("%v moved %d bytes, want %d", s, res.StatOf(s).Bytes, n)
				}
			})
		}
	}
}

func TestAutoCountsEveryCall(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 5<<20)
	dst, src := pair(t, data)
	inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
		return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, 1<<20), flags)
	})
	rec := recordCalls(sys, CopyFileRange)
	res, err := Copy(dst, src, Options{sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	// Calls of at most 1 MiB, each continued (a signal may cut one
	// short), and none made only to find EOF: the last ends at the size.
	if got := res.StatOf(CopyFileRange).Calls; got != rec.calls() || rec.zeros() != 0 || rec.sum() != int64(len(data)) || got < 5 {
		t.Errorf("counted %d copy_file_range calls, made %v: want every call counted, at least 5, and none returning 0", got, rec.returns)
	}
}

// callRecord is what each call of a strategy's data call returned (for
// RW, the reads), and how many writes RW made: a test asserts what the
// copier did with each return, whatever the kernel's cut. (A copy by
// sendfile or copy_file_range through splice returns short when a signal
// arrives part-way, Go's preemption signal included.)
type callRecord struct {
	mu      sync.Mutex
	returns []int
	writes  int64
}

// recordCalls wraps sys's calls of strategy s, as they are when called.
func recordCalls(sys *sysCalls, s Strategy) *callRecord {
	r := new(callRecord)
	// note records a call's return (-1 for an error) and passes it on.
	note := func(n int, err error) (int, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		got := n
		if err != nil {
			got = -1
		}
		r.returns = append(r.returns, got)
		return n, err
	}
	switch s {
	case CopyFileRange:
		f := sys.copyFileRange
		sys.copyFileRange = func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
			return note(f(rfd, roff, wfd, woff, n, flags))
		}
	case Sendfile:
		f := sys.sendfile
		sys.sendfile = func(out, in int, off *int64, n int) (int, error) {
			return note(f(out, in, off, n))
		}
	case RW:
		rd, wr := sys.pread, sys.pwrite
		sys.pread = func(fd int, b []byte, off int64) (int, error) {
			return note(rd(fd, b, off))
		}
		sys.pwrite = func(fd int, b []byte, off int64) (int, error) {
			r.mu.Lock()
			r.writes++
			r.mu.Unlock()
			return wr(fd, b, off)
		}
	default:
		panic("recordCalls: " + s.String())
	}
	return r
}

// calls is how many calls s made in all, RW's writes included.
func (r *callRecord) calls() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.returns)) + r.writes
}

// sum is the bytes the data calls moved.
func (r *callRecord) sum() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, m := range r.returns {
		n += int64(max(m, 0))
	}
	return n
}

// zeros is how many data calls returned 0.
func (r *callRecord) zeros() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := 0
	for _, m := range r.returns {
		if m == 0 {
			k++
		}
	}
	return k
}

// endsInOneZero says the data calls moved bytes until exactly one, the
// last, returned 0: EOF found, and found once.
func (r *callRecord) endsInOneZero() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.returns)
	if n < 2 || r.returns[n-1] != 0 {
		return false
	}
	for _, m := range r.returns[:n-1] {
		if m <= 0 {
			return false
		}
	}
	return true
}

// failAfter wraps a copy_file_range that copies normally for the first
// `good` bytes (in calls of at most `chunk`) and then fails with errno.
func cfrFailAfter(good int64, chunk int, errno error) func(int, *int64, int, *int64, int, int) (int, error) {
	var done int64
	return func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
		if done >= good {
			return 0, errno
		}
		n = min(n, chunk, int(good-done))
		m, err := defaultSys.copyFileRange(rfd, roff, wfd, woff, n, flags)
		done += int64(m)
		return m, err
	}
}

var refusals = []unix.Errno{unix.ENOSYS, unix.EXDEV, unix.EINVAL, unix.EOPNOTSUPP, unix.EPERM, unix.EBADF, unix.ETXTBSY}

func TestRefusalBeforeAnyByteFallsBack(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20+1) // every case's source; none changes it
	path := srcFile(t, data)
	for _, errno := range refusals {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			inject(t, &sys.copyFileRange, cfrFailAfter(0, 1<<30, errno))
			res, err := Copy(dst, src, Options{sys: sys})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			fb := findFallback(res, CopyFileRange)
			if fb == nil || fb.To != Sendfile || fb.Offset != 0 || !errors.Is(fb.Err, errno) {
				t.Fatalf("fallbacks %+v, want copy_file_range -> sendfile at 0 with %v", res.Fallbacks, errno)
			}
			if res.Strategy != Sendfile || res.StatOf(Sendfile).Bytes != int64(len(data)) {
				t.Errorf("strategy %v sendfile bytes %d", res.Strategy, res.StatOf(Sendfile).Bytes)
			}
			if res.Offload != DebugUnsupported {
				t.Errorf("offload %v, want unsupported", res.Offload)
			}
		})
	}
}

func findFallback(res Result, from Strategy) *Fallback {
	for i := range res.Fallbacks {
		if res.Fallbacks[i].From == from {
			return &res.Fallbacks[i]
		}
	}
	return nil
}

func TestRefusalPartWayResumesAtOffset(t *testing.T) {
	t.Parallel()
	sys := testSys()
	const good = 300_000 // not block aligned on purpose
	// Every case's source; none changes it.
	data := randomBytes(t, 2<<20+3)
	path := srcFile(t, data)
	for _, errno := range refusals {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			inject(t, &sys.copyFileRange, cfrFailAfter(good, 100_000, errno))
			res, err := Copy(dst, src, Options{sys: sys})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			fb := findFallback(res, CopyFileRange)
			if fb == nil || fb.Offset != good || fb.To != Sendfile {
				t.Fatalf("fallbacks %+v, want copy_file_range -> sendfile at %d", res.Fallbacks, good)
			}
			if got := res.StatOf(CopyFileRange).Bytes; got != good {
				t.Errorf("copy_file_range moved %d, want %d", got, good)
			}
			if got := res.StatOf(Sendfile).Bytes; got != int64(len(data))-good {
				t.Errorf("sendfile moved %d, want %d", got, int64(len(data))-good)
			}
		})
	}
}

// Every hand-over down the chain resumes at the right offset: copy_file_range
// refused after 100 KB, sendfile after 200 KB more, splice after 300 KB more,
// rw finishes.
func TestChainOfPartialRefusals(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 4<<20)
	dst, src := pair(t, data)
	inject(t, &sys.copyFileRange, cfrFailAfter(100_000, 50_000, unix.EXDEV))
	var sent int64
	inject(t, &sys.sendfile, func(out, in int, off *int64, n int) (int, error) {
		if sent >= 200_000 {
			return 0, unix.EINVAL
		}
		m, err := defaultSys.sendfile(out, in, off, min(n, int(200_000-sent)))
		sent += int64(m)
		return m, err
	})
	var spliced int64
	inject(t, &sys.splice, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
		if roff != nil { // source -> pipe
			if spliced >= 300_000 {
				return 0, unix.EINVAL
			}
			n = min(n, int(300_000-spliced))
			m, err := defaultSys.splice(rfd, roff, wfd, woff, n, flags)
			spliced += m
			return m, err
		}
		return defaultSys.splice(rfd, roff, wfd, woff, n, flags)
	})
	res, err := Copy(dst, src, Options{sys: sys, BufferSize: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	want := []struct {
		from, to Strategy
		off      int64
	}{{Reflink, CopyFileRange, 0}, {CopyFileRange, Sendfile, 100_000}, {Sendfile, Splice, 300_000}, {Splice, RW, 600_000}}
	if len(res.Fallbacks) != len(want) {
		t.Fatalf("fallbacks %+v", res.Fallbacks)
	}
	for i, w := range want {
		f := res.Fallbacks[i]
		if f.From != w.from || f.To != w.to || f.Offset != w.off {
			t.Errorf("fallback %d = %v -> %v at %d, want %v -> %v at %d", i, f.From, f.To, f.Offset, w.from, w.to, w.off)
		}
	}
	if res.Strategy != RW || res.StatOf(RW).Bytes != int64(len(data))-600_000 {
		t.Errorf("strategy %v, rw moved %d", res.Strategy, res.StatOf(RW).Bytes)
	}
}

func TestZeroReturnOnFirstCallFallsBack(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 70_000)
	dst, src := pair(t, data)
	inject(t, &sys.copyFileRange, func(int, *int64, int, *int64, int, int) (int, error) { return 0, nil })
	res, err := Copy(dst, src, Options{sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	fb := findFallback(res, CopyFileRange)
	if fb == nil || !errors.Is(fb.Err, ErrZeroReturn) || fb.Offset != 0 {
		t.Fatalf("fallbacks %+v, want copy_file_range zero return at 0", res.Fallbacks)
	}
}

// A zero return after the strategy moved bytes is EOF, not a refusal. (The
// source is said to be a byte longer than it is, so that the data call's
// short return does not end the copy by itself: endsHere.)
func TestZeroReturnAfterProgressIsEOF(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 70_000)
	dst, src := pair(t, data)
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	st.Size++
	sys := testSys()
	rec := recordCalls(sys, CopyFileRange)
	res, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange, SourceStat: &st})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if got := res.StatOf(CopyFileRange).Calls; got != rec.calls() || !rec.endsInOneZero() || res.Size != int64(len(data)) {
		t.Errorf("copy_file_range calls %d returning %v, size %d; want data, then one 0 at EOF, each counted, and %d", got, rec.returns, res.Size, len(data))
	}
}

// A short transfer that ends at the source's size ends the copy: no call is
// made only to find EOF. A source that grew since its stat is read on to
// its real end, and one with no data where its size says (a pseudo file's
// 4096) is read until a call returns nothing.
func TestShortReturnAtTheSizeIsTheEnd(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 70_000) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{CopyFileRange, Sendfile, RW} {
		for _, c := range []struct {
			name     string
			statSize int64 // the size the copier is told (SourceStat)
			findsEOF bool  // a call returns 0; else none is made for EOF
		}{
			{"at-the-size", 70_000, false},
			{"grew-since", 60_000, true},
			{"short-of-the-size", 70_001, true},
		} {
			t.Run(s.String()+"/"+c.name, func(t *testing.T) {
				dst, src := pairFrom(t, path)
				var st unix.Stat_t
				if err := unix.Fstat(int(src.Fd()), &st); err != nil {
					t.Fatal(err)
				}
				st.Size = c.statSize
				sys := testSys()
				rec := recordCalls(sys, s)
				res, err := Copy(dst, src, Options{sys: sys, Strategy: s, SourceStat: &st})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, data)
				ends := rec.zeros() == 0
				if c.findsEOF {
					ends = rec.endsInOneZero()
				}
				if got := res.StatOf(s).Calls; got != rec.calls() || !ends || rec.sum() != 70_000 || res.Size != 70_000 {
					t.Errorf("%d calls counted, %d made, returning %v; size %d: want each counted, %s, and 70000",
						got, rec.calls(), rec.returns, res.Size, map[bool]string{true: "one 0 at the end", false: "no call returning 0"}[c.findsEOF])
				}
			})
		}
	}
}

// A zero return after progress but before the source's size is not taken
// for EOF by auto, which goes on with the next strategy from there.
func TestZeroReturnBeforeTheSizeFallsBack(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20)
	zeroAfter := func(good int64) func(int, *int64, int, *int64, int, int) (int, error) {
		var done int64
		return func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
			if done >= good {
				return 0, nil
			}
			m, err := defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, int(good-done)), flags)
			done += int64(m)
			return m, err
		}
	}
	t.Run("auto", func(t *testing.T) {
		dst, src := pair(t, data)
		inject(t, &sys.copyFileRange, zeroAfter(200_000))
		res, err := Copy(dst, src, Options{sys: sys})
		if err != nil {
			t.Fatal(err)
		}
		mustHold(t, dst, data)
		fb := findFallback(res, CopyFileRange)
		if fb == nil || fb.To != Sendfile || fb.Offset != 200_000 || !errors.Is(fb.Err, ErrEarlyZero) {
			t.Fatalf("fallbacks %+v, want copy_file_range -> sendfile at 200000, %v", res.Fallbacks, ErrEarlyZero)
		}
	})
	t.Run("forced", func(t *testing.T) {
		// No next strategy: EOF, and the short Result.Size tells.
		dst, src := pair(t, data)
		inject(t, &sys.copyFileRange, zeroAfter(200_000))
		res, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange})
		if err != nil || res.Size != 200_000 {
			t.Fatalf("err = %v, size %d, want EOF at 200000", err, res.Size)
		}
	})
}

// A forced strategy that is refused is an error naming it; nothing falls back.
func TestForcedRefusalIsAnError(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 10_000)
	dst, src := pair(t, data)
	inject(t, &sys.copyFileRange, cfrFailAfter(0, 1, unix.EXDEV))
	_, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange})
	var ce *Error
	if !errors.As(err, &ce) || !ce.Refused || ce.Strategy != CopyFileRange || !errors.Is(err, unix.EXDEV) {
		t.Fatalf("err = %v, want a refusal of copy_file_range with EXDEV", err)
	}
	if got := ErrnoText(ce.Err); got != "copy_file_range: EXDEV (Invalid cross-device link)" {
		t.Errorf("ErrnoText = %q", got)
	}
	if fi, _ := dst.Stat(); fi.Size() != 0 {
		t.Errorf("destination has %d bytes after a refusal", fi.Size())
	}
}

// FICLONE on ext4 (the test directory) is refused: forced, it is an error;
// with --reflink=always too; in auto mode it falls back to copy_file_range.
func TestReflinkRefusedOnExt4(t *testing.T) {
	t.Parallel()
	var st unix.Statfs_t
	if err := unix.Statfs(t.TempDir(), &st); err != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skip("the test directory is not on ext4")
	}
	data := randomBytes(t, 10_000)
	for _, o := range []Options{{Strategy: Reflink}, {Reflink: ReflinkAlways}} {
		dst, src := pair(t, data)
		_, err := Copy(dst, src, o)
		var ce *Error
		if !errors.As(err, &ce) || !ce.Refused || ce.Strategy != Reflink {
			t.Fatalf("%+v: err = %v, want reflink refused", o, err)
		}
	}
	dst, src := pair(t, data)
	res, err := Copy(dst, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Reflink != DebugUnsupported || res.Offload != DebugYes || res.Strategy != CopyFileRange {
		t.Errorf("reflink %v offload %v strategy %v", res.Reflink, res.Offload, res.Strategy)
	}
	// --reflink=never avoids copy_file_range, which may share extents.
	dst, src = pair(t, data)
	res, err = Copy(dst, src, Options{Reflink: ReflinkNever})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Offload != DebugAvoided || res.StatOf(CopyFileRange).Calls != 0 || res.StatOf(Reflink).Calls != 0 {
		t.Errorf("reflink=never: offload %v, calls %+v", res.Offload, res.Stats)
	}
	// --sparse=never writes every zero: no clone, no copy_file_range,
	// either of which may share extents or leave holes (cp avoids both).
	dst, src = pair(t, data)
	res, err = Copy(dst, src, Options{Sparse: SparseNever})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Offload != DebugAvoided || res.Reflink != DebugNo || res.StatOf(CopyFileRange).Calls != 0 || res.StatOf(Reflink).Calls != 0 {
		t.Errorf("sparse=never: reflink %v offload %v, calls %+v", res.Reflink, res.Offload, res.Stats)
	}
}

func TestShortCounts(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20+1) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{CopyFileRange, Sendfile, Splice, RW} {
		t.Run(s.String(), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
				return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, 4097), flags)
			})
			inject(t, &sys.sendfile, func(out, in int, off *int64, n int) (int, error) {
				return defaultSys.sendfile(out, in, off, min(n, 4097))
			})
			inject(t, &sys.splice, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
				return defaultSys.splice(rfd, roff, wfd, woff, min(n, 4097), flags)
			})
			inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
				return defaultSys.pwrite(fd, b[:min(len(b), 4097)], off)
			})
			res, err := Copy(dst, src, Options{sys: sys, Strategy: s})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if res.StatOf(s).Calls < int64(len(data)/4097) {
				t.Errorf("%d calls: short counts were not continued call by call", res.StatOf(s).Calls)
			}
		})
	}
}

func TestEINTRIsRetried(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, Splice, RW} {
		t.Run(s.String(), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			flip := false
			eintr := func() bool { flip = !flip; return flip }
			inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
				if eintr() {
					return 0, unix.EINTR
				}
				return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, 100_000), flags)
			})
			inject(t, &sys.sendfile, func(out, in int, off *int64, n int) (int, error) {
				if eintr() {
					return 0, unix.EINTR
				}
				return defaultSys.sendfile(out, in, off, min(n, 100_000))
			})
			inject(t, &sys.splice, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
				if eintr() {
					return 0, unix.EINTR
				}
				return defaultSys.splice(rfd, roff, wfd, woff, n, flags)
			})
			inject(t, &sys.pread, func(fd int, b []byte, off int64) (int, error) {
				if eintr() {
					return 0, unix.EINTR
				}
				return defaultSys.pread(fd, b, off)
			})
			res, err := Copy(dst, src, Options{sys: sys, Strategy: s, BufferSize: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if len(res.Fallbacks) > 1 || (s != Auto && len(res.Fallbacks) != 0) {
				t.Errorf("EINTR caused fallbacks: %+v", res.Fallbacks)
			}
		})
	}
}

// A real failure after progress is returned as is: no fallback hides it.
func TestRealFailureIsNotHidden(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Every case's source; none changes it, and no case reads its bytes.
	path := srcFile(t, randomBytes(t, 1<<20))
	for _, errno := range []unix.Errno{unix.EIO, unix.ENOSPC, unix.EDQUOT, unix.ENOMEM, unix.EFBIG, unix.EROFS} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			inject(t, &sys.copyFileRange, cfrFailAfter(200_000, 100_000, errno))
			res, err := Copy(dst, src, Options{sys: sys})
			var ce *Error
			if !errors.As(err, &ce) || ce.Refused || !errors.Is(err, errno) || ce.Offset != 200_000 {
				t.Fatalf("err = %#v, want %v at 200000", err, errno)
			}
			if fb := findFallback(res, CopyFileRange); fb != nil {
				t.Errorf("fell back from copy_file_range after %v: %+v", errno, fb)
			}
			if res.StatOf(Sendfile).Calls+res.StatOf(RW).Calls != 0 {
				t.Errorf("another strategy ran after %v", errno)
			}
			if res.Strategy != CopyFileRange {
				t.Errorf("Result.Strategy is %v, want copy_file_range, which failed", res.Strategy)
			}
		})
	}
}

func TestRWWriteFailureNamesTheWriteSide(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20)
	dst, src := pair(t, data)
	var written int
	inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
		if written >= 128<<10 {
			return 0, unix.ENOSPC
		}
		m, err := defaultSys.pwrite(fd, b[:min(len(b), 128<<10)], off)
		written += m
		return m, err
	})
	_, err := Copy(dst, src, Options{sys: sys, Strategy: RW, BufferSize: 64 << 10})
	var ce *Error
	if !errors.As(err, &ce) || ce.Side != SideWrite || !errors.Is(err, unix.ENOSPC) || ce.Offset != 128<<10 {
		t.Fatalf("err = %#v, want ENOSPC on the write side at 131072", err)
	}
	// rw is the last resort: even a "refusal" errno is a real error there.
	inject(t, &sys.pwrite, func(int, []byte, int64) (int, error) { return 0, unix.EPERM })
	inject(t, &sys.copyFileRange, cfrFailAfter(0, 1, unix.EXDEV))
	inject(t, &sys.sendfile, func(int, int, *int64, int) (int, error) { return 0, unix.EINVAL })
	inject(t, &sys.splice, func(int, *int64, int, *int64, int, int) (int64, error) { return 0, unix.EINVAL })
	dst, src = pair(t, data)
	_, err = Copy(dst, src, Options{sys: sys})
	if !errors.As(err, &ce) || ce.Refused || ce.Strategy != RW || !errors.Is(err, unix.EPERM) {
		t.Fatalf("err = %#v, want rw's EPERM as a real error", err)
	}
}

func TestReadFailureNamesTheReadSide(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 1<<20)
	dst, src := pair(t, data)
	inject(t, &sys.pread, func(fd int, b []byte, off int64) (int, error) {
		if off >= 256<<10 {
			return 0, unix.EIO
		}
		return defaultSys.pread(fd, b, off)
	})
	_, err := Copy(dst, src, Options{sys: sys, Strategy: RW, BufferSize: 64 << 10})
	var ce *Error
	if !errors.As(err, &ce) || ce.Side != SideRead || !errors.Is(err, unix.EIO) || ce.Offset != 256<<10 {
		t.Fatalf("err = %#v, want EIO reading at 262144", err)
	}
}

// makeSparse writes data at the given offsets of a file of the given size.
func makeSparse(t *testing.T, path string, size int64, chunks map[int64][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for off, b := range chunks {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// sparseParts returns what a file that makeSparse made holds, in parts
// for mustHold: the chunks (none overlapping another) and the zeros
// between and after them, without a copy of either. A whole-file buffer
// read back from the file was much of the sparse tests' time.
func sparseParts(size int64, chunks map[int64][]byte) [][]byte {
	var parts [][]byte
	zeros := func(n int64) {
		for n > 0 {
			k := min(n, int64(len(zeroBlock)))
			parts = append(parts, zeroBlock[:k])
			n -= k
		}
	}
	at := int64(0)
	for _, off := range slices.Sorted(maps.Keys(chunks)) {
		if off >= size {
			break
		}
		zeros(off - at)
		b := chunks[off]
		b = b[:min(int64(len(b)), size-off)]
		parts = append(parts, b)
		at = off + int64(len(b))
	}
	zeros(size - at)
	return parts
}

// zeroBlock is the zeros of sparseParts, never written: its pages are
// the kernel's zero page, not memory of the test's.
var zeroBlock [1 << 20]byte

// sumParts is the SHA-256 of the parts one after the other.
func sumParts(parts [][]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func blocks(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}

func TestSparseHolesStayHoles(t *testing.T) {
	t.Parallel()
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, Splice, RW} {
		t.Run(s.String(), func(t *testing.T) {
			dir := t.TempDir()
			const size = 3<<30 + 12345
			chunks := map[int64][]byte{
				0:                  randomBytes(t, 8192),
				0x7ffff000 - 16384: randomBytes(t, 65536), // straddles the 2 GiB call limit
				3 << 30:            randomBytes(t, 4096),
			}
			makeSparse(t, filepath.Join(dir, "src"), size, chunks)
			src, _ := os.Open(filepath.Join(dir, "src"))
			defer src.Close()
			dst, _ := os.Create(filepath.Join(dir, "dst"))
			defer dst.Close()
			res, err := Copy(dst, src, Options{Strategy: s})
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := dst.Stat()
			if fi.Size() != size || res.Size != size {
				t.Fatalf("size %d (result %d), want %d", fi.Size(), res.Size, size)
			}
			for off, b := range chunks {
				got := make([]byte, len(b))
				if _, err := dst.ReadAt(got, off); err != nil {
					t.Fatal(err)
				}
				mustEqual(t, got, b)
			}
			if sb, db := blocks(t, src.Name()), blocks(t, dst.Name()); db > sb {
				t.Errorf("destination has %d blocks, source %d: holes were filled", db, sb)
			}
			if res.Sparse != DetectSeekHole || res.Extents != 3 {
				t.Errorf("sparse %v extents %d, want SEEK_HOLE and 3", res.Sparse, res.Extents)
			}
			if res.Holes+res.Bytes != size {
				t.Errorf("holes %d + bytes %d != size %d", res.Holes, res.Bytes, size)
			}
		})
	}
}

func TestSparseNeverWritesEveryByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeSparse(t, filepath.Join(dir, "src"), 8<<20, map[int64][]byte{1 << 20: randomBytes(t, 4096)})
	src, _ := os.Open(filepath.Join(dir, "src"))
	defer src.Close()
	dst, _ := os.Create(filepath.Join(dir, "dst"))
	defer dst.Close()
	res, err := Copy(dst, src, Options{Sparse: SparseNever, Reflink: ReflinkNever})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sparse != DetectNone || res.Bytes != 8<<20 {
		t.Errorf("sparse %v bytes %d", res.Sparse, res.Bytes)
	}
	if db := blocks(t, dst.Name()); db < (8<<20)/512 {
		t.Errorf("destination has %d blocks, want a fully allocated file", db)
	}
}

func TestSparseAlwaysTurnsZeroBlocksIntoHoles(t *testing.T) {
	t.Parallel()
	data := make([]byte, 4<<20) // written zeros, not holes
	copy(data[1<<20:], randomBytes(t, 5000))
	copy(data[len(data)-10:], "tail bytes")
	dst, src := pair(t, data)
	res, err := Copy(dst, src, Options{Sparse: SparseAlways})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Strategy != RW || res.Sparse != DetectZeros {
		t.Errorf("strategy %v sparse %v, want rw and zeros", res.Strategy, res.Sparse)
	}
	if db := blocks(t, dst.Name()); db > 48 {
		t.Errorf("destination has %d blocks, want the zero blocks left as holes", db)
	}
	// Ending in zeros: the size still comes out right.
	data = append(randomBytes(t, 5000), make([]byte, 1<<20)...)
	dst, src = pair(t, data)
	if _, err := Copy(dst, src, Options{Sparse: SparseAlways}); err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
}

// A source whose st_size is 0 but which has content (as in /proc).
func TestPseudoFileReadUntilEOF(t *testing.T) {
	t.Parallel()
	for _, s := range []Strategy{Auto, Sendfile, Splice, RW} {
		t.Run(s.String(), func(t *testing.T) {
			// The mount table changes when anything on the machine
			// mounts or unmounts (other tests do, many times a
			// second): a copy counts only when the table read the same
			// before and after it.
			for try := 0; ; try++ {
				src, err := os.Open("/proc/self/mountinfo")
				if err != nil {
					t.Skip(err)
				}
				want, _ := os.ReadFile("/proc/self/mountinfo")
				dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
				if err != nil {
					t.Fatal(err)
				}
				res, err := Copy(dst, src, Options{Strategy: s})
				src.Close()
				if err != nil {
					t.Fatal(err)
				}
				got := contents(t, dst)
				dst.Close()
				after, _ := os.ReadFile("/proc/self/mountinfo")
				if !bytes.Equal(want, after) && try < 20 {
					continue
				}
				if len(got) == 0 || len(got) != len(want) || res.Size != int64(len(got)) {
					t.Fatalf("copied %d bytes (result %d), a fresh read gives %d", len(got), res.Size, len(want))
				}
				return
			}
		})
	}
}

// Stream sources and destinations: a pipe, a socket.
func TestStreams(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 3<<20+5)
	path := srcFile(t, data) // the pipe destinations' source; none changes it
	feed := func(w io.WriteCloser) {
		w.Write(data)
		w.Close()
	}
	for _, s := range []Strategy{Auto, Sendfile, Splice, RW} {
		t.Run("pipe-source/"+s.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go feed(w)
			dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			res, err := Copy(dst, r, Options{Strategy: s})
			if s == Sendfile && err != nil {
				var ce *Error
				if errors.As(err, &ce) && ce.Refused {
					return // sendfile may not read from a pipe; refusing is right
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			if res.Size != int64(len(data)) {
				t.Errorf("size %d", res.Size)
			}
		})
		t.Run("pipe-destination/"+s.String(), func(t *testing.T) {
			src, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			type read struct{ n, diff int }
			got := make(chan read)
			go func() { n, diff, _ := testdata.ReadsAs(r, data); got <- read{n, diff} }()
			_, err = Copy(w, src, Options{Strategy: s})
			w.Close()
			b := <-got
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if b.diff >= 0 {
				t.Fatalf("copy differs: got %d bytes, want %d, first difference at %d", b.n, len(data), b.diff)
			}
		})
	}
}

// A socket source goes through splice's private pipe. When the pipe cannot
// be emptied into the destination, the bytes already taken from the stream
// must not be lost: they are written with read/write and the copy goes on.
func TestSpliceOutRefusedKeepsStreamBytes(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 2<<20+7)
	a, b, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	go func() { a.Write(data); a.Close() }()
	dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	dstFd := int(dst.Fd())
	outCalls := 0
	inject(t, &sys.splice, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int64, error) {
		if wfd == dstFd {
			outCalls++
			if outCalls > 2 {
				return 0, unix.EINVAL
			}
		}
		return defaultSys.splice(rfd, roff, wfd, woff, n, flags)
	})
	res, err := Copy(dst, b, Options{sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if fb := findFallback(res, Splice); fb == nil || fb.To != RW {
		t.Errorf("fallbacks %+v, want splice -> rw", res.Fallbacks)
	}
}

func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "sock-a"), os.NewFile(uintptr(fds[1]), "sock-b"), nil
}

type countingCounter struct{ n int64 }

func (c *countingCounter) Add(n int64) { c.n += n }

func TestProgressAccountsForEveryByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const size = 64 << 20
	makeSparse(t, filepath.Join(dir, "src"), size, map[int64][]byte{4 << 20: randomBytes(t, 1<<20)})
	src, _ := os.Open(filepath.Join(dir, "src"))
	defer src.Close()
	dst, _ := os.Create(filepath.Join(dir, "dst"))
	defer dst.Close()
	var c countingCounter
	var written int64
	_, err := Copy(dst, src, Options{Progress: &c, Written: func(off, n int64) error { written += n; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if c.n != size {
		t.Errorf("progress counted %d, want %d (data and holes)", c.n, size)
	}
	if written != 1<<20 {
		t.Errorf("Written hook saw %d bytes, want the 1 MiB of data", written)
	}
}

func TestMemoSkipsKnownRefusals(t *testing.T) {
	t.Parallel()
	sys := testSys()
	var memo Memo
	calls := 0
	inject(t, &sys.copyFileRange, func(int, *int64, int, *int64, int, int) (int, error) { calls++; return 0, unix.EXDEV })
	for i := 0; i < 3; i++ {
		data := randomBytes(t, 10_000)
		dst, src := pair(t, data)
		res, err := Copy(dst, src, Options{sys: sys, Memo: &memo})
		if err != nil {
			t.Fatal(err)
		}
		mustHold(t, dst, data)
		if fb := findFallback(res, CopyFileRange); fb == nil || fb.Memo != (i > 0) {
			t.Errorf("file %d: fallbacks %+v", i, res.Fallbacks)
		}
	}
	if calls != 1 {
		t.Errorf("copy_file_range called %d times over 3 files, want 1", calls)
	}
}

func TestRefusalClassification(t *testing.T) {
	t.Parallel()
	for _, e := range refusals {
		if !refusal(e) {
			t.Errorf("%v should be a refusal", e)
		}
	}
	if !refusal(unix.ENOTTY) || !refusal(ErrZeroReturn) || !refusal(os.NewSyscallError("x", unix.EXDEV)) {
		t.Error("ENOTTY, zero return and wrapped errnos are refusals")
	}
	for _, e := range []unix.Errno{unix.EIO, unix.ENOSPC, unix.EDQUOT, unix.ENOMEM, unix.EFBIG, unix.EROFS, unix.EACCES, unix.ENOENT} {
		if refusal(e) {
			t.Errorf("%v must be a real failure", e)
		}
	}
}

// With an O_SYNC/O_DSYNC destination, auto skips the offload strategies.
func TestSyncWritesPreferRW(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 3<<20)
	dst, src := pair(t, data)
	res, err := Copy(dst, src, Options{SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	if res.Strategy != RW || res.Offload != DebugAvoided {
		t.Errorf("strategy %v offload %v, want rw and avoided", res.Strategy, res.Offload)
	}
	for _, s := range []Strategy{CopyFileRange, Sendfile, Splice} {
		if res.StatOf(s).Calls != 0 {
			t.Errorf("%v was tried", s)
		}
	}
}

// A file of nothing but holes never reaches a data call: a forced strategy
// is probed so that a refusal is still a refusal.
func TestForcedStrategyOnAllHoles(t *testing.T) {
	t.Parallel()
	sys := testSys()
	dir := t.TempDir()
	makeSparse(t, filepath.Join(dir, "src"), 16<<20, nil)
	for _, tt := range []struct {
		o       Options
		refused bool
	}{
		{Options{sys: sys, Strategy: Reflink}, true}, // ext4 cannot clone
		{Options{sys: sys, Reflink: ReflinkAlways}, true},
		{Options{sys: sys, Strategy: CopyFileRange}, false},
		{Options{sys: sys, Strategy: Sendfile}, false},
		{Options{sys: sys, Strategy: Splice}, false},
		{Options{sys: sys, Strategy: RW}, false},
	} {
		src, _ := os.Open(filepath.Join(dir, "src"))
		dst, _ := os.Create(filepath.Join(dir, "dst"))
		inject(t, &sys.copyFileRange, cfrFailAfter(0, 1, unix.EXDEV)) // as across filesystems
		res, err := Copy(dst, src, tt.o)
		var ce *Error
		switch {
		case tt.refused:
			if !errors.As(err, &ce) || !ce.Refused {
				t.Errorf("%+v: err = %v, want a refusal", tt.o, err)
			}
		case tt.o.Strategy == CopyFileRange:
			if !errors.As(err, &ce) || !ce.Refused || !errors.Is(err, unix.EXDEV) {
				t.Errorf("copy_file_range across filesystems: err = %v, want the EXDEV refusal", err)
			}
		default:
			if err != nil || res.Size != 16<<20 {
				t.Errorf("%+v: err %v size %d", tt.o, err, res.Size)
			}
			if fi, _ := dst.Stat(); fi.Size() != 16<<20 || blocks(t, dst.Name()) != 0 {
				t.Errorf("%+v: size %d blocks %d, want 16 MiB of holes", tt.o, fi.Size(), blocks(t, dst.Name()))
			}
		}
		src.Close()
		dst.Close()
	}
}

// An error from the Written hook (a failed writeback) ends the copy at
// once, with no fallback.
func TestWrittenHookErrorStopsTheCopy(t *testing.T) {
	t.Parallel()
	// copy_file_range moves a call's bytes at a time, and the hook fails
	// once two calls' bytes are written: the source is another call's
	// bytes and a tail past that. Its bytes are not checked, but a source
	// of holes would be walked (and --sparse=never takes no
	// copy_file_range). Both cases' source; neither changes it.
	const call = 1 << 20
	path := srcFile(t, randomBytes(t, 3*call+5))
	// EINVAL is what a strategy's refusal says too: from the hook, it is
	// the hook's error, which no strategy after this one would escape.
	for _, errno := range []unix.Errno{unix.EIO, unix.EINVAL} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			sys := testSys()
			dst, src := pairFrom(t, path)
			hookErr := os.NewSyscallError("sync_file_range", errno)
			var seen int64
			inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
				return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, call), flags)
			})
			res, err := Copy(dst, src, Options{sys: sys, Written: func(off, n int64) error {
				seen += n
				if seen >= 2*call {
					return hookErr
				}
				return nil
			}})
			var ce *Error
			if !errors.As(err, &ce) || ce.Refused || ce.Side != SideWrite || !errors.Is(err, errno) {
				t.Fatalf("err = %#v, want the hook's %v on the write side", err, errno)
			}
			if res.Bytes != 2*call || len(res.Fallbacks) != 1 {
				t.Errorf("moved %d bytes, fallbacks %+v: want 2 MiB and only reflink's", res.Bytes, res.Fallbacks)
			}
		})
	}
}
