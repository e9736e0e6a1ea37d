// SPDX-License-Identifier: MIT

package integration_test

// The temporary file's life: it belongs to its inode, not its
// name (three copies to one DEST at once); the sweep removes only what
// fastcp marked (a user's file with a temporary-like name stays); set-ID
// bits go as a write would drop them; an interrupted in-place copy says
// DEST is partial; the --verify test hook exists only in test builds.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// markXattr and markValue are what fastcp writes on each temporary file,
// so a later run can tell its leftovers from a user's files.
const (
	markXattr = "user.fastcp.temp"
	markValue = "fastcp-temp-1"
)

// markLeftover gives the file at p fastcp's mark, as a copy killed with
// SIGKILL leaves it.
func markLeftover(t testing.TB, p string) {
	t.Helper()
	if err := unix.Setxattr(p, markXattr, []byte(markValue), 0); err != nil {
		t.Fatalf("marking %s: %v", p, err)
	}
}

// hookBin is fastcp built with the build tag fastcp_testhooks: the only
// build with the --verify test hook (durability/corrupt_testhooks.go).
var hookBin struct {
	once sync.Once
	path string
	err  error
}

func hookFastcp(t testing.TB) string {
	t.Helper()
	hookBin.once.Do(func() {
		dir := join(setup.Root, "testhooks")
		if hookBin.err = os.MkdirAll(dir, 0o755); hookBin.err != nil {
			return
		}
		// Named fastcp, so that its messages start with "fastcp:".
		hookBin.path = join(dir, "fastcp")
		hookBin.err = build(hookBin.path, "GOFLAGS=-tags=fastcp_testhooks")
	})
	if hookBin.err != nil {
		t.Fatalf("building fastcp with the test hooks: %v", hookBin.err)
	}
	return hookBin.path
}

