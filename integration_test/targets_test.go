// SPDX-License-Identifier: MIT

package integration_test

// Several -t DIRECTORY: every SOURCE copied into each, read once.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// TestTargetsUsage: what several -t cannot mean is a usage error, exit 1,
// with nothing copied anywhere: one directory named twice (by the same
// name, another name, a symbolic link, a bind mount), several -t with -T,
// and a last operand that is a directory where every operand is a SOURCE.
func TestTargetsUsage(t *testing.T) {
	const hint = "Each -t DIRECTORY gets a copy of every SOURCE; name each directory once.\n"
	const try = "Try 'fastcp --help' for more information.\n"
	for _, c := range []struct {
		name   string
		root   bool
		setup  func(t *testing.T, dir string)
		args   []string
		stderr string
	}{
		{name: "same-name", args: []string{"-t", "a", "-t", "b", "-t", "a", "f"},
			stderr: "fastcp: --target-directory (-t) names the same directory twice: 'a'\n" + hint + try},
		{name: "other-name", args: []string{"-t", "a", "--target-directory=./b/../a/", "f"},
			stderr: "fastcp: --target-directory (-t) names the same directory twice: 'a' and './b/../a/'\n" + hint + try},
		{name: "symlink", args: []string{"-t", "a", "-t", "la", "f"},
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink("a", filepath.Join(dir, "la")); err != nil {
					t.Fatal(err)
				}
			},
			stderr: "fastcp: --target-directory (-t) names the same directory twice: 'a' and 'la'\n" + hint + try},
		{name: "bind-mount", root: true, args: []string{"-t", "bm", "-t", "a", "-t", "b", "f"},
			setup: func(t *testing.T, dir string) {
				needMount(t)
				bm := mustMkdir(t, filepath.Join(dir, "bm"))
				if out, err := exec.Command("mount", "--bind", filepath.Join(dir, "b"), bm).CombinedOutput(); err != nil {
					t.Fatalf("mount --bind: %v: %s", err, out)
				}
				t.Cleanup(func() {
					if err := exec.Command("umount", bm).Run(); err != nil {
						exec.Command("umount", "-l", bm).Run()
					}
				})
			},
			stderr: "fastcp: --target-directory (-t) names the same directory twice: 'bm' and 'b'\n" + hint + try},
		{name: "no-target-directory", args: []string{"-t", "a", "-t", "b", "-T", "f"},
			stderr: "fastcp: cannot combine --target-directory (-t) and --no-target-directory (-T)\n" + try},
		{name: "trailing-dest", args: []string{"-t", "a", "-t", "b", "f", "c"},
			stderr: "fastcp: with several --target-directory (-t), every operand is a SOURCE, and 'c' is a directory\n" +
				"Add -t 'c' to copy into it too, or -r to copy it into each DIRECTORY.\n" + try},
		{name: "missing-target", args: []string{"-t", "a", "-t", "nope", "f"},
			stderr: "fastcp: target directory 'nope': No such file or directory\n"},
		{name: "file-target", args: []string{"-t", "a", "-t", "f", "f"},
			stderr: "fastcp: target directory 'f': Not a directory\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.root {
				needRoot(t)
			}
			dir := t.TempDir()
			for _, d := range []string{"a", "b", "c"} {
				mustMkdir(t, filepath.Join(dir, d))
			}
			writeFile(t, filepath.Join(dir, "f"), []byte("data\n"), 0o644)
			if c.setup != nil {
				c.setup(t, dir)
			}
			r := fastcp(t, dir, c.args...)
			wantFailure(t, r, 1, c.stderr)
			for _, d := range []string{"a", "b", "c"} {
				if ents, err := os.ReadDir(filepath.Join(dir, d)); err != nil || len(ents) != 0 {
					t.Errorf("%s: want it empty, got %v (%v)", d, ents, err)
				}
			}
		})
	}
}

// TestTargetsFiles: every SOURCE lands in each -t DIRECTORY, byte for
// byte, with its mode; -v names each DEST, in the order of the SOURCEs,
// then of the -t options.
func TestTargetsFiles(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		mustMkdir(t, filepath.Join(dir, d))
	}
	f, g := randomBytes(3<<20+5, "f"), randomBytes(1000, "g")
	writeFile(t, filepath.Join(dir, "f"), f, 0o640)
	writeFile(t, filepath.Join(dir, "g"), g, 0o755)
	r := fastcpUmask(t, dir, "027", "-v", "-t", "a", "--target-directory=b", "-tc", "f", "g")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no message, got %v", r)
	}
	want := "'f' -> 'a/f'\n'f' -> 'b/f'\n'f' -> 'c/f'\n'g' -> 'a/g'\n'g' -> 'b/g'\n'g' -> 'c/g'\n"
	if r.stdout != want {
		t.Errorf("-v lines:\n got %q\nwant %q", r.stdout, want)
	}
	for _, d := range []string{"a", "b", "c"} {
		assertFileBytes(t, filepath.Join(dir, d, "f"), f)
		assertFileBytes(t, filepath.Join(dir, d, "g"), g)
		for name, mode := range map[string]uint32{"f": 0o640, "g": 0o750} {
			if m := statT(t, filepath.Join(dir, d, name)).Mode & 0o7777; m != mode {
				t.Errorf("%s/%s: mode %o, want %o", d, name, m, mode)
			}
		}
		assertNoTemps(t, filepath.Join(dir, d))
	}
}

