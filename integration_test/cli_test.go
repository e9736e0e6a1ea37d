// SPDX-License-Identifier: MIT

package integration_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCopyIntoDirectory checks the SOURCE... DIRECTORY and -t forms: each
// source lands in DIRECTORY under its own base name; -v prints cp's lines.
func TestCopyIntoDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		args    []string
		verbose string // stdout with -v
	}{
		{"operands", []string{"a", "sub/b", "D"}, "'a' -> 'D/a'\n'sub/b' -> 'D/b'\n"},
		{"trailing-slash", []string{"a", "sub/b", "D/"}, "'a' -> 'D/a'\n'sub/b' -> 'D/b'\n"},
		{"target-directory", []string{"-t", "D", "a", "sub/b"}, "'a' -> 'D/a'\n'sub/b' -> 'D/b'\n"},
		{"target-directory=", []string{"--target-directory=D", "a", "sub/b"}, "'a' -> 'D/a'\n'sub/b' -> 'D/b'\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, verbose := range []bool{false, true} {
				dir := t.TempDir()
				mustMkdir(t, join(dir, "D"))
				mustMkdir(t, join(dir, "sub"))
				a, b := randomBytes(5000, "a"), randomBytes(70000, "b")
				writeFile(t, join(dir, "a"), a, 0o644)
				writeFile(t, join(dir, "sub", "b"), b, 0o644)
				args := c.args
				if verbose {
					args = append([]string{"-v"}, args...)
				}
				r := fastcp(t, dir, args...)
				if verbose {
					if r.code != 0 || r.stderr != "" || r.stdout != c.verbose {
						t.Errorf("-v: want exit 0, stdout %q, no stderr; got %v", c.verbose, r)
					}
				} else {
					wantSuccess(t, r)
				}
				assertFileBytes(t, join(dir, "D", "a"), a)
				assertFileBytes(t, join(dir, "D", "b"), b)
				assertNoTemps(t, join(dir, "D"))
				ents, _ := os.ReadDir(join(dir, "D"))
				if len(ents) != 2 {
					t.Errorf("D holds %d entries, want 2 (a, b)", len(ents))
				}
			}
		})
	}
}

// TestSourceErrors checks the messages for a directory SOURCE without -r
// and a missing SOURCE, alone and among other sources (which are still
// copied, with exit status 1), and for a target that is missing or not a
// directory. The sources are never changed.
func TestSourceErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		args   []string
		stderr string
		copied []string // files that must be in D afterwards
		absent []string // paths that must not exist
		dirs   []string // paths that must still be directories
	}{
		{name: "target-missing", args: []string{"a", "b", "nodir"}, stderr: "fastcp: target 'nodir': No such file or directory\n",
			absent: []string{"nodir"}},
		// cp 9.x words it so (8.x said "target 'b' is not a directory").
		{name: "target-not-directory", args: []string{"a", "a", "b"}, stderr: "fastcp: target 'b': Not a directory\n"},
		{name: "t-missing", args: []string{"-t", "nodir", "a"}, stderr: "fastcp: target directory 'nodir': No such file or directory\n",
			absent: []string{"nodir"}},
		{name: "t-not-directory", args: []string{"-t", "b", "a"}, stderr: "fastcp: target directory 'b': Not a directory\n"},
		{name: "file-over-directory", args: []string{"-T", "a", "D"}, stderr: "fastcp: cannot overwrite directory 'D' with non-directory\n",
			dirs: []string{"D"}},
		{name: "directory", args: []string{"d", "x"}, stderr: "fastcp: -r not specified; omitting directory 'd'\n", absent: []string{"x"}},
		{name: "missing", args: []string{"nope", "x"}, stderr: "fastcp: cannot stat 'nope': No such file or directory\n", absent: []string{"x", "nope"}},
		{name: "missing-among", args: []string{"a", "nope", "b", "D"}, stderr: "fastcp: cannot stat 'nope': No such file or directory\n",
			copied: []string{"a", "b"}, absent: []string{"D/nope"}},
		{name: "directory-among", args: []string{"a", "d", "b", "D"}, stderr: "fastcp: -r not specified; omitting directory 'd'\n",
			copied: []string{"a", "b"}, absent: []string{"D/d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "D"))
			mustMkdir(t, join(dir, "d"))
			writeFile(t, join(dir, "d", "inside"), []byte("inside\n"), 0o644)
			files := map[string][]byte{"a": randomBytes(100, "a"), "b": randomBytes(200, "b")}
			for name, data := range files {
				writeFile(t, join(dir, name), data, 0o644)
			}
			r := fastcp(t, dir, c.args...)
			wantFailure(t, r, 1, c.stderr)
			for _, name := range c.copied {
				assertFileBytes(t, join(dir, "D", name), files[name])
			}
			for _, p := range c.absent {
				assertNotExist(t, join(dir, p))
			}
			for name, data := range files {
				assertFileBytes(t, join(dir, name), data)
			}
			for _, p := range c.dirs {
				if fi, err := os.Lstat(join(dir, p)); err != nil || !fi.IsDir() {
					t.Errorf("%s is no longer a directory (%v)", p, err)
				}
			}
			assertNoTemps(t, dir, join(dir, "D"))
		})
	}
}

