// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

func TestResumeRecordRoundTrip(t *testing.T) {
	t.Parallel()
	r := resumeRecord{ID: SourceID{Dev: 2049, Ino: 1 << 40, Size: 5 << 30, Mtime: -1, Ctime: 1700000000123456789}, Checkpoint: 3 << 30}
	got, err := decodeRecord(r.encode())
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", r, got, err)
	}
	for _, bad := range []string{"", "fastcp-resume-1", "fastcp-resume-2 dev=1 ino=1 size=1 mtime=1 ctime=1 checkpoint=1",
		"fastcp-resume-1 dev=1 ino=1 size=1 mtime=1 ctime=1 checkpoint=-5", "fastcp-resume-1 ino=1 dev=1 size=1 mtime=1 ctime=1 checkpoint=1",
		"fastcp-resume-1 dev=1 ino=1 size=1 mtime=1 ctime=1 checkpoint=1 extra=2"} {
		if _, err := decodeRecord([]byte(bad)); err == nil {
			t.Errorf("decodeRecord(%q) accepted", bad)
		}
	}
}

// srcID makes a source file of n bytes and returns its identity. Only
// its identity (device, inode, size, times) is compared, never its
// bytes: a hole of n bytes does.
func srcID(t *testing.T, dir string, n int) SourceID {
	t.Helper()
	p := filepath.Join(dir, "src")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(n)); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return IDOf(&st)
}