// TestShippedBinaryHasNoTestHook: the binary the Makefile builds does not
// contain the name of the --verify test hook's variable (setting it
// would corrupt users' copies); the test build does, which shows
// the search would find it.
func TestShippedBinaryHasNoTestHook(t *testing.T) {
	t.Parallel()
	makeBin, err := exec.LookPath("make")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("make is not installed, and CI=true forbids skipping")
		}
		t.Skip("make is not installed")
	}
	out := join(t.TempDir(), "fastcp")
	cmd := exec.Command(makeBin, "-s", "build", "OUT="+out)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, b)
	}
	hook := []byte("FASTCP_TEST_")
	shipped, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(shipped, hook); i >= 0 {
		t.Errorf("the Makefile's binary contains %q at %d: %q", hook, i, shipped[i:min(i+48, len(shipped))])
	}
	test, err := os.ReadFile(hookFastcp(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(test, hook) {
		t.Errorf("the test build does not contain %q either: the search proves nothing", hook)
	}
}

// TestThreeCopiesToOneDest runs three copies to one DEST at once (a
// sweep once removed another copy's new file, and a third copy
// then renamed a second's partial data over DEST and exited 0). A writes
// slowly into its unnamed temporary file; C links its complete file in
// under the first temporary name and is held before its rename; B finds
// that name taken by a file without the mark, names it and leaves it
// alone; A, done last, finds the name free again or takes another. Every
// run renames only its own inode: each exits 0, DEST holds a whole source
// whenever one of them has finished, and no temporary file is left. (The
// named file's own races, between its create, lock and mark, are the unit
// tests' TestTempFileBelongsToItsInode.)
func TestThreeCopiesToOneDest(t *testing.T) {
	t.Parallel()
	strace := durStrace(t)
	dir := t.TempDir()
	srcs := map[string][]byte{
		"srcA": randomBytes(1<<20, "A"),
		"srcB": randomBytes(64<<10, "B"),
		"srcC": randomBytes(512<<10, "C"),
	}
	for n, b := range srcs {
		writeFile(t, join(dir, n), b, 0o644)
	}
	writeFile(t, join(dir, "dst"), []byte("old\n"), 0o644)
	wantWhole := func(when string) {
		t.Helper()
		got, err := os.ReadFile(join(dir, "dst"))
		if err != nil {
			t.Errorf("%s: %v", when, err)
			return
		}
		for _, b := range srcs {
			if bytes.Equal(got, b) {
				return
			}
		}
		t.Errorf("%s: DEST holds %d bytes that are no source's whole copy", when, len(got))
	}
	slow := func(trace string, inject []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
		argv := []string{"-f", "-qq", "-o", "/dev/null", "-e", "trace=" + trace}
		for _, in := range inject {
			argv = append(argv, "-e", "inject="+in)
		}
		cmd := exec.Command(strace, append(append(argv, setup.Bin), args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, &stderr
	}
	exitOK := func(name string, cmd *exec.Cmd, out *bytes.Buffer, allowed string) {
		t.Helper()
		err := cmd.Wait()
		if rest := dropStraceLines(out.String()); err != nil || (rest != "" && rest != allowed) {
			t.Errorf("copy %s: %v, output %q", name, err, rest)
		}
	}
	first := join(dir, ".fastcp-dst.000000000000")
	a, aOut := slow("pwrite64", []string{"pwrite64:delay_enter=300000"}, "--strategy=rw", "--buffer-size=64K", "srcA", "dst")
	if !waitFor(func() bool {
		pid := traceePid(a.Process.Pid)
		return pid > 0 && len(openTemps(pid, dir, false)) > 0
	}) {
		t.Fatal("copy A made no temporary file")
	}
	if _, err := os.Lstat(first); err == nil {
		t.Fatalf("copy A's file has a name while it is written: %s", first)
	}
	c, cOut := slow("rename,renameat,renameat2", []string{"rename,renameat,renameat2:delay_enter=2500000"}, "srcC", "dst")
	if !waitFor(func() bool { _, err := os.Lstat(first); return err == nil }) {
		t.Fatal("copy C did not link its file in under the first temporary name")
	}
	unmarked := "fastcp: warning: '.fastcp-dst.000000000000' has the name of a temporary file of fastcp but not its mark: left alone\n"
	r := fastcp(t, dir, "srcB", "dst")
	if r.code != 0 || r.stderr != unmarked || r.stdout != "" {
		t.Errorf("copy B: %v, want the warning %q", r, unmarked)
	}
	wantWhole("after B")
	exitOK("C", c, cOut, "")
	wantWhole("after C")
	if traceePid(a.Process.Pid) == 0 {
		t.Fatal("copy A finished before C: the test proves nothing")
	}
	exitOK("A", a, aOut, "")
	wantWhole("after A")
	assertFileBytes(t, join(dir, "dst"), srcs["srcA"])
	assertNoTemps(t, dir)
}

// TestTempSwappedBeforeTheAct: another process swaps DEST's temporary
// name for a file of its own (rename(2) over it) right before fastcp
// renames that name over DEST, or unlinks it after a failure. strace stops
// fastcp (SIGSTOP) right after the step before: the mark's removal (a
// named file's last step before the rename), the link of an unnamed file
// under its temporary name, a final fdatasync that fails with EIO (then
// the file is removed). The test swaps the name once the step is seen to
// be done, then continues fastcp (SIGCONT, until it exits). Every time the
// other file survives, byte for byte under its name, and DEST is not
// replaced by it: fastcp exits 1 and DEST is the old file.
func TestTempSwappedBeforeTheAct(t *testing.T) {
	t.Parallel()
	temp := ".fastcp-dst.000000000000"
	replaced := "fastcp: cannot replace 'dst': the temporary file was removed or replaced by another process\n"
	for _, tc := range []struct {
		name, inject string
		args         []string
		ready        func(dir string) bool // the step before the act is done
		want         string
	}{
		{"rename-named", "fremovexattr:signal=SIGSTOP:when=1", []string{"--resume"}, func(dir string) bool {
			// Written in full and unmarked: the mark is gone, not yet
			// set (a file just created has no bytes).
			_, err := unix.Getxattr(join(dir, temp), markXattr, make([]byte, 1024))
			return err == unix.ENODATA && sizeOf(join(dir, temp)) == 1<<20
		}, replaced},
		{"rename-unnamed", "linkat:signal=SIGSTOP:when=1", nil, func(dir string) bool {
			_, err := os.Lstat(join(dir, temp))
			return err == nil
		}, replaced},
		{"unlink-named", "fdatasync:error=EIO:signal=SIGSTOP:when=1", []string{"--resume", "--sync=data"}, func(dir string) bool {
			return sizeOf(join(dir, temp)) == 1<<20
		}, "fastcp: fdatasync failed for 'dst': Input/output error\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, join(dir, "src"), randomBytes(1<<20, "swapped"), 0o644)
			old := randomBytes(4000, "old")
			writeFile(t, join(dir, "dst"), old, 0o644)
			set, _, _ := strings.Cut(tc.inject, ":")
			theirs := []byte("another process's file\n")
			r := stoppedRun(t, dir, []string{"-e", "trace=" + set, "-e", "inject=" + tc.inject}, append(tc.args, "src", "dst"),
				func() bool { return tc.ready(dir) },
				func() {
					writeFile(t, join(dir, "theirs"), theirs, 0o600)
					if err := os.Rename(join(dir, "theirs"), join(dir, temp)); err != nil {
						t.Fatal(err)
					}
				})
			wantFailure(t, r, 1, tc.want)
			assertFileBytes(t, join(dir, temp), theirs)
			assertFileBytes(t, join(dir, "dst"), old)
			if left := tempFiles(t, dir); len(left) != 1 {
				t.Errorf("temporary files %v, want only the other process's", left)
			}
		})
	}
}

// stoppedRun runs the static fastcp with args in dir under strace with
// straceArgs, which stop it (an injected SIGSTOP) after some call; once
// ready says that call is done, it runs act, then continues fastcp
// (SIGCONT, as many times as it takes: one that comes before the stop is
// taken is lost with it) and returns what it did.
func stoppedRun(t *testing.T, dir string, straceArgs, args []string, ready func() bool, act func()) result {
	t.Helper()
	strace, bin := faultReady(t)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, append(append(append([]string{"-f", "-qq", "-o", "/dev/null"}, straceArgs...), bin), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for !ready() {
		select {
		case err := <-waited:
			t.Fatalf("fastcp ended (%v) before the step; output %q", err, stderr.String())
		case <-time.After(time.Millisecond):
		}
	}
	act()
	for {
		if p := traceePid(cmd.Process.Pid); p > 0 {
			syscall.Kill(p, syscall.SIGCONT)
		}
		select {
		case err := <-waited:
			return result{code: waitStatus(err), stderr: dropStraceLines(stderr.String())}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestInPlaceDestSwappedForSource: the name of an --inplace DEST is
// swapped for a hard link to SOURCE after fastcp checked that they are not
// the same file and before it opens DEST (strace stops it after that
// check's fstatat): the open DEST proves to be SOURCE before anything cuts
// it, and the copy fails as cp's check would have it, SOURCE intact.
func TestInPlaceDestSwappedForSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := randomBytes(1<<20, "in place")
	writeFile(t, join(dir, "src"), data, 0o644)
	writeFile(t, join(dir, "dst"), []byte("old\n"), 0o644)
	// DEST named ./dst: only the look relative to its directory, the
	// last one before the open, is dst to strace -P.
	log := join(t.TempDir(), "strace.log")
	r := stoppedRun(t, dir, []string{"-o", log, "-e", "trace=newfstatat", "-e", "inject=newfstatat:signal=SIGSTOP:when=1", "-P", "dst"},
		[]string{"--inplace", "src", "./dst"},
		func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), `"dst"`) },
		func() {
			if err := os.Link(join(dir, "src"), join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(join(dir, "link"), join(dir, "dst")); err != nil {
				t.Fatal(err)
			}
		})
	wantFailure(t, r, 1, "fastcp: 'src' and './dst' are the same file\n")
	assertFileBytes(t, join(dir, "src"), data)
}

// TestUserFileWithTempName: a user's file whose name looks like a
// temporary file of fastcp is not a leftover: copied into DEST's
// directory, it stays there, byte for byte, when a copy to the DEST it
// seems to belong to finds it in the way, with and
// without -v; a warning names it (it may also be a leftover whose mark a
// power cut lost). A leftover carrying fastcp's mark is removed, and
// --debug says so as -v does.
func TestUserFileWithTempName(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-r"}, {"-rv"}, {"-r", "--debug"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "s"))
			mustMkdir(t, join(dir, "d"))
			writeFile(t, join(dir, "s", ".fastcp-foo.000000000000"), []byte("precious\n"), 0o644)
			writeFile(t, join(dir, "s", "foo"), []byte("data\n"), 0o644)
			writeFile(t, join(dir, "d", "foo"), []byte("old\n"), 0o644)
			r := fastcp(t, dir, append(args, "s/.", "d/")...)
			named := "fastcp: warning: 'd/.fastcp-foo.000000000000' has the name of a temporary file of fastcp but not its mark: left alone\n"
			if r.code != 0 || r.stderr != named || strings.Contains(r.stdout, "removed") {
				t.Fatalf("%v: want exit 0, nothing removed, and the warning %q", r, named)
			}
			assertFileBytes(t, join(dir, "d", ".fastcp-foo.000000000000"), []byte("precious\n"))
			assertFileBytes(t, join(dir, "d", "foo"), []byte("data\n"))

			// A true leftover of a killed copy to d/foo: removed.
			dead := join(dir, "d", ".fastcp-foo.0123456789ab")
			writeFile(t, dead, []byte("killed run"), 0o600)
			markLeftover(t, dead)
			writeFile(t, join(dir, "s", "foo"), []byte("new\n"), 0o644)
			r = fastcp(t, dir, append(args, "s/foo", "d/foo")...)
			removed := "removed 'd/.fastcp-foo.0123456789ab'\n"
			verbose := len(args) > 1 || args[0] == "-rv"
			if r.code != 0 || r.stderr != named || verbose != strings.Contains(r.stdout, removed) {
				t.Errorf("%v: want exit 0, and %q with -v or --debug", r, removed)
			}
			assertNotExist(t, dead)
			assertFileBytes(t, join(dir, "d", ".fastcp-foo.000000000000"), []byte("precious\n"))
			assertFileBytes(t, join(dir, "d", "foo"), []byte("new\n"))
		})
	}
}

