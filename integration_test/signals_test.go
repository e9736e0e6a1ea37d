// SPDX-License-Identifier: MIT

package integration_test

// Signals: SIGKILL at chosen and random points never leaves a
// partial file under DEST's name, and the next run cleans up what the
// killed one left; SIGINT, SIGTERM and SIGHUP in the middle of -r trees and
// -j copies; a closed stdout with -v.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// removedRE is the -v line of a run that removed a dead temporary file.
var removedRE = regexp.MustCompile(`^removed '(\.fastcp-dst\.[0-9a-f]{12})'$`)

// wantOldNewOrNothing fails the test unless path is absent (when old is
// nil), holds old, or holds all of data: never anything in between.
func wantOldNewOrNothing(t testing.TB, path string, old, data []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && old == nil:
	case err != nil:
		t.Errorf("%s: %v", path, err)
	case bytes.Equal(got, data), old != nil && bytes.Equal(got, old):
	default:
		t.Errorf("%s holds %d bytes that are neither the old DEST nor the whole copy", path, len(got))
	}
}

// rerunCleansUp runs fastcp -v src dst again in dir after a killed run:
// it must succeed, remove every temporary file the killed run left (saying
// so on stdout) and leave DEST complete.
func rerunCleansUp(t *testing.T, dir string, data []byte) {
	t.Helper()
	left := tempFiles(t, dir)
	r := fastcp(t, dir, "-v", "src", "dst")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("the run after the kill: %v", r)
	}
	var removed []string
	for _, l := range lines(r.stdout) {
		if m := removedRE.FindStringSubmatch(l); m != nil {
			removed = append(removed, m[1])
		} else if l != "'src' -> 'dst'" {
			t.Errorf("unexpected -v line %q", l)
		}
	}
	if strings.Join(removed, " ") != strings.Join(left, " ") {
		t.Errorf("the killed run left %v, the next one said it removed %v", left, removed)
	}
	assertNoTemps(t, dir)
	assertFileBytes(t, join(dir, "dst"), data)
}

// signalledCopy copies a source of 1 MiB and 5 bytes (seeded by seed) in
// dir over an old DEST of 3000 bytes (existing) or none, with args, under
// strace with straceArgs, which inject sig: again, up to five times, while
// no thread reached the call (strace counts when= per thread: a copy whose
// calls moved to another OS thread, as the Go runtime may resume the
// copying goroutine on any, can finish with no thread reaching the Nth).
func signalledCopy(t *testing.T, dir, seed string, existing bool, sig syscall.Signal, inject string, straceArgs, args []string) (tr traced, data, old []byte) {
	t.Helper()
	data = randomBytes(1<<20+5, seed)
	writeFile(t, join(dir, "src"), data, 0o644)
	if existing {
		old = randomBytes(3000, "old")
	}
	retryMissed(t, inject, func() (int, []durSyscall) {
		os.Remove(join(dir, "dst"))
		if existing {
			writeFile(t, join(dir, "dst"), old, 0o644)
		}
		tr = faultStrace(t, dir, straceArgs, append(args, "src", "dst")...)
		return tr.code, tr.calls
	})
	return tr, data, old
}

