// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fastcp/internal/testdata"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// calls records the durability system calls a test makes, in order, as
// short strings: "start OFF+N", "wait OFF+N", "fdatasync file", "fsync
// file", "fsync dir", "close", "rename", "opendir DIR", "dontneed".
type calls struct {
	sys   *sysCalls  // the recorders, for the destinations of the test
	mu    sync.Mutex // background flushes log from their goroutine
	log   []string
	fd    int   // the destination's descriptor, set by createRecorded
	dups  []int // duplicates of fd (background flushes)
	dirFd int
}

func (c *calls) add(s string) {
	c.mu.Lock()
	c.log = append(c.log, s)
	c.mu.Unlock()
}

// filter returns the entries that start with one of prefixes.
func (c *calls) filter(prefixes ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.log {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// testSys returns system calls of a test's own for its destinations
// (Options.sys), the real ones until it replaces some: tests that replace
// calls run side by side.
func testSys() *sysCalls {
	s := defaultSys
	return &s
}

// record returns system calls (c.sys) that log and then make the real
// call, for the test's destinations (createRecorded, or Options.sys); a
// test then replaces single ones to inject failures.
func record(t *testing.T) *calls {
	t.Helper()
	c := &calls{sys: testSys(), fd: -1, dirFd: -1}
	s := c.sys
	oFsync, oFdatasync, oSFR, oFadvise, oRename, oClose, oOpenDir, oDup :=
		s.fsync, s.fdatasync, s.syncFileRange, s.fadvise, s.renameat, s.closeFile, s.openDir, s.dupFd
	s.fsync = func(fd int) error {
		c.add("fsync " + c.what(fd))
		return oFsync(fd)
	}
	s.fdatasync = func(fd int) error {
		c.add("fdatasync " + c.what(fd))
		return oFdatasync(fd)
	}
	s.syncFileRange = func(fd int, off, n int64, flags int) error {
		kind := "start"
		if flags == sfrWait {
			kind = "wait"
		} else if flags != sfrStart {
			kind = fmt.Sprintf("flags=%d", flags)
		}
		c.add(fmt.Sprintf("%s %d+%d", kind, off, n))
		return oSFR(fd, off, n, flags)
	}
	s.fadvise = func(fd int, off, n int64, advice int) error {
		if advice == unix.FADV_DONTNEED {
			c.add(fmt.Sprintf("dontneed %s %d+%d", c.what(fd), off, n))
		}
		return oFadvise(fd, off, n, advice)
	}
	s.renameat = func(fromDir int, from string, toDir int, to string) error {
		c.add("rename")
		return oRename(fromDir, from, toDir, to)
	}
	s.dupFd = func(fd int) (int, error) {
		dup, err := oDup(fd)
		if err == nil && fd == c.fd {
			c.mu.Lock()
			c.dups = append(c.dups, dup)
			c.mu.Unlock()
		}
		return dup, err
	}
	s.closeFile = func(f *sysx.File) error {
		c.add("close")
		return oClose(f)
	}
	s.openDir = func(path string) (int, error) {
		fd, err := oOpenDir(path)
		c.dirFd = fd
		c.add("opendir " + path)
		return fd, err
	}
	return c
}

func (c *calls) what(fd int) string {
	// An in-place destination's directory is opened after the file was
	// closed and may get the same number: the directory, when open, is
	// the later meaning.
	switch fd {
	case c.dirFd:
		return "dir"
	case c.fd:
		return "file"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.dups {
		if d == fd {
			return "file"
		}
	}
	return "other"
}

// setup makes dir/dest holding old and a source file holding data.
func setup(t *testing.T, data []byte) (dir, dest string, src *os.File) {
	t.Helper()
	dir, dest = setupDest(t)
	return dir, dest, sourceFile(t, dir, data)
}

// setupDest makes dir/dest holding old, for a copy from a source of the
// caller's.
func setupDest(t *testing.T) (dir, dest string) {
	t.Helper()
	dir = t.TempDir()
	dest = filepath.Join(dir, "dest")
	if err := os.WriteFile(dest, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, dest
}

// setupUnread is setup for a copy that never looks at its source's
// bytes (no --verify, no --nocache, no default FlushEvery asking whether
// they are cached): a hole of n bytes stands for them.
func setupUnread(t *testing.T, n int) (dir, dest string, src *os.File) {
	t.Helper()
	dir, dest = setupDest(t)
	src = sourceFile(t, dir, nil)
	if err := src.Truncate(int64(n)); err != nil {
		t.Fatal(err)
	}
	return dir, dest, src
}

// sourceFile makes dir/src holding data, open read-write until t ends.
// Subtests that only read their source (or give it to Commit, which only
// reads it) share one, made by their parent.
func sourceFile(t *testing.T, dir string, data []byte) *os.File {
	t.Helper()
	// The source is written back, so its pages are clean and cached, as
	// after a read.
	sp := filepath.Join(dir, "src")
	src, err := os.OpenFile(sp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := src.Sync(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// copyInto writes data into d as the copier does, in pieces of chunk bytes,
// calling Written after each.
// createRecorded is Create for a test that records the calls made on the
// destination's descriptor.
func createRecorded(t *testing.T, c *calls, path string, o Options) *Destination {
	t.Helper()
	o.sys = c.sys
	d, err := Create(fsdir.Cwd, path, o)
	if err != nil {
		t.Fatal(err)
	}
	c.fd = d.fd
	return d
}

func copyInto(t *testing.T, d *Destination, data []byte, chunk int) {
	t.Helper()
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		if _, err := d.File.WriteAt(data[off:end], int64(off)); err != nil {
			t.Fatal(err)
		}
		d.Written(int64(off), int64(end-off))
	}
}

// randomData returns n bytes without a pattern, the same for every call.
func randomData(n int) []byte { return testdata.Bytes(n, 0x0102030000000000) }

// holds reports whether the file at path holds exactly data, read in
// pieces (testdata.ReadsAs) rather than into a fresh slice of its size.
func holds(path string, data []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, diff, err := testdata.ReadsAs(f, data)
	return diff < 0 && err == nil, err
}

// assertOld fails unless dest still holds the old contents.
func assertOld(t *testing.T, dest string) {
	t.Helper()
	b, err := os.ReadFile(dest)
	if err != nil || string(b) != "old contents\n" {
		t.Errorf("the old DEST must be intact: %q, %v", b, err)
	}
}

// assertNoTemps fails if a temporary file is left in dir.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// fdFlags reads the file status flags of fd from /proc/self/fdinfo.
func fdFlags(t *testing.T, fd int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no flags in fdinfo of %d", fd)
	return 0
}

func TestOpenFlagsSetAtOpen(t *testing.T) {
	t.Parallel()
	const oSync, oDSync = 0o4010000, 0o10000 // as /proc/PID/fdinfo prints them
	if unix.O_SYNC != oSync || unix.O_DSYNC != oDSync {
		t.Fatalf("O_SYNC %#o, O_DSYNC %#o: not the x86/arm64 values this test expects", unix.O_SYNC, unix.O_DSYNC)
	}
	for _, inPlace := range []bool{false, true} {
		for _, m := range SyncModes() {
			t.Run(fmt.Sprintf("%s/inplace=%v", m, inPlace), func(t *testing.T) {
				dir, dest, _ := setup(t, nil)
				d, err := Create(fsdir.Cwd, dest, Options{Sync: m, InPlace: inPlace, Truncate: inPlace})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Abort()
				got := fdFlags(t, d.fd) & oSync
				want := map[SyncMode]int{SyncOSync: oSync, SyncODSync: oDSync}[m]
				if got != want {
					t.Errorf("flags & O_SYNC = %#o, want %#o", got, want)
				}
				_ = dir
			})
		}
	}
}

func TestCommitOrder(t *testing.T) {
	t.Parallel()
	// Three whole windows and a little more, written a quarter window at
	// a time.
	const window = 64 << 10
	data := randomData(3*window + 123)
	src := sourceFile(t, t.TempDir(), data)
	win := func(op string, i int) string { return fmt.Sprintf("%s %d+%d", op, i*window, window) }
	for _, m := range SyncModes() {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			c := record(t)
			d := createRecorded(t, c, dest, Options{Sync: m, WritebackWindow: window, WritebackDepth: 1, FlushEvery: -1})
			copyInto(t, d, data, window/4)
			if err := d.Commit(src); err != nil {
				t.Fatal(err)
			}
			var want []string
			if m != SyncNone {
				// Three full windows started; each waited for once the
				// next one is in flight (depth 1), the last left to the
				// flush.
				want = []string{"opendir " + dir, win("start", 0), win("start", 1), win("wait", 0),
					win("start", 2), win("wait", 1),
					string(m.FlushOp()) + " file", "close", "rename", "fsync dir"}
			} else {
				want = []string{"opendir " + dir, "close", "rename"}
			}
			if got := c.filter(""); !equal(got, want) {
				t.Errorf("calls:\n got %q\nwant %q", got, want)
			}
			assertNoTemps(t, dir)
			if ok, err := holds(dest, data); !ok {
				t.Errorf("DEST does not hold the copy (%v)", err)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWrittenWindowsAndHoles(t *testing.T) {
	t.Parallel()
	dir, dest, _ := setup(t, nil)
	c := record(t)
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Sync: SyncData, WritebackWindow: 1 << 20, WritebackDepth: 2, FlushEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	c.fd = d.fd
	// A big write covering several windows at once (a 64 MiB
	// copy_file_range call does that), a hole, then small writes.
	d.Written(0, 3<<20+512<<10)
	d.Written(8<<20, 512<<10) // hole before: the pending half window starts
	d.Written(8<<20+512<<10, 512<<10)
	want := []string{
		"start 0+1048576", "start 1048576+1048576", "start 2097152+1048576", "wait 0+1048576",
		"start 3145728+524288", "wait 1048576+1048576",
		"start 8388608+1048576", "wait 2097152+1048576",
	}
	if got := c.filter("start", "wait"); !equal(got, want) {
		t.Errorf("sync_file_range calls:\n got %q\nwant %q", got, want)
	}
	_ = dir
}

func TestNoPipelineWithoutSyncOrNoCache(t *testing.T) {
	t.Parallel()
	_, dest, src := setup(t, nil)
	c := record(t)
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys})
	if err != nil {
		t.Fatal(err)
	}
	d.Written(0, 64<<20)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	if got := c.filter("start", "wait", "fsync", "fdatasync", "dontneed"); len(got) != 0 {
		t.Errorf("--sync=none without --nocache made %q", got)
	}
}

func TestFlushErrorIsFinal(t *testing.T) {
	t.Parallel()
	data := randomData(64 << 10)
	src := sourceFile(t, t.TempDir(), data) // only given to Commit
	for _, m := range []SyncMode{SyncData, SyncFull, SyncOSync, SyncODSync} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			c := record(t)
			flushes := 0
			fail := func(fd int) error {
				c.add("flush " + c.what(fd))
				flushes++
				return unix.EIO
			}
			if m.FlushOp() == "fsync" {
				c.sys.fsync = fail
			} else {
				c.sys.fdatasync = fail
			}
			d := createRecorded(t, c, dest, Options{Sync: m})
			temp := d.TempPath()
			copyInto(t, d, data, 1<<20)
			err := d.Commit(src)
			var de *Error
			if !errors.As(err, &de) || de.Op != m.FlushOp() || !errors.Is(err, unix.EIO) {
				t.Fatalf("Commit: %v, want Error{Op: %q, Err: EIO}", err, m.FlushOp())
			}
			if flushes != 1 {
				t.Errorf("the flush ran %d times: it must never be retried", flushes)
			}
			if got := c.filter("rename", "fsync dir"); len(got) != 0 {
				t.Errorf("after a failed flush: %q", got)
			}
			assertOld(t, dest)
			assertNoTemps(t, dir)
			if _, err := os.Lstat(temp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temp %s: %v", temp, err)
			}
		})
	}
}

func TestSyncFileRangeErrorIsFinal(t *testing.T) {
	t.Parallel()
	const window = 64 << 10
	data := randomData(4 * window)
	dir, dest, src := setupUnread(t, len(data))
	c := record(t)
	real := c.sys.syncFileRange
	c.sys.syncFileRange = func(fd int, off, n int64, flags int) error {
		if flags == sfrWait {
			// The wait reports the failed write-out and advances the
			// file's error cursor: the fdatasync would then return 0.
			return unix.EIO
		}
		return real(fd, off, n, flags)
	}
	d := createRecorded(t, c, dest, Options{Sync: SyncData, WritebackWindow: window, WritebackDepth: 1, FlushEvery: -1})
	copyInto(t, d, data, window)
	err := d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "sync_file_range" || !errors.Is(err, unix.EIO) {
		t.Fatalf("Commit: %v, want Error{Op: sync_file_range, Err: EIO}", err)
	}
	if got := c.filter("fdatasync", "rename", "fsync dir"); len(got) != 0 {
		t.Errorf("after a writeback error: %q", got)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestBackgroundFlushes(t *testing.T) {
	t.Parallel()
	const window = 64 << 10
	data := randomData(8 * window)
	dir, dest, src := setupUnread(t, len(data))
	c := record(t)
	d := createRecorded(t, c, dest, Options{Sync: SyncFull, WritebackWindow: window, WritebackDepth: 1, FlushEvery: 3 * window})
	copyInto(t, d, data, window)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	// fdatasync every 3 windows started (at 3 and 6, unless the first
	// was still running at 6), while the copy goes on; then the mode's
	// own final flush.
	st := d.Stats()
	if st.BackgroundFlushes < 1 || st.BackgroundFlushes > 2 {
		t.Errorf("%d background flushes, want 1 or 2", st.BackgroundFlushes)
	}
	got := c.filter("fdatasync", "fsync", "close", "rename")
	want := []string{"fsync file", "close", "rename", "fsync dir"}
	if len(got) != st.BackgroundFlushes+len(want) || !equal(got[len(got)-len(want):], want) {
		t.Fatalf("calls: %q", got)
	}
	for _, l := range got[:len(got)-len(want)] {
		if l != "fdatasync file" {
			t.Errorf("background flush: %q", l)
		}
	}
	assertNoTemps(t, dir)
}

// Background flushes come FlushEvery bytes apart, counted from where the
// last one began: not at every window once the first was due. The flushes
// here return at once, so none is skipped for a previous one still
// running (which would only put the next one later).
func TestBackgroundFlushesEveryInterval(t *testing.T) {
	t.Parallel()
	const window = 64 << 10
	const every = 3 * window
	n := 4*every/window + 1 // windows: room for four flushes
	dir, dest, src := setupUnread(t, n*window)
	c := record(t)
	// A background flush runs on a duplicate of the file's descriptor,
	// made when the flush is decided: the file's size then is where the
	// flush began (the flush itself runs later, on its own goroutine).
	var mu sync.Mutex
	began := map[int]int64{} // duplicate -> the file's size when it was made
	var at []int64           // where each background flush began
	dup := c.sys.dupFd
	c.sys.dupFd = func(fd int) (int, error) {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return -1, err
		}
		d, err := dup(fd)
		if err == nil {
			mu.Lock()
			began[d] = st.Size
			mu.Unlock()
		}
		return d, err
	}
	c.sys.fdatasync = func(fd int) error {
		mu.Lock()
		defer mu.Unlock()
		if size, ok := began[fd]; ok {
			at = append(at, size)
			delete(began, fd)
		}
		return nil
	}
	d := createRecorded(t, c, dest, Options{Sync: SyncData, WritebackWindow: window, WritebackDepth: 1, FlushEvery: every})
	copyInto(t, d, make([]byte, n*window), window)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if bg := d.Stats().BackgroundFlushes; bg < 1 || len(at) != bg {
		t.Fatalf("%d background flushes, begun at %v: want at least one, each on its own descriptor", bg, at)
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < every {
			t.Errorf("background flushes begun at %v: %d and %d, less than %d apart", at, at[i-1], at[i], every)
		}
	}
	assertNoTemps(t, dir)
}

func TestBackgroundFlushErrorIsFinal(t *testing.T) {
	t.Parallel()
	const window = 64 << 10
	data := randomData(8 * window)
	dir, dest, src := setupUnread(t, len(data))
	c := record(t)
	var n atomic.Int32
	c.sys.fdatasync = func(fd int) error {
		n.Add(1)
		return unix.EIO
	}
	d := createRecorded(t, c, dest, Options{Sync: SyncData, WritebackWindow: window, FlushEvery: 2 * window})
	copyInto(t, d, data, window)
	err := d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "fdatasync" || !errors.Is(err, unix.EIO) {
		t.Fatalf("Commit: %v, want Error{Op: c.sys.fdatasync, Err: EIO}", err)
	}
	if n.Load() != 1 {
		t.Errorf("fdatasync called %d times: after the failed one, never again", n.Load())
	}
	if got := c.filter("rename", "fsync dir"); len(got) != 0 {
		t.Errorf("after a failed background flush: %q", got)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestSyncFileRangeUnsupportedFallsBack(t *testing.T) {
	t.Parallel()
	// Four windows: after the first refused, three that must not ask
	// again.
	const window = 64 << 10
	data := randomData(4 * window)
	src := sourceFile(t, t.TempDir(), data)
	for _, errno := range []syscall.Errno{unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP, unix.ESPIPE} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			c := record(t)
			n := 0
			c.sys.syncFileRange = func(int, int64, int64, int) error { n++; return errno }
			d := createRecorded(t, c, dest, Options{Sync: SyncData, WritebackWindow: window})
			copyInto(t, d, data, window/2)
			if err := d.Commit(src); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("sync_file_range called %d times after refusing: want 1 and no more", n)
			}
			if st := d.Stats(); st.Unsupported != errno || st.Pipelined {
				t.Errorf("Stats: %+v", st)
			}
			want := []string{"opendir " + dir, "fdatasync file", "close", "rename", "fsync dir"}
			if got := c.filter("fdatasync", "close", "rename", "opendir", "fsync"); !equal(got, want) {
				t.Errorf("calls: got %q, want %q", got, want)
			}
			if ok, err := holds(dest, data); !ok {
				t.Errorf("DEST does not hold the copy (%v)", err)
			}
		})
	}
}

func TestCloseError(t *testing.T) {
	t.Parallel()
	dir, dest, src := setup(t, []byte("new"))
	c := record(t)
	real := c.sys.closeFile
	c.sys.closeFile = func(f *sysx.File) error {
		real(f)
		return &os.PathError{Op: "close", Path: f.Name(), Err: unix.EIO}
	}
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Sync: SyncData})
	if err != nil {
		t.Fatal(err)
	}
	d.File.WriteAt([]byte("new"), 0)
	d.Written(0, 3)
	err = d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "close" || !errors.Is(err, unix.EIO) {
		t.Fatalf("Commit: %v, want Error{Op: close}", err)
	}
	if got := c.filter("rename"); len(got) != 0 {
		t.Errorf("renamed after a failed close")
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestRenameError(t *testing.T) {
	t.Parallel()
	dir, dest, src := setup(t, []byte("new"))
	c := record(t)
	c.sys.renameat = func(int, string, int, string) error { return unix.EXDEV }
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Sync: SyncFull})
	if err != nil {
		t.Fatal(err)
	}
	d.File.WriteAt([]byte("new"), 0)
	err = d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "rename" || !errors.Is(err, unix.EXDEV) {
		t.Fatalf("Commit: %v, want Error{Op: rename}", err)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestDirSyncError(t *testing.T) {
	t.Parallel()
	dir, dest, src := setup(t, []byte("new"))
	c := record(t)
	real := c.sys.fsync
	c.sys.fsync = func(fd int) error {
		if fd == c.dirFd {
			return unix.EIO
		}
		return real(fd)
	}
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Sync: SyncFull})
	if err != nil {
		t.Fatal(err)
	}
	d.File.WriteAt([]byte("new"), 0)
	err = d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "fsync directory" || !errors.Is(err, unix.EIO) || !Committed(err) {
		t.Fatalf("Commit: %v, want Error{Op: c.sys.fsync directory}, committed", err)
	}
	// The rename happened before: DEST is the new file, only its
	// durability is in doubt, and that is what the error says.
	if b, _ := os.ReadFile(dest); string(b) != "new" {
		t.Errorf("DEST holds %q", b)
	}
	assertNoTemps(t, dir)
}

func TestAbort(t *testing.T) {
	t.Parallel()
	dir, dest, _ := setup(t, nil)
	c := record(t)
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Sync: SyncData})
	if err != nil {
		t.Fatal(err)
	}
	d.File.WriteAt([]byte("partial"), 0)
	d.Written(0, 7)
	d.Abort()
	d.Abort() // twice is harmless
	assertOld(t, dest)
	assertNoTemps(t, dir)
	if err := d.Commit(nil); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

