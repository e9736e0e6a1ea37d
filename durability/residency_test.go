// SPDX-License-Identifier: MIT

package durability

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// pageVector is mincore's answer for path: one bool a page.
func pageVector(t *testing.T, path string) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal("mincore:", errno)
	}
	in := make([]bool, len(vec))
	for i, v := range vec {
		in[i] = v&1 != 0
	}
	return in
}

// describePages says which pages differ between two vectors, briefly.
func describePages(before, after []bool) string {
	var lost, gained []int
	for i := range before {
		switch {
		case before[i] && !after[i]:
			lost = append(lost, i)
		case !before[i] && after[i]:
			gained = append(gained, i)
		}
	}
	short := func(p []int) string {
		if len(p) > 8 {
			return fmt.Sprintf("%v... (%d)", p[:8], len(p))
		}
		return fmt.Sprint(p)
	}
	return fmt.Sprintf("dropped though cached before: %s; left cached though not before: %s", short(lost), short(gained))
}

// TestNoCacheKeepsWhatWasCached: --nocache leaves the source's page cache
// as it found it, whatever part of it was cached, through every path that
// drops source pages: behind the copy's writeback, at Commit, behind the
// source checksums of --verify.
func TestNoCacheKeepsWhatWasCached(t *testing.T) {
	t.Parallel()
	// More than the (depth+1) windows the pipeline holds: windows are
	// dropped behind the writeback before Commit as well as at it; and
	// at least one chunk of --verify's source checksums, which are read
	// (and dropped) behind the copy as well as at Commit.
	const window, depth = 1 << 20, 2
	const size = max((depth+2)*window, verifyChunk)
	data := randomData(size)
	warmings := []struct {
		name string
		read func(f *os.File) // brings the parts that are cached before the copy in
	}{
		{"all", func(f *os.File) { readRange(t, f, 0, size) }},
		{"first half", func(f *os.File) { readRange(t, f, 0, size/2) }},
		{"every other MiB", func(f *os.File) {
			for off := int64(0); off < size; off += 2 << 20 {
				readRange(t, f, off, 1<<20)
			}
		}},
		{"one page", func(f *os.File) { readRange(t, f, 2*window+window/2, 4096) }},
		{"none", func(*os.File) {}},
	}
	modes := []struct {
		name string
		o    Options
	}{
		{"sync=none", Options{}},
		{"sync=data", Options{Sync: SyncData}},
		{"verify", Options{Verify: true}},
	}
	// The warmings run side by side, each on a source of its own; the
	// modes of one warming run one after the other on its source, which
	// each evicts and warms again before it copies.
	for _, w := range warmings {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			src := sourceFile(t, t.TempDir(), data)
			for _, m := range modes {
				t.Run(m.name, func(t *testing.T) {
					dir, dest := setupDest(t)
					if onTmpfs(t, dir) {
						t.Skip("tmpfs pages are the file: nothing to drop")
					}
					if err := sysx.Evict(src); err != nil {
						t.Fatal(err)
					}
					// Readahead may bring in more than was read: what
					// counts is what is cached when the copy starts.
					w.read(src)
					before := pageVector(t, src.Name())
					dropped := recordSourceDrops(t, src)
					o := m.o
					o.NoCache, o.Source = true, src
					o.WritebackWindow, o.WritebackDepth = window, depth
					d, err := Create(fsdir.Cwd, dest, o)
					if err != nil {
						t.Fatal(err)
					}
					copyFrom(t, d, src, 1<<20)
					if err := d.Commit(src); err != nil {
						t.Fatal(err)
					}
					after := pageVector(t, src.Name())
					checkDrops(t, before, after, dropped())
					if ok, err := holds(dest, data); !ok {
						t.Errorf("DEST does not hold the copy (%v)", err)
					}
				})
			}
		})
	}
}

// recordSourceDrops records the POSIX_FADV_DONTNEED calls on src's
// descriptor, as page ranges.
func recordSourceDrops(t *testing.T, src *os.File) (dropped func() []span) {
	var mu sync.Mutex
	var spans []span
	fd := int(src.Fd())
	fadviseRecorders.Store(fd, func(off, n int64, advice int) {
		if advice == unix.FADV_DONTNEED {
			mu.Lock()
			spans = append(spans, span{off, n})
			mu.Unlock()
		}
	})
	t.Cleanup(func() { fadviseRecorders.Delete(fd) })
	return func() []span {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(spans)
	}
}