// TestTargetsFilesystems copies into three -t DIRECTORYs at once, on
// xfs (the source's filesystem: a reflink), ext4 and tmpfs: a file of
// data, a sparse file and, with -a, their attributes; each copy has the
// bytes, the holes (st_blocks), the mode, the times and the extended
// attributes of the source, and the source is read once for the two that
// are not cloned.
func TestTargetsFilesystems(t *testing.T) {
	srcDir := fsDir(t, "xfs")
	dirs := []string{mustMkdir(t, filepath.Join(srcDir, "into")), fsDir(t, "ext4"), fsDir(t, "tmpfs")}
	data := randomBytes(9<<20+77, "fs")
	writeFile(t, filepath.Join(srcDir, "data"), data, 0o640)
	writeSparse(t, filepath.Join(srcDir, "sparse"), 64<<20+5, []span{
		{off: 0, data: randomBytes(8192, "s0")},
		{off: 20 << 20, data: randomBytes(3<<20, "s1")},
		{off: 64<<20 - 4096, data: randomBytes(4096, "s2")},
	})
	for _, name := range []string{"data", "sparse"} {
		p := filepath.Join(srcDir, name)
		if err := unix.Setxattr(p, "user.test", []byte(name), 0); err != nil {
			t.Fatal(err)
		}
		mtime := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-a", "--debug"}
	for _, d := range dirs {
		args = append(args, "-t", d)
	}
	r := fastcp(t, srcDir, append(args, "data", "sparse")...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no message, got %v", r)
	}
	for i, d := range dirs {
		for _, name := range []string{"data", "sparse"} {
			src, dst := filepath.Join(srcDir, name), filepath.Join(d, name)
			assertSameContent(t, src, dst)
			sst, dstSt := statT(t, src), statT(t, dst)
			if dstSt.Mode != sst.Mode || dstSt.Mtim != sst.Mtim {
				t.Errorf("%s: mode %o mtime %v, want %o and %v", dst, dstSt.Mode, dstSt.Mtim, sst.Mode, sst.Mtim)
			}
			if name == "sparse" && dstSt.Blocks > sst.Blocks {
				t.Errorf("%s: %d blocks, the source %d: its holes were filled", dst, dstSt.Blocks, sst.Blocks)
			}
			buf := make([]byte, 64)
			if n, err := unix.Getxattr(dst, "user.test", buf); err != nil || string(buf[:n]) != name {
				t.Errorf("%s: user.test %q, %v", dst, buf[:max(n, 0)], err)
			}
		}
		assertNoTemps(t, d)
		// The clone on the source's own filesystem; for the others, the
		// source being in the page cache, a kernel copy each from there.
		block := debugBlock(r.stdout, "data", filepath.Join(d, "data"))
		dbg := parseDebug(t, block, "data", filepath.Join(d, "data"))
		if i == 0 && dbg.reflink != "yes" {
			t.Errorf("%s: reflink %q, want yes", d, dbg.reflink)
		}
		if i > 0 && (dbg.strategy != "sendfile" || !strings.Contains(block, "own copy: SOURCE in the page cache, copied by the kernel into each of 2 destinations")) {
			t.Errorf("%s: --debug says\n%s\nwant a sendfile of its own from the page cache", d, block)
		}
	}
	// Not in the page cache: one read shared by the two, into each
	// directory again (over the copies above).
	evictPath(t, filepath.Join(srcDir, "data"))
	r = fastcp(t, srcDir, "--debug", "-t", dirs[1], "-t", dirs[2], "data")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no message, got %v", r)
	}
	for _, d := range dirs[1:] {
		assertSameContent(t, filepath.Join(srcDir, "data"), filepath.Join(d, "data"))
		block := debugBlock(r.stdout, "data", filepath.Join(d, "data"))
		if !strings.Contains(block, fmt.Sprintf("shared read: SOURCE read once for 2 destinations, %d bytes", len(data))) || strings.Contains(block, "own copy") {
			t.Errorf("%s: --debug says\n%s\nwant one read shared by the two", d, block)
		}
	}
}

// TestTargetsOneFillsUp: a destination whose filesystem fills up in the
// middle of the copy fails alone, named in a message, its old DEST kept
// and nothing left beside it; the others get the whole copy; exit 1.
func TestTargetsOneFillsUp(t *testing.T) {
	needMount(t)
	small, err := fsfixture.Mount(t.TempDir(), "tmpfs", 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { small.Unmount() })
	srcDir := fsDir(t, "ext4")
	dirs := []string{fsDir(t, "tmpfs"), small.Dir, mustMkdir(t, filepath.Join(srcDir, "into"))}
	data := randomBytes(24<<20, "full")
	writeFile(t, filepath.Join(srcDir, "f"), data, 0o644)
	old := []byte("the old DEST\n")
	writeFile(t, filepath.Join(small.Dir, "f"), old, 0o644)
	for _, sync := range []string{"--sync=none", "--sync=data"} {
		t.Run(sync, func(t *testing.T) {
			r := fastcp(t, srcDir, sync, "-t", dirs[0], "-t", dirs[1], "-t", dirs[2], "f")
			want := fmt.Sprintf("fastcp: error writing %s: No space left on device\n", q(filepath.Join(small.Dir, "f")))
			wantFailure(t, r, 1, want)
			assertFileBytes(t, filepath.Join(small.Dir, "f"), old)
			for _, d := range []string{dirs[0], dirs[2]} {
				assertFileBytes(t, filepath.Join(d, "f"), data)
			}
			assertNoTemps(t, dirs...)
			for _, d := range []string{dirs[0], dirs[2]} {
				os.Remove(filepath.Join(d, "f"))
			}
		})
	}
}

