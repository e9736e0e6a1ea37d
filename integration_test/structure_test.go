// SPDX-License-Identifier: MIT

package integration_test

// The structure of a copy: trees walked by directory descriptor, one
// plan walked once, cp's rules for several SOURCEs with one DEST, bounded
// buffers, and the messages of odd DESTs.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// asNobody runs sh -c script in dir as uid and gid 65534.
func asNobody(dir, script string) error {
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("as nobody: %s: %v: %s", script, err, out)
	}
	return nil
}

// entriesOf describes dir and what it holds (names, modes, contents).
func entriesOf(t testing.TB, dir string) string {
	t.Helper()
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%s %v", dir, fi.Mode())
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		s += fmt.Sprintf("\n%s %v %q", e.Name(), fi.Mode(), b)
	}
	return s
}

// TestSwappedDestDirectoryStaysInside: root copies a tree into
// /tmp/.../x/new, and the unprivileged owner of x replaces new, once fastcp
// made it, with a symbolic link to a directory of root's. strace holds
// fastcp for a second right after the mkdir, and the swap happens then.
// fastcp may fail, but nothing outside DEST changes: not a mode, not a
// byte, not a name.
func TestSwappedDestDirectoryStaysInside(t *testing.T) {
	needRoot(t)
	t.Parallel()
	for _, c := range []struct {
		args []string
		// inject holds fastcp right after the call that made or opened
		// new; fails: the swap comes before fastcp opened new, which it
		// then refuses.
		inject string
		fails  bool
	}{
		{[]string{"-r"}, "mkdir,mkdirat", true},
		{[]string{"-a", "-j", "4"}, "mkdir,mkdirat", true},
		// After the open (the first fsetxattr marks the directory
		// unfinished): the copy goes on into the directory it holds,
		// wherever its owner moved it.
		{[]string{"-r"}, "fsetxattr", false},
		{[]string{"-a", "-j", "4"}, "fsetxattr", false},
	} {
		args := c.args
		t.Run(strings.Join(args, "")+"/"+strings.Split(c.inject, ",")[0], func(t *testing.T) {
			t.Parallel()
			scratch, _ := ccUserScratch(t)
			dir := mustMkdir(t, join(scratch, "w"))
			src := mustMkdir(t, join(dir, "src"))
			for i := range 40 {
				writeFile(t, join(src, fmt.Sprintf("f%02d", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o755)
			}
			mustMkdir(t, join(src, "sub"))
			writeFile(t, join(src, "sub", "secret"), []byte("overwritten\n"), 0o777)
			outside := mustMkdir(t, join(dir, "outside"))
			os.Chmod(outside, 0o700)
			writeFile(t, join(outside, "secret"), []byte("precious\n"), 0o600)
			x := mustMkdir(t, join(dir, "x"))
			if err := os.Chown(x, ccNobody, ccNobody); err != nil {
				t.Fatal(err)
			}
			before := entriesOf(t, outside)

			done := make(chan traced, 1)
			faultReady(t)
			go func() {
				done <- faultStraceLog(t, dir, join(t.TempDir(), "strace.log"),
					[]string{"-e", "trace=" + c.inject, "-e", "inject=" + c.inject + ":delay_exit=1000000:when=1"},
					append(args, "src", "x/new")...)
			}()
			// Held after the mkdir: new exists. Held after the mark:
			// new carries it (so fastcp has it open), whatever the
			// scheduler did between the mkdir and the open.
			made := func() bool { _, err := os.Lstat(join(x, "new")); return err == nil }
			if !c.fails {
				made = func() bool {
					_, err := unix.Lgetxattr(join(x, "new"), "user.fastcp.unfinished", make([]byte, 8))
					return err == nil
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				if made() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("fastcp did not create x/new")
				}
				time.Sleep(time.Millisecond)
			}
			swapErr := asNobody(x, "mv new new.real && ln -s "+outside+" new")
			tr := <-done
			if swapErr != nil {
				t.Fatal(swapErr)
			}
			t.Logf("fastcp %v: %v", args, tr.result)
			if after := entriesOf(t, outside); after != before {
				t.Errorf("fastcp changed a directory outside DEST:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if c.fails && tr.code == 0 {
				t.Errorf("fastcp reported success, yet DEST is no longer the directory it made: %v", tr.result)
			}
			if !c.fails {
				// Everything went into the directory fastcp made.
				assertFileBytes(t, join(x, "new.real", "f39"), []byte("file 39\n"))
				assertFileBytes(t, join(x, "new.real", "sub", "secret"), []byte("overwritten\n"))
			}
		})
	}
}

// TestSameDestFromSeveralSources: cp refuses to overwrite a DEST it made
// a moment before from another SOURCE, and to write through a symbolic link
// it just made; with -j the outcome is the same, whichever copy runs first.
func TestSameDestFromSeveralSources(t *testing.T) {
	t.Parallel()
	for _, jobs := range []string{"1", "4"} {
		t.Run("j"+jobs, func(t *testing.T) {
			t.Parallel()
			for i := range 20 { // -j's order is the scheduler's: try it often
				dir := t.TempDir()
				for _, d := range []string{"x", "y", "z", "dir", "cpdir"} {
					mustMkdir(t, join(dir, d))
				}
				for _, d := range []string{"x", "y", "z"} {
					writeFile(t, join(dir, d, "f"), randomBytes(100000, d), 0o644)
				}
				if err := os.Symlink("../nowhere", join(dir, "x", "l")); err != nil {
					t.Fatal(err)
				}
				writeFile(t, join(dir, "y", "l"), []byte("through\n"), 0o644)
				for _, args := range [][]string{{"x/f", "y/f", "z/f"}, {"-P", "x/l", "y/l"}} {
					cp := hostileRun(t, "cp", dir, append(args, "cpdir/")...)
					fc := hostileRun(t, setup.Bin, dir, append(append([]string{"-j", jobs}, args...), "dir/")...)
					if fc.code != 1 || cp.code != 1 || fc.stderr != cpLike(cp.stderr, "cpdir", "dir") {
						t.Fatalf("run %d, %q: fastcp %v, GNU cp %v", i, args, fc, cp)
					}
				}
				assertFileBytes(t, join(dir, "dir", "f"), randomBytes(100000, "x"))
				if l, err := os.Readlink(join(dir, "dir", "l")); err != nil || l != "../nowhere" {
					t.Fatalf("dir/l: %q %v", l, err)
				}
				assertNotExist(t, join(dir, "nowhere"))
			}
		})
	}
}

// TestCyclicTreeWithProgress: the byte total of the progress bar comes from
// the walk that copies, which refuses cycles, so a tree whose links lead
// back up ends with cp's messages instead of growing forever.
func TestCyclicTreeWithProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := mustMkdir(t, join(dir, "a"))
	writeFile(t, join(a, "f"), []byte("data\n"), 0o644)
	for _, l := range []string{"x", "y"} {
		if err := os.Symlink(".", join(a, l)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := runCmd(t, fastcpCmd(ctx, dir, "--progress", "-rL", "a", "out"))
	if ctx.Err() != nil {
		t.Fatal("fastcp --progress -rL on a cyclic tree did not end in 20 s")
	}
	var errs []string
	for _, l := range lines(r.stderr) {
		if !strings.HasPrefix(l, "fastcp: progress: ") {
			errs = append(errs, l)
		}
	}
	want := []string{"fastcp: cannot copy cyclic symbolic link 'a/x'", "fastcp: cannot copy cyclic symbolic link 'a/y'"}
	if r.code != 1 || strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %v, want exit 1 and %q", r, want)
	}
	assertFileBytes(t, join(dir, "out", "f"), []byte("data\n"))
}

// TestSourceSwappedForFIFOLink: a SOURCE swapped, after the walk looked at
// it, for a symbolic link to a FIFO neither hangs fastcp nor reads the
// FIFO: followed (the command line's default), the open does not wait and
// the file is not the one looked at; not followed (-P), the open refuses
// the link, as cp does. A FIFO read first holds fastcp between the walk
// and the open while the test swaps the file (-j 1: one file at a time,
// or src/f is copied while the FIFO is read).
func TestSourceSwappedForFIFOLink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "fastcp: skipping file 'src/f', as it was replaced while being copied\n"},
		{[]string{"-P"}, "fastcp: cannot open 'src/f' for reading: Too many levels of symbolic links\n"},
	} {
		t.Run(strings.Join(c.args, ""), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "src"))
			mustMkdir(t, join(dir, "dst"))
			writeFile(t, join(dir, "src", "f"), []byte("regular\n"), 0o644)
			for _, f := range []string{"gate", "trap"} {
				if err := syscall.Mkfifo(join(dir, f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, append(c.args, "-j", "1", "gate", "src/f", "dst/")...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan result, 1)
			go func() {
				err := cmd.Wait()
				r := result{stderr: stderr.String()}
				if ee, ok := err.(*exec.ExitError); ok {
					r.code = ee.ExitCode()
				}
				done <- r
			}()
			w, err := os.OpenFile(join(dir, "gate"), os.O_WRONLY, 0) // fastcp is reading the gate
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(join(dir, "src", "f"))
			if err := os.Symlink("../trap", join(dir, "src", "f")); err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("gate\n"))
			w.Close()
			r := <-done
			if ctx.Err() != nil {
				unblockFIFO(join(dir, "trap"))
				t.Fatal("fastcp hung on the FIFO the source was swapped for")
			}
			if r.code != 1 || r.stderr != c.want {
				t.Errorf("got %v, want exit 1 and %q", r, c.want)
			}
			assertFileBytes(t, join(dir, "dst", "gate"), []byte("gate\n"))
			assertNotExist(t, join(dir, "dst", "f"))
		})
	}
}

