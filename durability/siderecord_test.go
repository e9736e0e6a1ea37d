// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// noUserXattrs makes the package's calls answer as sshfs does: no user
// extended attributes, no O_TMPFILE (EOPNOTSUPP).
func noUserXattrs(t *testing.T) {
	t.Helper()
	oldSet, oldGet, oldOpen := fsetxattr, fgetxattr, openat
	fsetxattr = func(int, string, []byte, int) error { return unix.ENOTSUP }
	fgetxattr = func(int, string, []byte) (int, error) { return 0, unix.ENOTSUP }
	openat = func(dirfd int, name string, flags int, mode uint32) (int, error) {
		if flags&unix.O_TMPFILE == unix.O_TMPFILE {
			return -1, unix.EOPNOTSUPP
		}
		return oldOpen(dirfd, name, flags, mode)
	}
	t.Cleanup(func() { fsetxattr, fgetxattr, openat = oldSet, oldGet, oldOpen })
}

// setWriter rewrites the writer named in the side record at path: what a
// copy that died (a PID no process has), or one of another machine,
// leaves. The record's length stays what it was.
func setWriter(t *testing.T, path, key, value string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	head = regexp.MustCompile(key+`=\S*`).ReplaceAllString(head, key+"="+value)
	if err := os.WriteFile(path, []byte(head+"\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
}

// deadPID is a PID no process can have (above the kernel's largest).
const deadPID = "2147483647"

// sideCopy makes a copy to dst with --resume where the filesystem keeps no
// user xattrs: its record goes into a side record. It wrote n bytes and
// recorded checkpoint; then it dies, and (dead) its side record names a
// PID that no process has. Only the file's length is looked at, never
// its bytes: a hole of n bytes stands for them.
func sideCopy(t *testing.T, dst string, id SourceID, n int, checkpoint int64, dead bool) {
	t.Helper()
	d, err := Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := FirstTemp(dst) + SideSuffix; d.SideRecord() != want {
		t.Fatalf("side record %q, want %q", d.SideRecord(), want)
	}
	if err := d.StartRecord(id, new(atomic.Int64)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(int(d.File.Fd()), int64(n)); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(checkpoint); err != nil {
		t.Fatal(err)
	}
	die(d)
	if dead {
		setWriter(t, FirstTemp(dst)+SideSuffix, "pid", deadPID)
	}
}

// Without user xattrs --resume keeps its record in a side record, mode
// 0600: a dead copy's leftover is continued from its checkpoint, and its
// commit removes both files; a copy that still runs (its PID alive with
// its start time) is left alone; one of another machine is named, not
// touched.
func TestSideRecordResume(t *testing.T) {
	noUserXattrs(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	temp, side := FirstTemp(dst), FirstTemp(dst)+SideSuffix
	id := srcID(t, dir, 8<<20)

	sideCopy(t, dst, id, 3<<20+12345, 2<<20+5000, false)
	if fi, err := os.Stat(side); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("side record: %v, %v; want mode 0600", fi, err)
	}
	// Its writer (this process) runs: the leftover is in use.
	if _, _, err := Continue(fsdir.Cwd, dst, id, Options{}, nil); !errors.As(err, new(*LiveError)) {
		t.Fatalf("a running writer's leftover: %v, want a LiveError", err)
	}
	// Another machine's: cannot be told, kept and named with its record.
	setWriter(t, side, "machine", "0123456789abcdef0123456789abcdef")
	_, _, err := Continue(fsdir.Cwd, dst, id, Options{}, nil)
	var fresh *FreshStart
	if !errors.As(err, &fresh) || !fresh.Unjudged || fresh.Side != side || !strings.Contains(fresh.Detail, "another machine") {
		t.Fatalf("another machine's leftover: %#v, want it kept, unjudged, with its side record", err)
	}
	for _, p := range []string{temp, side} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v; want it kept", p, err)
		}
	}
	// A dead copy of this machine's: continued from its checkpoint.
	setWriter(t, side, "machine", thisWriter().machine)
	setWriter(t, side, "pid", deadPID)
	d, start, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if err != nil || start != 2<<20 {
		t.Fatalf("Continue: start %d, %v; want the checkpoint rounded down to a MiB", start, err)
	}
	if d.SideRecord() != side {
		t.Errorf("the resumed copy's side record: %q, want %q", d.SideRecord(), side)
	}
	b, _ := os.ReadFile(side)
	if w, v, err := decodeSide(b); err != nil || w != thisWriter() || !strings.HasPrefix(string(v), resumeMagic) {
		t.Errorf("side record after the adoption: %+v %q %v; want this process's record", w, v, err)
	}
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{temp, side} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s after the commit: %v; want it gone", p, err)
		}
	}
	if fi, err := os.Stat(dst); err != nil || fi.Size() != 2<<20 {
		t.Errorf("DEST: %v, %v", fi, err)
	}
}

