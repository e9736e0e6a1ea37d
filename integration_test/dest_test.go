// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSameFile checks that SOURCE and DEST naming one file, directly or
// through a hard link, a symlink or a bind mount, is refused with cp's
// message and leaves the file alone.
func TestSameFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		setup    func(t *testing.T, dir string) // f exists; make the other names
		src, dst string
		msgDst   string // DEST as the message names it, if not dst
		root     bool
	}{
		{name: "into-own-directory", src: "f", dst: ".", msgDst: "./f"},
		{name: "itself", src: "f", dst: "f"},
		{name: "dot-slash", src: "./f", dst: "f"},
		{name: "hard-link", src: "f", dst: "h", setup: func(t *testing.T, dir string) {
			if err := os.Link(join(dir, "f"), join(dir, "h")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "symlink-dest", src: "f", dst: "l", setup: func(t *testing.T, dir string) {
			if err := os.Symlink("f", join(dir, "l")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "symlink-source", src: "l", dst: "f", setup: func(t *testing.T, dir string) {
			if err := os.Symlink("f", join(dir, "l")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "bind-mount", src: "f", dst: "b/f", root: true, setup: func(t *testing.T, dir string) {
			needMount(t)
			b := mustMkdir(t, join(dir, "b"))
			if out, err := exec.Command("mount", "--bind", dir, b).CombinedOutput(); err != nil {
				t.Fatalf("mount --bind: %v: %s", err, out)
			}
			t.Cleanup(func() {
				if err := exec.Command("umount", b).Run(); err != nil {
					exec.Command("umount", "-l", b).Run()
				}
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.root {
				needRoot(t)
			}
			dir := t.TempDir()
			f := join(dir, "f")
			data := randomBytes(10000, "same")
			writeFile(t, f, data, 0o644)
			if c.setup != nil {
				c.setup(t, dir)
			}
			ino := statT(t, f).Ino
			r := fastcp(t, dir, c.src, c.dst)
			msgDst := c.dst
			if c.msgDst != "" {
				msgDst = c.msgDst
			}
			wantFailure(t, r, 1, fmt.Sprintf("fastcp: %s and %s are the same file\n", q(c.src), q(msgDst)))
			assertFileBytes(t, f, data)
			if got := statT(t, f).Ino; got != ino {
				t.Errorf("f was replaced (inode %d, was %d)", got, ino)
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestDanglingSymlinkDest checks that fastcp does not create the file a
// dangling symlink DEST points to.
func TestDanglingSymlinkDest(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"missing", "sub/missing"} {
		t.Run(safeName(target), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "sub"))
			writeFile(t, join(dir, "src"), randomBytes(5000, "src"), 0o644)
			if err := os.Symlink(target, join(dir, "dl")); err != nil {
				t.Fatal(err)
			}
			r := fastcp(t, dir, "src", "dl")
			wantFailure(t, r, 1, "fastcp: not writing through dangling symlink 'dl'\n")
			assertNotExist(t, join(dir, target))
			if got, err := os.Readlink(join(dir, "dl")); err != nil || got != target {
				t.Errorf("the symlink now reads %q (%v), want %q", got, err, target)
			}
			assertNoTemps(t, dir, join(dir, "sub"))
		})
	}
}

// TestSymlinkDest checks that a symlink DEST to an existing file is written
// through: the file it points to gets the new bytes (and keeps its mode),
// the symlink stays a symlink.
func TestSymlinkDest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		links map[string]string // link -> target, made in order link, link2
		dest  string
	}{
		{"one-link", map[string]string{"link": "target/t"}, "link"},
		{"link-to-link", map[string]string{"link": "target/t", "link2": "link"}, "link2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			targetDir := mustMkdir(t, join(dir, "target"))
			data := randomBytes(70000, "new")
			writeFile(t, join(dir, "src"), data, 0o755)
			writeFile(t, join(targetDir, "t"), randomBytes(200000, "old"), 0o640)
			for _, l := range []string{"link", "link2"} {
				if tg, ok := c.links[l]; ok {
					if err := os.Symlink(tg, join(dir, l)); err != nil {
						t.Fatal(err)
					}
				}
			}
			wantSuccess(t, fastcp(t, dir, "src", c.dest))
			assertFileBytes(t, join(targetDir, "t"), data)
			if m := statT(t, join(targetDir, "t")).Mode & 0o7777; m != 0o640 {
				t.Errorf("the target's mode is now %#o, want 0640 (kept)", m)
			}
			for l, tg := range c.links {
				if got, err := os.Readlink(join(dir, l)); err != nil || got != tg {
					t.Errorf("%s now reads %q (%v), want a symlink to %q", l, got, err, tg)
				}
			}
			assertNoTemps(t, dir, targetDir)
		})
	}
}

// TestNewFileMode checks a new DEST's mode: the source's permissions minus
// the umask, without set-user-ID and set-group-ID bits (as cp without -p).
func TestNewFileMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src   uint32
		umask string
		want  uint32
	}{
		{0o755, "022", 0o755},
		{0o755, "077", 0o700},
		{0o4755, "022", 0o755},
		{0o2775, "002", 0o775},
		{0o644, "027", 0o640},
		{0o666, "000", 0o666},
	} {
		t.Run(fmt.Sprintf("%04o-umask%s", c.src, c.umask), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := join(dir, "src")
			data := randomBytes(3000, "mode")
			writeFile(t, src, data, 0o600)
			if err := syscall.Chmod(src, c.src); err != nil {
				t.Fatal(err)
			}
			wantSuccess(t, fastcpUmask(t, dir, c.umask, "src", "dst"))
			assertFileBytes(t, join(dir, "dst"), data)
			if m := statT(t, join(dir, "dst")).Mode & 0o7777; m != c.want {
				t.Errorf("new DEST mode %#o, want %#o (source %#o, umask %s)", m, c.want, c.src, c.umask)
			}
		})
	}
}

// TestExistingDestKeepsModeAndOwner checks that overwriting an existing
// DEST keeps its mode and, as root, its owner.
func TestExistingDestKeepsModeAndOwner(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		srcMode   uint32
		dstMode   uint32
		chownTo   int // 0: leave the owner
		umask     string
		wantOwner bool
	}{
		{name: "0640", srcMode: 0o755, dstMode: 0o640, umask: "022"},
		{name: "0600", srcMode: 0o644, dstMode: 0o600, umask: "000"},
		{name: "0777", srcMode: 0o600, dstMode: 0o777, umask: "077"},
		{name: "owner-1234", srcMode: 0o755, dstMode: 0o640, chownTo: 1234, umask: "022", wantOwner: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.chownTo != 0 {
				needRoot(t)
			}
			dir := t.TempDir()
			data := randomBytes(9000, "new")
			writeFile(t, join(dir, "src"), data, 0o600)
			writeFile(t, join(dir, "dst"), randomBytes(100, "old"), 0o600)
			if err := syscall.Chmod(join(dir, "src"), c.srcMode); err != nil {
				t.Fatal(err)
			}
			if c.chownTo != 0 {
				if err := os.Chown(join(dir, "dst"), c.chownTo, c.chownTo); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Chmod(join(dir, "dst"), c.dstMode); err != nil {
				t.Fatal(err)
			}
			before := statT(t, join(dir, "dst"))
			wantSuccess(t, fastcpUmask(t, dir, c.umask, "src", "dst"))
			assertFileBytes(t, join(dir, "dst"), data)
			st := statT(t, join(dir, "dst"))
			if st.Mode&0o7777 != c.dstMode {
				t.Errorf("DEST's mode is now %#o, want %#o (kept)", st.Mode&0o7777, c.dstMode)
			}
			if st.Uid != before.Uid || st.Gid != before.Gid {
				t.Errorf("DEST's owner is now %d:%d, want %d:%d (kept)", st.Uid, st.Gid, before.Uid, before.Gid)
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestLargerDestTruncated checks that a DEST larger than SOURCE ends at
// SOURCE's size, whatever the strategy and also with --inplace.
func TestLargerDestTruncated(t *testing.T) {
	t.Parallel()
	type run struct{ name, opt string }
	runs := []run{{"inplace", "--inplace"}}
	for _, s := range []string{"auto", "copy_file_range", "sendfile", "splice", "rw"} {
		runs = append(runs, run{s, "--strategy=" + s})
	}
	for _, c := range runs {
		for _, size := range []int{0, 100, 4097} {
			t.Run(fmt.Sprintf("%s-%d", c.name, size), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				data := randomBytes(size, "small")
				writeFile(t, join(dir, "src"), data, 0o644)
				writeFile(t, join(dir, "dst"), randomBytes(1<<20, "large"), 0o644)
				wantSuccess(t, fastcp(t, dir, c.opt, "src", "dst"))
				assertFileBytes(t, join(dir, "dst"), data)
				assertNoTemps(t, dir)
			})
		}
	}
}

// TestLongDestName copies to a DEST whose name has NAME_MAX (255) bytes:
// the temporary name beside it must still fit.
func TestLongDestName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := randomBytes(100000, "long")
	writeFile(t, join(dir, "src"), data, 0o644)
	name := strings.Repeat("x", 255)
	wantSuccess(t, fastcp(t, dir, "src", name))
	assertFileBytes(t, join(dir, name), data)
	assertNoTemps(t, dir)
}

// TestNewDirEntryAppearsMeanwhile: in a directory it made, fastcp takes
// every DEST for absent without looking (cp does the same), so a file that
// another process of the same user puts there while the copy runs must
// still never be overwritten: the link that makes DEST fails (EEXIST), the
// other file keeps its bytes, the error names DEST, nothing temporary is
// left, and the other entries are copied.
func TestNewDirEntryAppearsMeanwhile(t *testing.T) {
	t.Parallel()
	faultReady(t)
	dir := t.TempDir()
	if err := os.MkdirAll(join(dir, "src/d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(dir, "src/d/a"), randomBytes(4096, "a"), 0o644)
	writeFile(t, join(dir, "src/d/f"), randomBytes(4096, "f"), 0o644)
	done := make(chan traced, 1)
	go func() {
		// Every linkat waits 300 ms before it runs.
		done <- faultStraceLog(t, dir, join(t.TempDir(), "strace.log"),
			[]string{"-e", "trace=linkat", "-e", "inject=linkat:delay_enter=300000"}, "-r", "src", "out")
	}()
	other := []byte("made by another process meanwhile\n")
	deadline := time.Now().Add(runTimeout)
	for {
		if _, err := os.Stat(join(dir, "out/d")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("out/d never appeared")
		}
		time.Sleep(time.Millisecond)
	}
	if err := os.WriteFile(join(dir, "out/d/f"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := <-done
	want := "fastcp: cannot create regular file 'out/d/f': File exists\n"
	if tr.code != 1 || tr.stderr != want {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", tr.code, tr.stderr, want)
	}
	assertFileBytes(t, join(dir, "out/d/f"), other)
	assertFileBytes(t, join(dir, "out/d/a"), randomBytes(4096, "a"))
	assertNoTemps(t, join(dir, "out/d"))
}