// TestSIGKILLAtEveryStep kills fastcp with SIGKILL (delivered by strace on
// entry to a chosen system call) while it writes the data, at the flush,
// at the rename and at the directory's fsync, with and without an existing
// DEST. Whatever the point, DEST is absent or old, or complete: never part
// of the copy. Nothing is left behind (the temporary file has no name until
// right before the rename), except by a copy killed at its rename: that
// file has its name but not the mark (so that DEST appears with its
// attributes final), and a file without the mark is never removed, only
// named in a warning.
func TestSIGKILLAtEveryStep(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("random kill points from seed %d", seed)
	type point struct {
		name, inject string
		args         []string
	}
	points := []point{
		{"pwrite64-2", "pwrite64:signal=SIGKILL:when=2", []string{"--strategy=rw", "--buffer-size=64K"}},
		{"fdatasync", "fdatasync:signal=SIGKILL:when=1", []string{"--sync=data"}},
		// The unnamed temporary file's link under its temporary name.
		{"linkat", "linkat:signal=SIGKILL:when=1", nil},
		{"rename", "rename,renameat,renameat2:signal=SIGKILL:when=1", nil},
		// Traced on DEST's directory alone (-P): its fsync, after the rename.
		{"fsync-directory", "fsync:signal=SIGKILL:when=1", []string{"--sync=full"}},
	}
	for range 2 {
		k := 3 + rng.IntN(13)
		points = append(points, point{"pwrite64-" + strconv.Itoa(k), "pwrite64:signal=SIGKILL:when=" + strconv.Itoa(k),
			[]string{"--strategy=rw", "--buffer-size=64K"}})
	}
	for _, p := range points {
		for _, existing := range []bool{true, false} {
			if p.name == "rename" && !existing {
				continue // a new DEST is linked in under its own name: no rename (the linkat point)
			}
			name := p.name + "/new"
			if existing {
				name = p.name + "/existing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				set := p.inject[:strings.Index(p.inject, ":")]
				straceArgs := []string{"-e", "trace=" + set, "-e", "inject=" + p.inject}
				if p.name == "fsync-directory" {
					straceArgs = append(straceArgs, "-P", dir)
				}
				tr, data, old := signalledCopy(t, dir, "kill", existing, syscall.SIGKILL, p.inject, straceArgs, p.args)
				if tr.signal != syscall.SIGKILL {
					t.Fatalf("fastcp was not killed (exit %d, stderr %q):\n%s", tr.code, tr.stderr, tr.log)
				}
				wantOldNewOrNothing(t, join(dir, "dst"), old, data)
				if p.name == "rename" {
					// The mark went right before the rename, so that DEST
					// appears with its attributes final: the complete
					// copy left is not provably fastcp's, and is kept
					// and named.
					left := tempFiles(t, dir)
					if len(left) != 1 {
						t.Fatalf("temporary files left: %v, want the one killed at its rename", left)
					}
					assertFileBytes(t, join(dir, left[0]), data)
					if _, err := unix.Getxattr(join(dir, left[0]), markXattr, make([]byte, 64)); err != unix.ENODATA {
						t.Errorf("the file killed at its rename: mark %v, want none", err)
					}
					r := fastcp(t, dir, "-v", "src", "dst")
					named := "fastcp: warning: " + q(left[0]) + " has the name of a temporary file of fastcp but not its mark: left alone\n"
					if r.code != 0 || r.stderr != named || r.stdout != "'src' -> 'dst'\n" {
						t.Errorf("the run after the kill: %v, want the leftover named: %q", r, named)
					}
					assertFileBytes(t, join(dir, "dst"), data)
					assertFileBytes(t, join(dir, left[0]), data)
					return
				}
				// Before the rename the file had no name (ext4 has
				// O_TMPFILE, and it is linked in right before the
				// rename): a kill leaves nothing.
				if left := tempFiles(t, dir); len(left) > 0 {
					t.Errorf("killed at %s: temporary files %v left, want none", p.name, left)
				}
				rerunCleansUp(t, dir, data)
			})
		}
	}
}

