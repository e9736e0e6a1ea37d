// SPDX-License-Identifier: MIT

package integration_test

// The walk: a tree is copied as it is walked, each directory listed when
// the copy reaches it and each entry looked at when its turn comes, with a
// bounded window of open directories. A tree far deeper than the
// descriptor limit, a cp -al tree of tens of thousands of directories
// under that limit, and files replaced or rewritten while the copy is
// held elsewhere in the tree.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fastcpLimited runs fastcp with args in dir under a descriptor limit of
// n, soft and hard (ulimit -Sn n -Hn n), as a container or a service may
// set it.
func fastcpLimited(t testing.TB, dir string, n int, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*runTimeout)
	defer cancel()
	shArgs := append([]string{"-c", `ulimit -Sn "$0" && ulimit -Hn "$0" && exec "$@"`, fmt.Sprint(n), setup.Bin}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	r := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("fastcp %q under ulimit -n %d did not finish", args, n)
	}
	return r
}

// chainTree makes dir/name: depth directories, each named "d" in the one
// above and holding a file "f" with its level's number, made by *at calls
// (no path to the deep ones fits in PATH_MAX).
func chainTree(t testing.TB, dir, name string, depth int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < depth; i++ {
		n := "d"
		if i == 0 {
			n = name
		}
		if err := unix.Mkdirat(fd, n, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
		f, err := unix.Openat(fd, "f", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(f, []byte(fmt.Sprint(i)))
		unix.Close(f)
	}
	unix.Close(fd)
}

// checkChain checks that dir/name is chainTree's tree: depth levels, each
// with exactly "f" (its number, mode 0640) and, but the last, "d"; with
// times, every level's times those of the source's (src).
func checkChain(t testing.TB, src, dst string, depth int, times bool) {
	t.Helper()
	open := func(p string) int {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	sfd, dfd := open(src), open(dst)
	defer func() { unix.Close(sfd); unix.Close(dfd) }()
	buf := make([]byte, 64)
	for i := 0; i < depth; i++ {
		f := os.NewFile(uintptr(must(unix.Dup(dfd))), dst)
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := "d f"
		if i == depth-1 {
			want = "f"
		}
		if got := strings.Join(sortStrings(names), " "); got != want {
			t.Fatalf("level %d of the copy holds %q, want %q", i, got, want)
		}
		ffd, err := unix.Openat(dfd, "f", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		n, _ := unix.Read(ffd, buf)
		var fst unix.Stat_t
		unix.Fstat(ffd, &fst)
		unix.Close(ffd)
		if string(buf[:n]) != fmt.Sprint(i) || fst.Mode&0o777 != 0o640 {
			t.Fatalf("level %d: f holds %q, mode %o", i, buf[:n], fst.Mode&0o777)
		}
		if times {
			var sst, dst unix.Stat_t
			unix.Fstat(sfd, &sst)
			unix.Fstat(dfd, &dst)
			if sst.Mtim != dst.Mtim || dst.Mode&0o7777 != sst.Mode&0o7777 {
				t.Fatalf("level %d: mtime %v mode %o, want %v %o", i, dst.Mtim, dst.Mode&0o7777, sst.Mtim, sst.Mode&0o7777)
			}
		}
		if i == depth-1 {
			break
		}
		next := func(fd int) int {
			n, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatalf("level %d: %v", i, err)
			}
			unix.Close(fd)
			return n
		}
		sfd, dfd = next(sfd), next(dfd)
	}
}

func must(fd int, err error) int {
	if err != nil {
		panic(err)
	}
	return fd
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestDeepTreeUnderLowDescriptorLimit copies a tree 4,000 directories deep
// under a limit of 64 descriptors: the copy keeps a few directories open
// and opens an ancestor again when it comes back to it, so the whole tree
// is copied (each level's file, and with -a each directory's mode and
// times, set once its entries are written), exit 0, with -j 4 too.
func TestDeepTreeUnderLowDescriptorLimit(t *testing.T) {
	t.Parallel()
	const depth = 4000
	dir := t.TempDir()
	chainTree(t, dir, "src", depth)
	for _, args := range [][]string{{"-r"}, {"-a"}, {"-a", "-j", "4"}} {
		out := "dst" + strings.Join(args, "")
		r := fastcpLimited(t, dir, 64, append(args, "src", out)...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("fastcp %s under ulimit -n 64: %v", args, r)
		}
		checkChain(t, join(dir, "src"), join(dir, out), depth, args[0] == "-a")
	}
}

// TestLinkedTreeUnderLowDescriptorLimit copies, with -a under a limit of
// 64 descriptors, a tree made as cp -al makes one: 50,000 directories in
// two halves, every file in one half a hard link of the same file in the
// other. The first copy of each inode is remembered without its directory
// held open, so every pair is one inode in the copy, and no two pairs are.
func TestLinkedTreeUnderLowDescriptorLimit(t *testing.T) {
	t.Parallel()
	const groups, perGroup = 100, 250 // 25,000 directories a half
	dir := t.TempDir()
	for g := 0; g < groups; g++ {
		for d := 0; d < perGroup; d++ {
			p := join(dir, "src", "one", fmt.Sprintf("g%03d", g), fmt.Sprintf("d%03d", d))
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(join(p, "f"), []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := exec.Command("cp", "-al", join(dir, "src", "one"), join(dir, "src", "two")).CombinedOutput(); err != nil {
		t.Fatalf("cp -al: %v: %s", err, out)
	}
	r := fastcpLimited(t, dir, 64, "-a", "src", "dst")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("fastcp -a under ulimit -n 64: %v", r)
	}
	seen := make(map[uint64]bool)
	for g := 0; g < groups; g++ {
		for d := 0; d < perGroup; d++ {
			rel := filepath.Join(fmt.Sprintf("g%03d", g), fmt.Sprintf("d%03d", d), "f")
			one, two := statT(t, join(dir, "dst", "one", rel)), statT(t, join(dir, "dst", "two", rel))
			if one.Ino != two.Ino || one.Nlink != 2 {
				t.Fatalf("%s: inodes %d and %d, %d links: not the pair of the source", rel, one.Ino, two.Ino, one.Nlink)
			}
			if seen[one.Ino] {
				t.Fatalf("%s: inode %d is another pair's too", rel, one.Ino)
			}
			seen[one.Ino] = true
		}
	}
	assertFileBytes(t, join(dir, "dst", "two", "g042", "d042", "f"), []byte(join(dir, "src", "one", "g042", "d042")))
}

// TestFilesChangedWhileTheCopyIsElsewhere: while the copy is held reading
// a FIFO at the start of a tree (--copy-contents), one file further on is
// replaced the usual way (a new file renamed over it) and another is
// rewritten in place with a new size, mode and times. Both are copied as
// they are when their turn comes, as cp copies them, and with -a the copy
// has the mode and times they have then. One file at a time (-j 1): with
// workers the other files' turn may come while the FIFO is read.
func TestFilesChangedWhileTheCopyIsElsewhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-r"}, {"-a"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := mustMkdir(t, join(dir, "src"))
			gate := join(src, "a-gate")
			if err := unix.Mkfifo(gate, 0o644); err != nil {
				t.Fatal(err)
			}
			writeFile(t, join(src, "b-renamed"), []byte("the file before\n"), 0o644)
			writeFile(t, join(src, "c-rewritten"), []byte("old bytes\n"), 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, append(args, "-j", "1", "--copy-contents", "src", "dst")...)
			done := make(chan result, 1)
			go func() { done <- runCmd(t, cmd) }()

			// fastcp opens the gate for reading: it is at the tree's
			// first entry, and has not looked at the others yet.
			w, err := os.OpenFile(gate, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			renamed := []byte("the file that replaced it, longer\n")
			writeFile(t, join(dir, "new"), renamed, 0o600)
			t1 := time.Date(2011, 3, 4, 5, 6, 7, 800, time.UTC)
			if err := os.Chtimes(join(dir, "new"), t1, t1); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(join(dir, "new"), join(src, "b-renamed")); err != nil {
				t.Fatal(err)
			}
			rewritten := []byte("new bytes, and more of them\n")
			if err := os.WriteFile(join(src, "c-rewritten"), rewritten, 0); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(join(src, "c-rewritten"), 0o640); err != nil {
				t.Fatal(err)
			}
			t2 := time.Date(2012, 5, 6, 7, 8, 9, 100, time.UTC)
			if err := os.Chtimes(join(src, "c-rewritten"), t2, t2); err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("gate\n"))
			w.Close()
			r := <-done
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("fastcp %s: %v", args, r)
			}
			assertFileBytes(t, join(dir, "dst", "a-gate"), []byte("gate\n"))
			assertFileBytes(t, join(dir, "dst", "b-renamed"), renamed)
			assertFileBytes(t, join(dir, "dst", "c-rewritten"), rewritten)
			if args[0] != "-a" {
				return
			}
			for _, c := range []struct {
				name string
				mode uint32
				mt   time.Time
			}{{"b-renamed", 0o600, t1}, {"c-rewritten", 0o640, t2}} {
				st := statT(t, join(dir, "dst", c.name))
				if st.Mode&0o7777 != c.mode || st.Mtim.Sec != c.mt.Unix() || st.Mtim.Nsec != int64(c.mt.Nanosecond()) {
					t.Errorf("dst/%s: mode %o, mtime %d.%09d; want %o, %d.%09d (the source's when copied)",
						c.name, st.Mode&0o7777, st.Mtim.Sec, st.Mtim.Nsec, c.mode, c.mt.Unix(), c.mt.Nanosecond())
				}
			}
		})
	}
}