// A copy whose filesystem refuses user xattrs (ENOTSUP injected), and
// that cannot make a side record either (its name is a directory's),
// records nothing and is removed on a signal, as without --resume.
func TestStartRecordWithoutUserXattrs(t *testing.T) {
	dir := t.TempDir()
	id := srcID(t, dir, 100)
	old := fsetxattr
	fsetxattr = func(int, string, []byte, int) error { return unix.ENOTSUP }
	t.Cleanup(func() { fsetxattr = old })
	if err := os.Mkdir(FirstTemp(filepath.Join(dir, "dst"))+SideSuffix, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Create(fsdir.Cwd, filepath.Join(dir, "dst"), Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	err = d.StartRecord(id, new(atomic.Int64))
	if !errors.Is(err, ErrNoXattrs) || d.Resumable() {
		t.Fatalf("StartRecord: %v, resumable %v: want ErrNoXattrs and a plain copy", err, d.Resumable())
	}
	if err := d.Checkpoint(50); err != nil {
		t.Errorf("Checkpoint on a plain copy: %v", err)
	}
	if d.entry.keeper != nil {
		t.Error("the signal handler would keep a file without a record")
	}
}

// The record written at the start, at checkpoints, and read back by
// Continue, which cuts the file back to the checkpoint.
func TestContinueFromCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	id := srcID(t, dir, 8<<20)
	d, err := Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.StartRecord(id, new(atomic.Int64)); err != nil {
		t.Fatal(err)
	}
	// The copy's bytes are never read, only the file's length: a hole.
	if err := unix.Ftruncate(int(d.File.Fd()), 3<<20+12345); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(2<<20 + 5000); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(1 << 20); err != nil { // older: ignored
		t.Fatal(err)
	}
	// The process dies: its file stays, with its lock released.
	die(d)

	changed := id
	changed.Mtime++
	if _, _, err := Continue(fsdir.Cwd, dst, changed, Options{}, nil); !isFresh(err, WhyChanged) {
		t.Fatalf("a changed source: %v, want a fresh start", err)
	}
	if _, err := os.Stat(FirstTemp(dst)); !os.IsNotExist(err) {
		t.Fatalf("the leftover of a changed source is still there: %v", err)
	}
	// Again, this time resumed.
	d, err = Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	d.StartRecord(id, nil)
	unix.Ftruncate(int(d.File.Fd()), 3<<20+12345)
	d.Checkpoint(2<<20 + 5000)
	die(d)
	r, start, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if err != nil || start != 2<<20 {
		t.Fatalf("Continue: start %d, %v; want the checkpoint rounded down to a MiB", start, err)
	}
	defer r.Abort()
	var st unix.Stat_t
	if unix.Fstat(int(r.File.Fd()), &st); st.Size != 2<<20 {
		t.Errorf("the leftover has %d bytes, want it cut back to its checkpoint", st.Size)
	}
	// A second run meanwhile finds it locked.
	if _, _, err := Continue(fsdir.Cwd, dst, id, Options{}, nil); !errors.As(err, new(*LiveError)) {
		t.Errorf("a locked leftover: %v, want a LiveError", err)
	}
}

// die leaves d's temporary file as a killed process would: its lock and
// descriptors gone, nothing removed.
func die(d *Destination) {
	d.session.mu.Lock()
	delete(d.session.temps, d.entry)
	if d.entry.keeper != nil {
		unix.Close(d.entry.keeper.fd)
		d.entry.keeper = nil
	}
	d.session.mu.Unlock()
	if d.side != nil {
		d.side.close()
	}
	d.entry = nil
	d.File.Close()
	unix.Close(d.lockFd)
	d.lockFd = -1
	d.dir.Release()
	d.done = true
}

func isFresh(err error, why string) bool {
	var f *FreshStart
	return errors.As(err, &f) && f.Why == why
}

// On a fatal signal a resumable file is flushed, recorded at the copy's
// progress and kept; the others are removed.
func TestRemoveTempsForExitKeepsResumable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := srcID(t, dir, 1<<20)
	s := NewSession()
	rec := record(t)
	keep, err := Create(fsdir.Cwd, filepath.Join(dir, "a"), Options{Session: s, Named: true, sys: rec.sys})
	if err != nil {
		t.Fatal(err)
	}
	reached := new(atomic.Int64)
	if err := keep.StartRecord(id, reached); err != nil {
		t.Fatal(err)
	}
	plain, err := Create(fsdir.Cwd, filepath.Join(dir, "b"), Options{Session: s, Named: true, sys: rec.sys})
	if err != nil {
		t.Fatal(err)
	}
	rec.log = nil // the calls of Interrupt
	// The copy's call in flight when the signal comes: it returns once
	// Interrupt holds the session, and its 4096 bytes count. (Should it
	// count them before Interrupt looks, Interrupt finds no call in
	// flight and waits its whole settle time: slower, same outcome.)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for s.mu.TryRLock() {
			s.mu.RUnlock()
			runtime.Gosched()
		}
		keep.File.Write(make([]byte, 4096))
		reached.Store(4096)
	}()
	kept := s.Interrupt().Kept
	s.mu.Unlock()
	<-returned
	defer keep.Abort()
	defer plain.Abort()
	if len(kept) != 1 || kept[0].Temp != keep.TempPath() || kept[0].Done != 4096 || kept[0].Size != 1<<20 || kept[0].Err != nil {
		t.Fatalf("kept %+v, want %s with 4096 of %d bytes", kept, keep.TempPath(), 1<<20)
	}
	if len(rec.filter("fdatasync")) != 1 {
		t.Errorf("calls %v: want one fdatasync before the record", rec.log)
	}
	if _, err := os.Stat(plain.TempPath()); !os.IsNotExist(err) {
		t.Errorf("the plain copy's temporary file is still there")
	}
	b := make([]byte, maxRecord)
	n, err := unix.Getxattr(keep.TempPath(), MarkXattr, b)
	r, derr := decodeRecord(b[:max(n, 0)])
	if err != nil || derr != nil || r.Checkpoint != 4096 || r.ID != id {
		t.Errorf("record %+v (%v, %v), want checkpoint 4096 of %+v", r, err, derr, id)
	}
}