// TestSetIDBitsAfterReplace: a copy over a set-ID file keeps the set-ID
// bits only where cp, which writes into DEST, keeps them: an unprivileged
// user's copy drops them as the kernel drops them on a write; root's keeps
// them; with -p the source's bits are kept where cp -p keeps them. Each
// case runs fastcp and cp on the same fixture and compares the modes.
func TestSetIDBitsAfterReplace(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	for _, tc := range []struct {
		name     string
		nobody   bool
		args     []string
		srcMode  uint32
		wantMode uint32 // DEST's mode after the copy, as cp leaves it
	}{
		{"nobody", true, nil, 0o755, 0o755},
		{"nobody -p", true, []string{"-p"}, 0o6755, 0o6755},
		{"nobody -p from root's", true, []string{"-p"}, 0o6755, 0o755},
		{"root", false, nil, 0o755, 0o6755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range []string{bin, "/usr/bin/cp"} {
				dir := join(scratch, safeName(tc.name)+"-"+filepath.Base(tool))
				mustMkdir(t, dir)
				src, dst := join(dir, "newtool"), join(dir, "tool")
				writeFile(t, src, []byte("#!/bin/sh\necho new\n"), 0o644)
				writeFile(t, dst, []byte("#!/bin/sh\necho old\n"), 0o644)
				if tc.nobody {
					for _, p := range []string{dir, dst} {
						if err := os.Chown(p, ccNobody, ccNobody); err != nil {
							t.Fatal(err)
						}
					}
					if tc.name != "nobody -p from root's" {
						if err := os.Chown(src, ccNobody, ccNobody); err != nil {
							t.Fatal(err)
						}
					}
				}
				// chmod after chown, which clears set-ID bits.
				if err := unix.Chmod(src, tc.srcMode); err != nil {
					t.Fatal(err)
				}
				if err := unix.Chmod(dst, 0o6755); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, tool, append(tc.args, "newtool", "tool")...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				if tc.nobody {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
				}
				r := runCmd(t, cmd)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("%s: %v", tool, r)
				}
				if got := statT(t, dst).Mode & 0o7777; got != tc.wantMode {
					t.Errorf("%s: DEST has mode %04o, want %04o", tool, got, tc.wantMode)
				}
				assertFileBytes(t, dst, []byte("#!/bin/sh\necho new\n"))
			}
		})
	}
}

// TestInterruptedInPlaceSaysPartial: SIGINT, SIGTERM or SIGHUP during an
// --inplace copy leave DEST holding part of the copy, and fastcp says so
// before it dies of the signal.
func TestInterruptedInPlaceSaysPartial(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, join(dir, "src"), randomBytes(4<<20, "inplace"), 0o644)
			writeFile(t, join(dir, "dst"), []byte("old\n"), 0o644)
			run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--inplace", "--strategy=rw", "--buffer-size=64K", "src", "dst")
			run.waitUntil(t, "part of the copy", func() bool { return sizeOf(join(dir, "dst")) >= 256<<10 })
			code := run.signal(t, c.sig)
			want := "fastcp: interrupted: 'dst' was written in place and is now incomplete\n"
			if got := run.output(); code != c.code || got != want {
				t.Errorf("exit %d, stderr %q: want %d and %q", code, got, c.code, want)
			}
			if n := sizeOf(join(dir, "dst")); n <= 0 || n >= 4<<20 {
				t.Errorf("DEST has %d bytes: not a partial copy", n)
			}
		})
	}
}