// runPeakRSS runs cmd and returns what it did and its peak resident set:
// VmHWM of /proc/PID/status, read when the process stops on its way out
// (ptrace's PTRACE_EVENT_EXIT, before its memory is released). Sampling
// /proc while it runs misses a run that ends between two samples, and
// wait4's ru_maxrss counts the test process, whose memory the child shares
// until its exec.
func runPeakRSS(t testing.TB, cmd *exec.Cmd) (result, int64) {
	t.Helper()
	// ptrace requests must come from the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	// The first stop is the SIGTRAP of its execve.
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		t.Fatalf("no stop after the exec: %v, status %v", err, ws)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT|unix.PTRACE_O_EXITKILL); err != nil {
		t.Fatal(err)
	}
	var peak int64
	for sig := 0; peak == 0; {
		if err := syscall.PtraceCont(pid, sig); err != nil {
			t.Fatal(err)
		}
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
			t.Fatalf("ended without its exit stop: %v, status %v", err, ws)
		}
		sig = 0
		switch {
		case ws.StopSignal() == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			peak = vmHWM(t, pid)
		case ws.StopSignal() != syscall.SIGTRAP:
			sig = int(ws.StopSignal()) // delivered, as if untraced
		}
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		t.Fatal(err)
	}
	r := result{}
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		r.code = ee.ExitCode()
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r, peak
}