// debugBlock is the part of --debug's output about the copy of src to
// dst: its -v line and the lines up to the next -v line.
func debugBlock(out, src, dst string) string {
	head := q(src) + " -> " + q(dst) + "\n"
	i := strings.Index(out, head)
	if i < 0 {
		return ""
	}
	rest := out[i+len(head):]
	end := len(rest)
	for off := 0; off < len(rest); {
		nl := strings.IndexByte(rest[off:], '\n')
		if nl < 0 {
			break
		}
		if strings.Contains(rest[off:off+nl], "' -> '") {
			end = off
			break
		}
		off += nl + 1
	}
	return head + rest[:end]
}

// makeTargetsTree makes a tree of files (one sparse), directories, a
// symbolic link, a FIFO and a file with a second hard link, with modes,
// times and an extended attribute to keep.
func makeTargetsTree(t *testing.T, src string) {
	t.Helper()
	mustMkdir(t, src)
	mustMkdir(t, filepath.Join(src, "sub"))
	mustMkdir(t, filepath.Join(src, "sub", "deeper"))
	writeFile(t, filepath.Join(src, "a"), randomBytes(5<<20+3, "a"), 0o640)
	writeFile(t, filepath.Join(src, "sub", "b"), randomBytes(4096, "b"), 0o755)
	writeFile(t, filepath.Join(src, "sub", "deeper", "c"), nil, 0o600)
	writeSparse(t, filepath.Join(src, "sparse"), 32<<20, []span{{off: 8 << 20, data: randomBytes(1<<20, "sp")}})
	for i := range 30 {
		writeFile(t, filepath.Join(src, "sub", fmt.Sprintf("small%02d", i)), randomBytes(100*i, fmt.Sprint("s", i)), 0o644)
	}
	if err := os.Link(filepath.Join(src, "a"), filepath.Join(src, "sub", "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../a", filepath.Join(src, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(src, "fifo"), 0o620); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(src, "sub", "b"), "user.test", []byte("b"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "sub", "deeper"), 0o750); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2002, 3, 4, 5, 6, 7, 8000, time.UTC)
	for _, p := range []string{"a", "sub/b", "sparse", "sub/deeper", "sub"} {
		if err := os.Chtimes(filepath.Join(src, p), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// assertTreeCopy checks that dst is an -a copy of the tree src: the same
// entries, types, bytes, modes, times of files and directories, link
// targets, the extended attribute, holes (st_blocks), and a.hard link kept.
func assertTreeCopy(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		q := filepath.Join(dst, rel)
		var sst, dstSt unix.Stat_t
		if err := unix.Lstat(p, &sst); err != nil {
			return err
		}
		if err := unix.Lstat(q, &dstSt); err != nil {
			t.Errorf("%s: %v", q, err)
			return nil
		}
		if sst.Mode != dstSt.Mode {
			t.Errorf("%s: mode %o, want %o", q, dstSt.Mode, sst.Mode)
		}
		switch sst.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			assertSameContent(t, p, q)
			if dstSt.Mtim != sst.Mtim {
				t.Errorf("%s: mtime %v, want %v", q, dstSt.Mtim, sst.Mtim)
			}
			if dstSt.Blocks > sst.Blocks+8 {
				t.Errorf("%s: %d blocks, the source %d", q, dstSt.Blocks, sst.Blocks)
			}
		case unix.S_IFDIR:
			if rel != "." && dstSt.Mtim != sst.Mtim {
				t.Errorf("%s: mtime %v, want %v", q, dstSt.Mtim, sst.Mtim)
			}
		case unix.S_IFLNK:
			st, _ := os.Readlink(p)
			dt, err := os.Readlink(q)
			if err != nil || st != dt {
				t.Errorf("%s: link to %q (%v), want %q", q, dt, err, st)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, h := statT(t, filepath.Join(dst, "a")), statT(t, filepath.Join(dst, "sub", "hard"))
	if a.Ino != h.Ino || a.Nlink != 2 {
		t.Errorf("%s: a and sub/hard are inodes %d and %d (%d links): want one file, linked", dst, a.Ino, h.Ino, a.Nlink)
	}
	buf := make([]byte, 8)
	if n, err := unix.Getxattr(filepath.Join(dst, "sub", "b"), "user.test", buf); err != nil || string(buf[:n]) != "b" {
		t.Errorf("%s/sub/b: user.test %q, %v", dst, buf[:max(n, 0)], err)
	}
}

// TestTargetsTrees copies a tree with -a into two and three -t
// DIRECTORYs on different filesystems (xfs, where the source is, so a
// reflink; ext4; tmpfs), with -j 1 and -j 4: each is a copy of the
// tree, with its holes, modes, times, attributes and hard links; -v names
// each entry's DESTs in the order of the -t options; every file is read
// once.
func TestTargetsTrees(t *testing.T) {
	srcFS := fsDir(t, "xfs")
	src := filepath.Join(srcFS, "tree")
	makeTargetsTree(t, src)
	for _, c := range []struct {
		name  string
		kinds []string
		jobs  string
	}{
		{"ext4+tmpfs", []string{"ext4", "tmpfs"}, "1"},
		{"xfs+ext4+tmpfs", []string{"xfs", "ext4", "tmpfs"}, "1"},
		{"xfs+ext4+tmpfs-j4", []string{"xfs", "ext4", "tmpfs"}, "4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-av", "-j", c.jobs}
			var dirs []string
			for _, k := range c.kinds {
				d := fsDir(t, k)
				if k == "xfs" {
					d = mustMkdir(t, filepath.Join(srcFS, "into-"+safeName(t.Name())))
				}
				dirs = append(dirs, d)
				args = append(args, "-t", d)
			}
			r := fastcp(t, srcFS, append(args, "tree")...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit 0 and no message, got %v", r)
			}
			for _, d := range dirs {
				assertTreeCopy(t, src, filepath.Join(d, "tree"))
				assertNoTemps(t, filepath.Join(d, "tree"), filepath.Join(d, "tree", "sub"))
			}
			// -v: every entry's lines together, DIRECTORY by DIRECTORY.
			ls := lines(r.stdout)
			for i := 0; i+len(dirs) <= len(ls); i += len(dirs) {
				srcName, _, _ := strings.Cut(ls[i], " -> ")
				for k, d := range dirs {
					want := srcName + " -> " + q(filepath.Join(d, strings.Trim(srcName, "'")))
					if ls[i+k] != want {
						t.Fatalf("-v line %d: %q, want %q\n%s", i+k, ls[i+k], want, r.stdout)
					}
				}
			}
			if len(ls) != 40*len(dirs) {
				t.Errorf("%d -v lines, want %d:\n%s", len(ls), 40*len(dirs), r.stdout)
			}
		})
	}
}

// TestTargetsTreeOneFillsUp: a tree into three -t DIRECTORYs, one a small
// tmpfs that fills up on the way: its files fail, named, with nothing
// left half-written or beside them; the other two get the whole tree;
// exit 1.
func TestTargetsTreeOneFillsUp(t *testing.T) {
	needMount(t)
	small, err := fsfixture.Mount(t.TempDir(), "tmpfs", 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { small.Unmount() })
	srcDir := fsDir(t, "ext4")
	src := filepath.Join(srcDir, "tree")
	mustMkdir(t, src)
	for i := range 12 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%02d", i)), randomBytes(1<<20+i, fmt.Sprint("f", i)), 0o644)
	}
	dirs := []string{fsDir(t, "tmpfs"), small.Dir, mustMkdir(t, filepath.Join(srcDir, "into"))}
	r := fastcp(t, srcDir, "-r", "-t", dirs[0], "-t", dirs[1], "-t", dirs[2], "tree")
	// Which file fills it depends on how many are copied at once.
	full := regexp.MustCompile("^fastcp: error writing '" + regexp.QuoteMeta(filepath.Join(small.Dir, "tree")) +
		`/f\d\d': No space left on device$`)
	if r.code != 1 || len(lines(r.stderr)) == 0 {
		t.Errorf("want exit 1 and the full DIRECTORY named, got %v", r)
	}
	for _, l := range lines(r.stderr) {
		if !full.MatchString(l) {
			t.Errorf("a message other than the full DIRECTORY's: %q", l)
		}
	}
	for _, d := range []string{dirs[0], dirs[2]} {
		for i := range 12 {
			assertSameContent(t, filepath.Join(src, fmt.Sprintf("f%02d", i)), filepath.Join(d, "tree", fmt.Sprintf("f%02d", i)))
		}
	}
	for _, d := range dirs {
		assertNoTemps(t, filepath.Join(d, "tree"))
	}
	// What is in the full one is whole.
	ents, _ := os.ReadDir(filepath.Join(small.Dir, "tree"))
	for _, e := range ents {
		assertSameContent(t, filepath.Join(src, e.Name()), filepath.Join(small.Dir, "tree", e.Name()))
	}
}

// TestTargetsSignals: SIGTERM or SIGKILL in the middle of a copy into
// two -t DIRECTORYs (tmpfs and ext4), each with an old DEST: each keeps
// its old DEST, whole, with nothing beside it; the next run makes both.
func TestTargetsSignals(t *testing.T) {
	const size = 128 << 20
	srcDir := resumeFS(t, size+(16<<20))
	writePattern(t, join(srcDir, "f"), size, t.Name())
	dirs := []string{resumeFS(t, 2*size+(16<<20)), fsDir(t, "ext4")}
	old := []byte("the old DEST\n")
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGKILL, -1}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			for _, d := range dirs {
				writeFile(t, join(d, "f"), old, 0o644)
			}
			run := startSlow(t, srcDir, "pwrite64", 40*time.Millisecond, "--strategy=rw", "--buffer-size=1M", "-t", dirs[0], "-t", dirs[1], "f")
			run.waitUntil(t, "8 MiB in the temporary file of each DEST", func() bool {
				for _, d := range dirs {
					if !slices.ContainsFunc(openTempsAnywhere(d), func(p string) bool { return sizeOf(p) >= 8<<20 }) {
						return false
					}
				}
				return true
			})
			code := run.signal(t, tc.sig)
			if code != tc.code && !(tc.sig == syscall.SIGKILL && code == 128+9) {
				t.Fatalf("exit status %d after %v, want %d; stderr %q", code, tc.sig, tc.code, run.output())
			}
			if tc.sig == syscall.SIGTERM && run.output() != "" {
				t.Errorf("stderr %q, want nothing", run.output())
			}
			for _, d := range dirs {
				assertFileBytes(t, join(d, "f"), old)
				assertNoTemps(t, d)
			}
			r := fastcp(t, srcDir, "-t", dirs[0], "-t", dirs[1], "f")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("the next run: %v", r)
			}
			for _, d := range dirs {
				sameFiles(t, join(srcDir, "f"), join(d, "f"))
				assertNoTemps(t, d)
			}
		})
	}
}