// TestCatchableSignalAtEveryStep delivers SIGINT, SIGTERM or SIGHUP (by
// strace, on entry to a chosen system call) at each step of a copy, with
// and without an existing DEST. fastcp installs its handlers only before it
// first gives a file a temporary name (main.handleSignals): before that a
// signal kills it by the default action. Either way it dies of the signal
// (or, at the last rename, may finish), DEST is absent or old, or
// complete, and, unlike after a SIGKILL, no temporary file is left, not
// even one signalled right after its linkat.
func TestCatchableSignalAtEveryStep(t *testing.T) {
	t.Parallel()
	points := []struct {
		name, inject string
		args         []string
		existing     []bool
	}{
		{"pwrite64", "pwrite64:when=2", []string{"--strategy=rw", "--buffer-size=64K"}, []bool{false, true}},
		{"fdatasync", "fdatasync:when=1", []string{"--sync=data"}, []bool{false, true}},
		// The unnamed file's link: under DEST's own name for a new
		// DEST, under a temporary name beside an existing one.
		{"linkat", "linkat:when=1", nil, []bool{false, true}},
		{"rename", "rename,renameat,renameat2:when=1", nil, []bool{true}},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, p := range points {
			for _, existing := range p.existing {
				name := fmt.Sprintf("%s/%s/new", unix.SignalName(sig), p.name)
				if existing {
					name = strings.TrimSuffix(name, "new") + "existing"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					dir := t.TempDir()
					set, when, _ := strings.Cut(p.inject, ":")
					inject := set + ":signal=" + unix.SignalName(sig) + ":" + when
					straceArgs := []string{"-e", "trace=" + set, "-e", "inject=" + inject}
					tr, data, old := signalledCopy(t, dir, "sig", existing, sig, inject, straceArgs, p.args)
					if existing && tr.code == 0 && tr.stderr == "" && (p.name == "rename" || p.name == "linkat") {
						// The handler, armed at the temporary name, waits
						// for the session's lock, which the rename may
						// take first: a signal that comes once every
						// file is in place may be dropped
						// (main.handleSignals' stop).
						assertFileBytes(t, join(dir, "dst"), data)
						assertNoTemps(t, dir)
						return
					}
					if tr.signal != sig || tr.stderr != "" {
						t.Fatalf("fastcp: exit %d, signal %v, stderr %q; want death by %v, silent:\n%s", tr.code, tr.signal, tr.stderr, sig, tr.log)
					}
					wantOldNewOrNothing(t, join(dir, "dst"), old, data)
					// At the linkat beside an existing DEST the file got its
					// temporary name: the handler, armed right before,
					// removed it, or the rename won the race for the
					// session's lock and DEST is complete.
					assertNoTemps(t, dir)
				})
			}
		}
	}
}

// TestSIGKILLAtRandomTimes kills fastcp at a random moment while it copies
// what a writer puts into a FIFO (and then holds open): DEST keeps its old
// bytes, nothing is left behind (the temporary file had no name: ext4 has
// O_TMPFILE), and a run from a regular source afterwards copies as usual.
func TestSIGKILLAtRandomTimes(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for i := range 3 {
		amount, pause := 1+rng.IntN(400<<10), time.Duration(rng.IntN(30))*time.Millisecond
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := join(dir, "fifo")
			mkfifo(t, fifo)
			old := randomBytes(2000, "old")
			writeFile(t, join(dir, "dst"), old, 0o644)
			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			defer release()
			wrote := fifoWriter(fifo, randomBytes(amount, "partial"), hold)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, "fifo", "dst")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitFor(func() bool { return len(openTemps(cmd.Process.Pid, dir, false)) > 0 }) {
				cmd.Process.Kill()
				t.Fatal("no temporary file appeared")
			}
			time.Sleep(pause)
			cmd.Process.Signal(syscall.SIGKILL)
			err := cmd.Wait()
			release()
			waitFIFOPeer(t, fifo, wrote)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("fastcp was not killed: %v", err)
			}
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
			data := randomBytes(70_000, "second")
			writeFile(t, join(dir, "src"), data, 0o644)
			rerunCleansUp(t, dir, data)
		})
	}
}

// traceePid returns the process strace (pid) started: its first child.
func traceePid(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			n, _ := strconv.Atoi(fs[0])
			return n
		}
	}
	return 0
}

// walkTemps lists the temporary files anywhere under dir.
func walkTemps(t testing.TB, dir string) []string {
	t.Helper()
	var temps []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".fastcp-") {
			temps = append(temps, p)
		}
		return nil
	})
	return temps
}

// copiedFiles counts the regular files under dir that are not temporary.
func copiedFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".fastcp-") {
			n++
		}
		return nil
	})
	return n
}

