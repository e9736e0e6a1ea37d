// SPDX-License-Identifier: MIT

package integration_test

// Durability: --sync modes, the order of the calls that make a
// copy durable, final flush errors, --verify, --nocache and --inplace, seen
// from outside: strace logs of the built binary, /proc/PID/fdinfo of a copy
// in progress, /proc/meminfo and mincore(2).

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Open flags as /proc/PID/fdinfo prints them (octal, x86-64 and arm64).
const (
	durOSync  = 0o4010000 // O_SYNC = __O_SYNC|O_DSYNC
	durODSync = 0o10000   // O_DSYNC
)

// durCorruptEnv is the --verify test hook of fastcp's test build
// (hookFastcp): flip the byte at this
// offset of the destination on the device right before the read-back.
const durCorruptEnv = "FASTCP_TEST_CORRUPT_BEFORE_VERIFY"

// durModes are the --sync modes and the call each ends the copy with.
var durModes = []struct{ mode, flush string }{
	{"none", ""}, {"data", "fdatasync"}, {"full", "fsync"}, {"osync", "fsync"}, {"odsync", "fdatasync"},
}

// durStrace returns strace's path; under CI=true its absence is a failure.
func durStrace(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed, and CI=true forbids skipping")
		}
		t.Skip("strace is not installed")
	}
	return p
}

// durSyscall is one system call in an strace -f -y log.
type durSyscall struct {
	pid        int
	name, args string
	ret        string
	start, end int // line numbers where it began and returned
}