// beforeLock makes the next non-blocking flock (a run's lock of a
// leftover) run fn first: the moment between a run's look at a leftover
// and its lock, when the copy that held the lock may end.
func beforeLock(t *testing.T, fn func()) {
	t.Helper()
	old := flock
	var once sync.Once
	flock = func(fd, how int) error {
		if how&unix.LOCK_NB != 0 {
			once.Do(fn)
		}
		return old(fd, how)
	}
	t.Cleanup(func() { flock = old })
}

// resumableCopy makes a copy to dst with --resume's record that has
// written n bytes and recorded checkpoint, and is still running (its lock
// held). Only the file's length is looked at, never its bytes: a hole of
// n bytes stands for them.
func resumableCopy(t *testing.T, dst string, id SourceID, n int, checkpoint int64) *Destination {
	t.Helper()
	d, err := Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.StartRecord(id, new(atomic.Int64)); err != nil {
		if errors.Is(err, ErrNoXattrs) {
			t.Skipf("no user xattrs: %v", err)
		}
		t.Fatal(err)
	}
	if err := unix.Ftruncate(int(d.File.Fd()), int64(n)); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(checkpoint); err != nil {
		t.Fatal(err)
	}
	return d
}

// A run reads a leftover's record while the copy that writes it still
// runs; that copy then finishes (its file renamed over DEST) before the
// run's lock. The run locks DEST's inode, which it must not cut back to
// the old checkpoint: it starts over, and DEST stays whole.
func TestContinueAfterTheWriterCommitted(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	id := srcID(t, dir, 8<<20)
	a := resumableCopy(t, dst, id, 3<<20+12345, 2<<20)
	beforeLock(t, func() {
		if err := a.Commit(nil); err != nil {
			t.Errorf("the first copy's commit: %v", err)
		}
	})
	d, start, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if d != nil {
		d.Abort()
		t.Fatalf("resumed DEST itself from %d", start)
	}
	if !isFresh(err, WhyChangedMeanwhile) {
		t.Errorf("Continue: %v, want a fresh start (the leftover changed)", err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Size() != 3<<20+12345 {
		t.Fatalf("DEST: %v, %v; want the committed copy's %d bytes", fi, err, 3<<20+12345)
	}
	assertNoTemps(t, dir)
}

// The copy that holds the leftover records a last checkpoint and dies
// (SIGINT) between a run's look at its record and the run's lock: the
// record read is stale, and the leftover is left alone, for the next run.
func TestContinueAfterTheRecordChanged(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	id := srcID(t, dir, 8<<20)
	a := resumableCopy(t, dst, id, 3<<20+12345, 2<<20)
	temp := a.TempPath()
	beforeLock(t, func() {
		if err := a.Checkpoint(3 << 20); err != nil {
			t.Error(err)
		}
		die(a)
	})
	d, _, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if d != nil {
		d.Abort()
		t.Fatal("resumed a leftover whose record changed before the lock")
	}
	var f *FreshStart
	if !errors.As(err, &f) || f.Why != WhyChangedMeanwhile || !f.Kept {
		t.Errorf("Continue: %v, want a fresh start that leaves the leftover", err)
	}
	if fi, err := os.Stat(temp); err != nil || fi.Size() != 3<<20+12345 {
		t.Fatalf("the leftover: %v, %v; want it untouched", fi, err)
	}
	// The next run continues it from its last checkpoint.
	d, start, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if err != nil || start != 3<<20 {
		t.Fatalf("the next run: start %d, %v; want the last checkpoint", start, err)
	}
	d.Abort()
}

// The sweep looks at a marked leftover, then locks it: a writer that
// finished meanwhile (renamed its file over DEST) or was killed at its
// rename (mark removed, file complete) left a file that is not a dead
// leftover any more, and it is not removed.
func TestSweepRechecksUnderTheLock(t *testing.T) {
	for _, end := range []string{"commit", "killed-at-rename"} {
		t.Run(end, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "dst")
			a, err := Create(fsdir.Cwd, dst, Options{Named: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := readMark(a.fd); isUnsupported(err) {
				t.Skipf("no user xattrs: %v", err)
			}
			a.File.Write([]byte("complete"))
			name := filepath.Base(a.TempPath())
			want, wantLeft, p := leftoverGone, 0, dst
			if end != "commit" {
				want, wantLeft, p = leftoverForeign, 1, a.TempPath()
			}
			beforeLock(t, func() {
				if end == "commit" {
					if err := a.Commit(nil); err != nil {
						t.Error(err)
					}
					return
				}
				unix.Fremovexattr(a.fd, MarkXattr)
				die(a)
			})
			in, err := fsdir.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			if got, _ := removeIfDead(in, name, identity{}); got != want {
				t.Errorf("removeIfDead: %v, want %v", got, want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) != wantLeft {
				t.Errorf("left %v, want %d", left, wantLeft)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "complete" {
				t.Errorf("%s: %q, %v; want the complete copy", p, b, err)
			}
		})
	}
}

// A run that continues the leftover under DEST's first temporary name, or
// removes it to start over, also removes the dead leftovers of other
// copies to DEST (a copy that found that name taken took a random one, and
// was killed): only the first name is ever continued. When that name is
// free, the fresh recorded copy that Create makes sweeps them.
func TestContinueSweepsOtherLeftovers(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"continued", "started over", "first name free"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "dst")
			id := srcID(t, dir, 8<<20)
			checkpoint := int64(2 << 20)
			if how != "continued" {
				checkpoint = 0 // no checkpoint: removed, started over
			}
			if how != "first name free" {
				die(resumableCopy(t, dst, id, 3<<20, checkpoint))
			}
			other := filepath.Join(dir, TempPrefix+"dst.0123456789ab")
			if err := os.WriteFile(other, []byte("killed"), 0o600); err != nil {
				t.Fatal(err)
			}
			mark(t, other)
			d, start, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
			var left []Leftover
			var f *FreshStart
			switch {
			case how == "continued" && err == nil && start == 2<<20:
				left = d.Leftovers()
				d.Abort()
			case how == "started over" && errors.As(err, &f) && f.Why == WhyNoCheckpoint && !f.Kept:
				left = f.Swept
			case how == "first name free" && d == nil && err == nil:
				// Two copies raced, the first committed, the power was
				// cut: the other's file is all that is left, under a
				// random name. The copy that starts anew finds it.
				d, err := Create(fsdir.Cwd, dst, Options{Named: true})
				if err != nil {
					t.Fatal(err)
				}
				left = d.Leftovers()
				d.Abort()
			default:
				t.Fatalf("Continue: start %d, %v", start, err)
			}
			if len(left) != 1 || !left[0].Removed || left[0].Path != other {
				t.Errorf("swept %+v, want %s removed", left, other)
			}
			if _, err := os.Lstat(other); !os.IsNotExist(err) {
				t.Errorf("the other leftover is still there: %v", err)
			}
		})
	}
}

