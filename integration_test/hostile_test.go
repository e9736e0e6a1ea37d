// SPDX-License-Identifier: MIT

package integration_test

// Hostile names and inputs: names with newlines, leading dashes,
// shell syntax and bytes that are not UTF-8; paths longer than PATH_MAX;
// symbolic link loops; a DEST tree whose links point outside it. Every
// case is compared with GNU cp, and nothing may appear outside DEST.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostileRun runs prog (GNU cp or the built fastcp) with args in dir under
// LC_ALL=C.UTF-8, so that cp prints UTF-8 names as they are (fastcp does
// in any locale), with a timeout that a copy following a loop would hit.
func hostileRun(t testing.TB, prog, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	cmd.WaitDelay = 5 * time.Second
	r := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish in 30 s", prog, args)
	}
	return r
}

// cpLike turns GNU cp's output into what fastcp must print: its name, and
// the copy's directory (cpName, as long as fcName) renamed.
func cpLike(s, cpName, fcName string) string {
	s = strings.ReplaceAll(s, "cp: ", "fastcp: ")
	return strings.ReplaceAll(s, cpName, fcName)
}

// sortedLines returns the lines of s in sorted order: cp visits a
// directory's entries in readdir order, fastcp in name order.
func sortedLines(s string) []string {
	ls := lines(s)
	sort.Strings(ls)
	return ls
}

// sameLines fails the test unless fastcp printed the lines cp printed.
func sameLines(t testing.TB, what string, cp, fc string) {
	t.Helper()
	c, f := sortedLines(cp), sortedLines(fc)
	if strings.Join(c, "\n") != strings.Join(f, "\n") {
		t.Errorf("%s differs:\nGNU cp:\n%s\nfastcp:\n%s", what, strings.Join(c, "\n"), strings.Join(f, "\n"))
	}
}

// treeOf describes every entry under dir: its relative name, type, and the
// bytes of a file or the target of a link.
func treeOf(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, "error: "+err.Error())
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out = append(out, rel+" -> "+l)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			out = append(out, rel+" = "+string(b))
		default:
			out = append(out, rel+" "+d.Type().String())
		}
		return nil
	})
	return out
}

// sameTree fails the test unless the trees at cpDir and fcDir are alike.
func sameTree(t testing.TB, cpDir, fcDir string) {
	t.Helper()
	c, f := treeOf(t, cpDir), treeOf(t, fcDir)
	if strings.Join(c, "\n") != strings.Join(f, "\n") {
		t.Errorf("trees differ:\nGNU cp:\n%q\nfastcp:\n%q", c, f)
	}
}

// onlyEntries fails the test unless dir holds exactly names.
func onlyEntries(t testing.TB, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sort.Strings(names)
	if strings.Join(got, "/") != strings.Join(names, "/") {
		t.Errorf("%s holds %q, want only %q: something was written outside DEST", dir, got, names)
	}
}

// hostileNames are file names that trip up scripts and careless code.
var hostileNames = []string{
	"a\nb", "\nleading-newline", "-rf", "--help", "--", "-", "\xff\xfe", "caf\xe9", " lead", "trail ",
	"x'y", "tab\tx", `back\slash`, "*", "?", "$(touch pwned)", "`touch pwned`", "é", "\x01ctl",
	`a"b`, "..x", "~", "#hash", "new\nline\ntwice",
}