var (
	durCompleteRE   = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*)\)\s+= (.*)$`)
	durUnfinishedRE = regexp.MustCompile(`^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$`)
	durResumedRE    = regexp.MustCompile(`^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+= (.*)$`)
)

// durParseStrace reads the calls of an strace -f log, joining the halves
// of calls that another thread interrupted ("<unfinished ...>").
func durParseStrace(t *testing.T, log string) []durSyscall {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []durSyscall
	open := map[int]int{} // pid -> index in calls of its unfinished call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 0; sc.Scan(); n++ {
		l := sc.Text()
		if m := durCompleteRE.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			calls = append(calls, durSyscall{pid: pid, name: m[2], args: m[3], ret: m[4], start: n, end: n})
		} else if m := durUnfinishedRE.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			open[pid] = len(calls)
			calls = append(calls, durSyscall{pid: pid, name: m[2], args: m[3], start: n, end: -1})
		} else if m := durResumedRE.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			if i, ok := open[pid]; ok && calls[i].name == m[2] {
				calls[i].args += m[3]
				calls[i].ret = m[4]
				calls[i].end = n
				delete(open, pid)
			}
		}
	}
	return calls
}

// durFdPath is the path strace -y shows for the fd in a call's first
// argument or return value ("8</dir/file>").
var durFdPathRE = regexp.MustCompile(`^-?\d+<([^>]*)>`)

func durFdPath(s string) string {
	if m := durFdPathRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		return m[1]
	}
	return ""
}

// durRunStrace runs fastcp under strace -f -y in dir and returns what it
// did and the calls traced.
func durRunStrace(t *testing.T, dir string, straceArgs []string, env []string, args ...string) (result, []durSyscall, string) {
	t.Helper()
	strace := durStrace(t)
	log := join(t.TempDir(), "strace.log")
	argv := append([]string{"-f", "-y", "-qq", "-o", log}, straceArgs...)
	argv = append(argv, setup.Bin)
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, argv...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	cmd.WaitDelay = 5 * time.Second
	r := runCmd(t, cmd)
	raw, _ := os.ReadFile(log)
	return r, durParseStrace(t, log), string(raw)
}

// durTrace is the set of calls the strace tests watch.
const durTrace = "trace=openat,open,creat,fcntl,fsync,fdatasync,sync_file_range,linkat,rename,renameat,renameat2,close"

// TestSyncModesStrace checks, for every --sync mode, the calls that make the
// copy durable, in order: the temporary file opened with O_SYNC/O_DSYNC in
// the openat call itself (never added by fcntl F_SETFL), relative to DEST's
// directory opened O_DIRECTORY before, writeback started behind the copy
// with sync_file_range, the final fdatasync or fsync of the file, the
// rename over DEST, then the directory fsynced. The source's directory (and its parents) are never synced, and
// --sync=none flushes nothing.
func TestSyncModesStrace(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(70<<20+123, "sync-modes") // more than two writeback windows
	for _, kind := range []string{"ext4", "xfs", "btrfs"} {
		for _, m := range durModes {
			if kind != "ext4" && m.mode != "data" && m.mode != "osync" {
				continue
			}
			t.Run(kind+"/"+m.mode, func(t *testing.T) {
				t.Parallel()
				base := durExt4Dir(t)
				if kind != "ext4" {
					base = fsDir(t, kind)
				}
				srcDir := mustMkdir(t, join(base, "from"))
				dstDir := mustMkdir(t, join(base, "to"))
				writeFile(t, join(srcDir, "src"), data, 0o644)
				writeFile(t, join(dstDir, "dst"), []byte("old DEST\n"), 0o644)
				r, calls, raw := durRunStrace(t, base, []string{"-e", durTrace}, nil,
					"--sync="+m.mode, "from/src", "to/dst")
				wantSuccess(t, r)
				assertFileBytes(t, join(dstDir, "dst"), data)
				assertNoTemps(t, dstDir)
				// Reflinking filesystems clone: nothing is written, so
				// there is nothing to start writing back.
				durCheckSyncCalls(t, calls, m.mode, m.flush, dstDir, kind == "ext4")
				if t.Failed() {
					t.Logf("strace log:\n%s", raw)
				}
			})
		}
	}
}

// durCheckSyncCalls checks one strace log of fastcp --sync=mode.
func durCheckSyncCalls(t *testing.T, calls []durSyscall, mode, flush, dstDir string, wantPipeline bool) {
	t.Helper()
	// The temporary file's open, its flags and its path.
	temp, openAt := "", -1
	for i, c := range calls {
		if (c.name == "openat" || c.name == "open") && (strings.Contains(c.args, "O_TMPFILE") || strings.Contains(c.args, "O_CREAT") &&
			(strings.Contains(c.args, "/.fastcp-") || strings.Contains(c.args, `".fastcp-`))) {
			temp, openAt = durFdPath(c.ret), i
			flags := c.args
			switch mode {
			case "osync":
				if !strings.Contains(flags, "O_SYNC") {
					t.Errorf("--sync=osync: temporary file opened without O_SYNC: %s", c.args)
				}
			case "odsync":
				if !strings.Contains(flags, "O_DSYNC") || strings.Contains(flags, "O_SYNC") {
					t.Errorf("--sync=odsync: temporary file not opened with O_DSYNC alone: %s", c.args)
				}
			default:
				if strings.Contains(flags, "O_SYNC") || strings.Contains(flags, "O_DSYNC") {
					t.Errorf("--sync=%s: temporary file opened with %s", mode, c.args)
				}
			}
			break
		}
	}
	if temp == "" {
		t.Fatal("no openat of a .fastcp- temporary file in the log")
	}
	// DEST's directory is opened once (O_DIRECTORY), before the temporary
	// file is created in it, relative to it (or to a duplicate of that
	// descriptor, which durability takes as its own handle).
	dirFd, dirOpen := "", -1
	for i, c := range calls[:openAt] {
		switch {
		case c.name == "openat" && strings.Contains(c.args, "O_DIRECTORY") && durFdPath(c.ret) == dstDir:
			dirFd, dirOpen = strings.SplitN(c.ret, "<", 2)[0], i
		case c.name == "fcntl" && dirOpen >= 0 && strings.HasPrefix(c.args, dirFd+"<") && strings.Contains(c.args, "F_DUPFD"):
			dirFd = strings.SplitN(c.ret, "<", 2)[0]
		}
	}
	if dirOpen < 0 || !strings.HasPrefix(calls[openAt].args, dirFd+"<") {
		t.Errorf("the temporary file was not created relative to DEST's directory, opened before (O_DIRECTORY): %s(%s)", calls[openAt].name, calls[openAt].args)
	}
	for _, c := range calls {
		if c.name == "fcntl" && strings.Contains(c.args, "F_SETFL") && (strings.Contains(c.args, "O_SYNC") || strings.Contains(c.args, "O_DSYNC")) {
			t.Errorf("fcntl F_SETFL carrying O_SYNC/O_DSYNC (Linux ignores it): fcntl(%s)", c.args)
		}
	}
	// An unnamed (O_TMPFILE) file gets its temporary name from linkat.
	tempName := filepath.Base(temp)
	if strings.HasPrefix(tempName, "#") {
		tempName = ""
		for _, c := range calls[openAt:] {
			if c.name == "linkat" && (strings.Contains(c.args, "AT_EMPTY_PATH") || strings.Contains(c.args, "/proc/self/fd/")) && c.ret == "0" {
				tempName = lastQuoted(c.args)
				break
			}
		}
		if !strings.HasPrefix(tempName, ".fastcp-") {
			t.Fatalf("the unnamed temporary file %s was not linked in under a temporary name (%q)", temp, tempName)
		}
	}
	// Calls on the temporary file, the rename, the directory.
	var flushes []durSyscall
	sfr := 0
	renameAt, dirSync := -1, -1
	for i, c := range calls[openAt:] {
		i += openAt
		p := durFdPath(c.args)
		switch {
		case (c.name == "fsync" || c.name == "fdatasync") && p == temp:
			flushes = append(flushes, c)
		case c.name == "sync_file_range" && p == temp:
			sfr++
		case strings.HasPrefix(c.name, "rename") && strings.Contains(c.args, tempName):
			renameAt = i
		case c.name == "fsync" && p == dstDir:
			dirSync = i
		}
		// No other directory is synced: not the source's, not a parent.
		dirArg := ""
		switch {
		case c.name == "fsync" || c.name == "fdatasync":
			dirArg = p
		case c.name == "openat" && strings.Contains(c.args, "O_DIRECTORY"):
			dirArg = durFdPath(c.ret)
		}
		if dirArg != "" && dirArg != dstDir && dirArg != temp {
			t.Errorf("synced or opened a directory other than DEST's: %s(%s) = %s", c.name, c.args, c.ret)
		}
	}
	if renameAt < 0 {
		t.Fatal("no rename of the temporary file")
	}
	if mode == "none" {
		if len(flushes) > 0 || sfr > 0 || dirSync >= 0 {
			t.Errorf("--sync=none: %d flushes, %d sync_file_range, directory fsync %v: want none",
				len(flushes), sfr, dirSync >= 0)
		}
		return
	}
	if len(flushes) == 0 {
		t.Fatalf("--sync=%s: no fdatasync/fsync of the temporary file", mode)
	}
	last := flushes[len(flushes)-1]
	if last.name != flush {
		t.Errorf("--sync=%s: the final flush is %s, want %s", mode, last.name, flush)
	}
	for _, c := range flushes {
		if c.ret != "0" {
			t.Errorf("%s returned %s", c.name, c.ret)
		}
		if c.end < 0 || c.end > calls[renameAt].start {
			t.Errorf("--sync=%s: %s of the file did not return before the rename", mode, c.name)
		}
	}
	if sfr == 0 && wantPipeline {
		t.Errorf("--sync=%s: no sync_file_range behind the copy", mode)
	}
	if dirSync < 0 {
		t.Fatalf("--sync=%s: DEST's directory %s not fsynced", mode, dstDir)
	}
	if !(renameAt < dirSync) {
		t.Errorf("--sync=%s: order rename (%d), fsync directory (%d)", mode, renameAt, dirSync)
	}
}