// TestTargetsResume: --resume with two -t DIRECTORYs. A run stopped by
// SIGTERM keeps a leftover in each, and says so for each; once one of
// them has gone further (a run into that DIRECTORY alone), the run into
// both finishes each DEST from its own checkpoint, and each is the source
// byte for byte, with no leftover.
func TestTargetsResume(t *testing.T) {
	const size = 128 << 20
	srcDir := resumeFS(t, size+(16<<20))
	writePattern(t, join(srcDir, "f"), size, t.Name())
	dirs := []string{resumeFS(t, 2*size+(16<<20)), fsDir(t, "ext4")}
	temps := []string{join(dirs[0], ".fastcp-f.000000000000"), join(dirs[1], ".fastcp-f.000000000000")}
	slow := func(args ...string) *slowRun {
		return startSlow(t, srcDir, "pwrite64", 40*time.Millisecond, append([]string{"--resume", "--strategy=rw", "--buffer-size=1M"}, args...)...)
	}
	run := slow("-t", dirs[0], "-t", dirs[1], "f")
	// SIGTERM records a checkpoint, where the copy is.
	run.waitUntil(t, "8 MiB in each", func() bool {
		return sizeOf(temps[0]) >= 8<<20 && sizeOf(temps[1]) >= 8<<20
	})
	if code := run.signal(t, syscall.SIGTERM); code != 143 {
		t.Fatalf("exit status %d after SIGTERM, want 143; stderr %q", code, run.output())
	}
	kept := lines(strings.TrimSpace(run.output()))
	if len(kept) != 2 {
		t.Fatalf("stderr %q, want a line for each kept file", run.output())
	}
	// The kept files are named in the order of their names.
	for _, l := range kept {
		m := keptRE.FindStringSubmatch(l)
		i := -1
		if m != nil {
			i = slices.Index(temps, m[1])
		}
		if i < 0 || m[2] != join(dirs[i], "f") || m[3] != strconv.FormatInt(checkpointOf(temps[i]), 10) {
			t.Errorf("stderr line %q, want a kept file of %q, its checkpoint and the hint", l, temps)
		}
	}
	if kept[0] == kept[1] {
		t.Errorf("stderr %q: one file said twice", run.output())
	}
	// The second DIRECTORY's copy goes 16 MiB further on its own.
	further := checkpointOf(temps[1]) + 16<<20
	run = slow("-t", dirs[1], "f")
	run.waitUntil(t, "16 MiB further", func() bool { return sizeOf(temps[1]) >= further })
	if code := run.signal(t, syscall.SIGTERM); code != 143 {
		t.Fatalf("exit status %d after SIGTERM, want 143; stderr %q", code, run.output())
	}
	ckpts := []int64{checkpointOf(temps[0]), checkpointOf(temps[1])}
	if ckpts[0] <= 0 || ckpts[1] <= ckpts[0] {
		t.Fatalf("checkpoints %v, want two, the second further", ckpts)
	}
	r := fastcp(t, srcDir, "--resume", "--debug", "-t", dirs[0], "-t", dirs[1], "f")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("the run into both: %v", r)
	}
	for i, d := range dirs {
		block := debugBlock(r.stdout, "f", join(d, "f"))
		var from []string
		for _, l := range lines(block) {
			if m := resumeLineRE.FindStringSubmatch(l); m != nil {
				from = append(from, m[2])
			}
		}
		if len(from) != 1 || from[0] != strconv.FormatInt(ckpts[i], 10) {
			t.Errorf("%s: resumed from %v, want [%d]; --debug says\n%s", d, from, ckpts[i], block)
		}
		sameFiles(t, join(srcDir, "f"), join(d, "f"))
		assertNotExist(t, temps[i])
		assertNoTemps(t, d)
	}
}