// vmHWM is the VmHWM of /proc/PID/status, in bytes.
func vmHWM(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(string(b)) {
		var kb int64
		if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kb); err == nil && kb > 0 {
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status:\n%s", pid, b)
	return 0
}

// TestBufferMemoryIsBounded: -j copies at once with a large --buffer-size
// hold a bounded amount of buffer memory (fastcp says it cut the buffer
// down), and a default copy of a large file stays small.
func TestBufferMemoryIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustMkdir(t, join(dir, "src"))
	for i := range 48 {
		writeFile(t, join(src, fmt.Sprintf("f%02d", i)), randomBytes(4<<20, fmt.Sprint(i)), 0o644)
	}
	r, rss := runPeakRSS(t, fastcpCmd(context.Background(), dir, "-r", "-j", "1024", "--buffer-size=1G", "--strategy=rw", "src", "dst"))
	t.Logf("-r -j 1024 --buffer-size=1G: peak RSS %d MiB; %v", rss>>20, r)
	want := "fastcp: warning: --buffer-size=1 GiB with -j 1024 would take 1 TiB; each copy uses 32 KiB (32 MiB in all)\n"
	if r.code != 0 || r.stderr != want {
		t.Errorf("got %v, want exit 0 and %q", r, want)
	}
	if rss == 0 || rss > 64<<20 {
		t.Errorf("peak RSS %d MiB with 48 files of 4 MiB copied at once", rss>>20)
	}
	assertFileBytes(t, join(dir, "dst", "f47"), randomBytes(4<<20, "47"))

	writeFile(t, join(dir, "big"), randomBytes(64<<20, "big"), 0o644)
	r, rss = runPeakRSS(t, fastcpCmd(context.Background(), dir, "--strategy=rw", "big", "big2"))
	wantSuccess(t, r)
	if rss == 0 || rss > 32<<20 {
		t.Errorf("a default copy of 64 MiB peaked at %d MiB RSS", rss>>20)
	}
}