// A record with a hash state: it comes back as written; a state past the
// checkpoint is not written; a record whose hash fields were changed or
// cut keeps its checkpoint, and its state is not taken, with the reason.
func TestResumeRecordHashState(t *testing.T) {
	t.Parallel()
	id := SourceID{Dev: 1, Ino: 2, Size: 3 << 30, Mtime: 4, Ctime: 5}
	state := bytes.Repeat([]byte{0xa5, 0x00, 0xff}, 68) // 204 bytes, a SHA-512 state's length
	r := resumeRecord{ID: id, Checkpoint: 2 << 30, Hash: HashState{Alg: "sha512", Off: 2<<30 - 1<<20, State: state}}
	enc := r.encode()
	if len(enc) > maxRecord {
		t.Fatalf("a record of %d bytes, more than maxRecord %d", len(enc), maxRecord)
	}
	got, err := decodeRecord(enc)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", r, got, err)
	}
	past := r
	past.Hash.Off = r.Checkpoint + 1
	if got, _ := decodeRecord(past.encode()); got.Hash.Alg != "" || got.HashWhy != "" {
		t.Errorf("a state past the checkpoint was written: %+v", got)
	}
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 0x01
		return c
	}
	stateAt := bytes.Index(enc, []byte("state=")) + len("state=")
	for name, bad := range map[string][]byte{
		"state changed":    flip(enc, stateAt+10),
		"offset changed":   bytes.Replace(enc, []byte("hashoff=2146435072"), []byte("hashoff=2146435073"), 1),
		"checksum changed": flip(enc, len(enc)-1),
		"state cut":        bytes.Replace(enc, enc[stateAt:stateAt+40], nil, 1),
	} {
		got, err := decodeRecord(bad)
		if err != nil {
			t.Errorf("%s: %v; the record itself is good", name, err)
			continue
		}
		if got.Checkpoint != r.Checkpoint || got.ID != id || got.Hash.Alg != "" || got.HashWhy == "" {
			t.Errorf("%s: %+v, want the checkpoint and no hash state, with a reason", name, got)
		}
	}
}