// TestHostileNames copies a tree of hostile names with -rv and compares
// the -v lines and the copy with GNU cp's; names that start with a dash
// are copied as operands after -- and as ./-name. Nothing runs, nothing
// appears outside the copies.
func TestHostileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := mustMkdir(t, join(dir, "h"))
	sub := mustMkdir(t, join(h, "-d\nir"))
	for i, n := range hostileNames {
		writeFile(t, join(h, n), []byte(n), 0o644)
		if i%3 == 0 {
			writeFile(t, join(sub, n), []byte("sub "+n), 0o600)
		}
	}
	if err := os.Symlink("\xff\nlink target", join(h, "link\xfe")); err != nil {
		t.Fatal(err)
	}
	cp := hostileRun(t, "cp", dir, "-rv", "h", "cpcopy")
	for _, jobs := range []string{"1", "4"} {
		fc := hostileRun(t, setup.Bin, dir, "-rv", "-j", jobs, "h", "fcopy"+jobs)
		if fc.code != 0 || cp.code != 0 || fc.stderr != "" {
			t.Fatalf("GNU cp: %v\nfastcp: %v", cp, fc)
		}
		sameLines(t, "-v output", cpLike(cp.stdout, "cpcopy", "fcopy"+jobs), fc.stdout)
		sameTree(t, join(dir, "cpcopy"), join(dir, "fcopy"+jobs))
	}

	// Operands that look like options.
	top := mustMkdir(t, join(dir, "top"))
	writeFile(t, join(top, "-rf"), []byte("dash"), 0o644)
	writeFile(t, join(top, "--help"), []byte("dashdash"), 0o644)
	wantSuccess(t, hostileRun(t, setup.Bin, top, "--", "--help", "-n"))
	wantSuccess(t, hostileRun(t, setup.Bin, top, "./-rf", "./-x"))
	assertFileBytes(t, join(top, "-n"), []byte("dashdash"))
	assertFileBytes(t, join(top, "-x"), []byte("dash"))
	onlyEntries(t, top, "-rf", "--help", "-n", "-x")
	onlyEntries(t, dir, "h", "cpcopy", "fcopy1", "fcopy4", "top")
}

// deepTree makes dir/deep: depth levels of directories with 200-byte names,
// each holding one file, built with *at calls relative to the directory
// above, as no path to the deeper ones fits in PATH_MAX (4096 bytes).
func deepTree(t testing.TB, dir string, depth int) {
	t.Helper()
	name := strings.Repeat("d", 200)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= depth; i++ {
		n := name
		if i == 0 {
			n = "deep"
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
		f, err := unix.Openat(fd, "f", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(f, []byte{byte('a' + i%26)})
		unix.Close(f)
	}
	unix.Close(fd)
}

// TestPathMaxEdge copies a tree whose deepest paths are longer than
// PATH_MAX. GNU cp names entries by full path and fails, with
// ENAMETOOLONG, on those out of reach; fastcp walks both trees by
// directory descriptor, names nothing longer than an entry's own name, and
// copies the whole tree, with -j as without.
func TestPathMaxEdge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deepTree(t, dir, 24)
	cp := hostileRun(t, "cp", dir, "-r", "deep", "cpdeep")
	if cp.code != 1 || !strings.Contains(cp.stderr, "File name too long") {
		t.Fatalf("GNU cp no longer fails on this tree: %v", cp)
	}
	for _, jobs := range []string{"1", "4"} {
		out := "fcdee" + jobs // as long as cpdeep
		fc := hostileRun(t, setup.Bin, dir, "-r", "-j", jobs, "deep", out)
		if fc.code != 0 || fc.stdout != "" || fc.stderr != "" {
			t.Errorf("fastcp: %v", fc)
		}
		want, got := deepListing(t, join(dir, "deep")), deepListing(t, join(dir, out))
		if len(want) < 24 || strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("the copy differs from the source:\n%d entries in the source, %d in the copy", len(want), len(got))
		}
	}
	onlyEntries(t, dir, "deep", "cpdeep", "fcdee1", "fcdee4")
}

