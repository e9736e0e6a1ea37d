// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// ccJobsTree is a tree for -j: 150 files of mixed sizes in six
// directories (every fifth file 512 KiB, so that copies overlap),
// symlinks, a hard link, files and a directory that ccNobody cannot read,
// and an existing destination with a directory where a file goes and a
// file where a directory goes.
var ccJobsTree = sync.OnceValue(func() []ccEntry {
	const n = ccNobody
	es := []ccEntry{ccDir("j", 0o755)}
	for d := range 6 {
		dir := fmt.Sprintf("j/d%d", d)
		es = append(es, ccDir(dir, 0o755))
		for f := range 25 {
			p := fmt.Sprintf("%s/f%02d", dir, f)
			size := 37*f + d
			if f%5 == 0 {
				size = 512<<10 + f
			}
			perm := uint32(0o644)
			if (d*25+f)%17 == 3 {
				perm = 0o600 // unreadable to ccNobody
			}
			es = append(es, ccFile(p, string(randomBytes(size, p)), perm))
		}
		es = append(es, ccLink(dir+"/link", "f01"))
	}
	es = append(es,
		ccHard("j/d0/hard", "j/d0/f01"),
		ccDir("j/d1/sub", 0o700), // unreadable to ccNobody
		ccFile("j/d1/sub/f", "sub\n", 0o644),
		ccDir("out", 0o755).owner(n, n),
		ccDir("out/j", 0o755).owner(n, n),
		ccDir("out/j/d2", 0o755).owner(n, n),
		ccDir("out/j/d2/f04", 0o755).owner(n, n), // a directory where a file goes
		ccFile("out/j/d3", "a file where a directory goes\n", 0o644).owner(n, n),
	)
	return es
})

var (
	ccVerboseLineRE = regexp.MustCompile(`^'[^']+' -> '[^']+'$`)
	ccJobsErrorRE   = regexp.MustCompile(`^fastcp: (cannot open '[^']+' for reading: Permission denied|` +
		`cannot access '[^']+': Permission denied|` +
		`cannot overwrite directory '[^']+' with non-directory|` +
		`cannot overwrite non-directory '[^']+' with directory '[^']+')$`)
)

// TestCpCompatJobs copies the same tree with -j 4 and -j 1: the trees, the
// -v lines (same lines, same order), the error lines and the exit status
// must be the same; and the -j 4 run is compared with GNU cp as well.
func TestCpCompatJobs(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	for _, c := range []struct {
		name string
		args []string
		user bool
	}{
		{"rv-as-user", ccArgs("-rv", "j", "out"), true},
		{"av-as-root", ccArgs("-av", "j", "out"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := filepath.Join(scratch, "jobs-"+c.name)
			t.Run("gnu-cp", func(t *testing.T) {
				ccRunScenario(t, ccScenario{
					name: c.name, args: c.args, code: 1, user: c.user,
					fastcpOnly: ccArgs("-j", "4"), fixture: ccJobsTree(),
					exist: []string{"out/j/d0/f00", "out/j/d5/link", "out/j/d2/f04"},
				}, filepath.Join(base, "gnu"), bin)
			})

			owner := -1
			if c.user {
				owner = ccNobody
			}
			one := ccBuild(t, filepath.Join(base, "j1"), ccJobsTree(), owner)
			r1 := ccExec(t, bin, append(ccArgs("-j", "1"), c.args...), ccRun{dir: one, user: c.user})
			if r1.code != 1 {
				t.Errorf("-j 1: exit %d, want 1 (some entries fail)", r1.code)
			}
			if len(lines(r1.stdout)) < 120 || len(lines(r1.stderr)) < 2 {
				t.Errorf("-j 1 printed %d -v lines and %d error lines, want at least 120 and 2", len(lines(r1.stdout)), len(lines(r1.stderr)))
			}
			for _, l := range lines(r1.stdout) {
				if !ccVerboseLineRE.MatchString(l) {
					t.Errorf("-j 1: not a -v line: %q", l)
				}
			}
			tree1 := ccSnapshot(t, one)
			for i, jobs := range []string{"-j4", "--jobs=4", "-j 4"} {
				args := append([]string{jobs}, c.args...)
				if jobs == "-j 4" {
					args = append(ccArgs("-j", "4"), c.args...)
				}
				w := ccBuild(t, filepath.Join(base, fmt.Sprintf("j4-%d", i)), ccJobsTree(), owner)
				r := ccExec(t, bin, args, ccRun{dir: w, user: c.user})
				if r.code != r1.code {
					t.Errorf("%s: exit %d, -j 1 exited %d", jobs, r.code, r1.code)
				}
				ccCompareLines(t, jobs+" stdout (vs -j 1)", lines(r1.stdout), lines(r.stdout), true)
				ccCompareLines(t, jobs+" stderr (vs -j 1)", lines(r1.stderr), lines(r.stderr), true)
				for _, l := range lines(r.stdout) {
					if !ccVerboseLineRE.MatchString(l) {
						t.Errorf("%s: not a whole -v line: %q", jobs, l)
					}
				}
				for _, l := range lines(r.stderr) {
					if !ccJobsErrorRE.MatchString(l) {
						t.Errorf("%s: not a whole error line: %q", jobs, l)
					}
				}
				// ccDiff names its sides cp and fastcp: here they are -j 1 and -j 4.
				for _, d := range ccDiff(tree1, ccSnapshot(t, w), nil, ccPreservesTimes(c.args)) {
					t.Errorf("%s: tree differs from -j 1 (\"cp\" = -j 1, \"fastcp\" = -j 4): %s", jobs, d)
				}
			}
		})
	}
}