// TestTargetsSwappedDestDirectory: root copies a tree into two -t
// DIRECTORYs, and the unprivileged owner of the second replaces the
// directory fastcp made in it with a symbolic link to a directory of
// root's, while strace holds fastcp right after that directory's mkdir
// (or after its open, when the first fsetxattr of it marks it
// unfinished). Nothing outside the DIRECTORYs changes: nothing is written
// through the link. The copy into the first DIRECTORY is whole.
func TestTargetsSwappedDestDirectory(t *testing.T) {
	needRoot(t)
	t.Parallel()
	for _, c := range []struct {
		args   []string
		inject string
		fails  bool // the swap comes before the open: that DEST is refused
	}{
		{[]string{"-r"}, "mkdir,mkdirat", true},
		{[]string{"-a", "-j", "4"}, "mkdir,mkdirat", true},
		{[]string{"-r"}, "fsetxattr", false},
		{[]string{"-a", "-j", "4"}, "fsetxattr", false},
	} {
		t.Run(strings.Join(c.args, "")+"/"+strings.Split(c.inject, ",")[0], func(t *testing.T) {
			t.Parallel()
			scratch, _ := ccUserScratch(t)
			// strace counts when= per thread, and Go moves the copy
			// between threads: the delay may hold another directory's
			// call. Such a run tests nothing and is made again.
			for n := range 5 {
				if swappedRun(t, c.args, c.inject, c.fails, mustMkdir(t, join(scratch, fmt.Sprint("w", n)))) {
					return
				}
			}
			t.Fatal("in 5 runs the delay never held x/src's call")
		})
	}
}

