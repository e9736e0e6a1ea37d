// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"
)

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestSignalRemovesTemp interrupts a copy in progress (a FIFO source whose
// writer stays silent after 100 KiB) with SIGINT, SIGTERM and SIGHUP. While
// it runs, the data goes to a 0600 temporary file with no name (O_TMPFILE)
// in DEST's directory; afterwards fastcp has died of the signal, nothing is
// left and the existing DEST is untouched.
func TestSignalRemovesTemp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
		{"SIGHUP", syscall.SIGHUP, 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			outDir := mustMkdir(t, join(dir, "out"))
			fifo, dst := join(dir, "src.fifo"), join(outDir, "dst")
			mkfifo(t, fifo)
			old := randomBytes(5000, "old")
			writeFile(t, dst, old, 0o644)

			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			defer release()
			wrote := fifoWriter(fifo, randomBytes(100<<10, "partial"), hold)

			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, fifo, dst)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			temp, ok := openTempWithData(cmd.Process.Pid, outDir)
			if !ok {
				t.Fatalf("no temporary file with data appeared in DEST's directory; stderr %q", stderr.String())
			}
			// ext4 has O_TMPFILE: the file has no name while it is written.
			if names := tempFiles(t, outDir); len(names) > 0 {
				t.Errorf("temporary files %v in DEST's directory during the copy, want an unnamed one", names)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(temp, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Mode&0o7777 != 0o600 || st.Nlink != 0 {
				t.Errorf("temporary file %s: mode %o, %d links (err %v), want an unnamed regular file with mode 0600", temp, st.Mode, st.Nlink, err)
			}

			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			release()
			waitFIFOPeer(t, fifo, wrote)
			wantSignalDeath(t, err, c.name, c.code, stderr.String())
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
			assertNoTemps(t, outDir, dir)
			assertFileBytes(t, dst, old)
		})
	}
}

// TestSignalRemovesNamedTemp is TestSignalRemovesTemp where the temporary
// file has its name from the start: /proc is hidden (a tmpfs over it, in
// a mount namespace of the run's own), so no unnamed file can be linked
// into place. The FIFO source holds the copy once the file has data under
// its name, and only then comes the signal: every time, fastcp dies of
// it, no .fastcp-* file is left, and DEST is untouched.
func TestSignalRemovesNamedTemp(t *testing.T) {
	t.Parallel()
	needMount(t)
	unshare := needTool(t, "unshare")
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
		{"SIGHUP", syscall.SIGHUP, 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			outDir := mustMkdir(t, join(dir, "out"))
			fifo, dst := join(dir, "src.fifo"), join(outDir, "dst")
			mkfifo(t, fifo)
			old := randomBytes(5000, "old")
			writeFile(t, dst, old, 0o644)

			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			defer release()
			wrote := fifoWriter(fifo, randomBytes(100<<10, "partial"), hold)

			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			// unshare and sh exec, so the process started is fastcp.
			cmd := exec.CommandContext(ctx, unshare, "-m", "--propagation", "private", "/bin/sh", "-c",
				`mount -t tmpfs none /proc && exec "$0" "$@"`, setup.Bin, fifo, dst)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()

			if !waitFor(func() bool {
				names := tempFiles(t, outDir)
				return len(names) == 1 && sizeOf(join(outDir, names[0])) > 0
			}) {
				t.Fatalf("no named temporary file with data appeared in DEST's directory; stderr %q", stderr.String())
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			release()
			waitFIFOPeer(t, fifo, wrote)
			wantSignalDeath(t, err, c.name, c.code, stderr.String())
			if stdout.Len() != 0 || stderr.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want nothing", stdout.String(), stderr.String())
			}
			assertNoTemps(t, outDir, dir)
			assertFileBytes(t, dst, old)
		})
	}
}

// TestSuccessLeavesNoTemp checks that a successful copy over an existing
// DEST leaves only DEST (with the new bytes) in its directory.
func TestSuccessLeavesNoTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outDir := mustMkdir(t, join(dir, "out"))
	src, dst := join(dir, "src"), join(outDir, "dst")
	data := randomBytes(2<<20+5, "new")
	writeFile(t, src, data, 0o644)
	writeFile(t, dst, randomBytes(100, "old"), 0o644)
	wantSuccess(t, fastcp(t, dir, src, dst))
	assertFileBytes(t, dst, data)
	ents, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "dst" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("DEST's directory holds %v, want only dst", names)
	}
}

// wantOneLineError checks exit 1, nothing on stdout and one stderr line
// "fastcp: ..." that contains every one of parts.
func wantOneLineError(t testing.TB, r result, parts ...string) {
	t.Helper()
	wantFailure(t, r, 1, "")
	ls := lines(r.stderr)
	if len(ls) != 1 || !strings.HasPrefix(ls[0], "fastcp: ") {
		t.Errorf("want one line 'fastcp: ...' on stderr, got %q", r.stderr)
		return
	}
	for _, p := range parts {
		if !strings.Contains(ls[0], p) {
			t.Errorf("the error %q does not contain %q", ls[0], p)
		}
	}
}