// TestSyncFlushErrorIsFinal injects EIO into the final flush, and into
// sync_file_range behind the copy: fastcp exits 1 naming the call, DEST
// keeps its old bytes, no temporary file is left, and the failed call is
// never made again (after a failed fsync the kernel may have dropped the
// pages). The unit tests cover a failed background fdatasync.
func TestSyncFlushErrorIsFinal(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, c := range []struct {
		name    string
		mode    string
		size    int
		syscall string
		args    string // extra strace inject spec
	}{
		{"data", "data", 1 << 20, "fdatasync", ""},
		{"full", "full", 1 << 20, "fsync", ""},
		{"osync", "osync", 1 << 20, "fsync", ""},
		{"odsync", "odsync", 1 << 20, "fdatasync", ""},
		// From the second sync_file_range on, every call fails: the
		// first failure ends the copy and is the last call.
		{"full-sync_file_range", "full", 96 << 20, "sync_file_range", ":when=2+"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := durExt4Dir(t)
			writeFile(t, join(dir, "src"), randomBytes(c.size, "flush-error"), 0o644)
			old := []byte("old DEST\n")
			inject := c.syscall + ":error=EIO" + c.args
			var r result
			var calls []durSyscall
			var raw string
			retryMissed(t, inject, func() (int, []durSyscall) {
				writeFile(t, join(dir, "dst"), old, 0o644)
				r, calls, raw = durRunStrace(t, dir,
					[]string{"-e", "trace=fsync,fdatasync,sync_file_range,rename,renameat,renameat2,copy_file_range,pwrite64,sendfile,splice",
						"-e", "inject=" + inject},
					nil, "--sync="+c.mode, "src", "dst")
				return r.code, calls
			})
			wantFailure(t, r, 1, "fastcp: "+c.syscall+" failed for 'dst': Input/output error\n")
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
			injected, flushesAfter, copiedAfter := 0, 0, 0
			for _, k := range calls {
				if strings.Contains(k.ret, "(INJECTED)") {
					injected++
					continue
				}
				if injected > 0 && (k.name == "copy_file_range" || k.name == "pwrite64" || k.name == "sendfile" || k.name == "splice") {
					copiedAfter++
				}
				if injected > 0 && (k.name == "fsync" || k.name == "fdatasync") {
					flushesAfter++
				}
				if strings.HasPrefix(k.name, "rename") {
					t.Errorf("renamed after the failure: %s(%s)", k.name, k.args)
				}
			}
			if injected != 1 || flushesAfter != 0 {
				t.Errorf("%d failed calls and %d flushes after the first: want exactly one failure and nothing after\n%s", injected, flushesAfter, raw)
			}
			if c.syscall == "sync_file_range" && copiedAfter != 0 {
				t.Errorf("the copy went on for %d data calls after the failed %s: a writeback error must end it", copiedAfter, c.syscall)
			}
		})
	}
}