// TestSignalsInTrees interrupts -r copies of a tree, one file at a time and
// four at once (-j 4), slowed down by strace, with SIGINT, SIGTERM and
// SIGHUP once temporary files are being written: fastcp dies of the signal
// (status 130, 143 or 129), no temporary file is left anywhere in the tree,
// and every file that is there is complete.
func TestSignalsInTrees(t *testing.T) {
	t.Parallel()
	_, _ = faultReady(t)
	src := t.TempDir()
	for _, d := range []string{"a", "b", "b/c"} {
		mustMkdir(t, join(src, d))
		for i := range 3 {
			writeFile(t, join(src, d, fmt.Sprintf("f%d", i)), randomBytes(512<<10, d+strconv.Itoa(i)), 0o644)
		}
	}
	for _, jobs := range []string{"1", "4"} {
		for _, c := range []struct {
			name string
			sig  syscall.Signal
			code int
		}{{"SIGINT", syscall.SIGINT, 130}, {"SIGTERM", syscall.SIGTERM, 143}, {"SIGHUP", syscall.SIGHUP, 129}} {
			t.Run("j"+jobs+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dst := join(t.TempDir(), "copy")
				log := join(t.TempDir(), "strace.log")
				strace, bin := faultReady(t)
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-o", log, "-e", "trace=pwrite64",
					"-e", "inject=pwrite64:delay_enter=20000", bin, "-r", "-j", jobs, "--strategy=rw", "--buffer-size=64K", src, dst)
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				cmd.WaitDelay = 5 * time.Second
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer cmd.Process.Kill()
				want := 1
				if jobs == "4" {
					want = 2
				}
				// Once a file is complete and others are being written.
				var pid int
				if !waitFor(func() bool {
					pid = traceePid(cmd.Process.Pid)
					return pid > 0 && len(openTemps(pid, dst, true)) >= want && copiedFiles(dst) > 0
				}) {
					t.Fatalf("no temporary files appeared; stderr %q", stderr.String())
				}
				if err := syscall.Kill(pid, c.sig); err != nil {
					t.Fatal(err)
				}
				err := cmd.Wait()
				if waitStatus(err) != c.code {
					t.Errorf("after %s: %v, want exit status %d; stderr %q", c.name, err, c.code, stderr.String())
				}
				if stdout.Len() > 0 || dropStraceLines(stderr.String()) != "" {
					t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
				}
				if temps := walkTemps(t, dst); len(temps) > 0 {
					t.Errorf("temporary files left: %v", temps)
				}
				n := 0
				filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						rel, _ := filepath.Rel(dst, p)
						want, _ := os.ReadFile(join(src, rel))
						assertFileBytes(t, p, want)
						n++
					}
					return nil
				})
				t.Logf("%d of 9 files were complete when %s came", n, c.name)
			})
		}
	}
}

// TestClosedStdout: -v or --debug into a pipe whose reader is already gone
// ends as cp ends: the file is copied (its line is printed once it is
// complete), then fastcp dies of SIGPIPE with nothing on stderr. (Go
// cannot see a SIGPIPE its caller ignored, so there is no "write error"
// case for a closed pipe.) TestVerboseIntoHead has a reader that goes
// after one line.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-v"}, {"--debug"}} {
		t.Run("closed-before"+args[0], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := randomBytes(100_000, "src")
			writeFile(t, join(dir, "src"), data, 0o644)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, append(args, "src", "dst")...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			err = cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
				t.Errorf("%v, want a death by SIGPIPE", err)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q", stderr.String())
			}
			assertFileBytes(t, join(dir, "dst"), data)
			assertNoTemps(t, dir)
		})
	}
}