// TestENOSPCLeavesDest fills a 16 MiB tmpfs with a 32 MiB copy: exit 1, an
// error naming DEST and ENOSPC's text, no temporary file, the existing DEST
// unchanged.
func TestENOSPCLeavesDest(t *testing.T) {
	t.Parallel()
	srcDir := fsDir(t, "tmpfs")
	src := join(srcDir, "big")
	writeFile(t, src, randomBytes(32<<20, "big"), 0o644)
	old := randomBytes(1<<20, "old")
	for _, s := range []string{"auto", "sendfile", "splice", "rw"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			needMount(t)
			small, err := fsfixture.Mount(t.TempDir(), "tmpfs", 16<<20)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { small.Unmount() })
			dst := join(small.Dir, "dst")
			writeFile(t, dst, old, 0o644)
			r := fastcp(t, small.Dir, "--strategy="+s, src, dst)
			wantOneLineError(t, r, q(dst), "No space left on device")
			assertFileBytes(t, dst, old)
			assertNoTemps(t, small.Dir)
		})
	}
}

// TestRefusalLeavesDest checks that a forced strategy the kernel refuses
// leaves an existing DEST as it was and no temporary file.
func TestRefusalLeavesDest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		strategy string
		pair     fsPair
	}{
		{"copy_file_range", fsPair{"ext4", "tmpfs"}},
		{"reflink", fsPair{"ext4", "ext4"}},
		{"reflink", fsPair{"xfs", "btrfs"}},
	} {
		t.Run(c.strategy+"-"+c.pair.String(), func(t *testing.T) {
			t.Parallel()
			srcDir, dstDir := fsDir(t, c.pair.src), fsDir(t, c.pair.dst)
			src, dst := join(srcDir, "src"), join(dstDir, "dst")
			writeFile(t, src, randomBytes(1<<20, "src"), 0o644)
			old := randomBytes(3000, "old")
			writeFile(t, dst, old, 0o640)
			r := fastcp(t, dstDir, "--strategy="+c.strategy, src, dst)
			wantRefusal(t, r, c.strategy, src, dst)
			assertFileBytes(t, dst, old)
			assertNoTemps(t, dstDir)
		})
	}
}

// TestFaultInjection makes system calls fail under strace (-e inject) and
// checks that the failure is reported, not hidden by a fallback, and that
// DEST is left as it was.
func TestFaultInjection(t *testing.T) {
	t.Parallel()
	strace := needTool(t, "strace")
	for _, c := range []struct {
		name     string
		args     []string
		syscalls string // traced and injected
		when     string // strace's when= (empty: every call)
		errno    string
		stderr   string   // exact stderr, if set
		parts    []string // else: parts of the one error line
		mustCall bool     // the log must show one of the calls (the option did something)
		only     string   // trace only the calls on this file (strace -P), relative to the test's directory
	}{
		{name: "pwrite-EIO", args: []string{"--strategy=rw", "--buffer-size=64K"}, syscalls: "pwrite64", when: "3", errno: "EIO",
			stderr: "fastcp: error writing 'dst': Input/output error\n"},
		// The Go runtime reads its cgroup's CPU quota with pread64 too:
		// the source's reads alone are counted.
		{name: "pread-EIO", args: []string{"--strategy=rw", "--buffer-size=64K"}, syscalls: "pread64", when: "3", errno: "EIO",
			stderr: "fastcp: error reading 'src': Input/output error\n", only: "src"},
		{name: "pwrite-ENOSPC", args: []string{"--strategy=rw", "--buffer-size=256K"}, syscalls: "pwrite64", when: "2", errno: "ENOSPC",
			stderr: "fastcp: error writing 'dst': No space left on device\n"},
		{name: "copy_file_range-EIO", args: nil, syscalls: "copy_file_range", when: "1", errno: "EIO",
			parts: []string{"'dst'", "Input/output error"}},
		{name: "sendfile-EIO", args: []string{"--strategy=sendfile"}, syscalls: "sendfile", when: "1", errno: "EIO",
			parts: []string{"'dst'", "Input/output error"}},
		{name: "splice-EIO", args: []string{"--strategy=splice"}, syscalls: "splice", when: "2", errno: "EIO",
			parts: []string{"'dst'", "Input/output error"}},
		{name: "sync=data-EIO", args: []string{"--sync=data"}, syscalls: "fdatasync,fsync", errno: "EIO",
			parts: []string{"'dst'", "Input/output error"}, mustCall: true},
		{name: "sync=full-EIO", args: []string{"--sync=full"}, syscalls: "fdatasync,fsync", errno: "EIO",
			parts: []string{"'dst'", "Input/output error"}, mustCall: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			log := join(t.TempDir(), "strace.log")
			writeFile(t, join(dir, "src"), randomBytes(1<<20, "src"), 0o644)
			old := randomBytes(4000, "old")
			inject := c.syscalls + ":error=" + c.errno
			if c.when != "" {
				inject += ":when=" + c.when
			}
			args := []string{"-f", "-qq", "-o", log, "-e", "trace=" + c.syscalls, "-e", "inject=" + inject}
			if c.only != "" {
				args = append(args, "-P", join(dir, c.only))
			}
			args = append(append(args, setup.Bin), c.args...)
			args = append(args, "src", "dst")
			var r result
			var trace []byte
			retryMissed(t, inject, func() (int, []durSyscall) {
				writeFile(t, join(dir, "dst"), old, 0o644)
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, strace, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				r = runCmd(t, cmd)
				trace, _ = os.ReadFile(log)
				return r.code, durParseStrace(t, log)
			})
			if !bytes.Contains(trace, []byte("(INJECTED)")) {
				if c.mustCall {
					t.Errorf("fastcp %s made no %s call:\n%s", strings.Join(c.args, " "), c.syscalls, trace)
				} else {
					t.Fatalf("strace injected nothing (did fastcp call %s?):\n%s", c.syscalls, trace)
				}
			}
			if c.stderr != "" {
				wantFailure(t, r, 1, c.stderr)
			} else {
				wantOneLineError(t, r, c.parts...)
			}
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
		})
	}
}