func TestInPlaceKeepsInodeAndSyncs(t *testing.T) {
	t.Parallel()
	data := randomData(2 << 20)
	dir, dest, src := setup(t, data)
	link := filepath.Join(dir, "link")
	if err := os.Link(dest, link); err != nil {
		t.Fatal(err)
	}
	var before unix.Stat_t
	unix.Stat(dest, &before)
	c := record(t)
	d := createRecorded(t, c, dest, Options{InPlace: true, Truncate: true, Sync: SyncODSync, NoCache: true, WritebackWindow: 1 << 20})
	if !d.InPlace() || d.TempPath() != "" {
		t.Fatal("not in place")
	}
	copyInto(t, d, data, 1<<20)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	// DEST's directory is opened once, by Create, as for a temporary
	// file; it is fsynced after the file is flushed and closed.
	want := []string{"opendir " + dir, "fdatasync file", "close", "fsync dir"}
	if got := c.filter("fdatasync", "fsync", "close", "rename", "opendir"); !equal(got, want) {
		t.Errorf("calls: got %q, want %q", got, want)
	}
	var after unix.Stat_t
	unix.Stat(dest, &after)
	if after.Ino != before.Ino || after.Nlink != 2 {
		t.Errorf("inode %d -> %d, links %d: --inplace must keep the inode and its links", before.Ino, after.Ino, after.Nlink)
	}
	if ok, err := holds(link, data); !ok {
		t.Errorf("the hard link does not see the new data (%v)", err)
	}
}