// The checkpoints record the hash state given; a fatal signal records the
// latest state that is not past how far the copy got; a leftover with a
// hash state gives it back when continued (ResumedHash).
func TestResumeHashStateRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := srcID(t, dir, 8<<20)
	temp := filepath.Join(dir, ".fastcp-dst.000000000000")
	f, err := os.OpenFile(temp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Only its length counts (the checkpoints lie within it): a hole.
	if err := f.Truncate(6 << 20); err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int64
	k := &keeper{sys: &defaultSys, fd: int(f.Fd()), rec: resumeRecord{ID: id}, reached: &reached}
	h1 := HashState{Alg: "sha256", Off: 2 << 20, State: []byte("state at 2 MiB")}
	if err := k.write(3<<20, h1); err != nil {
		t.Fatal(err)
	}
	if got, err := decodeRecord(readXattr(t, temp)); err != nil || got.Checkpoint != 3<<20 || !reflect.DeepEqual(got.Hash, h1) {
		t.Fatalf("record %+v, %v", got, err)
	}
	// A signal at 5 MiB with the hash at 6 MiB (past what was counted
	// written): the state of the last checkpoint stays.
	reached.Store(5 << 20)
	k.hashNow = func() HashState { return HashState{Alg: "sha256", Off: 6 << 20, State: []byte("6")} }
	if kept := k.keepForExit(temp); kept.Done != 5<<20 || kept.Err != nil {
		t.Fatalf("kept %+v", kept)
	}
	if got, _ := decodeRecord(readXattr(t, temp)); got.Checkpoint != 5<<20 || !reflect.DeepEqual(got.Hash, h1) {
		t.Fatalf("record after the signal: %+v", got)
	}
	// With the hash at 4 MiB, that state is recorded.
	k.final = false
	reached.Store(5<<20 + 1<<19)
	now := HashState{Alg: "sha256", Off: 4 << 20, State: []byte("state at 4 MiB")}
	k.hashNow = func() HashState { return now }
	k.keepForExit(temp)
	if got, _ := decodeRecord(readXattr(t, temp)); got.Checkpoint != 5<<20+1<<19 || !reflect.DeepEqual(got.Hash, now) {
		t.Fatalf("record after the second signal: %+v", got)
	}
	f.Close()

	d, start, err := Continue(fsdir.Cwd, filepath.Join(dir, "dst"), id, Options{Named: true}, new(atomic.Int64))
	if err != nil || d == nil || start != 5<<20 {
		t.Fatalf("Continue: %v, %d, %v", d, start, err)
	}
	defer d.Abort()
	if h, why := d.ResumedHash(); !reflect.DeepEqual(h, now) || why != "" {
		t.Errorf("ResumedHash %+v, %q; want the recorded state", h, why)
	}
}