// swappedRun is one run of TestTargetsSwappedDestDirectory in dir; false
// when the delay did not hold x/src's call (nothing was checked).
func swappedRun(t *testing.T, args []string, inject string, fails bool, dir string) bool {
	src := mustMkdir(t, join(dir, "src"))
	for i := range 40 {
		writeFile(t, join(src, fmt.Sprintf("f%02d", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o755)
	}
	mustMkdir(t, join(src, "sub"))
	writeFile(t, join(src, "sub", "secret"), []byte("overwritten\n"), 0o777)
	outside := mustMkdir(t, join(dir, "outside"))
	os.Chmod(outside, 0o700)
	writeFile(t, join(outside, "secret"), []byte("precious\n"), 0o600)
	mustMkdir(t, join(dir, "t1"))
	x := mustMkdir(t, join(dir, "x"))
	if err := os.Chown(x, ccNobody, ccNobody); err != nil {
		t.Fatal(err)
	}
	before := entriesOf(t, outside)

	// The second call: the first is t1/src's.
	done := make(chan traced, 1)
	faultReady(t)
	log := join(t.TempDir(), "strace.log")
	go func() {
		done <- faultStraceLog(t, dir, log,
			[]string{"-e", "trace=" + inject, "-e", "inject=" + inject + ":delay_exit=1000000:when=2"},
			append(args, "-t", "t1", "-t", "x", "src")...)
	}()
	made := func() bool { _, err := os.Lstat(join(x, "src")); return err == nil }
	if !fails {
		made = func() bool {
			_, err := unix.Lgetxattr(join(x, "src"), "user.fastcp.unfinished", make([]byte, 8))
			return err == nil
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !made() {
		if time.Now().After(deadline) {
			t.Fatal("fastcp did not create x/src")
		}
		time.Sleep(time.Millisecond)
	}
	swapErr := asNobody(x, "mv src src.real && ln -s "+outside+" src")
	tr := <-done
	if swapErr != nil {
		t.Fatal(swapErr)
	}
	t.Logf("fastcp %v: %v", args, tr.result)
	if after := entriesOf(t, outside); after != before {
		t.Errorf("fastcp changed a directory outside DEST:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Which call did the delay hold? A call that another thread's line
	// interrupted is logged in two parts, joined here by its thread.
	held := false
	unfinished := map[string]string{}
	raw, _ := os.ReadFile(log)
	for _, l := range lines(string(raw)) {
		pid, _, _ := strings.Cut(l, " ")
		if strings.HasSuffix(l, "<unfinished ...>") {
			unfinished[pid] = l
			continue
		}
		if strings.Contains(l, " resumed>") {
			l = unfinished[pid] + l
		}
		if strings.Contains(l, "(DELAYED)") && (strings.Contains(l, "/x>, \"src\"") || strings.Contains(l, "/x/src>")) {
			held = true
		}
	}
	if !held {
		t.Logf("the delay held another call: run again")
		return false
	}
	if fails && tr.code != 1 {
		t.Errorf("want exit 1, x/src being no longer the directory fastcp made: %v", tr.result)
	}
	if !fails && tr.code != 0 {
		t.Errorf("want exit 0: %v", tr.result)
	}
	into := []string{join(dir, "t1", "src")}
	if !fails {
		// Everything went into the directory fastcp made.
		into = append(into, join(x, "src.real"))
	}
	for _, d := range into {
		for i := range 40 {
			assertFileBytes(t, join(d, fmt.Sprintf("f%02d", i)), []byte(fmt.Sprintf("file %d\n", i)))
		}
		assertFileBytes(t, join(d, "sub", "secret"), []byte("overwritten\n"))
	}
	return true
}

// TestTargetsProgress: one bar for several -t DIRECTORYs, a tree and a
// file copied into three: each file and its bytes count once (read once,
// done once every destination has them), the total never goes back and
// the bytes done never pass it, and the end is every file and byte done.
func TestTargetsProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, bytes := 0, int64(0)
	for g := range 4 {
		for f := range 15 {
			p := join(dir, "src", fmt.Sprintf("g%d", g), fmt.Sprintf("f%02d", f))
			mustMkdir(t, join(p, ".."))
			n := 700 + 13*(g*15+f)
			writeFile(t, p, randomBytes(n, p), 0o644)
			files++
			bytes += int64(n)
		}
	}
	writeFile(t, join(dir, "big"), randomBytes(5<<20+1, "big"), 0o644)
	files++
	bytes += 5<<20 + 1
	for _, d := range []string{"a", "b", "c"} {
		mustMkdir(t, join(dir, d))
	}
	r := fastcp(t, dir, "--progress=json", "-r", "-t", "a", "-t", "b", "-t", "c", "src", "big")
	if r.code != 0 {
		t.Fatalf("fastcp --progress=json with three -t: %v", r)
	}
	objs := parseProgress(t, r.stderr)
	progressEndsAt(t, objs, int64(files), bytes, "all done, each once")
	for _, d := range []string{"a", "b", "c"} {
		assertFileBytes(t, join(dir, d, "big"), randomBytes(5<<20+1, "big"))
		assertFileBytes(t, join(dir, d, "src", "g3", "f14"), randomBytes(700+13*59, join(dir, "src", "g3", "f14")))
	}
}

// TestTargetsMemoryIsBounded: the buffers stay within the run's budget
// whatever the number of -t DIRECTORYs: a large file and a tree copied
// with -j 4 into eight of them peak well under 64 MiB of resident memory.
func TestTargetsMemoryIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustMkdir(t, join(dir, "src"))
	for i := range 12 {
		writeFile(t, join(src, fmt.Sprintf("f%02d", i)), randomBytes(6<<20, fmt.Sprint(i)), 0o644)
	}
	writeFile(t, join(dir, "big"), randomBytes(96<<20, "big"), 0o644)
	args := []string{"-r", "-j", "4"}
	var dirs []string
	for i := range 8 {
		d := mustMkdir(t, join(dir, fmt.Sprintf("t%d", i)))
		dirs = append(dirs, d)
		args = append(args, "-t", d)
	}
	r, rss := runPeakRSS(t, fastcpCmd(context.Background(), dir, append(args, "src", "big")...))
	t.Logf("8 -t DIRECTORYs, -r -j 4: peak RSS %d MiB; %v", rss>>20, r)
	wantSuccess(t, r)
	if rss == 0 || rss > 64<<20 {
		t.Errorf("peak RSS %d MiB copying into 8 -t DIRECTORYs", rss>>20)
	}
	for _, d := range dirs {
		assertFileBytes(t, join(d, "big"), randomBytes(96<<20, "big"))
		assertFileBytes(t, join(d, "src", "f11"), randomBytes(6<<20, "11"))
	}
}

// TestTargetsIntoItself: a -t DIRECTORY inside the SOURCE tree is refused
// for that DIRECTORY, as with one -t (cp's message, nothing made inside
// the source), and the others get the copy; exit 1.
func TestTargetsIntoItself(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustMkdir(t, join(dir, "src", "sub"))
	writeFile(t, join(dir, "src", "f"), []byte("data\n"), 0o644)
	mustMkdir(t, join(dir, "a"))
	r := fastcp(t, dir, "-r", "-t", "a", "-t", "src/sub", "src")
	wantFailure(t, r, 1, "fastcp: cannot copy a directory, 'src', into itself, 'src/sub/src'\n")
	assertFileBytes(t, join(dir, "a", "src", "f"), []byte("data\n"))
	assertNotExist(t, join(dir, "src", "sub", "src"))
}

// sumLine is one line of a manifest: the digest and the name, unescaped.
type sumLine struct{ digest, name string }

// parseSums reads a manifest's lines, in order.
func parseSums(t *testing.T, text string) []sumLine {
	t.Helper()
	var out []sumLine
	for _, l := range lines(text) {
		escaped := strings.HasPrefix(l, `\`)
		if escaped {
			l = l[1:]
		}
		digest, name, ok := strings.Cut(l, "  ")
		if !ok || len(digest) != 64 {
			t.Fatalf("a line that is not DIGEST  NAME: %q", l)
		}
		if escaped {
			name = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r").Replace(name)
		}
		out = append(out, sumLine{digest, name})
	}
	return out
}

// checkTargetsManifest checks the manifest of a copy run in cwd into the
// -t DIRECTORYs dirs (named as given) of the SOURCE operands srcs (in
// cwd): it lists every regular file found under each DIRECTORY's copy of
// a SOURCE, once, and nothing else; each line's digest is the hash of
// that DEST's bytes and of its SOURCE's; each entry's lines come
// together, in the order of the -t options; and sha256sum -c, run in
// cwd, passes.
func checkTargetsManifest(t *testing.T, cwd, text string, dirs, srcs []string) {
	t.Helper()
	got := parseSums(t, text)
	var want []string
	for _, d := range dirs {
		for _, s := range srcs {
			p := inDir(cwd, filepath.Join(d, s))
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				want = append(want, filepath.Join(d, s))
				continue
			}
			for _, rel := range regularUnder(t, p) {
				want = append(want, filepath.Join(d, s, rel))
			}
		}
	}
	var names []string
	for i, l := range got {
		names = append(names, l.name)
		if d := fileDigest(t, sha256.New(), inDir(cwd, l.name)); d != l.digest {
			t.Errorf("line %d: %s for %q, whose bytes hash to %s", i, l.digest, l.name, d)
		}
		k := slices.IndexFunc(dirs, func(d string) bool { return strings.HasPrefix(l.name, d+"/") })
		if k < 0 {
			t.Errorf("line %d names %q, in no -t DIRECTORY", i, l.name)
			continue
		}
		src := filepath.Join(cwd, strings.TrimPrefix(l.name, dirs[k]+"/"))
		if d := fileDigest(t, sha256.New(), src); d != l.digest {
			t.Errorf("line %d: %s for %q, its SOURCE hashes to %s", i, l.digest, l.name, d)
		}
		// The entry's lines in the order of the -t options: this
		// DIRECTORY's line follows an earlier one's for the same file.
		if i > 0 {
			prev := got[i-1].name
			pk := slices.IndexFunc(dirs, func(d string) bool { return strings.HasPrefix(prev, d+"/") })
			if pk >= 0 && strings.TrimPrefix(prev, dirs[pk]+"/") == strings.TrimPrefix(l.name, dirs[k]+"/") && pk >= k {
				t.Errorf("lines %d and %d: %q before %q, against the order of the -t options", i-1, i, prev, l.name)
			}
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the manifest lists\n%q\nthe DIRECTORYs hold\n%q", names, want)
	}
	m := filepath.Join(t.TempDir(), "SUMS")
	writeFile(t, m, []byte(text), 0o644)
	sumsCheck(t, "sha256sum", cwd, m)
}

// inDir is name as a process in dir opens it.
func inDir(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// TestTargetsChecksumFile: --checksum-file (a FILE, and - for standard
// output) with several -t DIRECTORYs, for one file and for an -a tree
// with hard links, sparse and empty files and odd names, -j 1 and -j 4:
// one line per DEST, each the hash of that DEST's bytes, checked by
// sha256sum -c from the directory fastcp ran in. A DIRECTORY on a small
// tmpfs that fills up gets no line for the files that failed there, and
// lines for those it holds; the others get every line.
func TestTargetsChecksumFile(t *testing.T) {
	needMount(t)
	srcDir := fsDir(t, "ext4")
	writeFile(t, filepath.Join(srcDir, "f"), randomBytes(24<<20+11, "sumf"), 0o644)
	makeChecksumTree(t, mustMkdir(t, filepath.Join(srcDir, "tree")))
	tmp := fsDir(t, "tmpfs")
	mustMkdir(t, filepath.Join(srcDir, "into"))
	for _, c := range []struct {
		name  string
		args  []string
		srcs  []string
		small int64 // a DIRECTORY on a tmpfs of that size, between the others; 0: none
		fails []string
	}{
		{name: "file", args: []string{"--checksum-file=SUMS"}, srcs: []string{"f"}},
		{name: "file-stdout", args: []string{"--checksum-file=-"}, srcs: []string{"f"}},
		{name: "tree", args: []string{"-a", "--checksum-file=SUMS"}, srcs: []string{"tree"}},
		{name: "tree-j4-stdout", args: []string{"-a", "-j4", "--checksum-file=-"}, srcs: []string{"tree"}},
		{name: "file-fills-up", args: []string{"--checksum-file=SUMS"}, srcs: []string{"f"}, small: 16 << 20,
			fails: []string{"f"}},
		{name: "tree-fills-up", args: []string{"-a", "--checksum-file=-"}, srcs: []string{"tree"}, small: 4 << 20,
			fails: []string{"tree/big", "tree/sub/big link"}},
		{name: "tree-j4-fills-up", args: []string{"-a", "-j4", "--checksum-file=SUMS"}, srcs: []string{"tree"}, small: 4 << 20,
			fails: []string{"tree/big", "tree/sub/big link"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One DIRECTORY named from where fastcp runs, the others by
			// absolute names.
			dirs := []string{tmp, "into"}
			if c.small > 0 {
				small, err := fsfixture.Mount(t.TempDir(), "tmpfs", c.small)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { small.Unmount() })
				dirs = []string{tmp, small.Dir, "into"}
			}
			for _, d := range dirs {
				for _, s := range c.srcs {
					os.RemoveAll(inDir(srcDir, filepath.Join(d, s)))
				}
			}
			os.Remove(filepath.Join(srcDir, "SUMS"))
			args := slices.Clone(c.args)
			for _, d := range dirs {
				args = append(args, "-t", d)
			}
			r := fastcp(t, srcDir, append(args, c.srcs...)...)
			if c.small == 0 {
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("want exit 0 and no message, got %v", r)
				}
			} else {
				if r.code != 1 {
					t.Fatalf("want exit 1, got %v", r)
				}
				for _, l := range lines(r.stderr) {
					if !strings.Contains(l, dirs[1]) {
						t.Errorf("a message about another DIRECTORY: %q", l)
					}
				}
				for _, f := range c.fails {
					want := fmt.Sprintf("fastcp: error writing %s: No space left on device\n", q(filepath.Join(dirs[1], f)))
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr %q, want it to say %q", r.stderr, want)
					}
					if _, err := os.Lstat(filepath.Join(dirs[1], f)); !os.IsNotExist(err) {
						t.Errorf("%s: %v, want no such file", filepath.Join(dirs[1], f), err)
					}
				}
			}
			text := r.stdout
			if !strings.Contains(c.args[len(c.args)-1], "=-") {
				if r.stdout != "" {
					t.Errorf("stdout %q, want nothing", r.stdout)
				}
				b, err := os.ReadFile(filepath.Join(srcDir, "SUMS"))
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			checkTargetsManifest(t, srcDir, text, dirs, c.srcs)
			for _, f := range c.fails {
				if strings.Contains(text, filepath.Join(dirs[1], f)) {
					t.Errorf("the manifest names %s, which failed:\n%s", filepath.Join(dirs[1], f), text)
				}
			}
			for _, d := range dirs {
				for _, s := range c.srcs {
					p := inDir(srcDir, filepath.Join(d, s))
					if fi, err := os.Stat(p); err == nil && fi.IsDir() {
						assertNoTemps(t, p, filepath.Join(p, "sub"))
					}
				}
				assertNoTemps(t, inDir(srcDir, d))
			}
		})
	}
}
