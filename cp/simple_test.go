// SPDX-License-Identifier: MIT

package cp

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// runSimple runs script in dir without a shell when every step of it is
// one of the simple commands that cmds knows, with arguments it knows,
// joined by the separator they take (";" for a setup, "&&" for a check),
// and nothing a shell would expand, quote or redirect beyond "echo WORDS >
// FILE": a shell and its commands cost more than the copy a scenario
// makes (each exec takes milliseconds on the test VMs). ok=false, before
// anything ran: the script is not that simple, and the caller gives it to
// /bin/sh. The commands do what coreutils' would, under the same umask;
// TestRunSimple holds them to it.
func runSimple(dir, script string, cmds simpleCommands) (ok bool, err error) {
	if strings.ContainsAny(script, "\"'`$|(){}[]*?<\n\\#") {
		return false, nil
	}
	var steps [][]string
	for _, part := range strings.Split(script, cmds.sep) {
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
		if !known || !c.takes(words[1:]) {
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
// targets), each check passes or fails as sh says, and what it does not
// know it leaves to sh without running any of it.
func TestRunSimple(t *testing.T) {
	t.Parallel()
	const setup = "echo a  b > f; mkdir d; mkdir -p x/y/z x/w; ln f g; ln -s f l; ln -s nowhere dangling; " +
		"chmod 640 f; chmod 1751 d; mkfifo p; ln f d; ln -s f x; echo > e"
	ours, theirs := t.TempDir(), t.TempDir()
	if ok, err := runSimple(ours, setup, setupCommands); !ok || err != nil {
		t.Fatalf("runSimple took %v, err %v", ok, err)
	}
	sh := func(dir, script string) error {
		cmd := exec.Command("/bin/sh", "-ec", script)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, b)
		}
		return nil
	}
	if err := sh(theirs, setup); err != nil {
		t.Fatal(err)
	}
	if a, b := treeOf(t, ours), treeOf(t, theirs); a != b {
		t.Errorf("runSimple made\n%s\nsh made\n%s", a, b)
	}
	for _, check := range []string{
		"cmp f g", "cmp f l", "cmp f d/f", "cmp f e", "cmp f nope", "cmp d f",
		"test -e l", "test -e dangling", "test -L dangling", "test ! -e dangling", "test ! -L l",
		"test -f f", "test -f d", "test -d d", "test -d l", "test -h x/f", "test -p p", "test ! -p f",
		"test -s f", "test -s nope", "test ! -s e", "test -e nope", "test ! -e nope",
		"cmp f g && test -L l", "cmp f g && test -L f", "test -L f && cmp f g",
	} {
		ok, err := runSimple(ours, check, checkCommands)
		if !ok {
			t.Errorf("runSimple refused %q", check)
			continue
		}
		if want := sh(ours, check); (err == nil) != (want == nil) {
			t.Errorf("%q: runSimple says %v, sh %v", check, err, want)
		}
	}
	for _, script := range []string{
		`echo "$x" > n1`, "touch n1", "for i in 1; do echo $i > n1; done", "echo a >> n1", "echo a>n1",
		"echo -n a > n1", "echo a > n1 & echo b > n2", "mkdir n1 && mkdir n2", "mkdir n1; touch n2",
		"mkdir ~/n1", "ln -sf f n1", "chmod u+x f", "chmod 640", "mkfifo -m 600 n1", "echo a > n1\necho b > n2",
	} {
		if ok, err := runSimple(ours, script, setupCommands); ok || err != nil {
			t.Errorf("runSimple took %q (err %v), which is sh's", script, err)
		}
	}
	for _, script := range []string{"cmp f g || true", "cmp -s f g", "test f = g", "test -x f", "cmp f g; cmp f l", "[ -e f ]"} {
		if ok, err := runSimple(ours, script, checkCommands); ok || err != nil {
			t.Errorf("runSimple took %q (err %v), which is sh's", script, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(ours, "n1")); err == nil {
		t.Error("a refused script ran in part: n1 exists")
	}
}

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