func readXattr(t *testing.T, path string) []byte {
	t.Helper()
	b := make([]byte, maxRecord)
	n, err := unix.Getxattr(path, MarkXattr, b)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// A checkpoint's flush is fdatasync of the descriptor the copier gives,
// retried when a signal cuts it short, and its error is returned as is
// (the copier makes it final).
func TestFlushCheckpoint(t *testing.T) {
	t.Parallel()
	var fds []int
	results := []error{unix.EINTR, unix.EINTR, unix.EIO}
	sys := testSys()
	sys.fdatasync = func(fd int) error {
		fds = append(fds, fd)
		err := results[0]
		results = results[1:]
		return err
	}
	d := Destination{sys: sys}
	if err := d.FlushCheckpoint(7); err != unix.EIO {
		t.Fatalf("err %v, want EIO", err)
	}
	if !reflect.DeepEqual(fds, []int{7, 7, 7}) {
		t.Errorf("fdatasync called on %v, want 7 three times (EINTR twice)", fds)
	}
	d.sys = &defaultSys
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := d.FlushCheckpoint(int(f.Fd())); err != nil {
		t.Errorf("a real flush: %v", err)
	}
}

// judgeRecord's rules, one by one: a record is trusted only for the same
// source, unchanged, with a checkpoint inside both the source and the
// leftover file; a checkpoint is taken down to a MiB boundary.
func TestJudgeRecord(t *testing.T) {
	t.Parallel()
	id := SourceID{Dev: 8, Ino: 42, Size: 5<<20 + 7, Mtime: 100, Ctime: 200}
	rec := func(r resumeRecord) []byte { return r.encode() }
	for _, tt := range []struct {
		name       string
		rec        []byte
		size       int64 // the leftover file's
		why        string
		remove     bool
		checkpoint int64
	}{
		{"mark only", []byte(markMagic), 3 << 20, WhyNoCheckpoint, true, 0},
		{"not fastcp's", []byte("something else"), 3 << 20, WhyForeign, false, 0},
		{"another inode", rec(resumeRecord{ID: SourceID{Dev: 8, Ino: 43, Size: id.Size, Mtime: 100, Ctime: 200}, Checkpoint: 2 << 20}), 3 << 20, WhyForeign, true, 0},
		{"another device", rec(resumeRecord{ID: SourceID{Dev: 9, Ino: 42, Size: id.Size, Mtime: 100, Ctime: 200}, Checkpoint: 2 << 20}), 3 << 20, WhyForeign, true, 0},
		{"source changed", rec(resumeRecord{ID: SourceID{Dev: 8, Ino: 42, Size: id.Size, Mtime: 101, Ctime: 200}, Checkpoint: 2 << 20}), 3 << 20, WhyChanged, true, 0},
		{"checkpoint past the source", rec(resumeRecord{ID: id, Checkpoint: id.Size + 1}), id.Size + 1, WhyForeign, true, 0},
		{"checkpoint past the leftover", rec(resumeRecord{ID: id, Checkpoint: 3 << 20}), 3<<20 - 1, WhyForeign, true, 0},
		{"no checkpoint", rec(resumeRecord{ID: id}), 3 << 20, WhyNoCheckpoint, true, 0},
		{"within the first MiB", rec(resumeRecord{ID: id, Checkpoint: 1<<20 - 1}), 3 << 20, WhyNoCheckpoint, true, 0},
		{"trusted, aligned down", rec(resumeRecord{ID: id, Checkpoint: 3<<20 + 5}), 4 << 20, "", false, 3 << 20},
		{"trusted, complete", rec(resumeRecord{ID: id, Checkpoint: id.Size}), id.Size, "", false, id.Size},
	} {
		r, why, _, remove := judgeRecord(tt.rec, id, tt.size)
		if why != tt.why || remove != tt.remove {
			t.Errorf("%s: why %q remove %v, want %q and %v", tt.name, why, remove, tt.why, tt.remove)
		}
		if tt.why == "" && r.Checkpoint != tt.checkpoint {
			t.Errorf("%s: continues at %d, want %d", tt.name, r.Checkpoint, tt.checkpoint)
		}
	}
}