// sigSet reads a signal mask line (SigIgn, SigCgt) of /proc/PID/status.
func sigSet(t testing.TB, pid int, field string) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(string(b)) {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func sigBit(s syscall.Signal) uint64 { return 1 << (uint(s) - 1) }

// TestIgnoredSignalsStayIgnored runs fastcp as `nohup fastcp ... &` does
// from a script: SIGHUP ignored by nohup, SIGINT by the shell for a
// background job. fastcp must leave both ignored (SigIgn in
// /proc/PID/status), so the SIGHUP of a closing terminal and a Ctrl-C
// meant for the foreground do not end the copy, while SIGTERM still
// removes the temporary file. The source is a FIFO held open, so the
// signals come while the copy is under way.
func TestIgnoredSignalsStayIgnored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := join(dir, "src")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `nohup "$0" "$@" & wait $!`, setup.Bin, "src", "dst")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, rest := randomBytes(10000, "nohup-1"), randomBytes(20000, "nohup-2")
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once fastcp opened it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(first); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the shell's children: %q", b)
	}
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != setup.Bin {
		t.Fatalf("the shell's child is %s, not fastcp", exe)
	}
	ign, cgt := sigSet(t, pid, "SigIgn"), sigSet(t, pid, "SigCgt")
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if ign&sigBit(s) == 0 {
			t.Errorf("%v is no longer ignored (SigIgn %016x)", s, ign)
		}
	}
	if cgt&sigBit(syscall.SIGTERM) == 0 {
		t.Errorf("SIGTERM is not caught (SigCgt %016x)", cgt)
	}
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if err := syscall.Kill(pid, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(rest); err != nil {
		t.Fatalf("writing the rest of the source after SIGHUP and SIGINT: %v", err)
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fastcp under nohup in the background: %v; stderr %q", err, stderr.String())
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	assertFileBytes(t, join(dir, "dst"), append(first, rest...))
	assertNoTemps(t, dir)
}

// retryMissed calls run, which makes one run under strace with inject, and
// calls it again, up to five runs in all, while a run missed across threads
// (missedAcross): strace counts when= per thread, and the Go runtime may
// resume a goroutine on any of them.
func retryMissed(t testing.TB, inject string, run func() (code int, calls []durSyscall)) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		code, calls := run()
		if attempt == 5 || !missedAcross(code, calls, inject) {
			return
		}
		t.Logf("attempt %d: %s not reached by any one thread (strace counts per thread); again", attempt, inject)
	}
}

// missedAcross reports whether a run that exited with code and was not
// killed made the call of inject ("pwrite64:signal=SIGKILL:when=N", or
// when=N+) at least N times in calls, but spread over threads so that none
// made it N times.
func missedAcross(code int, calls []durSyscall, inject string) bool {
	name, _, _ := strings.Cut(inject, ":")
	_, when, ok := strings.Cut(inject, "when=")
	when, _, _ = strings.Cut(when, ":")
	n, err := strconv.Atoi(strings.TrimSuffix(when, "+"))
	if !ok || err != nil || code != 0 {
		return false
	}
	total, perThread := 0, map[int]int{}
	for _, c := range calls {
		if c.name == name {
			total++
			perThread[c.pid]++
		}
	}
	for _, k := range perThread {
		if k >= n {
			return false
		}
	}
	return total >= n
}

// The retry rule of TestSIGKILLAtEveryStep, on the run CI saw: 17 pwrite64
// calls, 10 on one thread and 7 on another, when=14 reached by neither.
func TestMissedAcrossThreads(t *testing.T) {
	calls := func(per ...int) traced {
		var tr traced
		for tid, n := range per {
			for range n {
				tr.calls = append(tr.calls, durSyscall{pid: 100 + tid, name: "pwrite64"})
			}
		}
		return tr
	}
	missedAcrossThreads := func(tr traced, inject string) bool { return missedAcross(tr.code, tr.calls, inject) }
	const inject = "pwrite64:signal=SIGKILL:when=14"
	if !missedAcrossThreads(calls(10, 7), inject) {
		t.Error("10+7 calls on two threads, when=14: not taken for a miss across threads")
	}
	if missedAcrossThreads(calls(17), inject) {
		t.Error("17 calls on one thread that was not killed: taken for a miss across threads")
	}
	if missedAcrossThreads(calls(6, 6), inject) {
		t.Error("12 calls in all, when=14: taken for a miss across threads")
	}
	tr := calls(10, 7)
	tr.code = 1
	if missedAcrossThreads(tr, inject) {
		t.Error("a failed run taken for a miss across threads")
	}
	// when=N+ (every call from the Nth on) and when=N in the middle of a
	// spec are read as when=N.
	if !missedAcrossThreads(calls(1, 1, 1), "pwrite64:error=EIO:when=2+") {
		t.Error("3 calls on three threads, when=2+: not taken for a miss across threads")
	}
	if missedAcrossThreads(calls(2, 1), "pwrite64:error=EIO:when=2+") {
		t.Error("a thread that made 2 calls, when=2+: taken for a miss across threads")
	}
	if !missedAcrossThreads(calls(1, 1), "pwrite64:when=2:delay_exit=10") {
		t.Error("2 calls on two threads, when=2 then delay_exit: not taken for a miss across threads")
	}
}