// TestJobsBatchesThatWait copies, with -j 4, trees whose small files -j
// hands out a directory at a time, where copies wait for others: -a's
// hard links from one directory to files of another (the second name
// waits for the first copy), and two SOURCEs with the same names merged
// into one DEST (the second copy of a name waits for the first, then
// refuses to overwrite it, as cp does). The run must end (not wait on a
// batch never handed out), print the same lines in the same order as -j
// 1, and leave the same tree: every file's bytes, and the links.
func TestJobsBatchesThatWait(t *testing.T) {
	t.Parallel()
	build := func(root string) {
		for _, top := range []string{"s1", "s2"} {
			for d := range 3 {
				for f := range 300 { // more than one batch a directory
					p := fmt.Sprintf("%s/%s/t/d%d/f%03d", root, top, d, f)
					os.MkdirAll(filepath.Dir(p), 0o755)
					writeFile(t, p, randomBytes(100+f, fmt.Sprintf("%s/d%d/f%03d", top, d, f)), 0o644)
				}
			}
		}
		// Hard links in d2 to files of d0, and a large file among them.
		for f := range 300 {
			if err := os.Link(fmt.Sprintf("%s/s1/t/d0/f%03d", root, f), fmt.Sprintf("%s/s1/t/d2/h%03d", root, f)); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, root+"/s1/t/d1/big", randomBytes(3<<20, "big"), 0o644)
	}
	refused := regexp.MustCompile(`^fastcp: will not overwrite just-created 'out/t/d[0-2]/f[0-9]{3}' with 's2/t/d[0-2]/f[0-9]{3}'$`)
	var runs [2]result
	var dirs [2]string
	for i, jobs := range []string{"1", "4"} {
		dirs[i] = t.TempDir()
		build(dirs[i])
		if err := os.Mkdir(dirs[i]+"/out", 0o755); err != nil {
			t.Fatal(err)
		}
		runs[i] = fastcp(t, dirs[i], "-av", "-j", jobs, "s1/t", "s2/t", "out")
		errs := lines(runs[i].stderr)
		if runs[i].code != 1 || len(errs) != 900 {
			t.Fatalf("-j %s: exit %d, %d error lines; want 1 and 900", jobs, runs[i].code, len(errs))
		}
		for _, l := range errs {
			if !refused.MatchString(l) {
				t.Fatalf("-j %s: unexpected error line %q", jobs, l)
			}
		}
	}
	ccCompareLines(t, "-j 4 stdout (vs -j 1)", lines(runs[0].stdout), lines(runs[1].stdout), true)
	ccCompareLines(t, "-j 4 stderr (vs -j 1)", lines(runs[0].stderr), lines(runs[1].stderr), true)
	if n := len(lines(runs[1].stdout)); n < 1200 {
		t.Errorf("-j 4 printed %d -v lines, want at least 1200", n)
	}
	for i := range dirs {
		for d := range 3 {
			for f := range 300 {
				// s1's copy came first: s2's was refused.
				name := fmt.Sprintf("out/t/d%d/f%03d", d, f)
				assertFileBytes(t, filepath.Join(dirs[i], name), randomBytes(100+f, fmt.Sprintf("s1/d%d/f%03d", d, f)))
			}
		}
		for f := range 300 {
			var a, b unix.Stat_t
			if err := unix.Stat(fmt.Sprintf("%s/out/t/d2/h%03d", dirs[i], f), &a); err != nil {
				t.Fatal(err)
			}
			if err := unix.Stat(fmt.Sprintf("%s/out/t/d0/f%03d", dirs[i], f), &b); err != nil {
				t.Fatal(err)
			}
			if a.Ino != b.Ino || a.Nlink != 2 {
				t.Fatalf("run %d: h%03d is inode %d with %d links, f%03d inode %d: want one inode, two links", i, f, a.Ino, a.Nlink, f, b.Ino)
			}
		}
		assertFileBytes(t, dirs[i]+"/out/t/d1/big", randomBytes(3<<20, "big"))
	}
}