// TestSyncFileRangeUnsupported: where sync_file_range is refused (EINVAL,
// ENOSYS) the pipeline stops quietly and the final flush does all the work.
func TestSyncFileRangeUnsupported(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, errno := range []string{"EINVAL", "ENOSYS", "ESPIPE"} {
		t.Run(errno, func(t *testing.T) {
			t.Parallel()
			dir := durExt4Dir(t)
			data := randomBytes(80<<20, "sfr-"+errno) // more than two writeback windows
			writeFile(t, join(dir, "src"), data, 0o644)
			r, calls, _ := durRunStrace(t, dir,
				[]string{"-e", "trace=sync_file_range,fdatasync", "-e", "inject=sync_file_range:error=" + errno},
				nil, "--sync=data", "src", "dst")
			wantSuccess(t, r)
			assertFileBytes(t, join(dir, "dst"), data)
			n := 0
			for _, c := range calls {
				if c.name == "sync_file_range" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d sync_file_range calls: after a refusal, none", n)
			}
		})
	}
}

// durFdFlags finds the descriptor of a running process that is open on a
// file whose name matches and returns its flags from /proc/PID/fdinfo.
func durFdFlags(pid int, match func(target string) bool) (int, string, bool) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return 0, "", false
	}
	for _, e := range ents {
		target, err := os.Readlink(join(fdDir, e.Name()))
		if err != nil || !match(target) {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				fl, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
				if err == nil {
					return int(fl), target, true
				}
			}
		}
	}
	return 0, "", false
}