// A plain copy of a large source gets a side record too, so that its
// leftover can be proved dead: the next copy to the same DEST removes both
// files. A small one gets none: its leftover is named, with why.
func TestSideRecordSweep(t *testing.T) {
	noUserXattrs(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for _, tc := range []struct {
		size   int64
		record bool
	}{{sideRecordMin, true}, {sideRecordMin - 1, false}} {
		if err := os.Truncate(src, 0); err == nil || os.IsNotExist(err) {
			if err := os.WriteFile(src, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Truncate(src, tc.size); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "dst")
		temp, side := FirstTemp(dst), FirstTemp(dst)+SideSuffix
		d, err := Create(fsdir.Cwd, dst, Options{Source: f})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.SideRecord() != ""; got != tc.record {
			t.Fatalf("size %d: side record %q, want one: %v", tc.size, d.SideRecord(), tc.record)
		}
		die(d)
		if tc.record {
			setWriter(t, side, "pid", deadPID)
		}
		d, err = Create(fsdir.Cwd, dst, Options{Source: f})
		if err != nil {
			t.Fatal(err)
		}
		left := d.Leftovers()
		if err := d.Commit(nil); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if tc.record {
			if len(left) != 1 || !left[0].Removed || left[0].Path != temp {
				t.Errorf("swept %+v, want %s removed", left, temp)
			}
			for _, p := range []string{temp, side} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s: %v; want it removed", p, err)
				}
			}
		} else {
			if len(left) != 1 || left[0].Removed || left[0].Why == "" || left[0].Side != "" {
				t.Errorf("swept %+v, want %s kept, with why", left, temp)
			}
			os.Remove(temp)
		}
		assertNoTemps(t, dir)
	}
}

// A side record whose temporary file is gone (its copy died between the
// two removals) is removed when its writer is gone, by the sweep and by a
// copy that needs its name.
func TestSideRecordOrphan(t *testing.T) {
	noUserXattrs(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	temp, side := FirstTemp(dst), FirstTemp(dst)+SideSuffix
	id := srcID(t, dir, 8<<20)
	sideCopy(t, dst, id, 1<<20, 0, true)
	if err := os.Remove(temp); err != nil {
		t.Fatal(err)
	}
	d, err := Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.TempPath() != temp || d.SideRecord() != side {
		t.Fatalf("temp %q, side %q: want the first names, the orphan removed", d.TempPath(), d.SideRecord())
	}
	b, _ := os.ReadFile(side)
	if w, _, err := decodeSide(b); err != nil || w != thisWriter() {
		t.Errorf("the side record is %+v (%v), want this process's", w, err)
	}
	d.Abort()
	assertNoTemps(t, dir)
}

// The side record changes between a run's look at a leftover and its
// lock (another run adopted the leftover and rewrote it): the run acts on
// nothing, neither file is cut back or removed.
func TestSideRecordChangedBeforeTheLock(t *testing.T) {
	noUserXattrs(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	temp, side := FirstTemp(dst), FirstTemp(dst)+SideSuffix
	id := srcID(t, dir, 8<<20)
	sideCopy(t, dst, id, 3<<20, 2<<20, true)
	var changed []byte
	beforeLock(t, func() {
		setWriter(t, side, "start", "1")
		changed, _ = os.ReadFile(side)
	})
	d, _, err := Continue(fsdir.Cwd, dst, id, Options{}, new(atomic.Int64))
	if d != nil {
		d.Abort()
		t.Fatal("resumed a leftover whose record changed before the lock")
	}
	if !isFresh(err, WhyChangedMeanwhile) {
		t.Errorf("Continue: %v, want a fresh start (the leftover changed)", err)
	}
	if fi, err := os.Stat(temp); err != nil || fi.Size() != 3<<20 {
		t.Errorf("%s: %v, %v; want it untouched", temp, fi, err)
	}
	if b, err := os.ReadFile(side); err != nil || string(b) != string(changed) {
		t.Errorf("%s: %v; want it as the other run left it", side, err)
	}
}