// fadviseRecorders are the tests' recorders of posix_fadvise, by
// descriptor (recordSourceDrops): fadvise passes every call by them, from
// TestMain on, so that the tests that record run side by side.
var fadviseRecorders sync.Map // int -> func(off, n int64, advice int)

func TestMain(m *testing.M) {
	real := defaultSys.fadvise
	defaultSys.fadvise = func(fd int, off, n int64, advice int) error {
		if r, ok := fadviseRecorders.Load(fd); ok {
			r.(func(off, n int64, advice int))(off, n, advice)
		}
		return real(fd, off, n, advice)
	}
	os.Exit(m.Run())
}

// checkDrops checks the source's page cache after a --nocache copy: no
// drop touched a page cached before the copy, which is cached still
// (unless something outside this test evicted it: then the drops say
// that it was not the copy), and no page that was not cached before is
// cached now.
func checkDrops(t *testing.T, before, after []bool, dropped []span) {
	t.Helper()
	page := int64(os.Getpagesize())
	for _, d := range dropped {
		end := int64(len(before)) * page
		if d.n > 0 {
			end = d.off + d.n
		}
		for p := (d.off + page - 1) / page; (p+1)*page <= end && p < int64(len(before)); p++ {
			if before[p] {
				t.Fatalf("the copy dropped page %d (in %d+%d), which was cached before it", p, d.off, d.n)
			}
		}
	}
	for i := range before {
		if after[i] && !before[i] {
			t.Fatalf("the source's page cache grew: %s", describePages(before, after))
		}
	}
	if !slices.Equal(before, after) {
		t.Logf("pages cached before were evicted by something else: %s", describePages(before, after))
	}
}

// TestNoCacheAbortKeepsWhatWasCached: a failed copy drops what it brought
// in, and only that.
func TestNoCacheAbortKeepsWhatWasCached(t *testing.T) {
	t.Parallel()
	// Less than the pipeline's first window: none is started (and dropped
	// behind the copy), so what is dropped, Abort drops.
	data := randomData(startWindow / 2)
	dir, dest, src := setup(t, data)
	if onTmpfs(t, dir) {
		t.Skip("tmpfs pages are the file: nothing to drop")
	}
	if err := sysx.Evict(src); err != nil {
		t.Fatal(err)
	}
	readRange(t, src, 2<<20, 1<<20)
	before := pageVector(t, src.Name())
	dropped := recordSourceDrops(t, src)
	d, err := Create(fsdir.Cwd, dest, Options{NoCache: true, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	copyFrom(t, d, src, 1<<20)
	d.Abort()
	checkDrops(t, before, pageVector(t, src.Name()), dropped())
	assertOld(t, dest)
}

// TestNoCacheResidencyUnknown: where the kernel will not say what was
// cached (cachestat's EPERM; before Linux 6.5, mincore for a file the
// caller does not own), nothing of the source is dropped: what was cached
// stays cached.
func TestNoCacheResidencyUnknown(t *testing.T) {
	// Four windows, so that the source is offered for dropping behind
	// the copy as well as at Commit; the first two are cached. The cases
	// run one after the other on one source, which each evicts and warms
	// again.
	const window = 256 << 10
	data := randomData(4 * window)
	src := sourceFile(t, t.TempDir(), data)
	for _, errno := range []unix.Errno{unix.EPERM, unix.ENOSYS} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			dir, dest := setupDest(t)
			if onTmpfs(t, dir) {
				t.Skip("tmpfs pages are the file: nothing to drop")
			}
			c := record(t)
			realTrusted := residencyTrusted
			t.Cleanup(func() { residencyTrusted = realTrusted })
			c.sys.cachestat = func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error { return errno }
			residencyTrusted = func(*unix.Stat_t) bool { return false }
			if err := sysx.Evict(src); err != nil {
				t.Fatal(err)
			}
			readRange(t, src, 0, 2*window)
			before := pageVector(t, src.Name())
			d := createRecorded(t, c, dest, Options{NoCache: true, Source: src, WritebackWindow: window})
			copyFrom(t, d, src, window)
			if err := d.Commit(src); err != nil {
				t.Fatal(err)
			}
			if got := c.filter("dontneed other"); len(got) != 0 {
				t.Errorf("the source was dropped though its residency was unknown: %q", got)
			}
			// A drop of the source takes every page cached before the
			// copy (the two windows read above); the kernel's own reclaim,
			// under another test's load, may take the odd one.
			after := pageVector(t, src.Name())
			var lost []int
			for i := range before {
				if before[i] && !after[i] {
					lost = append(lost, i)
				}
			}
			if len(lost) > 8 {
				t.Fatalf("%d pages were cached before and are not now: %v", len(lost), lost)
			}
			if got := c.filter("dontneed file"); len(got) == 0 {
				t.Error("the destination was not dropped")
			}
		})
	}
}