// TestSyncOpenFlagsInFdinfo inspects a copy in progress: the source is a
// FIFO whose writer the test holds open, so fastcp waits mid-copy with the
// destination open, and /proc/PID/fdinfo shows the flags the destination
// was opened with: O_SYNC for --sync=osync, O_DSYNC for odsync, neither
// otherwise, for the temporary file and for --inplace.
func TestSyncOpenFlagsInFdinfo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode    string
		inplace bool
		want    int
	}{
		{"none", false, 0}, {"data", false, 0}, {"full", false, 0},
		{"osync", false, durOSync}, {"odsync", false, durODSync},
		{"osync", true, durOSync}, {"odsync", true, durODSync}, {"data", true, 0},
	} {
		name := c.mode
		if c.inplace {
			name += "-inplace"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, dst := join(dir, "src"), join(dir, "dst")
			if err := unix.Mkfifo(src, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.inplace {
				writeFile(t, dst, []byte("old DEST, longer than what comes\n"), 0o644)
			}
			data := randomBytes(10000, "fdinfo-"+name)
			hold := make(chan struct{})
			written := fifoWriter(src, data, hold)
			args := []string{"--sync=" + c.mode, "src", "dst"}
			if c.inplace {
				args = append([]string{"--inplace"}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			isDest := func(target string) bool {
				if c.inplace {
					return target == dst
				}
				return strings.HasPrefix(filepath.Base(target), ".fastcp-dst.") || unnamedRE.MatchString(target)
			}
			var flags int
			var target string
			found := false
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !found; time.Sleep(10 * time.Millisecond) {
				flags, target, found = durFdFlags(cmd.Process.Pid, isDest)
			}
			close(hold)
			werr := waitFIFOPeer(t, src, written)
			err := cmd.Wait()
			if !found {
				t.Fatalf("fastcp never had the destination open (stderr %q)", stderr.String())
			}
			if err != nil || werr != nil {
				t.Fatalf("fastcp: %v, writer: %v, stderr %q", err, werr, stderr.String())
			}
			if got := flags & durOSync; got != c.want {
				t.Errorf("%s opened with flags %#o: O_SYNC bits %#o, want %#o", target, flags, got, c.want)
			}
			if flags&unix.O_ACCMODE != unix.O_WRONLY {
				t.Errorf("%s flags %#o: not O_WRONLY", target, flags)
			}
			assertFileBytes(t, dst, data)
			assertNoTemps(t, dir)
		})
	}
}

// TestVerifyCatchesCorruption uses the test build's hook to flip one byte of
// the destination on the device right before --verify reads it back: the
// copy must fail with "checksums differ", exit 1, keep the old DEST and
// leave no temporary file. Without the hook the same copy verifies and
// succeeds. On btrfs the copy is a reflink (the blocks are shared: the
// flip makes the destination's extent its own, copy-on-write); on tmpfs
// the read-back cannot bypass memory.
func TestVerifyCatchesCorruption(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(9<<20+777, "verify")
	for _, kind := range []string{"ext4", "xfs", "btrfs", "tmpfs"} {
		for _, mode := range []string{"none", "data"} {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				t.Parallel()
				dir := fsDir(t, kind)
				writeFile(t, join(dir, "src"), data, 0o644)
				old := []byte("old DEST\n")
				writeFile(t, join(dir, "dst"), old, 0o644)

				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				cmd := fastcpCmd(ctx, dir, "--verify", "--sync="+mode, "src", "dst")
				cmd.Path = hookFastcp(t)
				cmd.Env = append(cmd.Env, durCorruptEnv+"="+strconv.Itoa(5<<20+3))
				r := runCmd(t, cmd)
				want := "fastcp: verify failed for 'dst': checksums differ in bytes 4194304-8388607: crc32c "
				if r.code != 1 || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
					t.Errorf("corrupted copy: want exit 1 and one line starting %q, got %v", want, r)
				}
				assertFileBytes(t, join(dir, "dst"), old)
				assertNoTemps(t, dir)

				wantSuccess(t, fastcp(t, dir, "--verify", "--sync="+mode, "src", "dst"))
				assertFileBytes(t, join(dir, "dst"), data)
				assertNoTemps(t, dir)
			})
		}
	}
}

// TestVerifyReadsPastTheCache checks, on ext4, how --verify reads the copy
// back from the device: after the temporary file's data was flushed, it is
// opened again read-only, its pages are dropped (POSIX_FADV_DONTNEED),
// mincore(2) confirms none is left, and only then is it read, all before
// the rename.
func TestVerifyReadsPastTheCache(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := fsDir(t, "ext4")
	data := randomBytes(5<<20, "verify-evict")
	writeFile(t, join(dir, "src"), data, 0o644)
	r, calls, raw := durRunStrace(t, dir, []string{"-e", "trace=openat,fdatasync,fadvise64,mincore,pread64,linkat,rename,renameat,renameat2"}, nil,
		"--verify", "src", "dst")
	wantSuccess(t, r)
	assertFileBytes(t, join(dir, "dst"), data)
	flushed, opened, dropped, checked, read, renamed := -1, -1, -1, -1, -1, -1
	readFd := ""
	for i, c := range calls {
		switch {
		case c.name == "fdatasync" && isTempArg(c.args, "dst"):
			flushed = i
		case c.name == "openat" && (isTempArg(c.args, "dst") || isTempArg(c.ret, "dst")) && strings.Contains(c.args, "O_RDONLY") && flushed >= 0 && opened < 0:
			opened, readFd = i, strings.SplitN(c.ret, "<", 2)[0]
		case c.name == "fadvise64" && readFd != "" && strings.HasPrefix(c.args, readFd+"<") && strings.Contains(c.args, "POSIX_FADV_DONTNEED") && dropped < 0:
			dropped = i
		case c.name == "mincore" && dropped >= 0 && checked < 0:
			checked = i
		case c.name == "pread64" && readFd != "" && strings.HasPrefix(c.args, readFd+"<") && read < 0:
			read = i
		case strings.HasPrefix(c.name, "rename"), c.name == "linkat" && strings.Contains(c.args, `"dst"`):
			// A new DEST is linked in under its own name.
			renamed = i
		}
	}
	if !(flushed >= 0 && flushed < opened && opened < dropped && dropped < checked && checked < read && read < renamed) {
		t.Errorf("want fdatasync (%d), open read-only (%d), POSIX_FADV_DONTNEED (%d), mincore (%d), pread64 (%d), rename or link (%d) in this order:\n%s",
			flushed, opened, dropped, checked, read, renamed, raw)
	}
}

