// SPDX-License-Identifier: MIT

package integration_test

// Several -t DIRECTORY: every SOURCE copied into each, read once.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
