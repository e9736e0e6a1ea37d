// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"fastcp/durability"
	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// Every way cp makes an entry other than a regular file (whose directory
// durability's Commit fsyncs) records it in the DirSync of the directory
// it goes into, so that --sync fsyncs that directory when it is finished
// (durability/dir.go); an entry not made, or a directory merged into,
// records nothing. The record shows as Finished's fsync: on a descriptor
// that is not open (-1), fsync fails with EBADF.
func TestEntriesMadeAreRecordedForSync(t *testing.T) {
	top := t.TempDir()
	src, dst := filepath.Join(top, "src"), filepath.Join(top, "dst")
	for _, d := range []string{src, filepath.Join(src, "sub"), dst, filepath.Join(dst, "there")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(src, "f"), filepath.Join(dst, "old")} {
		if err := os.WriteFile(f, []byte("data\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("f", filepath.Join(src, "sl")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(path string) *dir {
		d, err := fsdir.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Release)
		return d
	}
	sd, dd, devDir := open(src), open(dst), open("/dev")
	linkTo := func(j *job, name string) {
		// -a's further name of an inode already copied, as name in DEST's
		// directory: that copy is linked.
		first, err := dd.Stat(name, false)
		if err != nil {
			t.Fatal(err)
		}
		j.makeHardLink(&linkFirst{state: linkMade, dir: j.p.dstN, name: name, id: idOf(&first)})
	}
	mkdir := func(j *job) {
		d := &dirCopy{t: j.p.t, e: j.e, srcPath: j.src, dstPath: j.dst, parent: j.p}
		if j.openDestDir(d) {
			d.dstN.Done()
		}
	}
	for _, tc := range []struct {
		name      string
		args      string
		src, dst  string // the source entry (in src, or in /dev), its DEST in dst
		make      func(j *job)
		recorded  bool
		fails     bool
		needsRoot bool
	}{
		{"symbolic link, -s", "-s", "f", "s-new", func(j *job) { j.linkEntry(false) }, true, false, false},
		{"hard link, -l", "-l", "f", "l-new", func(j *job) { j.linkEntry(true) }, true, false, false},
		{"hard link over DEST, -l --remove-destination", "-l --remove-destination", "f", "old",
			func(j *job) { j.linkEntry(true) }, true, false, false},
		{"symbolic link over DEST with a backup, -s -b", "-s -b", "f", "old",
			func(j *job) { j.linkEntry(false) }, true, false, false},
		{"symbolic link over an existing DEST, -s", "-s", "f", "old", func(j *job) { j.linkEntry(false) }, false, true, false},
		{"symbolic link copied, -r", "-r", "sl", "sl-new", (*job).copySymlink, true, false, false},
		{"FIFO, -r", "-r", "fifo", "fifo-new", (*job).copySpecial, true, false, false},
		{"device, -r", "-r", "/dev/null", "null-new", (*job).copySpecial, true, false, true},
		{"further hard link, -a", "-a", "f", "a-new", func(j *job) { linkTo(j, "l-new") }, true, false, false},
		{"directory, -r", "-r", "sub", "sub-new", mkdir, true, false, false},
		{"directory merged into, -r", "-r", "sub", "there", mkdir, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsRoot && os.Geteuid() != 0 {
				if os.Getenv("CI") == "true" {
					t.Fatal("this test needs root, and CI=true forbids skipping it")
				}
				t.Skip("needs root")
			}
			a := &app{opts: optsFor(t, tc.args), session: durability.NewSession(), window: fsdir.NewWindow(8)}
			in, srcPath := sd, filepath.Join(src, tc.src)
			if filepath.IsAbs(tc.src) {
				in, srcPath = devDir, tc.src
			}
			name := filepath.Base(tc.src)
			st, err := in.Stat(name, false)
			if err != nil {
				t.Fatal(err)
			}
			p := &dirCopy{dstN: a.window.Root(dd, false)}
			j := &job{a: a, r: &record{}, p: p, sd: in, dd: dd, e: &entry{name: name, st: st},
				name: tc.dst, src: srcPath, dst: filepath.Join(dst, tc.dst)}
			tc.make(j)
			if j.r.failed != tc.fails {
				t.Errorf("failed %v, want %v: %q", j.r.failed, tc.fails, j.r.lines)
			}
			if _, err := os.Lstat(j.dst); !tc.fails && err != nil {
				t.Errorf("DEST not made: %v", err)
			}
			err = p.dirSync.Finished(durability.SyncData, -1, false)
			if recorded := errors.Is(err, unix.EBADF); recorded != tc.recorded || !recorded && err != nil {
				t.Errorf("DEST's directory finished: %v; want a record (fsync's EBADF): %v", err, tc.recorded)
			}
			if err := p.dirSync.Finished(durability.SyncNone, -1, false); err != nil {
				t.Errorf("finished with --sync=none: %v, want no fsync", err)
			}
		})
	}
}

// A directory --parents makes is recorded in the DirSync of the directory
// it is made in, which finishParents finishes; one that was there is not.
func TestParentDirsMadeAreRecordedForSync(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{"a/b", "dst/a"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in, err := fsdir.Open(filepath.Join(top, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	// -p: a directory that was there is finished too (its attributes).
	ap := &app{opts: optsFor(t, "--parents -p"), session: durability.NewSession()}
	there, ok := ap.parentDir(&record{}, filepath.Join(top, "a"), in, "a", filepath.Join(top, "dst", "a"))
	if !ok {
		t.Fatal("parentDir failed on a directory that is there")
	}
	made, ok := ap.parentDir(&record{}, filepath.Join(top, "a", "b"), there, "b", filepath.Join(top, "dst", "a", "b"))
	if !ok {
		t.Fatal("parentDir failed")
	}
	made.Release()
	there.Release()
	if len(ap.parentDirs) != 2 {
		t.Fatalf("%d parent directories to finish, want 2", len(ap.parentDirs))
	}
	for i, want := range []bool{false, true} {
		d := ap.parentDirs[i]
		err := d.inSync.Finished(durability.SyncData, -1, false)
		if recorded := errors.Is(err, unix.EBADF); recorded != want || !recorded && err != nil {
			t.Errorf("%s's directory finished: %v; want a record (fsync's EBADF): %v", d.dst, err, want)
		}
		d.dir.Release()
		d.in.Release()
	}
}