// durCached reads Cached from /proc/meminfo, in bytes.
func durCached() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cached:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no Cached in /proc/meminfo")
}

// durResident counts the bytes of path in the page cache (mincore(2)).
func durResident(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal("mincore:", errno)
	}
	var n int64
	for _, v := range vec {
		if v&1 != 0 {
			n += int64(page)
		}
	}
	return n
}

// durBigFile writes size random bytes to path, durably, and evicts them
// from the page cache (POSIX_FADV_DONTNEED after the fsync), so the file
// starts cold as a file larger than RAM would.
func durBigFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.NewChaCha8([32]byte{'n', 'o', 'c', 'a', 'c', 'h', 'e'})
	buf := make([]byte, 8<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		r.Read(b)
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if off%(256<<20) == 0 {
			// Write back and drop as we go, so the test itself does
			// not fill the page cache.
			f.Sync()
			unix.Fadvise(int(f.Fd()), 0, off, unix.FADV_DONTNEED)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// durExt4Dir is a fresh directory on ext4 with room for files of some
// hundred MiB: the test's temporary directory when that is on ext4 (the
// root filesystem of the project's machines), else a directory on the
// package's 1 GiB loop-mounted ext4, which the parallel tests share.
func durExt4Dir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fs.Type == unix.EXT4_SUPER_MAGIC {
		return dir
	}
	return fsDir(t, "ext4")
}

// durBigDir is a directory on a disk filesystem with room for two copies of
// size bytes: the test's temporary directory unless that is tmpfs (whose
// pages are the files), else /var/tmp.
func durBigDir(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		d, err := os.MkdirTemp("/var/tmp", "fastcp-nocache-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
		if err := unix.Statfs(dir, &fs); err != nil {
			t.Fatal(err)
		}
	}
	if free := int64(fs.Bavail) * fs.Bsize; free < 2*size+(1<<30) {
		t.Skipf("%s has %d MiB free, the test needs %d", dir, free>>20, (2*size+(1<<30))>>20)
	}
	return dir
}

// TestNoCacheCachedGrowth copies 2 GiB from a cold source with --nocache
// and checks that the page cache it leaves is under 256 MiB: the page
// cache charged to a memory cgroup made for the copy (exact, whatever
// else runs; the cgroup's memory never peaked above that either), and, precisely for fastcp's own files with mincore(2), what
// is left of the source and the copy. Where no memory cgroup can be made,
// Cached in /proc/meminfo is measured before and after (the peak during
// the copy is logged); other processes move it too, so a measurement over
// the limit is repeated (up to three copies) before the test fails.
func TestNoCacheCachedGrowth(t *testing.T) {
	needRoot(t)
	const size = 2 << 30
	const limit = 256 << 20
	dir := durBigDir(t, size)
	src, dst := join(dir, "src"), join(dir, "dst")
	durBigFile(t, src, size)
	for _, args := range [][]string{{"--nocache"}, {"--nocache", "--sync=data"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if cg, err := newMemCgroup(t); err == nil {
				os.Remove(dst)
				r := cg.run(t, dir, append(args, "src", "dst")...)
				wantSuccess(t, r)
				cached, err := cg.cached()
				if err != nil {
					t.Fatal(err)
				}
				peak, err := cg.peak()
				if err != nil {
					t.Fatal(err)
				}
				own := durResident(t, src) + durResident(t, dst)
				t.Logf("%s: page cache charged to the copy's cgroup %d MiB after (memory peak %d MiB); source and copy still cached: %d MiB",
					strings.Join(args, " "), cached>>20, peak>>20, own>>20)
				if cached >= limit || own >= limit || peak >= limit {
					t.Errorf("the copy left %d MiB in the page cache (%d MiB of the source and the copy), its memory peaked at %d MiB, want each < %d",
						cached>>20, own>>20, peak>>20, limit>>20)
				}
				durSameSamples(t, src, dst, size)
				return
			} else {
				t.Logf("no memory cgroup (%v): measuring the machine's Cached", err)
			}
			var growths []string
			for attempt := 1; ; attempt++ {
				os.Remove(dst)
				unix.Sync()
				before, err := durCached()
				if err != nil {
					t.Fatal(err)
				}
				peak := before
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
							if c, err := durCached(); err == nil && c > peak {
								peak = c
							}
						}
					}
				}()
				start := time.Now()
				r := fastcp(t, dir, append(args, "src", "dst")...)
				took := time.Since(start)
				close(stop)
				wg.Wait()
				after, err := durCached()
				if err != nil {
					t.Fatal(err)
				}
				wantSuccess(t, r)
				own := durResident(t, src) + durResident(t, dst)
				growth := after - before
				growths = append(growths, fmt.Sprintf("%d MiB", growth>>20))
				t.Logf("attempt %d: %s in %v; Cached %+d MiB after (peak %+d MiB during); source and copy still cached: %d MiB",
					attempt, strings.Join(args, " "), took.Round(time.Millisecond), growth>>20, (peak-before)>>20, own>>20)
				if own >= limit {
					t.Fatalf("%d MiB of the source and the copy are still in the page cache, want < %d", own>>20, limit>>20)
				}
				if growth < limit {
					break
				}
				if attempt == 3 {
					t.Fatalf("Cached grew by %s over three copies, want < %d MiB", strings.Join(growths, ", "), limit>>20)
				}
			}
			if fi, err := os.Stat(dst); err != nil || fi.Size() != size {
				t.Fatalf("the copy: %v, %v", fi, err)
			}
			durSameSamples(t, src, dst, size)
		})
	}
}

