// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
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