// TestUsageErrors checks that a command line that cannot run exits 1 (as cp), says
// why on stderr and ends with the pointer to --help, prints nothing on
// stdout and creates nothing.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		args  []string
		first string // the exact first stderr line, if set
	}{
		{"no-operand", nil, "fastcp: missing file operand"},
		{"one-operand", []string{"a"}, "fastcp: missing destination file operand after 'a'"},
		{"unknown-long", []string{"--bogus", "a", "b"}, "fastcp: unrecognized option '--bogus'"},
		{"unknown-short", []string{"-y", "a", "b"}, "fastcp: invalid option -- 'y'"},
		{"bad-strategy", []string{"--strategy=bogus", "a", "b"}, "fastcp: invalid argument 'bogus' for '--strategy'"},
		{"bad-sparse", []string{"--sparse=bogus", "a", "b"}, "fastcp: invalid argument 'bogus' for '--sparse'"},
		{"bad-sync", []string{"--sync=bogus", "a", "b"}, "fastcp: invalid argument 'bogus' for '--sync'"},
		{"strategy-needs-value", []string{"a", "b", "--strategy"}, "fastcp: option '--strategy' requires an argument"},
		{"extra-operand-T", []string{"-T", "a", "b", "c"}, "fastcp: extra operand 'c'"},
		{"t-and-T", []string{"-t", "D", "-T", "a", "b"}, ""},
		{"bad-buffer-size", []string{"--buffer-size=lots", "a", "b"}, ""},
		{"reflink-always-and-strategy", []string{"--reflink=always", "--strategy=rw", "a", "b"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "D"))
			writeFile(t, join(dir, "a"), []byte("a\n"), 0o644)
			r := fastcp(t, dir, c.args...)
			wantFailure(t, r, 1, "")
			ls := lines(r.stderr)
			if len(ls) < 2 {
				t.Fatalf("want a message and the hint on stderr, got %q", r.stderr)
			}
			if c.first != "" && ls[0] != c.first {
				t.Errorf("first line %q, want %q", ls[0], c.first)
			}
			if !strings.HasPrefix(ls[0], "fastcp: ") {
				t.Errorf("first line %q does not start with 'fastcp: '", ls[0])
			}
			if last := ls[len(ls)-1]; last != "Try 'fastcp --help' for more information." {
				t.Errorf("last line %q, want the --help hint", last)
			}
			for _, p := range []string{"b", "c", "D/a"} {
				assertNotExist(t, join(dir, p))
			}
			assertNoTemps(t, dir, join(dir, "D"))
		})
	}
}

// TestHelpAndVersion checks that --help and --version succeed on stdout.
func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := fastcp(t, dir, "--help")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "--strategy") {
		t.Errorf("--help: want exit 0, usage mentioning --strategy on stdout, no stderr; got %v", r)
	}
	r = fastcp(t, dir, "--version")
	if ls := lines(r.stdout); r.code != 0 || r.stderr != "" || len(ls) == 0 || !strings.HasPrefix(ls[0], "fastcp ") {
		t.Errorf("--version: want exit 0 and 'fastcp VERSION' first on stdout; got %v", r)
	}
}

// TestRecursive checks that -r copies a directory tree (files, a nested
// directory, an empty file) and that a directory is never copied into
// itself.
func TestRecursive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := map[string][]byte{
		"d/a":       randomBytes(4097, "a"),
		"d/empty":   {},
		"d/sub/b":   randomBytes(1<<20+1, "b"),
		"d/sub/c/e": randomBytes(1, "e"),
	}
	for p, data := range tree {
		mustMkdir(t, join(dir, p, ".."))
		writeFile(t, join(dir, p), data, 0o644)
	}
	wantSuccess(t, fastcp(t, dir, "-r", "d", "copy"))
	for p, data := range tree {
		assertFileBytes(t, join(dir, "copy", strings.TrimPrefix(p, "d/")), data)
	}

	r := fastcp(t, dir, "-r", "d", "d/sub")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot copy a directory, 'd', into itself, 'd/sub/d'") {
		t.Errorf("copying d into d/sub: want exit 1 and cp's 'cannot copy a directory, 'd', into itself, 'd/sub/d'', got %v", r)
	}
}

// TestProgramName checks that messages carry the name fastcp was run as:
// installed as cp, it speaks as cp.
func TestProgramName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := mustMkdir(t, join(dir, "bin"))
	if err := os.Symlink(setup.Bin, join(bin, "cp")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"nope", "x"}, 1, "cp: cannot stat 'nope': No such file or directory\n"},
		{nil, 1, "cp: missing file operand\nTry 'cp --help' for more information.\n"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		cmd := exec.CommandContext(ctx, join(bin, "cp"), c.args...)
		cmd.Dir = dir
		r := runCmd(t, cmd)
		cancel()
		wantFailure(t, r, c.code, c.stderr)
	}
}