// durPages is mincore's answer for path, one bool a page.
func durPages(t *testing.T, path string) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal("mincore:", errno)
	}
	in := make([]bool, len(vec))
	for i, v := range vec {
		in[i] = v&1 != 0
	}
	return in
}

// TestNoCacheLeavesCachedSource: --nocache drops what the copy brought
// into the page cache and nothing else: a source that was cached before
// the copy, whole or in part, is left as it was found, through every
// strategy that reads it (auto takes direct here, which reads past the
// cache). A page cached before and missing after may have been evicted by
// another process (the machine is shared), so only pages the copy added
// fail the test outright; a cached page lost is reported when the same
// copy loses it again.
func TestNoCacheLeavesCachedSource(t *testing.T) {
	const size = 32 << 20
	dir := durBigDir(t, size)
	src := join(dir, "src")
	durBigFile(t, src, size)
	warm := map[string]func(f *os.File){
		"whole":       func(f *os.File) { durRead(t, f, 0, size) },
		"first half":  func(f *os.File) { durRead(t, f, 0, size/2) },
		"odd MiBs":    func(f *os.File) { durOddMiBs(t, f, size) },
		"not at all":  func(*os.File) {},
		"third MiB":   func(f *os.File) { durRead(t, f, 2<<20, 1<<20) },
		"last page":   func(f *os.File) { durRead(t, f, size-4096, 4096) },
		"first pages": func(f *os.File) { durRead(t, f, 0, 64<<10) },
	}
	for _, name := range []string{"whole", "first half", "odd MiBs", "third MiB", "last page", "first pages", "not at all"} {
		for _, args := range [][]string{{"--nocache"}, {"--nocache", "--strategy=rw"}, {"--nocache", "--strategy=sendfile", "--sync=data"}, {"--nocache", "--verify"}} {
			t.Run(name+" "+strings.Join(args, " "), func(t *testing.T) {
				for attempt := 1; ; attempt++ {
					f, err := os.Open(src)
					if err != nil {
						t.Fatal(err)
					}
					if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
						t.Fatal(err)
					}
					warm[name](f)
					f.Close()
					before := durPages(t, src)
					os.Remove(join(dir, "dst"))
					wantSuccess(t, fastcp(t, dir, append(args, "src", "dst")...))
					after := durPages(t, src)
					var lost, added []int
					for i := range before {
						switch {
						case before[i] && !after[i]:
							lost = append(lost, i)
						case !before[i] && after[i]:
							added = append(added, i)
						}
					}
					if len(added) > 0 {
						t.Fatalf("the copy left %d pages of the source cached that were not before (pages %v...)", len(added), added[:min(len(added), 8)])
					}
					if len(lost) == 0 {
						break
					}
					t.Logf("attempt %d: %d pages cached before are not now (pages %v...)", attempt, len(lost), lost[:min(len(lost), 8)])
					if attempt == 3 {
						t.Fatalf("three copies dropped source pages that were cached before them")
					}
				}
				durSameSamples(t, src, join(dir, "dst"), size)
			})
		}
	}
}

