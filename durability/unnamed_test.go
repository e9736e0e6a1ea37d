// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fastcp/internal/fsdir"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// tmpfileWorks probes whether dir's filesystem makes O_TMPFILE files.
func tmpfileWorks(t *testing.T, dir string) bool {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

// Where the filesystem has O_TMPFILE, the temporary file has no name while
// it is written: nothing appears in DEST's directory until Commit, which
// leaves DEST alone under its name; Abort and Interrupt leave nothing. A
// --resume copy (Named) and a filesystem without O_TMPFILE get a named
// file.
func TestUnnamedTempFile(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"commit", "abort", "interrupt"} {
		t.Run(end, func(t *testing.T) {
			dir, dest, src := setup(t, []byte("new data"))
			before := names(t, dir)
			s := NewSession()
			d, err := Create(fsdir.Cwd, dest, Options{Session: s, Verify: true, Source: src})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Abort()
			if !tmpfileWorks(t, dir) {
				if d.Unnamed() || d.TempPath() == "" {
					t.Fatalf("no O_TMPFILE in %s, yet the temporary file is unnamed (%q)", dir, d.TempPath())
				}
				t.Skipf("no O_TMPFILE in %s: a named temporary file, as it should be", dir)
			}
			if !d.Unnamed() || d.TempPath() != "" {
				t.Fatalf("Unnamed %v, TempPath %q: want an unnamed file", d.Unnamed(), d.TempPath())
			}
			if _, err := d.File.WriteAt([]byte("new data"), 0); err != nil {
				t.Fatal(err)
			}
			if got := names(t, dir); !slices.Equal(got, before) {
				t.Errorf("while the copy is written the directory holds %q, want %q", got, before)
			}
			if d.Stat == nil || d.Stat.Nlink != 0 || d.Stat.Mode&0o777 != 0o600 {
				t.Errorf("the unnamed file's stat %+v: want no link, mode 0600", d.Stat)
			}
			want := "old contents\n"
			switch end {
			case "commit":
				if err := d.Commit(nil); err != nil {
					t.Fatal(err)
				}
				want = "new data"
			case "abort":
				d.Abort()
			case "interrupt":
				if left := s.Interrupt(); len(left.Kept)+len(left.Partial) != 0 {
					t.Errorf("Interrupt left %+v", left)
				}
			}
			if b, err := os.ReadFile(dest); err != nil || string(b) != want {
				t.Errorf("DEST holds %q, %v; want %q", b, err, want)
			}
			if got := names(t, dir); !slices.Equal(got, before) {
				t.Errorf("after %s the directory holds %q, want %q", end, got, before)
			}
		})
	}
	t.Run("named", func(t *testing.T) {
		_, dest, _ := setup(t, nil)
		d, err := Create(fsdir.Cwd, dest, Options{Named: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Abort()
		if d.Unnamed() || d.TempPath() != FirstTemp(dest) {
			t.Errorf("Named: Unnamed %v, TempPath %q; want %s", d.Unnamed(), d.TempPath(), FirstTemp(dest))
		}
	})
}

// Commit gives the unnamed file a temporary name that nobody holds: a file
// already under the first name (a user's, or another copy's) is left as it
// is, and triggers the sweep, which keeps an unmarked file.
func TestUnnamedTempFileNameTaken(t *testing.T) {
	t.Parallel()
	dir, dest, src := setup(t, []byte("new data"))
	if !tmpfileWorks(t, dir) {
		t.Skipf("no O_TMPFILE in %s", dir)
	}
	first := FirstTemp(dest)
	if err := os.WriteFile(first, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Create(fsdir.Cwd, dest, Options{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if !d.Unnamed() {
		t.Fatal("a named temporary file")
	}
	if l := d.Leftovers(); len(l) != 1 || l[0].Path != first || l[0].Removed {
		t.Errorf("sweep found %+v, want %s kept", l, first)
	}
	if _, err := d.File.WriteAt([]byte("new data"), 0); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d.TempPath()) != dir || d.TempPath() == first || !IsTempFor(filepath.Base(d.TempPath()), "dest") {
		t.Errorf("linked in as %q, want another temporary name in %s", d.TempPath(), dir)
	}
	if b, err := os.ReadFile(first); err != nil || string(b) != "precious" {
		t.Errorf("the file under the first name became %q, %v", b, err)
	}
	if b, err := os.ReadFile(dest); err != nil || string(b) != "new data" {
		t.Errorf("DEST holds %q, %v", b, err)
	}
	for _, n := range names(t, dir) {
		if n != "dest" && n != "src" && n != filepath.Base(first) {
			t.Errorf("left behind: %s", n)
		}
	}
}

// A new DEST (Options.New) gets the unnamed file under its own name, with
// no temporary name and no rename; one that appeared since the copy was
// decided is left alone, and Commit fails with EEXIST, as cp's O_EXCL
// create does.
func TestUnnamedNewDest(t *testing.T) {
	t.Parallel()
	for _, appeared := range []bool{false, true} {
		t.Run(fmt.Sprintf("appeared=%v", appeared), func(t *testing.T) {
			dir := t.TempDir()
			if !tmpfileWorks(t, dir) {
				t.Skipf("no O_TMPFILE in %s", dir)
			}
			dest := filepath.Join(dir, "new")
			d, err := Create(fsdir.Cwd, dest, Options{New: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Abort()
			if _, err := d.File.WriteAt([]byte("copied"), 0); err != nil {
				t.Fatal(err)
			}
			if appeared {
				if err := os.WriteFile(dest, []byte("someone else's"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err = d.Commit(nil)
			want := "copied"
			if appeared {
				var de *Error
				if !errors.As(err, &de) || de.Op != "create" || !errors.Is(err, unix.EEXIST) {
					t.Errorf("Commit: %v, want a failed create (EEXIST)", err)
				}
				want = "someone else's"
			} else if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(dest); err != nil || string(b) != want {
				t.Errorf("DEST holds %q, %v; want %q", b, err, want)
			}
			if got := names(t, dir); !slices.Equal(got, []string{"new"}) {
				t.Errorf("the directory holds %q, want only new", got)
			}
		})
	}
}

// Where linkat refuses AT_EMPTY_PATH (before Linux 6.10 without
// CAP_DAC_READ_SEARCH), the unnamed file is linked in through
// /proc/self/fd.
func TestLinkFdThroughProc(t *testing.T) {
	dir := t.TempDir()
	if !tmpfileWorks(t, dir) {
		t.Skipf("no O_TMPFILE in %s", dir)
	}
	was := emptyPathRefused.Load()
	emptyPathRefused.Store(true)
	defer emptyPathRefused.Store(was)
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte("through /proc")); err != nil {
		t.Fatal(err)
	}
	if err := linkFd(fd, dfd, "linked"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "linked")); err != nil || string(b) != "through /proc" {
		t.Errorf("linked file holds %q, %v", b, err)
	}
	if err := linkFd(fd, dfd, "linked"); !errors.Is(err, unix.EEXIST) {
		t.Errorf("a second link to a taken name: %v, want EEXIST", err)
	}
}
