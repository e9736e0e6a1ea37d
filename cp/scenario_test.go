// SPDX-License-Identifier: MIT

package cp

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"
)

// A scenario is one run of fastcp in-process, in a fresh directory that
// setup (a shell script) filled: the exit status and the exact stdout and
// stderr it must give, and check, a shell script run afterwards that must
// succeed (cmp, test -L, stat ...).
type scenario struct {
	name           string
	setup          string
	args           []string
	stdin          string
	env            map[string]string
	code           int
	stdout, stderr string
	check          string
}

// makeDir runs the shell script setup in dir (runSimple's way when it
// can).
func makeDir(t *testing.T, dir, setup string) {
	t.Helper()
	if setup == "" {
		return
	}
	if ok, err := runSimple(dir, setup, setupCommands); !ok {
		cmd := exec.Command("/bin/sh", "-ec", setup)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", setup, err, out)
		}
	} else if err != nil {
		t.Fatalf("%s: %v", setup, err)
	}
}

// runScenario runs sc in its own directory.
func runScenario(t *testing.T, sc scenario) {
	dir := t.TempDir()
	makeDir(t, dir, sc.setup)
	t.Chdir(dir)
	env := func(name string) (string, bool) {
		v, ok := sc.env[name]
		return v, ok
	}
	opts, err := flags.ParseEnv(sc.args, env)
	if err != nil {
		t.Fatalf("flags.ParseEnv(%q): %v", sc.args, err)
	}
	if uerr := CheckUsage(opts); uerr != nil {
		t.Fatalf("usage: %v", uerr)
	}
	var out, errb bytes.Buffer
	code := 0
	if Run(opts, output.New("fastcp", &out, &errb), strings.NewReader(sc.stdin), durability.NewSession()) {
		code = 1
	}
	if code != sc.code || out.String() != sc.stdout || errb.String() != sc.stderr {
		t.Errorf("fastcp %q: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q",
			sc.args, code, out.String(), errb.String(), sc.code, sc.stdout, sc.stderr)
	}
	if sc.check != "" {
		if ok, err := runSimple(dir, sc.check, checkCommands); !ok {
			cmd := exec.Command("/bin/sh", "-ec", sc.check)
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("check %q: %v\n%s", sc.check, err, b)
			}
		} else if err != nil {
			t.Errorf("check %q: %v", sc.check, err)
		}
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

var scenarios = []scenario{
	{name: "plain", setup: "echo a > a", args: []string{"a", "b"}, check: "cmp a b"},
	{name: "verbose", setup: "echo a > a", args: []string{"-v", "a", "b"}, stdout: "'a' -> 'b'\n", check: "cmp a b"},
	{name: "over a file", setup: "echo new > a; echo old > b; chmod 640 b", args: []string{"a", "b"},
		check: `cmp a b && test "$(stat -c %a b)" = 640`},
	{name: "into a directory", setup: "echo a > a; mkdir d", args: []string{"a", "d"}, check: "cmp a d/a"},
	{name: "target directory", setup: "echo a > a; echo b > b; mkdir d", args: []string{"-t", "d", "a", "b"}, check: "cmp a d/a && cmp b d/b"},
	{name: "no such source", args: []string{"nope", "b"}, code: 1,
		stderr: "fastcp: cannot stat 'nope': No such file or directory\n", check: "test ! -e b"},
	{name: "omitting directory", setup: "mkdir d", args: []string{"d", "e"}, code: 1,
		stderr: "fastcp: -r not specified; omitting directory 'd'\n", check: "test ! -e e"},
	{name: "same file", setup: "echo a > a", args: []string{"a", "a"}, code: 1,
		stderr: "fastcp: 'a' and 'a' are the same file\n"},
	{name: "hard links are the same file", setup: "echo a > a; ln a b", args: []string{"a", "b"}, code: 1,
		stderr: "fastcp: 'a' and 'b' are the same file\n"},
	{name: "recursive", setup: "mkdir -p s/d/e; echo 1 > s/f; echo 2 > s/d/g; ln -s f s/l",
		args: []string{"-r", "s", "t"}, check: "diff -r s t && test -L t/l && test \"$(readlink t/l)\" = f"},
	{name: "recursive verbose", setup: "mkdir -p s/d; echo 1 > s/f",
		args: []string{"-rv", "s", "t"}, stdout: "'s' -> 't'\n's/d' -> 't/d'\n's/f' -> 't/f'\n"},
	{name: "recursive jobs", setup: "mkdir -p s/a s/b; for i in 1 2 3 4 5 6 7 8; do echo $i > s/a/$i; echo $i > s/b/$i; done",
		args: []string{"-r", "-j", "4", "-v", "s", "t"},
		stdout: "'s' -> 't'\n's/a' -> 't/a'\n's/a/1' -> 't/a/1'\n's/a/2' -> 't/a/2'\n's/a/3' -> 't/a/3'\n's/a/4' -> 't/a/4'\n" +
			"'s/a/5' -> 't/a/5'\n's/a/6' -> 't/a/6'\n's/a/7' -> 't/a/7'\n's/a/8' -> 't/a/8'\n's/b' -> 't/b'\n's/b/1' -> 't/b/1'\n" +
			"'s/b/2' -> 't/b/2'\n's/b/3' -> 't/b/3'\n's/b/4' -> 't/b/4'\n's/b/5' -> 't/b/5'\n's/b/6' -> 't/b/6'\n's/b/7' -> 't/b/7'\n" +
			"'s/b/8' -> 't/b/8'\n",
		check: "diff -r s t"},
	{name: "archive keeps hard links and modes", setup: "mkdir s; echo 1 > s/f; ln s/f s/g; chmod 751 s/f; mkfifo s/p; touch -d 2001-01-01 s/f",
		args:  []string{"-a", "s", "t"},
		check: `test "$(stat -c %i t/f)" = "$(stat -c %i t/g)" && test "$(stat -c %a t/f)" = 751 && test -p t/p && test "$(stat -c %Y t/f)" = "$(stat -c %Y s/f)"`},
	{name: "directory into itself", setup: "mkdir d", args: []string{"-r", "d", "d/e"}, code: 1,
		stderr: "fastcp: cannot copy a directory, 'd', into itself, 'd/e'\n"},
	{name: "directory over a file", setup: "mkdir d; echo x > f", args: []string{"-r", "d", "f"}, code: 1,
		stderr: "fastcp: cannot overwrite non-directory 'f' with directory 'd'\n"},
	{name: "file over a directory", setup: "echo x > f; mkdir -p d/f", args: []string{"f", "d"}, code: 1,
		stderr: "fastcp: cannot overwrite directory 'd/f' with non-directory\n"},
	{name: "several sources, file target", setup: "echo a > a; echo b > b; echo c > c", args: []string{"a", "b", "c"}, code: 1,
		stderr: "fastcp: target 'c': Not a directory\n"},
	{name: "no clobber", setup: "echo new > a; echo old > b", args: []string{"-n", "a", "b"}, check: "test \"$(cat b)\" = old"},
	{name: "update older", setup: "echo new > a; echo old > b; touch -d 2000-01-01 a", args: []string{"-u", "a", "b"}, check: "test \"$(cat b)\" = old"},
	{name: "update newer", setup: "echo new > a; echo old > b; touch -d 2000-01-01 b", args: []string{"-u", "-v", "a", "b"},
		stdout: "'a' -> 'b'\n", check: "cmp a b"},
	{name: "update none-fail", setup: "echo new > a; echo old > b", args: []string{"--update=none-fail", "a", "b"}, code: 1,
		stderr: "fastcp: not replacing 'b'\n", check: "test \"$(cat b)\" = old"},
	{name: "interactive no", setup: "echo new > a; echo old > b", args: []string{"-i", "a", "b"}, stdin: "n\n", code: 1,
		stderr: "fastcp: overwrite 'b'? ", check: "test \"$(cat b)\" = old"},
	{name: "interactive yes", setup: "echo new > a; echo old > b", args: []string{"-i", "a", "b"}, stdin: "y\n",
		stderr: "fastcp: overwrite 'b'? ", check: "cmp a b"},
	{name: "backup simple", setup: "echo new > a; echo old > b", args: []string{"-b", "-v", "a", "b"},
		stdout: "'a' -> 'b' (backup: 'b~')\n", check: "cmp a b && test \"$(cat b~)\" = old"},
	{name: "backup numbered", setup: "echo new > a; echo old > b; echo older > b.~1~", args: []string{"--backup=numbered", "a", "b"},
		check: "cmp a b && test \"$(cat b.~2~)\" = old && test \"$(cat b.~1~)\" = older"},
	{name: "backup existing, none numbered", setup: "echo new > a; echo old > b", args: []string{"--backup=existing", "-S", ".bak", "a", "b"},
		check: "cmp a b && test \"$(cat b.bak)\" = old"},
	{name: "force backup of itself", setup: "echo a > f", args: []string{"--force", "--backup", "f", "f"},
		check: "cmp f f~"},
	{name: "backup would destroy source", setup: "echo a > a~; echo b > a", args: []string{"--backup=simple", "a~", "a"}, code: 1,
		stderr: "fastcp: backing up 'a' might destroy source;  'a~' not copied\n"},
	{name: "remove destination", setup: "echo new > a; echo old > b; ln b c", args: []string{"--remove-destination", "a", "b"},
		check: "cmp a b && test \"$(cat c)\" = old"},
	{name: "hard link instead", setup: "echo a > a", args: []string{"-l", "a", "b"}, check: `test "$(stat -c %i a)" = "$(stat -c %i b)"`},
	{name: "hard link over a file", setup: "echo a > a; echo b > b", args: []string{"-l", "-f", "a", "b"}, check: `test "$(stat -c %i a)" = "$(stat -c %i b)"`},
	{name: "hard link exists", setup: "echo a > a; echo b > b", args: []string{"-l", "a", "b"}, code: 1,
		stderr: "fastcp: cannot create hard link 'b' to 'a': File exists\n"},
	{name: "symbolic link instead", setup: "echo a > a", args: []string{"-s", "a", "b"}, check: `test "$(readlink b)" = a`},
	{name: "relative symbolic link elsewhere", setup: "echo a > a; mkdir d", args: []string{"-s", "a", "d/b"}, code: 1,
		stderr: "fastcp: d/b: can make relative symbolic links only in current directory\n"},
	{name: "symbolic link with backup", setup: "echo a > a; echo b > b", args: []string{"-s", "-b", "a", "b"},
		check: `test "$(readlink b)" = a && test "$(cat b~)" = b`},
	{name: "copy a symlink as a link", setup: "echo a > a; ln -s a l", args: []string{"-P", "l", "m"}, check: `test "$(readlink m)" = a`},
	{name: "symlink replaces a file", setup: "echo a > a; ln -s a l; echo x > m", args: []string{"-P", "--remove-destination", "l", "m"},
		check: `test "$(readlink m)" = a`},
	{name: "follow a symlink", setup: "echo a > a; ln -s a l", args: []string{"-L", "l", "m"}, check: "test ! -L m && cmp a m"},
	{name: "write through a symlink DEST", setup: "echo new > a; echo old > t; ln -s t l", args: []string{"a", "l"},
		check: "test -L l && cmp a t"},
	{name: "dangling symlink DEST", setup: "echo new > a; ln -s nowhere l", args: []string{"a", "l"}, code: 1,
		stderr: "fastcp: not writing through dangling symlink 'l'\n"},
	{name: "dangling symlink DEST, POSIX", setup: "echo new > a; ln -s nowhere l", args: []string{"a", "l"},
		env: map[string]string{"POSIXLY_CORRECT": "1"}, check: "cmp a nowhere"},
	{name: "fifo recreated", setup: "mkfifo p", args: []string{"-r", "p", "q"}, check: "test -p q"},
	{name: "fifo over a file", setup: "mkfifo p; echo x > q", args: []string{"-r", "-v", "p", "q"}, stdout: "'p' -> 'q'\n", check: "test -p q"},
	{name: "parents", setup: "mkdir -p a/b t; echo f > a/b/f", args: []string{"--parents", "-v", "a/b/f", "t"},
		stdout: "a -> t/a\na/b -> t/a/b\n'a/b/f' -> 't/a/b/f'\n", check: "cmp a/b/f t/a/b/f"},
	{name: "parents, existing", setup: "mkdir -p a/b t/a/b; echo f > a/b/f", args: []string{"--parents", "-p", "a/b/f", "t"},
		check: "cmp a/b/f t/a/b/f"},
	{name: "attributes only", setup: "echo new > a; echo old > b; chmod 600 a", args: []string{"--attributes-only", "-p", "a", "b"},
		check: `test "$(cat b)" = old && test "$(stat -c %a b)" = 600`},
	{name: "attributes only, new file", setup: "echo new > a", args: []string{"--attributes-only", "a", "b"},
		check: "test -f b && test ! -s b"},
	{name: "source twice", setup: "echo a > a; mkdir d", args: []string{"a", "a", "d"},
		stderr: "fastcp: warning: source file 'a' specified more than once\n", check: "cmp a d/a"},
	{name: "merge into a directory", setup: "mkdir -p s/d t/s/d; echo 1 > s/d/f; echo old > t/s/d/g", args: []string{"-r", "s", "t"},
		check: "cmp s/d/f t/s/d/f && test \"$(cat t/s/d/g)\" = old"},
	{name: "no preserve mode", setup: "echo a > a; chmod 700 a", args: []string{"--no-preserve=mode", "a", "b"},
		check: `test "$(stat -c %a b)" = 644`},
	{name: "sync and verify", setup: "head -c 100000 /dev/urandom > a", args: []string{"--sync=data", "--verify", "a", "b"}, check: "cmp a b"},
	{name: "inplace", setup: "echo new > a; echo old > b; ln b c", args: []string{"--inplace", "a", "b"}, check: "cmp a c"},
	{name: "resume a tree", setup: "mkdir s; echo 1 > s/f; echo 2 > s/g; mkdir t; echo 1 > t/f; touch -r s/f t/f",
		args: []string{"-r", "--resume", "-p", "-v", "s/.", "t"}, stdout: "'s/./g' -> 't/./g'\n", check: "cmp s/g t/g"},
	{name: "debug", setup: "echo a > a", args: []string{"--debug", "--strategy=rw", "a", "b"},
		stdout: "'a' -> 'b'\ncopy offload: no, reflink: no, sparse detection: no\nstrategy: rw (rw 2 bytes in 2 calls; 0 other calls)\n", check: "cmp a b"},
	{name: "keep directory symlink", setup: "mkdir -p s/d real; echo 1 > s/d/f; mkdir t; ln -s ../real t/d", args: []string{"-r", "--keep-directory-symlink", "s/.", "t"},
		check: "test -L t/d && cmp s/d/f real/f"},
	{name: "strip trailing slashes", setup: "echo a > a; mkdir d", args: []string{"--strip-trailing-slashes", "a", "d/"}, check: "cmp a d/a"},
	{name: "no target directory", setup: "mkdir s d; echo 1 > s/f", args: []string{"-rT", "s", "d"}, check: "cmp s/f d/f"},
	{name: "one file system", setup: "mkdir -p s/d; echo 1 > s/d/f", args: []string{"-rx", "s", "t"}, check: "cmp s/d/f t/d/f"},
	{name: "copy contents of a fifo", setup: "mkfifo p; mkdir s; echo 1 > s/f", args: []string{"-r", "--copy-contents", "s", "t"}, check: "cmp s/f t/f"},
	{name: "dereference command line", setup: "mkdir s; echo 1 > s/f; ln -s s l", args: []string{"-rH", "l", "t"}, check: "test ! -L t && cmp s/f t/f"},
	{name: "cyclic link", setup: "mkdir s; ln -s .. s/up", args: []string{"-rL", "s", "t"}, code: 1,
		stderr: "fastcp: cannot copy cyclic symbolic link 's/up/s'\n"},
}