// durRead reads [off, off+n) of f into the page cache, and nothing more
// (no readahead, which goes on after the read returns).
func durRead(t *testing.T, f *os.File, off, n int64) {
	t.Helper()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, n), off); err != nil {
		t.Fatal(err)
	}
}

// durOddMiBs reads every other MiB of f, from the second on.
func durOddMiBs(t *testing.T, f *os.File, size int64) {
	for off := int64(1 << 20); off < size; off += 2 << 20 {
		durRead(t, f, off, 1<<20)
	}
}

// durSameSamples compares 1 MiB at a few offsets of two large files with
// O_DIRECT reads, which leave the page cache alone.
func durSameSamples(t *testing.T, a, b string, size int64) {
	t.Helper()
	read := func(path string, off int64) []byte {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		raw := make([]byte, 2<<20)
		shift := (4096 - int(uintptr(unsafe.Pointer(&raw[0]))&4095)) & 4095
		buf := raw[shift : shift+1<<20]
		n, err := unix.Pread(fd, buf, off)
		if err != nil {
			t.Fatal(err)
		}
		return buf[:n]
	}
	for _, off := range []int64{0, 1 << 30, size - 1<<20} {
		if x, y := read(a, off), read(b, off); string(x) != string(y) {
			t.Fatalf("the copy differs from the source in the MiB at %d", off)
		}
	}
}

// TestInplaceKeepsInodeAndSyncs: --inplace with a --sync mode writes into
// DEST itself (same inode, its hard link sees the new bytes), flushes it,
// renames nothing, and fsyncs its directory; with --nocache too.
func TestInplaceKeepsInodeAndSyncs(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, args := range [][]string{{"--sync=data"}, {"--sync=full", "--nocache"}, {"--sync=osync"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			dir := fsDir(t, "ext4")
			data := randomBytes(12<<20, "inplace")
			writeFile(t, join(dir, "src"), data, 0o644)
			writeFile(t, join(dir, "dst"), randomBytes(20<<20, "inplace-old"), 0o640)
			if err := os.Link(join(dir, "dst"), join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			before := statT(t, join(dir, "dst"))
			r, calls, raw := durRunStrace(t, dir, []string{"-e", durTrace}, nil, append(append([]string{"--inplace"}, args...), "src", "dst")...)
			wantSuccess(t, r)
			after := statT(t, join(dir, "dst"))
			if after.Ino != before.Ino || after.Nlink != 2 || after.Mode != before.Mode {
				t.Errorf("inode %d -> %d, links %d, mode %o -> %o: --inplace keeps all three", before.Ino, after.Ino, after.Nlink, before.Mode, after.Mode)
			}
			assertFileBytes(t, join(dir, "link"), data)
			assertNoTemps(t, dir)
			flushed, dirSynced := false, false
			for _, c := range calls {
				p := durFdPath(c.args)
				switch {
				case strings.HasPrefix(c.name, "rename"):
					t.Errorf("--inplace renamed: %s(%s)", c.name, c.args)
				case (c.name == "fdatasync" || c.name == "fsync") && p == join(dir, "dst"):
					flushed = true
				case c.name == "fsync" && p == dir:
					dirSynced = true
				}
			}
			if !flushed || !dirSynced {
				t.Errorf("--inplace %s: file flushed %v, directory fsynced %v:\n%s", strings.Join(args, " "), flushed, dirSynced, raw)
			}
		})
	}
}

// TestDurabilityOnTmpfs: on tmpfs, which has no writeback (sync_file_range
// and fdatasync succeed doing nothing) and whose O_DIRECT reads memory,
// every durability option still works.
func TestDurabilityOnTmpfs(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := fsDir(t, "tmpfs")
	data := randomBytes(17<<20+5, "tmpfs")
	writeFile(t, join(dir, "src"), data, 0o644)
	for _, args := range [][]string{
		{"--sync=data", "--nocache"}, {"--sync=full", "--verify"}, {"--sync=osync"}, {"--sync=odsync", "--nocache", "--verify"}, {"--inplace", "--sync=data"},
	} {
		os.Remove(join(dir, "dst"))
		wantSuccess(t, fastcp(t, dir, append(args, "src", "dst")...))
		assertFileBytes(t, join(dir, "dst"), data)
		assertNoTemps(t, dir)
	}
}

// lastQuoted returns the last "quoted" string of an strace argument list.
func lastQuoted(args string) string {
	end := strings.LastIndexByte(args, '"')
	if end <= 0 {
		return ""
	}
	start := strings.LastIndexByte(args[:end], '"')
	if start < 0 {
		return ""
	}
	return args[start+1 : end]
}