// TestReadOnlyDest checks cp's message for a DEST on a read-only
// filesystem, new or existing (which stays as it was).
func TestReadOnlyDest(t *testing.T) {
	t.Parallel()
	needMount(t)
	dir := t.TempDir()
	writeFile(t, join(dir, "src"), randomBytes(5000, "src"), 0o644)
	ro, err := fsfixture.Mount(t.TempDir(), "tmpfs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Unmount() })
	old := randomBytes(300, "old")
	writeFile(t, join(ro.Dir, "dst"), old, 0o644)
	if err := ro.Remount("ro"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"new", "dst"} {
		dst := join(ro.Dir, name)
		r := fastcp(t, dir, "src", dst)
		wantFailure(t, r, 1, "fastcp: cannot create regular file "+q(dst)+": Read-only file system\n")
	}
	assertNotExist(t, join(ro.Dir, "new"))
	assertFileBytes(t, join(ro.Dir, "dst"), old)
	assertNoTemps(t, ro.Dir)
}

// TestLeftoversLookedForOnlyWhenInTheWay: the first temporary name for a
// DEST is always .fastcp-NAME.000000000000, so a copy lists DEST's directory
// (getdents64) only when that name is taken, never in the common case (a
// copy into a directory of a million entries would list them all). When it
// is taken by a dead leftover, the copy goes on under a random name and
// removes that leftover and the other dead ones for the same DEST; one still
// locked (a copy in progress) is left alone.
func TestLeftoversLookedForOnlyWhenInTheWay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := randomBytes(70000, "leftovers")
	writeFile(t, join(dir, "src"), data, 0o644)
	getdents := func(calls []durSyscall) int {
		n := 0
		for _, c := range calls {
			if c.name == "getdents64" && durFdPath(c.args) == dir {
				n++
			}
		}
		return n
	}
	trace := []string{"-e", "trace=getdents64,openat"}

	r, calls, log := durRunStrace(t, dir, trace, nil, "-v", "src", "dst")
	wantVerboseSuccess(t, r)
	if n := getdents(calls); n != 0 {
		t.Errorf("a copy with no leftover in the way listed the directory %d times:\n%s", n, log)
	}
	assertFileBytes(t, join(dir, "dst"), data)

	first, other := ".fastcp-dst.000000000000", ".fastcp-dst.0123456789ab"
	for _, n := range []string{first, other, ".fastcp-dst2.000000000000"} {
		writeFile(t, join(dir, n), []byte("killed run"), 0o600)
		markLeftover(t, join(dir, n))
	}
	r, calls, log = durRunStrace(t, dir, trace, nil, "-v", "src", "dst")
	wantVerboseSuccess(t, r)
	if n := getdents(calls); n == 0 {
		t.Errorf("the first temporary name was taken, but the directory was not listed:\n%s", log)
	}
	want := "'src' -> 'dst'\nremoved '" + first + "'\nremoved '" + other + "'\n"
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if got := tempFiles(t, dir); len(got) != 1 || got[0] != ".fastcp-dst2.000000000000" {
		t.Errorf("temporary files left: %v, want only the other DEST's", got)
	}
	assertFileBytes(t, join(dir, "dst"), data)

	// A first name held by a copy in progress (its lock taken) stays.
	f, err := os.OpenFile(join(dir, first), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	markLeftover(t, f.Name())
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r = fastcp(t, dir, "-v", "src", "dst")
	wantVerboseSuccess(t, r)
	if r.stdout != "'src' -> 'dst'\n" {
		t.Errorf("stdout %q: the copy in progress was judged dead", r.stdout)
	}
	if _, err := os.Stat(join(dir, first)); err != nil {
		t.Errorf("the locked temporary file of a copy in progress: %v", err)
	}
}

// wantVerboseSuccess fails the test unless the run exited 0 with nothing on
// stderr (stdout is the caller's to check).
func wantVerboseSuccess(t testing.TB, r result) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no error, got %v", r)
	}
}
