// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mark gives the file at p fastcp's mark, as a run that was killed leaves it.
func mark(t *testing.T, p string) {
	t.Helper()
	if err := unix.Setxattr(p, MarkXattr, []byte(markMagic), 0); err != nil {
		if isUnsupported(err) {
			t.Skipf("no user xattrs on %s", filepath.Dir(p))
		}
		t.Fatal(err)
	}
}

func hasMark(t *testing.T, p string) bool {
	t.Helper()
	_, err := unix.Getxattr(p, MarkXattr, make([]byte, 64))
	if err != nil && err != unix.ENODATA && !isUnsupported(err) {
		t.Fatal(err)
	}
	return err == nil
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// The temporary file carries the mark while it is written; DEST does not
// once it is renamed into place.
func TestTempFileMarkedWhileWritten(t *testing.T) {
	t.Parallel()
	dir, dest, src := setup(t, []byte("new"))
	d, err := Create(fsdir.Cwd, dest, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	err = readMark(d.fd)
	if isUnsupported(err) {
		t.Skipf("no user xattrs in %s", dir)
	}
	if err != nil {
		t.Fatalf("readMark: %v", err)
	}
	d.File.WriteAt([]byte("new"), 0)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	if hasMark(t, dest) {
		t.Error("DEST kept the temporary file's mark")
	}
}

// Another run (or a user) replaced the temporary name with a file of its
// own: Abort leaves that file alone, Commit does not rename it over DEST,
// and Interrupt does not remove it. (Once the abort of one
// copy removed a second copy's file, which then renamed a third's data.)
func TestTempFileBelongsToItsInode(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"abort", "commit", "interrupt"} {
		t.Run(end, func(t *testing.T) {
			dir, dest, src := setup(t, []byte("new"))
			s := NewSession()
			d, err := Create(fsdir.Cwd, dest, Options{Session: s, Named: true})
			if err != nil {
				t.Fatal(err)
			}
			d.File.WriteAt([]byte("new"), 0)
			temp := d.TempPath()
			if err := os.Remove(temp); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(temp, []byte("another run's"), 0o600); err != nil {
				t.Fatal(err)
			}
			theirs := ino(t, temp)
			switch end {
			case "abort":
				d.Abort()
			case "commit":
				err := d.Commit(src)
				var de *Error
				if !errors.As(err, &de) || de.Op != "rename" || !errors.Is(err, errReplaced) {
					t.Errorf("Commit: %v, want a refused rename", err)
				}
			case "interrupt":
				if r := s.Interrupt(); len(r.Partial) != 0 || len(r.Kept) != 0 {
					t.Errorf("Interrupt: %+v", r)
				}
			}
			if b, err := os.ReadFile(temp); err != nil || string(b) != "another run's" || ino(t, temp) != theirs {
				t.Errorf("the other file under the temporary name: %q, %v", b, err)
			}
			assertOld(t, dest)
			_ = dir
		})
	}
}

// Interrupt removes the temporary files of the session and names the
// in-place destinations it leaves partial; then no rename happens.
func TestSessionInterrupt(t *testing.T) {
	t.Parallel()
	dir, dest, _ := setup(t, []byte("new"))
	s := NewSession()
	_, err := Create(fsdir.Cwd, dest, Options{Session: s})
	if err != nil {
		t.Fatal(err)
	}
	inPlace := filepath.Join(dir, "inplace")
	_, err = Create(fsdir.Cwd, inPlace, Options{Session: s, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	s.AtInterrupt(func() { ran = true })
	partial := s.Interrupt().Partial
	if len(partial) != 1 || partial[0] != inPlace || !ran {
		t.Errorf("Interrupt: partial %q, AtInterrupt ran: %v", partial, ran)
	}
	assertNoTemps(t, dir)
	// Locked for good: a Commit now would wait in renaming until the
	// process exits.
	if s.mu.TryLock() {
		t.Error("the session is not locked after Interrupt")
	}
	assertOld(t, dest)
}

// Abort does not wait for a background fdatasync still running (on a slow
// device it takes seconds): it returns, the temporary file is gone, and the
// flush ends on its own descriptor.
func TestAbortDoesNotWaitForTheFlush(t *testing.T) {
	t.Parallel()
	data := randomData(4 << 20)
	dir, dest, _ := setupUnread(t, len(data))
	c := record(t)
	inFlush, release := make(chan struct{}, 8), make(chan struct{})
	real := c.sys.fdatasync
	c.sys.fdatasync = func(fd int) error {
		inFlush <- struct{}{}
		<-release
		return real(fd)
	}
	defer close(release)
	d := createRecorded(t, c, dest, Options{Sync: SyncData, WritebackWindow: 1 << 20, FlushEvery: 1 << 20})
	copyInto(t, d, data, 1<<20)
	<-inFlush
	aborted := make(chan struct{})
	go func() { d.Abort(); close(aborted) }()
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("Abort waited for the background fdatasync")
	}
	assertOld(t, dest)
	assertNoTemps(t, dir)
}

// The sweep removes a temporary file only when it carries the mark and
// nobody holds its lock; what it cannot judge it keeps and reports; a
// file without the mark may be a user's: it is kept and reported as
// unmarked. (A user's .fastcp-foo.000000000000 must not
// be deleted.)
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dest := filepath.Join(dir, "dst")
	p := func(hex string) string { return filepath.Join(dir, TempPrefix+"dst."+hex) }
	write := func(path string) {
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dead, users, locked, linked, link, fifo := p("000000000000"), p("0123456789ab"), p("00000000000a"), p("00000000000b"), p("00000000000c"), p("00000000000d")
	write(dead)
	mark(t, dead)
	write(users)
	write(locked)
	mark(t, locked)
	lf, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	write(linked)
	mark(t, linked)
	if err := os.Link(linked, linked+"-link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, TempPrefix+"dst2.000000000000")
	write(other)
	mark(t, other)

	d, err := Create(fsdir.Cwd, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if d.Unnamed() && d.TempPath() != "" || !d.Unnamed() && (d.TempPath() == dead || !IsTempFor(filepath.Base(d.TempPath()), "dst")) {
		t.Fatalf("temporary file %s", d.TempPath())
	}
	var got []string
	for _, l := range d.Leftovers() {
		s := "kept "
		switch {
		case l.Removed:
			s = "removed "
		case l.Unmarked:
			s = "unmarked "
		}
		got = append(got, s+filepath.Base(l.Path))
	}
	want := []string{"removed " + filepath.Base(dead), "kept " + filepath.Base(linked), "kept " + filepath.Base(link), "kept " + filepath.Base(fifo), "unmarked " + filepath.Base(users)}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("sweep: %q, want %q", got, want)
	}
	if _, err := os.Lstat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead leftover: %v", err)
	}
	for _, keep := range []string{users, locked, linked, link, fifo, other} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
	// A second copy into the same directory with the same session does
	// not list it again.
	s := NewSession()
	write(dead)
	mark(t, dead)
	d1, err := Create(fsdir.Cwd, dest, Options{Session: s})
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Abort()
	if len(d1.Leftovers()) == 0 {
		t.Fatal("no sweep with the first name taken")
	}
	later := p("0000000000ff")
	write(later)
	mark(t, later)
	write(dead) // taken again, by a file that is not fastcp's
	d2, err := Create(fsdir.Cwd, dest, Options{Session: s})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Abort()
	for _, l := range d2.Leftovers() {
		if l.Path == later {
			t.Errorf("the directory was listed again: %v", l)
		}
	}
	if _, err := os.Lstat(later); err != nil {
		t.Errorf("%s: %v", later, err)
	}
}

// A leftover with the mark on a directory this run created is not looked for.
func TestDirCreatedIsNotSwept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewSession()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.DirCreated(fd)
	unix.Close(fd)
	first := FirstTemp(filepath.Join(dir, "dst"))
	if err := os.WriteFile(first, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mark(t, first)
	d, err := Create(fsdir.Cwd, filepath.Join(dir, "dst"), Options{Session: s})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if len(d.Leftovers()) != 0 {
		t.Errorf("swept a directory the run created: %v", d.Leftovers())
	}
}

// Replace puts the entry in place and leaves nothing under a temporary
// name, also when finish fails.
func TestReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dest := filepath.Join(dir, "link")
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSession()
	symlink := func(e Entry) error { return unix.Symlinkat("target", e.Dir, e.Name) }
	boom := errors.New("boom")
	if _, err := replace(s, fsdir.Cwd, dest, symlink, func(Entry) error { return boom }); err != boom {
		t.Errorf("Replace: %v, want the finish error", err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "old" {
		t.Errorf("DEST changed after a failed finish: %q", b)
	}
	assertNoTemps(t, dir)
	if _, err := replace(s, fsdir.Cwd, dest, symlink, nil); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(dest); err != nil || l != "target" {
		t.Errorf("DEST: %q, %v", l, err)
	}
	assertNoTemps(t, dir)
}

// On a slow device the pipeline keeps about inflightTime of its writing in
// flight, not the (depth+1) default windows: what a fatal signal still has
// to wait for (the kernel finishes the pages under writeback before it frees
// the unlinked file). The device here completes 100 MiB/s: sync_file_range's
// wait sleeps as long as the window takes to write.
func TestWritebackInFlightBoundedOnASlowDevice(t *testing.T) {
	t.Parallel()
	const rate = 100 << 20 // bytes per second
	const limit = 2 * rate * int64(inflightTime) / int64(time.Second)
	// Two default windows: the defaults would have both in flight, more
	// than limit. The bytes are not checked, and the device is the
	// sleeps: the copy is a hole of size, reported written a piece at a
	// time.
	const size = 2 * DefaultWritebackWindow
	if size <= limit {
		t.Fatalf("a copy of %d MiB cannot break the bound of %d MiB", size>>20, limit>>20)
	}
	_, dest, src := setupUnread(t, size)
	c := record(t)
	var mu sync.Mutex
	var inFlight, most int64
	real := c.sys.syncFileRange
	c.sys.syncFileRange = func(fd int, off, n int64, flags int) error {
		mu.Lock()
		switch flags {
		case sfrStart:
			inFlight += n
			most = max(most, inFlight)
		case sfrWait:
			inFlight -= n
		}
		mu.Unlock()
		if flags == sfrWait {
			time.Sleep(time.Duration(n) * time.Second / rate)
		}
		return real(fd, off, n, flags)
	}
	d := createRecorded(t, c, dest, Options{Sync: SyncData, Source: src, FlushEvery: -1})
	if err := unix.Ftruncate(int(d.File.Fd()), size); err != nil {
		t.Fatal(err)
	}
	const piece = 1 << 20
	for off := int64(0); off < size; off += piece {
		d.Written(off, piece)
	}
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	// 250 ms of 100 MiB/s is 25 MiB; a loaded machine only makes the
	// measured rate, and so the bound, smaller. The defaults would keep
	// (4+1) windows of 32 MiB in flight.
	if most > limit {
		t.Errorf("%d MiB in flight at most, want <= %d MiB", most>>20, limit>>20)
	}
	if d.wb.window >= DefaultWritebackWindow {
		t.Errorf("window %d MiB: not sized to the device", d.wb.window>>20)
	}
}

// The adaptive pipeline sizes itself from the device's completion rate:
// about inflightTime of its writing in flight, window half of it, within
// [minWindow, the default window] and depth within [1, the default
// depth]. Rates measured over a second gone, so the check's own time
// hardly moves them: 1 MiB/s and 8 MiB/s get the smallest window, one
// deep; 80 MiB/s a window of half its 20 MiB budget (aligned down to a
// MiB), two deep; 1 GiB/s the defaults. An explicit window or depth is
// never resized.
func TestWritebackWindowFollowsTheDeviceRate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		perSecond int64
		window    int64
		depth     int
	}{
		{1 << 20, minWindow, 1},
		{8 << 20, minWindow, 1},
		{80 << 20, 9 << 20, 2},
		{1 << 30, DefaultWritebackWindow, DefaultWritebackDepth},
	} {
		w := writeback{adaptive: true, maxWindow: DefaultWritebackWindow, maxDepth: DefaultWritebackDepth,
			window: startWindow, depth: startDepth,
			firstStart: time.Now().Add(-time.Second), completed: tt.perSecond}
		w.resize()
		if w.window != tt.window || w.depth != tt.depth {
			t.Errorf("%d MiB/s: window %d MiB, depth %d; want %d MiB, %d", tt.perSecond>>20, w.window>>20, w.depth, tt.window>>20, tt.depth)
		}
		if inFlight := w.window * int64(w.depth); inFlight > max(tt.perSecond/4, minWindow) {
			t.Errorf("%d MiB/s: %d MiB in flight, more than a quarter second's", tt.perSecond>>20, inFlight>>20)
		}
	}
	fixed := writeback{window: 4 << 20, depth: 3, firstStart: time.Now().Add(-time.Second), completed: 1 << 30}
	fixed.resize()
	if fixed.window != 4<<20 || fixed.depth != 3 {
		t.Errorf("an explicit window and depth became %d MiB x %d", fixed.window>>20, fixed.depth)
	}
}