// readRange reads [off, off+n) of f, so that it is cached, and no more:
// without readahead, which would go on after the read returns (8 MiB of it
// on some disks) and cache pages of which nothing can be said.
func readRange(t *testing.T, f *os.File, off, n int64) {
	t.Helper()
	fd := int(f.Fd())
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	defer unix.Fadvise(fd, 0, 0, unix.FADV_NORMAL)
	buf := make([]byte, min(n, 1<<20))
	for end := off + n; off < end; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), end-off)]
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSourceCacheDrop: the ranges advised away are exactly those outside
// what was cached, within the range asked.
func TestSourceCacheDrop(t *testing.T) {
	t.Parallel()
	const k = 4096
	kept := []span{{1 * k, 1 * k}, {4 * k, 2 * k}}
	tests := []struct {
		off, n int64
		want   []string
	}{
		{0, 0, []string{"0+4096", "8192+8192", "24576+0"}},
		{0, 3 * k, []string{"0+4096", "8192+4096"}},
		{1 * k, 1 * k, nil},
		{2 * k, 2 * k, []string{"8192+8192"}},
		{5 * k, 4 * k, []string{"24576+12288"}},
		{8 * k, 0, []string{"32768+0"}},
	}
	for _, tt := range tests {
		var got []string
		sys := testSys()
		sys.fadvise = func(fd int, off, n int64, advice int) error {
			got = append(got, fmt.Sprintf("%d+%d", off, n))
			return nil
		}
		c := &sourceCache{sys: sys, src: os.Stdin, mode: dropOutside, kept: kept}
		c.drop(tt.off, tt.n)
		if !slices.Equal(got, tt.want) {
			t.Errorf("drop(%d, %d) advised %q, want %q", tt.off, tt.n, got, tt.want)
		}
	}
}

// TestRangeSetBounded: a source cached page by page is remembered in at
// most maxKeptSpans ranges, which cover every page that was cached.
func TestRangeSetBounded(t *testing.T) {
	t.Parallel()
	page := int64(os.Getpagesize())
	var r rangeSet
	var pages []int64
	for i := int64(0); i < 4*maxKeptSpans; i++ {
		off := 2 * i * page
		pages = append(pages, off)
		r.add(off, page)
	}
	if len(r.spans) > maxKeptSpans {
		t.Fatalf("%d ranges, want at most %d", len(r.spans), maxKeptSpans)
	}
	for i := 1; i < len(r.spans); i++ {
		if r.spans[i].off < r.spans[i-1].off+r.spans[i-1].n {
			t.Fatalf("ranges %v and %v overlap or are out of order", r.spans[i-1], r.spans[i])
		}
	}
	for _, off := range pages {
		if !slices.ContainsFunc(r.spans, func(s span) bool { return s.off <= off && off+page <= s.off+s.n }) {
			t.Fatalf("page at %d is cached but in no range", off)
		}
	}
	// Ranges far apart stay apart.
	var q rangeSet
	q.add(0, page)
	q.add(10*page, page)
	if len(q.spans) != 2 {
		t.Errorf("two pages apart made %v", q.spans)
	}
}