// deepListing lists a tree of any depth, walked by directory descriptor:
// each entry's path below root (by depth and name), its type and, for a
// file, its content.
func deepListing(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	var walk func(fd int, rel string)
	walk = func(fd int, rel string) {
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		names, err := f.Readdirnames(-1)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(names)
		for _, n := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				t.Fatal(err)
			}
			p := fmt.Sprintf("%d:%s", len(strings.Split(rel, "/")), n)
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				out = append(out, p+" dir")
				sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
				if err != nil {
					t.Fatal(err)
				}
				walk(sub, rel+"/"+n)
			case unix.S_IFREG:
				ffd, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
				if err != nil {
					t.Fatal(err)
				}
				b := make([]byte, 64)
				m, _ := unix.Read(ffd, b)
				unix.Close(ffd)
				out = append(out, fmt.Sprintf("%s file %q", p, b[:max(m, 0)]))
			default:
				out = append(out, p+" other")
			}
		}
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	walk(fd, ".")
	return out
}

// TestSymlinkLoops: with -L a link back up the tree, a link to itself and
// two links to each other are reported, not followed forever, as cp does;
// without -L they are copied as links.
func TestSymlinkLoops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lp := mustMkdir(t, join(dir, "lp"))
	mustMkdir(t, join(lp, "a", "sub"))
	writeFile(t, join(lp, "a", "f"), []byte("f"), 0o644)
	for link, target := range map[string]string{
		"a/up": "..", "a/sub/top": "../..", "self": "self", "b": "c", "c": "b", "a/sub/abs": lp,
	} {
		if err := os.Symlink(target, join(lp, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-rL"}, {"-r"}, {"-rH"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			cpOut, fcOut := "cp"+args[0], "fc"+args[0]
			cp := hostileRun(t, "cp", dir, append(args, "lp", cpOut)...)
			fc := hostileRun(t, setup.Bin, dir, append(args, "lp", fcOut)...)
			if fc.code != cp.code || fc.stdout != "" {
				t.Errorf("GNU cp: %v\nfastcp: %v", cp, fc)
			}
			sameLines(t, "errors", cpLike(cp.stderr, cpOut, fcOut), fc.stderr)
			sameTree(t, join(dir, cpOut), join(dir, fcOut))
		})
	}
}

// TestDestLinksOutside: a DEST tree holding a symbolic link to a directory
// outside it, where the source has a directory, is not merged through the
// link (cp: "cannot overwrite non-directory"), so nothing is written
// outside; the same for DEST itself being such a link with -T.
func TestDestLinksOutside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustMkdir(t, join(dir, "src"))
	mustMkdir(t, join(src, "sub"))
	writeFile(t, join(src, "sub", "f"), []byte("f"), 0o644)
	writeFile(t, join(src, "g"), []byte("g"), 0o644)
	for _, prog := range []string{"cp", "fastcp"} {
		outside := mustMkdir(t, join(dir, prog+"-outside"))
		d := mustMkdir(t, join(dir, prog+"-dst"))
		if err := os.Symlink("../"+prog+"-outside", join(d, "sub")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(prog+"-outside", join(dir, prog+"-link")); err != nil {
			t.Fatal(err)
		}
		bin := map[string]string{"cp": "cp", "fastcp": setup.Bin}[prog]
		r1 := hostileRun(t, bin, dir, "-r", "src/.", prog+"-dst/")
		r2 := hostileRun(t, bin, dir, "-rT", "src", prog+"-link")
		if prog == "fastcp" {
			wantFailure(t, r1, 1, "fastcp: cannot overwrite non-directory 'fastcp-dst/./sub' with directory 'src/./sub'\n")
			wantFailure(t, r2, 1, "fastcp: cannot overwrite non-directory 'fastcp-link' with directory 'src'\n")
		} else if r1.stderr != "cp: cannot overwrite non-directory 'cp-dst/./sub' with directory 'src/./sub'\n" ||
			r2.stderr != "cp: cannot overwrite non-directory 'cp-link' with directory 'src'\n" {
			t.Errorf("GNU cp says %q and %q", r1.stderr, r2.stderr)
		}
		onlyEntries(t, outside)
		assertFileBytes(t, join(d, "g"), []byte("g"))
	}
}
