// SPDX-License-Identifier: MIT

package cp

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runSimple runs script in dir without a shell when every step of it is
// one of the simple commands that cmds knows, with arguments it knows,
// joined by the separator they take (";" for a setup, "&&" for a check),
// and nothing a shell would expand, quote or redirect beyond "echo WORDS >
// FILE" and a check's `test "$(CMD FILE)" = ...` (substTest): a shell and
// its commands cost more than the copy a scenario makes (each exec takes
// milliseconds on the test VMs). ok=false, before anything ran: the script
// is not that simple, and the caller gives it to /bin/sh. The commands do
// what coreutils' would, under the same umask; TestRunSimple holds them
// to it.
func runSimple(dir, script string, cmds simpleCommands) (ok bool, err error) {
	if strings.ContainsAny(script, "'`|{}[]*?<\n\\#") {
		return false, nil
	}
	var steps [][]string
	for _, part := range strings.Split(script, cmds.sep) {
		if strings.ContainsAny(part, `"$()`) {
			m := substTest.FindStringSubmatch(part)
			if m == nil || cmds.run[substName].do == nil {
				return false, nil
			}
			steps = append(steps, []string{substName, m[1], m[2]})
			continue
		}
		words := strings.Fields(part)
		if len(words) == 0 || strings.ContainsAny(part, ";&") {
			return false, nil
		}
		for _, w := range words {
			if strings.HasPrefix(w, "~") || strings.Contains(w, ">") && (w != ">" || words[0] != "echo") {
				return false, nil
			}
		}
		c, known := cmds.run[words[0]]
		if !known || c.takes == nil || !c.takes(words[1:]) {
			return false, nil
		}
		steps = append(steps, words)
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, words := range steps {
		if err := cmds.run[words[0]].do(at, words[1:]); err != nil {
			return true, errors.New(strings.Join(words, " ") + ": " + err.Error())
		}
	}
	return true, nil
}

// substTest matches the one check with quotes and a command substitution
// that runSimple knows: test OPERAND = OPERAND, where an operand is a
// plain word or "$(CMD FILE)", CMD being cat, readlink, or stat -c with
// %a (the mode's permission bits in octal), %i (the inode) or %Y (mtime,
// seconds). runSimple hands it to checkCommands[substName].
var (
	substWord    = `[\w.,:@%+/-][\w.,:@%+/~=-]*`
	substOperand = `("\$\((?:cat|readlink|stat -c %[aiY]) ` + substWord + `\)"|` + substWord + `)`
	substTest    = regexp.MustCompile(`^\s*test ` + substOperand + ` = ` + substOperand + `\s*$`)
	substCommand = regexp.MustCompile(`^"\$\((cat|readlink|stat -c %[aiY]) (.*)\)"$`)
)

// substName is substTest's name among checkCommands: not a word a script
// can hold.
const substName = "test\x00subst"

// substituted is what sh makes of an operand of substTest: a word as it
// is; "$(CMD FILE)" the command's output, trailing newlines removed, and
// empty when the command fails (it says why on stderr, and test compares
// what is left).
func substituted(at func(string) string, operand string) string {
	m := substCommand.FindStringSubmatch(operand)
	if m == nil {
		return operand
	}
	name := at(m[2])
	switch m[1] {
	case "cat":
		b, err := os.ReadFile(name)
		if err != nil {
			return ""
		}
		return strings.TrimRight(string(b), "\n")
	case "readlink":
		target, err := os.Readlink(name)
		if err != nil {
			return ""
		}
		return strings.TrimRight(target, "\n")
	}
	var st unix.Stat_t // stat -c: the name itself, not what a symbolic link names
	if err := unix.Lstat(name, &st); err != nil {
		return ""
	}
	switch m[1] {
	case "stat -c %a":
		return strconv.FormatUint(uint64(st.Mode&0o7777), 8)
	case "stat -c %i":
		return strconv.FormatUint(st.Ino, 10)
	}
	return strconv.FormatInt(st.Mtim.Sec, 10) // %Y
}

// simpleCommands are the commands runSimple knows, by name.
type simpleCommands struct {
	sep string
	run map[string]simpleCommand
}

// A simpleCommand says which arguments it takes, and does what the
// command does with them (at turns a name into the scenario's path).
type simpleCommand struct {
	takes func(args []string) bool
	do    func(at func(string) string, args []string) error
}

// plain reports whether no argument is an option.
func plain(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

var setupCommands = simpleCommands{sep: ";", run: map[string]simpleCommand{
	"echo": {
		takes: func(args []string) bool {
			return len(args) >= 2 && args[len(args)-2] == ">" && plain(args) &&
				!strings.Contains(strings.Join(args[:len(args)-2], " "), ">")
		},
		do: func(at func(string) string, args []string) error {
			line := strings.Join(args[:len(args)-2], " ") + "\n"
			return os.WriteFile(at(args[len(args)-1]), []byte(line), 0o666)
		},
	},
	"mkdir": {
		takes: func(args []string) bool {
			if len(args) > 0 && args[0] == "-p" {
				args = args[1:]
			}
			return len(args) > 0 && plain(args)
		},
		do: func(at func(string) string, args []string) error {
			mk := os.Mkdir
			if args[0] == "-p" {
				mk, args = os.MkdirAll, args[1:]
			}
			for _, d := range args {
				if err := mk(at(d), 0o777); err != nil {
					return err
				}
			}
			return nil
		},
	},
	"ln": {
		takes: func(args []string) bool {
			return len(args) == 2 && plain(args) || len(args) == 3 && args[0] == "-s" && plain(args[1:])
		},
		do: func(at func(string) string, args []string) error {
			link := func(target, name string) error { return os.Link(at(target), name) }
			if args[0] == "-s" {
				// The link holds the target as written.
				link, args = os.Symlink, args[1:]
			}
			name := at(args[1])
			if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				name = filepath.Join(name, filepath.Base(args[0])) // ln TARGET DIR
			}
			return link(args[0], name)
		},
	},
	"chmod": {
		takes: func(args []string) bool {
			if len(args) != 2 {
				return false
			}
			mode, err := strconv.ParseUint(args[0], 8, 32)
			return err == nil && mode <= 0o7777 && plain(args[1:])
		},
		do: func(at func(string) string, args []string) error {
			mode, _ := strconv.ParseUint(args[0], 8, 32)
			return unix.Chmod(at(args[1]), uint32(mode))
		},
	},
	"touch": {
		// touch -d YYYY-MM-DD FILE (local midnight) or touch -r REF FILE:
		// both times, FILE made empty if it is not there, links followed.
		takes: func(args []string) bool {
			if len(args) != 3 || !plain(args[1:]) {
				return false
			}
			_, err := time.Parse(time.DateOnly, args[1])
			return args[0] == "-d" && err == nil || args[0] == "-r"
		},
		do: func(at func(string) string, args []string) error {
			var atime, mtime time.Time
			if args[0] == "-d" {
				day, _ := time.ParseInLocation(time.DateOnly, args[1], time.Local)
				atime, mtime = day, day
			} else {
				var st unix.Stat_t
				if err := unix.Stat(at(args[1]), &st); err != nil {
					return err
				}
				atime, mtime = time.Unix(st.Atim.Unix()), time.Unix(st.Mtim.Unix())
			}
			// As touch does: open (a directory or a FIFO without a reader
			// refuses, which matters only if setting the times fails too),
			// then set the times by name.
			f, openErr := os.OpenFile(at(args[2]), os.O_WRONLY|os.O_CREATE|unix.O_NONBLOCK|unix.O_NOCTTY, 0o666)
			if openErr == nil {
				f.Close()
			}
			if err := os.Chtimes(at(args[2]), atime, mtime); err != nil {
				return cmp.Or(openErr, err)
			}
			return nil
		},
	},
	"mkfifo": {
		takes: func(args []string) bool { return len(args) == 1 && plain(args) },
		do:    func(at func(string) string, args []string) error { return unix.Mkfifo(at(args[0]), 0o666) },
	},
}}

// testFile is test(1)'s file tests that runSimple knows: whether the file
// named exists (stat; lstat for -L and -h) and is of the kind asked.
var testFile = map[string]func(fi fs.FileInfo) bool{
	"-e": func(fs.FileInfo) bool { return true },
	"-f": func(fi fs.FileInfo) bool { return fi.Mode().IsRegular() },
	"-d": func(fi fs.FileInfo) bool { return fi.IsDir() },
	"-L": func(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeSymlink != 0 },
	"-h": func(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeSymlink != 0 },
	"-p": func(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeNamedPipe != 0 },
	"-s": func(fi fs.FileInfo) bool { return fi.Size() > 0 },
}

var checkCommands = simpleCommands{sep: "&&", run: map[string]simpleCommand{
	"cmp": {
		takes: func(args []string) bool { return len(args) == 2 && plain(args) },
		do: func(at func(string) string, args []string) error {
			a, err := os.ReadFile(at(args[0]))
			if err != nil {
				return err
			}
			b, err := os.ReadFile(at(args[1]))
			if err != nil {
				return err
			}
			if !bytes.Equal(a, b) {
				return errors.New("the files differ")
			}
			return nil
		},
	},
	substName: {
		do: func(at func(string) string, args []string) error {
			if substituted(at, args[0]) != substituted(at, args[1]) {
				return errors.New("false")
			}
			return nil
		},
	},
	"test": {
		takes: func(args []string) bool {
			if len(args) == 3 && args[0] == "!" {
				args = args[1:]
			}
			return len(args) == 2 && testFile[args[0]] != nil && plain(args[1:])
		},
		do: func(at func(string) string, args []string) error {
			not := args[0] == "!"
			if not {
				args = args[1:]
			}
			stat := os.Stat
			if args[0] == "-L" || args[0] == "-h" {
				stat = os.Lstat
			}
			fi, err := stat(at(args[1]))
			if (err == nil && testFile[args[0]](fi)) == not {
				return errors.New("false")
			}
			return nil
		},
	},
}}

// runSimple's commands do what the shell's do: each setup made both ways
// gives the same tree (names, kinds, modes, contents, link counts and
// targets, and the times touch set), each check passes or fails as sh
// says, and what it does not know it leaves to sh without running any of
// it.
func TestRunSimple(t *testing.T) {
	t.Parallel()
	const setup = "echo a  b > f; mkdir d; mkdir -p x/y/z x/w; ln f g; ln -s f l; ln -s nowhere dangling; " +
		"chmod 640 f; chmod 1751 d; mkfifo p; ln f d; ln -s f x; echo > e; echo old > o; echo 2 > o2; " +
		"touch -d 2001-02-03 o; touch -r o o2; touch -d 1999-12-31 d; touch -r o new; touch -d 2002-01-01 p; touch -r f o3; ln l hl"
	ours, theirs := t.TempDir(), t.TempDir()
	if ok, err := runSimple(ours, setup, setupCommands); !ok || err != nil {
		t.Fatalf("runSimple took %v, err %v", ok, err)
	}
	// touch -r gives the reference's times whole, nanoseconds too; f was
	// written now, so treeOf does not show its times. Read before treeOf
	// reads the files: under relatime its reads move both atimes on, to
	// different ticks on a loaded machine.
	var f, o3 unix.Stat_t
	if err := unix.Lstat(filepath.Join(ours, "f"), &f); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(filepath.Join(ours, "o3"), &o3); err != nil {
		t.Fatal(err)
	}
	if o3.Mtim != f.Mtim || o3.Atim != f.Atim {
		t.Errorf("touch -r f o3: times %v %v, f's %v %v", o3.Atim, o3.Mtim, f.Atim, f.Mtim)
	}
	// And each time to its own: a reference whose atime and mtime differ.
	refDir := t.TempDir()
	ref := filepath.Join(refDir, "r")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	atime, mtime := time.Unix(1000000000, 123456789), time.Unix(2000000000, 987654321)
	if err := os.Chtimes(ref, atime, mtime); err != nil {
		t.Fatal(err)
	}
	if ok, err := runSimple(refDir, "touch -r r o", setupCommands); !ok || err != nil {
		t.Fatalf("runSimple took %v, err %v", ok, err)
	}
	var o unix.Stat_t
	if err := unix.Lstat(filepath.Join(refDir, "o"), &o); err != nil {
		t.Fatal(err)
	}
	if !time.Unix(o.Atim.Unix()).Equal(atime) || !time.Unix(o.Mtim.Unix()).Equal(mtime) {
		t.Errorf("touch -r r o: times %v %v, want %v %v", o.Atim, o.Mtim, atime, mtime)
	}
	sh := func(dir, script string) string {
		cmd := exec.Command("/bin/sh", "-ec", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	sh(theirs, setup)
	if a, b := treeOf(t, ours), treeOf(t, theirs); a != b {
		t.Errorf("runSimple made\n%s\nsh made\n%s", a, b)
	}
	checks := []string{
		"cmp f g", "cmp f l", "cmp f d/f", "cmp f e", "cmp f nope", "cmp d f",
		"test -e l", "test -e dangling", "test -L dangling", "test ! -e dangling", "test ! -L l",
		"test -f f", "test -f d", "test -d d", "test -d l", "test -h x/f", "test -p p", "test ! -p f",
		"test -s f", "test -s nope", "test ! -s e", "test -e nope", "test ! -e nope",
		"cmp f g && test -L l", "cmp f g && test -L f", "test -L f && cmp f g",
		`test "$(cat o)" = old`, `test "$(cat o)" = ol`, `test "$(cat e)" = "$(cat nope)"`, `test "$(cat l)" = "$(cat f)"`,
		`test "$(cat d)" = "$(cat e)"`, `test "$(cat nope)" = nope`, `test old = "$(cat o)"`,
		`test "$(readlink l)" = f`, `test "$(readlink l)" = l`, `test "$(readlink f)" = "$(cat e)"`, `test "$(readlink x/f)" = f`,
		`test "$(stat -c %a f)" = 640`, `test "$(stat -c %a f)" = 644`, `test "$(stat -c %a d)" = 1751`,
		`test "$(stat -c %a l)" = 777`, `test "$(stat -c %a nope)" = "$(cat e)"`,
		`test "$(stat -c %i f)" = "$(stat -c %i g)"`, `test "$(stat -c %i f)" = "$(stat -c %i l)"`,
		`test "$(stat -c %Y o)" = "$(stat -c %Y o2)"`, `test "$(stat -c %Y o)" = "$(stat -c %Y f)"`,
		`test "$(stat -c %Y new)" = "$(stat -c %Y o)"`, `test "$(stat -c %Y d)" = 946598400`,
		`cmp f g && test "$(cat o)" = old && test -L l`, `test "$(cat o)" = old && test -L f`,
	}
	// One shell for every check: each one's status, a line each.
	var script strings.Builder
	for _, check := range checks {
		fmt.Fprintf(&script, "if { %s; } >/dev/null 2>&1; then echo 0; else echo 1; fi\n", check)
	}
	theirStatus := strings.Fields(sh(ours, script.String()))
	if len(theirStatus) != len(checks) {
		t.Fatalf("sh gave %d statuses for %d checks", len(theirStatus), len(checks))
	}
	for i, check := range checks {
		ok, err := runSimple(ours, check, checkCommands)
		if !ok {
			t.Errorf("runSimple refused %q", check)
			continue
		}
		if ours := map[bool]string{true: "0", false: "1"}[err == nil]; ours != theirStatus[i] {
			t.Errorf("%q: runSimple says %v, sh's status %s", check, err, theirStatus[i])
		}
	}
	for _, script := range []string{
		`echo "$x" > n1`, "touch n1", "for i in 1; do echo $i > n1; done", "echo a >> n1", "echo a>n1",
		"echo -n a > n1", "echo a > n1 & echo b > n2", "mkdir n1 && mkdir n2", "mkdir n1; touch n2",
		"mkdir ~/n1", "ln -sf f n1", "chmod u+x f", "chmod 640", "mkfifo -m 600 n1", "echo a > n1\necho b > n2",
		"touch -d yesterday n1", "touch -d 2001-02-03 -m n1", "touch -c -r f n1", "touch n1 -r f", "touch -d '2001-02-03 1:00' n1",
		`test "$(cat f)" = a; echo b > n1`,
	} {
		if ok, err := runSimple(ours, script, setupCommands); ok || err != nil {
			t.Errorf("runSimple took %q (err %v), which is sh's", script, err)
		}
	}
	for _, script := range []string{
		"cmp f g || true", "cmp -s f g", "test f = g", "test -x f", "cmp f g; cmp f l", "[ -e f ]",
		`test "$(cat o)" != old`, `test "$(cat o o2)" = old`, `test "$(head o)" = old`, `test "$(stat -c %s o)" = 4`,
		`test "$(stat o)" = old`, `test "$(cat o)"= old`, `test "$(cat o)" = "old"`, `test "$(cat ~/o)" = old`,
		`test "$(cat o)" = old;x`, `test "$(cat o)" = a&b`, `test "$(cat o)" = $(cat o)`, `test "$(cat $o)" = old`,
		`test "$(cat o)" = old > n1`, `test "$(cat o)" = ~old`, `test "$(cat o)" = "$(cat o) "`,
	} {
		if ok, err := runSimple(ours, script, checkCommands); ok || err != nil {
			t.Errorf("runSimple took %q (err %v), which is sh's", script, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(ours, "n1")); err == nil {
		t.Error("a refused script ran in part: n1 exists")
	}
}

// touched is 2020-01-01 in seconds: an mtime before it is one that touch
// set, which treeOf shows (the others are the moment each tree was made).
const touched = 1577836800

// treeOf describes the tree under dir, one line an entry.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %o links=%d", rel, st.Mode, st.Nlink)
		if st.Mtim.Sec < touched {
			fmt.Fprintf(&b, " mtime=%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		case unix.S_IFLNK:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " -> %s", target)
		case unix.S_IFDIR:
			if rel != "." {
				b.WriteString(" dir")
			}
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