func TestFIFODestinationIsNotFlushed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader, so the open for writing does not block.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := record(t)
	d, err := Create(fsdir.Cwd, fifo, Options{sys: c.sys, InPlace: true, Sync: SyncFull, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	d.File.Write([]byte("x"))
	d.Written(0, 1)
	if err := d.Commit(nil); err != nil {
		t.Fatalf("Commit on a FIFO: %v", err)
	}
	// Only the open of its directory, by Create: no flush, no directory
	// fsync.
	if got := c.filter("start", "wait", "fsync", "fdatasync", "opendir"); !equal(got, []string{"opendir " + dir}) {
		t.Errorf("calls on a FIFO: %q", got)
	}
}

// onTmpfs reports whether dir is on tmpfs, where pages cannot be dropped
// (they are the file) and O_DIRECT is emulated.
func onTmpfs(t *testing.T, dir string) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	return fs.Type == unix.TMPFS_MAGIC
}

// cachedPages counts the pages of path in the page cache (mincore(2)).
func cachedPages(t *testing.T, path string) (in, total int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if fi.Size() == 0 {
		return 0, 0
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal("mincore:", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// copyFrom copies src into d as the copier's rw loop does, in pieces of
// chunk bytes read from src (bringing them into the page cache), calling
// Written after each.
func copyFrom(t *testing.T, d *Destination, src *os.File, chunk int) {
	t.Helper()
	buf := make([]byte, chunk)
	for off := int64(0); ; {
		n, err := src.ReadAt(buf, off)
		if n > 0 {
			if _, err := d.File.WriteAt(buf[:n], off); err != nil {
				t.Fatal(err)
			}
			d.Written(off, int64(n))
			off += int64(n)
		}
		if err != nil {
			return
		}
	}
}

func TestNoCacheDropsBehind(t *testing.T) {
	t.Parallel()
	// At most the windows in flight (depth+1 of them), the copier's piece
	// and the readahead (3 MiB allowed) may stay cached during the copy;
	// the copy is twice that, so that a copy that dropped nothing behind
	// it fails. Windows of the copier's piece keep that small.
	const window, depth, piece = 256 << 10, 2, 256 << 10
	const cachedAtMost = (depth+1)*window + piece + 3<<20
	data := randomData(2 * cachedAtMost)
	for _, m := range []SyncMode{SyncNone, SyncData} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			dir, dest, src := setup(t, data)
			if onTmpfs(t, dir) {
				t.Skip("tmpfs pages are the file: nothing to drop")
			}
			// A cold source: what the copy reads, it brings in.
			if err := sysx.Evict(src); err != nil {
				t.Fatal(err)
			}
			if in, _ := cachedPages(t, src.Name()); in > 0 {
				t.Fatalf("source still has %d pages cached after its eviction", in)
			}
			c := record(t)
			d := createRecorded(t, c, dest, Options{Sync: m, NoCache: true, Source: src, WritebackWindow: window, WritebackDepth: depth})
			copyFrom(t, d, src, piece)
			// Behind the copy: everything but the last windows is gone
			// from the cache already, source and destination.
			tmp := d.TempPath()
			if d.Unnamed() {
				tmp = fmt.Sprintf("/proc/self/fd/%d", d.File.Fd())
			}
			if in, _ := cachedPages(t, tmp); in*os.Getpagesize() > cachedAtMost {
				t.Errorf("during the copy %d KiB of the destination are cached, want at most the windows in flight", in*os.Getpagesize()>>10)
			}
			if in, _ := cachedPages(t, src.Name()); in*os.Getpagesize() > cachedAtMost {
				t.Errorf("during the copy %d KiB of the source are cached", in*os.Getpagesize()>>10)
			}
			if err := d.Commit(nil); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{dest, src.Name()} {
				if in, _ := cachedPages(t, p); in > 0 {
					t.Errorf("%s: %d pages still cached after Commit", filepath.Base(p), in)
				}
			}
			if ok, err := holds(dest, data); !ok {
				t.Errorf("DEST does not hold the copy (%v)", err)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	// Two whole chunks and a short one.
	data := randomData(2*verifyChunk + 4321)
	dir, dest, src := setup(t, data)
	c := record(t)
	d := createRecorded(t, c, dest, Options{Verify: true})
	copyInto(t, d, data, 1<<20)
	c.log = nil // the calls of Commit
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	// Without --sync the data is still written back before it is read
	// from the device, but the directory is not synced.
	if got := c.filter("fdatasync", "fsync", "opendir"); !equal(got, []string{"fdatasync file"}) {
		t.Errorf("calls: %q", got)
	}
	if st := d.Stats(); st.VerifyRead != ReadEvicted && !onTmpfs(t, dir) {
		t.Errorf("the read-back was %q, want %q on this filesystem", st.VerifyRead, ReadEvicted)
	}
	if ok, err := holds(dest, data); !ok {
		t.Errorf("DEST does not hold the copy (%v)", err)
	}
}

func TestVerifyCatchesCorruption(t *testing.T) {
	t.Parallel()
	// Two whole chunks and a short one; the corrupted byte in the second,
	// so that the message names it and not the last.
	data := randomData(2*verifyChunk + 4321)
	const corrupt = verifyChunk + verifyChunk/4 + 17
	src := sourceFile(t, t.TempDir(), data) // only read
	for _, how := range []string{ReadEvicted, ReadDirect, ReadPageCache} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			sys := testSys()
			if how != ReadEvicted {
				// Pages that will not leave the cache (a process maps
				// the file): the read-back must go past the cache.
				sys.resident = func(int) (int64, error) { return 4096, nil }
			}
			if how == ReadPageCache {
				real := sys.openFile
				sys.openFile = func(dirfd int, p string, flags int, mode uint32) (int, error) {
					if flags&unix.O_DIRECT != 0 {
						return -1, unix.EINVAL // as on a filesystem without O_DIRECT
					}
					return real(dirfd, p, flags, mode)
				}
			}
			corruptBeforeVerify(sys, corrupt)
			d, err := Create(fsdir.Cwd, dest, Options{sys: sys, Verify: true, Sync: SyncData})
			if err != nil {
				t.Fatal(err)
			}
			copyInto(t, d, data, 1<<20)
			err = d.Commit(src)
			var de *Error
			if !errors.As(err, &de) || de.Op != "verify" || !errors.Is(err, ErrMismatch) {
				t.Fatalf("Commit: %v, want Error{Op: verify, Err: ErrMismatch}", err)
			}
			if want := fmt.Sprintf("checksums differ in bytes %d-%d", verifyChunk, 2*verifyChunk-1); !strings.Contains(err.Error(), want) {
				t.Errorf("message does not locate the difference: %v", err)
			}
			if got := d.Stats().VerifyRead; got != how && !onTmpfs(t, dir) {
				t.Errorf("read back with %q, want %q", got, how)
			}
			assertOld(t, dest)
			assertNoTemps(t, dir)
		})
	}
}

// The read-back with O_DIRECT opens the temporary file's name a second
// time: a name swapped meanwhile for another file, even one holding the
// same bytes, is not read in its place, and DEST is not replaced.
func TestVerifyDirectReopenIsTheSameFile(t *testing.T) {
	t.Parallel()
	data := randomData(64 << 10)
	dir, dest, src := setup(t, data)
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := record(t)
	c.sys.resident = func(int) (int64, error) { return 4096, nil }
	real := c.sys.openFile
	c.sys.openFile = func(dirfd int, p string, flags int, mode uint32) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return real(unix.AT_FDCWD, other, flags, mode)
		}
		return real(dirfd, p, flags, mode)
	}
	d, err := Create(fsdir.Cwd, dest, Options{sys: c.sys, Verify: true, Named: true})
	if err != nil {
		t.Fatal(err)
	}
	copyInto(t, d, data, 1<<20)
	err = d.Commit(src)
	var de *Error
	if !errors.As(err, &de) || de.Op != "verify" || !errors.Is(err, errReplaced) {
		t.Fatalf("Commit: %v, want Error{Op: verify, Err: errReplaced}", err)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestVerifyEvictsBeforeReading(t *testing.T) {
	t.Parallel()
	// More than one chunk: the read-back drops behind each.
	data := randomData(verifyChunk + 4321)
	dir, dest, src := setup(t, data)
	if onTmpfs(t, dir) {
		t.Skip("tmpfs pages cannot be evicted")
	}
	c := record(t)
	var cachedAtRead int64 = -1
	real := c.sys.resident
	c.sys.resident = func(fd int) (int64, error) {
		n, err := real(fd)
		cachedAtRead = n
		return n, err
	}
	d := createRecorded(t, c, dest, Options{Verify: true})
	copyInto(t, d, data, 1<<20)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	if cachedAtRead != 0 {
		t.Errorf("%d bytes of the copy were still cached when the read-back began", cachedAtRead)
	}
	// The read-back drops what it read behind it.
	if in, _ := cachedPages(t, dest); in > 0 {
		t.Errorf("%d pages of DEST cached after a --verify copy", in)
	}
}

func TestVerifySizeMismatch(t *testing.T) {
	t.Parallel()
	data := randomData(1 << 20)
	dir, dest, src := setup(t, data)
	d, err := Create(fsdir.Cwd, dest, Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	copyInto(t, d, data[:len(data)-1], 1<<20) // one byte short
	err = d.Commit(src)
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("Commit: %v, want ErrMismatch", err)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestVerifyNeedsARereadableSource(t *testing.T) {
	t.Parallel()
	dir, dest, _ := setup(t, nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	d, err := Create(fsdir.Cwd, dest, Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Commit(pr)
	var de *Error
	if !errors.As(err, &de) || de.Op != "verify" {
		t.Fatalf("Commit with a pipe source: %v, want a verify error", err)
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

func TestEvict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if onTmpfs(t, dir) {
		t.Skip("tmpfs pages cannot be evicted")
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, randomData(1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := EvictPath(p); err != nil {
		t.Fatal(err)
	}
	if in, _ := cachedPages(t, p); in > 0 {
		t.Errorf("%d pages still cached", in)
	}
}

func TestVerifyChecksumsTheSourceBehindTheCopy(t *testing.T) {
	t.Parallel()
	// Two whole chunks, read behind the copy, and a short one, read at
	// Commit; the corrupted byte is the last.
	data := randomData(2*verifyChunk + 99)
	src := sourceFile(t, t.TempDir(), data) // only read
	for _, corrupt := range []bool{false, true} {
		t.Run(fmt.Sprintf("corrupt=%v", corrupt), func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			sys := testSys()
			if corrupt {
				corruptBeforeVerify(sys, int64(len(data)-1))
			}
			d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Sync: SyncData, Source: src, sys: sys})
			if err != nil {
				t.Fatal(err)
			}
			if d.srcSums == nil {
				t.Fatal("no source checksummer with Options.Source")
			}
			copyInto(t, d, data, 1<<20)
			err = d.Commit(src)
			if corrupt {
				if want := fmt.Sprintf("bytes %d-%d", 2*verifyChunk, len(data)-1); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) {
					t.Fatalf("Commit: %v, want a mismatch in the last chunk", err)
				}
				assertOld(t, dest)
			} else if err != nil {
				t.Fatal(err)
			} else if ok, err := holds(dest, data); !ok {
				t.Errorf("DEST does not hold the copy (%v)", err)
			}
			assertNoTemps(t, dir)
		})
	}
	t.Run("abort", func(t *testing.T) {
		dir, dest := setupDest(t)
		d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Source: src})
		if err != nil {
			t.Fatal(err)
		}
		// A page past the first chunk: the checksummer has a chunk to
		// read behind the copy when Abort comes.
		copyInto(t, d, data[:verifyChunk+4096], 1<<20)
		d.Abort() // waits for the checksummer: src may be closed right after
		if d.srcSums != nil {
			t.Error("checksummer still attached after Abort")
		}
		assertOld(t, dest)
		assertNoTemps(t, dir)
	})
}

// By default background flushes run only for a source that cachestat finds
// in the page cache; an explicit FlushEvery wins either way.
func TestBackgroundFlushesOnlyForACachedSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, randomData(4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	interval := func(o Options, stat func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error) int64 {
		t.Helper()
		o.sys = testSys()
		if stat != nil {
			o.sys.cachestat = stat
		}
		d, err := Create(fsdir.Cwd, filepath.Join(dir, "dst"), o)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Abort()
		return d.wb.flushEvery
	}
	pages := uint64(4<<20) / uint64(os.Getpagesize())
	cached := func(n uint64) func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error {
		return func(fd uint, r *unix.CachestatRange, cs *unix.Cachestat_t, _ uint) error {
			if int(fd) != int(src.Fd()) || r.Off != 0 || r.Len != 4<<20 {
				t.Errorf("cachestat(%d, %+v), want the source's descriptor %d and its whole length", fd, *r, src.Fd())
			}
			cs.Cache = n
			return nil
		}
	}
	refused := func(err error) func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error {
		return func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error { return err }
	}
	for _, c := range []struct {
		name string
		o    Options
		stat func(uint, *unix.CachestatRange, *unix.Cachestat_t, uint) error
		want int64
	}{
		{"all cached", Options{Sync: SyncData, Source: src}, cached(pages), cachedFlushEvery},
		{"all but a page cached", Options{Sync: SyncData, Source: src}, cached(pages - 1), cachedFlushEvery},
		{"half cached", Options{Sync: SyncData, Source: src}, cached(pages / 2), 0},
		{"nothing cached", Options{Sync: SyncData, Source: src}, cached(0), 0},
		{"ENOSYS", Options{Sync: SyncData, Source: src}, refused(unix.ENOSYS), 0},
		{"EPERM", Options{Sync: SyncData, Source: src}, refused(unix.EPERM), 0},
		{"source unknown", Options{Sync: SyncData}, cached(pages), 0},
		{"no --sync", Options{Source: src}, cached(pages), 0},
		{"explicit interval, uncached", Options{Sync: SyncData, Source: src, FlushEvery: 5 << 20}, cached(0), 5 << 20},
		{"explicitly off, cached", Options{Sync: SyncData, Source: src, FlushEvery: -1}, cached(pages), 0},
	} {
		if got := interval(c.o, c.stat); got != c.want {
			t.Errorf("%s: background flush every %d bytes, want %d", c.name, got, c.want)
		}
	}
	// The real call, where the kernel has it: a file just written is cached,
	// and no longer after Evict.
	if err := unix.Cachestat(uint(src.Fd()), &unix.CachestatRange{Len: 4 << 20}, &unix.Cachestat_t{}, 0); err == nil && !onTmpfs(t, dir) {
		if !defaultSys.sourceCached(int(src.Fd())) {
			t.Error("a file just written is not reported cached")
		}
		if err := Evict(src); err != nil {
			t.Fatal(err)
		}
		if defaultSys.sourceCached(int(src.Fd())) {
			t.Error("an evicted file is reported cached")
		}
	}
}

// corruptBeforeVerify makes --verify find the byte at off of the
// destination flipped on the device, as a bad disk would return it.
func corruptBeforeVerify(sys *sysCalls, off int64) {
	sys.beforeVerify = func(dirfd int, name string) error {
		fd, err := unix.Openat(dirfd, name, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var b [1]byte
		if _, err := unix.Pread(fd, b[:], off); err != nil {
			return err
		}
		b[0] ^= 0xff
		if _, err := unix.Pwrite(fd, b[:], off); err != nil {
			return err
		}
		return unix.Fsync(fd)
	}
}

// --verify's buffers of a chunk are taken again by the next file: a tree
// of small files with --verify allocated two chunks for the read-back and
// one for the source's checksums at every file, and zeroing them was most
// of its time. Not parallel: it counts the process's allocations.
func TestVerifyReusesItsBuffers(t *testing.T) {
	const files = 20
	data := randomData(4096)
	copyOne := func() {
		_, dest, src := setup(t, data)
		d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Source: src})
		if err != nil {
			t.Fatal(err)
		}
		copyFrom(t, d, src, 4096)
		if err := d.Commit(src); err != nil {
			t.Fatal(err)
		}
		if ok, err := holds(dest, data); !ok {
			t.Fatalf("DEST does not hold the copy (%v)", err)
		}
	}
	copyOne() // the first takes its buffers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range files {
		copyOne()
	}
	runtime.ReadMemStats(&after)
	// Made anew, the three chunks are 12 MiB a copy; reused, next to
	// nothing, or under the race detector, which drops a quarter of what
	// a pool is given, three quarters of a chunk on average.
	most := uint64(verifyChunk / 2)
	if raceEnabled {
		most = 2 * verifyChunk
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / files; per >= most {
		t.Errorf("each verified copy of 4 KiB allocated %d KiB: its chunks of %d KiB were made anew", per>>10, verifyChunk>>10)
	}
}

// chunkBuf's bytes are a chunk long and start where O_DIRECT needs them.
func TestChunkBufAligned(t *testing.T) {
	t.Parallel()
	for _, align := range []int{1, 512, 4096, maxPooledAlign, 2 * maxPooledAlign} {
		for range 3 {
			b, put := chunkBuf(align)
			if len(b) != verifyChunk || cap(b) != verifyChunk {
				t.Fatalf("align %d: %d bytes (cap %d), want %d", align, len(b), cap(b), verifyChunk)
			}
			if p := uintptr(unsafe.Pointer(&b[0])); p%uintptr(align) != 0 {
				t.Fatalf("align %d: starts at %#x", align, p)
			}
			put()
		}
	}
}