// TestRerunFinishesInterruptedDirectories: a run killed in the middle of a
// tree leaves the directories it made at 0700; the next run gives them the
// source's modes, as if it had made them.
func TestRerunFinishesInterruptedDirectories(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"src/a/b", "src/c"} {
		mustMkdir(t, join(dir, d))
	}
	for _, d := range []string{"src", "src/a", "src/a/b", "src/c"} {
		writeFile(t, join(dir, d, "f"), []byte(d), 0o644)
		os.Chmod(join(dir, d), 0o751)
	}
	const inject = "fchmod:signal=SIGKILL:when=2"
	var tr traced
	retryMissed(t, inject, func() (int, []durSyscall) {
		os.RemoveAll(join(dir, "dst"))
		tr = faultStrace(t, dir, []string{"-e", "trace=fchmod", "-e", "inject=" + inject}, "-rT", "src", "dst")
		return tr.code, tr.calls
	})
	if tr.signal != syscall.SIGKILL {
		t.Fatalf("fastcp was not killed: %v", tr.result)
	}
	if fi, err := os.Stat(join(dir, "dst")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the killed run left dst as %v (%v), want 0700", fi, err)
	}
	wantSuccess(t, fastcp(t, dir, "-rT", "src", "dst"))
	for _, d := range []string{"dst", "dst/a", "dst/a/b", "dst/c"} {
		fi, err := os.Stat(join(dir, d))
		if err != nil || fi.Mode().Perm() != 0o751 {
			t.Errorf("%s: %v (%v), want mode 0751 after the rerun", d, fi, err)
		}
		assertFileBytes(t, join(dir, d, "f"), []byte("src"+strings.TrimPrefix(d, "dst")))
	}
	// An existing directory that no run of fastcp left unfinished keeps
	// its mode, as with cp.
	os.Chmod(join(dir, "dst", "c"), 0o700)
	wantSuccess(t, fastcp(t, dir, "-rT", "src", "dst"))
	if fi, _ := os.Stat(join(dir, "dst", "c")); fi.Mode().Perm() != 0o700 {
		t.Errorf("dst/c: mode %v, want the 0700 it had", fi.Mode())
	}
}

// TestOddDestMessages: the messages for DESTs that are not plain paths.
func TestOddDestMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "f"), []byte("x\n"), 0o644)
	// "" names nothing: cp's message, and no temporary file in ".".
	wantFailure(t, fastcp(t, dir, "f", ""), 1, "fastcp: cannot create regular file '': No such file or directory\n")
	assertNoTemps(t, dir)
	// A file of /proc is written as cp writes it (its own thread name
	// here), not refused with ENOENT for the temporary file /proc cannot
	// hold.
	wantSuccess(t, fastcp(t, dir, "f", "/proc/self/comm"))
	// A DEST that became a directory while its copy was written: cp's
	// message, not the link's "File exists". (A new DEST is linked in
	// under its own name: strace holds that linkat.)
	faultReady(t)
	ready := make(chan traced, 1)
	go func() {
		ready <- faultStraceLog(t, dir, join(t.TempDir(), "strace.log"),
			[]string{"-e", "trace=linkat", "-e", "inject=linkat:delay_enter=1000000:when=1"},
			"f", "d")
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(openTempsAnywhere(dir)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no temporary file appeared")
		}
		time.Sleep(time.Millisecond)
	}
	mustMkdir(t, join(dir, "d", "sub"))
	tr := <-ready
	wantFailure(t, tr.result, 1, "fastcp: cannot overwrite directory 'd' with non-directory\n")
	assertNoTemps(t, dir)
}
