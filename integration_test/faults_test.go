// SPDX-License-Identifier: MIT

package integration_test

// Faults: system calls made to fail under strace -e inject, and
// real ones (a full tmpfs or ext4, ulimit -f, an immutable file, a swap
// file in use, /dev/full, a directory the user cannot write). Every case
// checks the exit status, the message, and that no temporary file is left
// and an existing DEST is byte for byte what it was.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// staticBin is fastcp built with CGO_ENABLED=0, once, for the injection
// tests. The package's binary is dynamically linked (pflag pulls in net),
// and strace counts when= per thread and injects into every matching call:
// the dynamic loader's own pread64 and close calls would be counted and
// hit, and the loader does not survive a failing close.
var staticBin struct {
	once sync.Once
	path string
	err  error
}

func staticFastcp(t testing.TB) string {
	t.Helper()
	staticBin.once.Do(func() {
		dir := join(setup.Root, "static")
		if staticBin.err = os.MkdirAll(dir, 0o755); staticBin.err != nil {
			return
		}
		// Named fastcp, so that its messages start with "fastcp:".
		staticBin.path = join(dir, "fastcp")
		staticBin.err = build(staticBin.path, "CGO_ENABLED=0")
	})
	if staticBin.err != nil {
		t.Fatalf("building a static fastcp: %v", staticBin.err)
	}
	return staticBin.path
}

// traced is one run of the static fastcp under strace.
type traced struct {
	result
	signal syscall.Signal // the signal fastcp died of, 0 if it exited
	calls  []durSyscall
	log    string
}

// faultStrace runs the static fastcp under strace -f -y -qq with
// straceArgs, in dir. strace's own complaints are dropped from stderr.
func faultStrace(t *testing.T, dir string, straceArgs []string, args ...string) traced {
	t.Helper()
	return faultStraceLog(t, dir, join(t.TempDir(), "strace.log"), straceArgs, args...)
}

// faultStraceLog is faultStrace with strace's log written to log, which the
// caller may watch while fastcp runs. It may run in another goroutine than
// the test's once faultReady was called.
func faultStraceLog(t *testing.T, dir, log string, straceArgs []string, args ...string) traced {
	strace, bin := faultReady(t)
	argv := append([]string{"-f", "-y", "-qq", "-o", log}, straceArgs...)
	argv = append(append(argv, bin), args...)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, argv...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	tr := traced{result: result{stdout: stdout.String(), stderr: dropStraceLines(stderr.String())}}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		tr.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// strace ends itself with the signal its tracee died of.
			tr.signal = ws.Signal()
			tr.code = 128 + int(ws.Signal())
		}
	default:
		t.Errorf("running strace: %v", err)
	}
	raw, _ := os.ReadFile(log)
	tr.log = string(raw)
	tr.calls = durParseStrace(t, log)
	return tr
}

// faultReady returns strace's path and the static fastcp, or ends the test
// (skips without strace, except under CI=true).
func faultReady(t *testing.T) (strace, bin string) {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("strace is not installed, and CI=true forbids skipping")
		}
		t.Skip("strace is not installed")
	}
	return strace, staticFastcp(t)
}

// straceLineRE is one of strace's own messages ("/usr/bin/strace: ...").
var straceLineRE = regexp.MustCompile(`^\S*strace: `)

// dropStraceLines removes strace's own messages from s.
func dropStraceLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !straceLineRE.MatchString(l) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// injected returns the index of the first call strace made fail with
// errno (any result when errno is ""), or -1.
func (tr traced) injected(errno string) int {
	for i, c := range tr.calls {
		if strings.Contains(c.ret, "(INJECTED)") && strings.Contains(c.ret, errno) {
			return i
		}
	}
	return -1
}

// dataCalls are the calls that move a file's bytes.
var dataCalls = map[string]bool{
	"copy_file_range": true, "sendfile": true, "splice": true, "ioctl": true,
	"pread64": true, "pwrite64": true, "read": true, "write": true,
}

// wantNothingAfter fails the test if any call moving bytes of a file under
// dir follows the injected failure: no other strategy took over.
func wantNothingAfter(t testing.TB, tr traced, dir string) {
	t.Helper()
	i := tr.injected("EIO")
	if i < 0 {
		t.Fatalf("strace injected nothing:\n%s", tr.log)
	}
	for _, c := range tr.calls[i+1:] {
		if dataCalls[c.name] && strings.Contains(c.args, dir) {
			t.Errorf("after the injected %s, fastcp went on with %s(%s) = %s", tr.calls[i].name, c.name, c.args, c.ret)
		}
	}
}

// wantOneErrorLine checks exit 1 and one stderr line "fastcp: ..." that
// contains every one of parts (stdout is not checked: --debug).
func wantOneErrorLine(t testing.TB, r result, parts ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit %d, want 1; stderr %q", r.code, r.stderr)
	}
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

// threeExtents writes a 3 MiB sparse file with 64 KiB of data at 0, 1 MiB
// and 2 MiB: every strategy makes at least one call per extent, so a
// failure on the second call comes after bytes were copied.
func threeExtents(t testing.TB, path string) []byte {
	t.Helper()
	spans := []span{
		{0, randomBytes(64<<10, path+"/0")},
		{1 << 20, randomBytes(64<<10, path+"/1")},
		{2 << 20, randomBytes(64<<10, path+"/2")},
	}
	writeSparse(t, path, 3<<20-4096, spans)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInjectedEIOIsNotHidden fails one data call part-way with EIO, for
// every call fastcp moves bytes with: exit 1, Input/output error naming
// the file, the old DEST intact, no temporary file, and no other strategy
// taking over (the strace log shows no data call after the failure;
// --debug names the strategy that failed and no fallback from it).
// Refusals injected before (EINVAL, EXDEV) steer auto to the strategy
// under test.
func TestInjectedEIOIsNotHidden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		inject   []string // strace -e inject= specs
		args     []string
		strategy string // what --debug must name
		fifo     string // "src" or "dst": that side is a FIFO, traced alone (-P)
		// srcOnly traces the source's calls alone (-P): the Go runtime
		// reads its cgroup's CPU quota with pread64 too, on any thread,
		// and one of those must not be the call that fails.
		srcOnly bool
		sparse  bool
		parts   []string
	}{
		{name: "pread64", inject: []string{"ioctl,copy_file_range,sendfile,splice:error=EINVAL", "pread64:error=EIO:when=3"},
			args: []string{"--buffer-size=64K"}, strategy: "rw", parts: []string{"error reading 'src': Input/output error"}, srcOnly: true},
		{name: "pwrite64", inject: []string{"ioctl,copy_file_range,sendfile,splice:error=EINVAL", "pwrite64:error=EIO:when=3"},
			args: []string{"--buffer-size=64K"}, strategy: "rw", parts: []string{"error writing 'dst': Input/output error"}},
		{name: "copy_file_range", inject: []string{"copy_file_range:error=EIO:when=2"}, sparse: true,
			strategy: "copy_file_range", parts: []string{"error copying 'src' to 'dst': Input/output error"}},
		{name: "sendfile", inject: []string{"copy_file_range:error=EXDEV", "sendfile:error=EIO:when=2"}, sparse: true,
			strategy: "sendfile", parts: []string{"error copying 'src' to 'dst': Input/output error"}},
		{name: "splice", inject: []string{"copy_file_range,sendfile:error=EINVAL", "splice:error=EIO:when=3"}, sparse: true,
			strategy: "splice", parts: []string{"Input/output error"}},
		{name: "read", inject: []string{"splice:error=EINVAL", "read:error=EIO:when=3"}, fifo: "src",
			args: []string{"--buffer-size=64K"}, strategy: "rw", parts: []string{"error reading 'src': Input/output error"}},
		{name: "write", inject: []string{"sendfile,splice:error=EINVAL", "write:error=EIO:when=3"}, fifo: "dst",
			args: []string{"--buffer-size=64K"}, strategy: "rw", parts: []string{"error writing 'dst': Input/output error"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			old := randomBytes(5000, "old")
			target := c.inject[len(c.inject)-1]
			var dir, src, dst string
			var tr traced
			retryMissed(t, target, func() (int, []durSyscall) {
				dir = t.TempDir()
				src, dst = join(dir, "src"), join(dir, "dst")
				var straceArgs []string
				var wrote <-chan error
				var readWait func() fifoRead
				switch c.fifo {
				case "src", "dst":
					straceArgs, wrote, readWait = fifoSide(t, c.fifo, src, dst, randomBytes(1<<20, c.fifo))
					if c.fifo == "src" {
						writeFile(t, dst, old, 0o644)
					}
				default:
					if c.sparse {
						threeExtents(t, src)
					} else {
						writeFile(t, src, randomBytes(2<<20, "src"), 0o644)
					}
					writeFile(t, dst, old, 0o644)
					straceArgs = []string{"-e", "trace=ioctl,copy_file_range,sendfile,splice,pread64,pwrite64,read,write"}
					if c.srcOnly {
						straceArgs = append(straceArgs, "-P", src)
					}
				}
				for _, spec := range c.inject {
					straceArgs = append(straceArgs, "-e", "inject="+spec)
				}
				tr = faultStrace(t, dir, straceArgs, append(append([]string{"--debug"}, c.args...), "src", "dst")...)
				switch c.fifo {
				case "src":
					waitFIFOPeer(t, src, wrote)
				case "dst":
					readWait()
				}
				return tr.code, tr.calls
			})
			res := tr.result
			if c.fifo == "dst" {
				// A FIFO DEST written in part is named as such.
				partial := "fastcp: 'dst' was written in place and is now incomplete\n"
				if !strings.HasSuffix(res.stderr, partial) {
					t.Errorf("stderr %q does not end with %q", res.stderr, partial)
				}
				res.stderr = strings.TrimSuffix(res.stderr, partial)
			}
			wantOneErrorLine(t, res, c.parts...)
			d := parseDebug(t, tr.stdout, "src", "dst")
			if d.strategy != c.strategy {
				t.Errorf("--debug names strategy %s, want %s, which failed", d.strategy, c.strategy)
			}
			for _, f := range d.fallbacks {
				if strings.Contains(f, "EIO") || strings.HasPrefix(f, "fallback: "+c.strategy+" ") {
					t.Errorf("a fallback hid the failure: %s", f)
				}
			}
			if c.fifo == "" {
				wantNothingAfter(t, tr, dir)
			} else if i := tr.injected("EIO"); i < 0 {
				t.Fatalf("strace injected nothing:\n%s", tr.log)
			} else {
				for _, k := range tr.calls[i+1:] {
					if dataCalls[k.name] {
						t.Errorf("after the injected %s: %s(%s) = %s", tr.calls[i].name, k.name, k.args, k.ret)
					}
				}
			}
			if c.fifo != "dst" {
				assertFileBytes(t, dst, old)
			}
			assertNoTemps(t, dir)
			if t.Failed() {
				t.Logf("strace log:\n%s", tr.log)
			}
		})
	}
}

// offloadCalls are the calls of the offload strategies, in auto's order,
// with the strategy that takes over when each one is refused.
var offloadCalls = []struct{ call, next string }{
	{"ioctl", "copy_file_range"}, {"copy_file_range", "sendfile"}, {"sendfile", "splice"}, {"splice", "rw"},
}

// refusalErrnos are the errnos that mean "not here" for an offload call.
var refusalErrnos = []string{"ENOSYS", "EXDEV", "EINVAL", "EOPNOTSUPP", "EPERM"}

// TestInjectedRefusalsFallBack refuses the offload calls before any byte,
// one more at a time, with every errno that means "not here": on btrfs,
// where every strategy works, the injected refusal is the only reason to
// fall back. The copy is exact, --debug shows the chain of fallbacks from
// reflink to the strategy that did it, each naming the errno, and a forced
// strategy refused the same way is an error that leaves DEST as it was.
func TestInjectedRefusalsFallBack(t *testing.T) {
	t.Parallel()
	base := fsDir(t, "btrfs")
	data := randomBytes(3<<20+77, "refusals")
	writeFile(t, join(base, "src"), data, 0o644)
	for _, errno := range refusalErrnos {
		for depth := 1; depth <= len(offloadCalls); depth++ {
			var set []string
			for _, o := range offloadCalls[:depth] {
				set = append(set, o.call)
			}
			want := offloadCalls[depth-1].next
			t.Run(fmt.Sprintf("%s/%s", errno, strings.Join(set, "+")), func(t *testing.T) {
				t.Parallel()
				dir := mustMkdir(t, join(base, safeName(t.Name())))
				spec := strings.Join(set, ",")
				tr := faultStrace(t, dir, []string{"-e", "trace=" + spec, "-e", "inject=" + spec + ":error=" + errno},
					"--debug", "../src", "dst")
				if tr.code != 0 || tr.stderr != "" {
					t.Fatalf("exit %d, stderr %q", tr.code, tr.stderr)
				}
				assertFileBytes(t, join(dir, "dst"), data)
				assertNoTemps(t, dir)
				d := parseDebug(t, tr.stdout, "../src", "dst")
				if d.strategy != want {
					t.Errorf("strategy %s, want %s", d.strategy, want)
				}
				if len(d.fallbacks) != depth {
					t.Fatalf("%d fallback lines, want %d:\n%s", len(d.fallbacks), depth, tr.stdout)
				}
				from := "reflink"
				for i, f := range d.fallbacks {
					to := offloadCalls[i].next
					prefix := fmt.Sprintf("fallback: %s -> %s at offset 0: ", from, to)
					if !strings.HasPrefix(f, prefix) || !strings.Contains(f, ": "+errno+" (") {
						t.Errorf("fallback line %q, want %q...%s", f, prefix, errno)
					}
					from = to
				}
			})
		}
	}
	for i, s := range []string{"reflink", "copy_file_range", "sendfile", "splice"} {
		errno := refusalErrnos[i%len(refusalErrnos)]
		call := offloadCalls[i].call
		t.Run("forced/"+s+"/"+errno, func(t *testing.T) {
			t.Parallel()
			dir := mustMkdir(t, join(base, safeName(t.Name())))
			old := randomBytes(3000, "old")
			writeFile(t, join(dir, "dst"), old, 0o644)
			tr := faultStrace(t, dir, []string{"-e", "trace=" + call, "-e", "inject=" + call + ":error=" + errno},
				"--strategy="+s, "../src", "dst")
			name := map[string]string{"reflink": "ioctl(FICLONE)"}[s]
			if name == "" {
				name = s
			}
			text := map[string]string{"ENOSYS": "Function not implemented", "EXDEV": "Invalid cross-device link",
				"EINVAL": "Invalid argument", "EOPNOTSUPP": "Operation not supported", "EPERM": "Operation not permitted"}[errno]
			wantFailure(t, tr.result, 1, fmt.Sprintf("fastcp: cannot copy '../src' to 'dst' with --strategy=%s: %s: %s (%s)\n", s, name, errno, text))
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
		})
	}
}

// TestInjectedZeroReturn makes copy_file_range return 0 instead of
// copying: on its first call auto falls back to sendfile at offset 0; after
// it copied the first extent, 0 is not taken for the end of the file and
// sendfile goes on from there; a forced copy_file_range is refused and
// DEST left as it was.
func TestInjectedZeroReturn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		when     string
		forced   bool
		fallback string // the expected fallback line's start and end
		reason   string
	}{
		{name: "first-call", when: "1", fallback: "fallback: copy_file_range -> sendfile at offset 0: ",
			reason: "copy_file_range: returned 0 on its first call"},
		// strace counts calls per thread: the second call of the thread
		// that made two, at 1 MiB or at 2 MiB; the fallback's offset is
		// that call's, taken from the log.
		{name: "after-progress", when: "2",
			reason: "copy_file_range: returned 0 before the end of the file"},
		{name: "forced", when: "1", forced: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := threeExtents(t, join(dir, "src"))
			old := randomBytes(3000, "old")
			args := []string{"--debug", "src", "dst"}
			if c.forced {
				args = []string{"--strategy=copy_file_range", "src", "dst"}
			}
			inject := "copy_file_range:retval=0:when=" + c.when
			var tr traced
			retryMissed(t, inject, func() (int, []durSyscall) {
				writeFile(t, join(dir, "dst"), old, 0o644)
				tr = faultStrace(t, dir, []string{"-e", "trace=copy_file_range", "-e", "inject=" + inject}, args...)
				return tr.code, tr.calls
			})
			i := tr.injected("")
			if i < 0 {
				t.Fatalf("nothing injected:\n%s", tr.log)
			}
			if c.forced {
				wantFailure(t, tr.result, 1, "fastcp: cannot copy 'src' to 'dst' with --strategy=copy_file_range: copy_file_range: returned 0 on its first call\n")
				assertFileBytes(t, join(dir, "dst"), old)
				assertNoTemps(t, dir)
				return
			}
			if tr.code != 0 || tr.stderr != "" {
				t.Fatalf("exit %d, stderr %q", tr.code, tr.stderr)
			}
			assertFileBytes(t, join(dir, "dst"), data)
			assertNoTemps(t, dir)
			fallback := c.fallback
			if fallback == "" {
				// copy_file_range(6</dir/src>, [OFFSET], 7</dir/...>, [OFFSET], ...)
				_, rest, _ := strings.Cut(tr.calls[i].args, "[")
				off, _, _ := strings.Cut(rest, "]")
				if n, err := strconv.ParseInt(off, 10, 64); err != nil || n != 1<<20 && n != 2<<20 {
					t.Fatalf("the injected call is not at the second or third extent: %s(%s)", tr.calls[i].name, tr.calls[i].args)
				}
				fallback = "fallback: copy_file_range -> sendfile at offset " + off + ": "
			}
			d := parseDebug(t, tr.stdout, "src", "dst")
			found := false
			for _, f := range d.fallbacks {
				found = found || strings.HasPrefix(f, fallback) && strings.HasSuffix(f, c.reason)
			}
			if !found || d.strategy != "sendfile" {
				t.Errorf("want strategy sendfile and a line %q...%q, got:\n%s", fallback, c.reason, tr.stdout)
			}
		})
	}
}

// fifoSide makes src (side "src") a FIFO that data is written into, or dst
// (side "dst") a FIFO with a reader waiting and src a file of data. It
// returns strace's -P for the FIFO, and the writer's result or the
// reader's wait.
func fifoSide(t *testing.T, side, src, dst string, data []byte) (straceArgs []string, wrote <-chan error, readWait func() fifoRead) {
	t.Helper()
	if side == "src" {
		mkfifo(t, src)
		return []string{"-P", src}, fifoWriter(src, data, nil), nil
	}
	writeFile(t, src, data, 0o644)
	mkfifo(t, dst)
	_, readWait = fifoReader(t, dst)
	return []string{"-P", dst}, nil, readWait
}

// TestInjectedEINTRIsRetried interrupts the first calls of each kind with
// EINTR (strace's error=EINTR: the call does nothing and says so): fastcp
// calls again and the copy is exact and silent. read and write are those of
// the rw loop on a FIFO source and DEST.
func TestInjectedEINTRIsRetried(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		args   []string
		inject []string
		fifo   string
	}{
		{name: "copy_file_range", inject: []string{"copy_file_range:error=EINTR:when=1..3"}},
		{name: "ioctl", inject: []string{"ioctl:error=EINTR:when=1..3"}},
		{name: "sendfile", args: []string{"--strategy=sendfile"}, inject: []string{"sendfile:error=EINTR:when=1..3"}},
		{name: "splice", args: []string{"--strategy=splice"}, inject: []string{"splice:error=EINTR:when=1..5"}},
		{name: "pread64+pwrite64", args: []string{"--strategy=rw", "--buffer-size=64K"}, inject: []string{"pread64,pwrite64:error=EINTR:when=1..9+2"}},
		{name: "fsync", args: []string{"--sync=full"}, inject: []string{"fsync:error=EINTR:when=1..2"}},
		{name: "fdatasync", args: []string{"--sync=data"}, inject: []string{"fdatasync:error=EINTR:when=1..2"}},
		{name: "read", args: []string{"--buffer-size=64K"}, inject: []string{"splice:error=EINVAL", "read:error=EINTR:when=1..9+2"}, fifo: "src"},
		{name: "write", args: []string{"--buffer-size=64K"}, inject: []string{"sendfile,splice:error=EINVAL", "write:error=EINTR:when=1..9+2"}, fifo: "dst"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, dst := join(dir, "src"), join(dir, "dst")
			data := randomBytes(1<<20+3, "eintr")
			var straceArgs []string
			var wrote <-chan error
			var readWait func() fifoRead
			switch c.fifo {
			case "src", "dst":
				straceArgs, wrote, readWait = fifoSide(t, c.fifo, src, dst, data)
			default:
				writeFile(t, src, data, 0o644)
				writeFile(t, dst, []byte("old"), 0o644)
				var set []string
				for _, spec := range c.inject {
					set = append(set, spec[:strings.Index(spec, ":")])
				}
				straceArgs = []string{"-e", "trace=" + strings.Join(set, ",")}
			}
			for _, spec := range c.inject {
				straceArgs = append(straceArgs, "-e", "inject="+spec)
			}
			tr := faultStrace(t, dir, straceArgs, append(c.args, "src", "dst")...)
			if !strings.Contains(tr.log, "EINTR") {
				t.Errorf("no EINTR injected:\n%s", tr.log)
			}
			wantSuccess(t, tr.result)
			switch c.fifo {
			case "src":
				if err := waitFIFOPeer(t, src, wrote); err != nil {
					t.Error(err)
				}
				assertFileBytes(t, dst, data)
			case "dst":
				if got := readWait(); !bytes.Equal(got.data, data) {
					t.Errorf("the FIFO's reader got %d bytes, want the %d of the source (first difference at %d)",
						len(got.data), len(data), firstDiff(got.data, data))
				}
			default:
				assertFileBytes(t, dst, data)
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestInjectedCloseEIO fails close(2) (NFS and some FUSE filesystems report
// write errors there): exit 1, cp's message, nothing renamed, DEST as it
// was, no temporary file. Every close fails, which the runtime and the
// other descriptors shrug off; the temporary file's is the one that counts.
func TestInjectedCloseEIO(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"none", "data", "full"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, join(dir, "src"), randomBytes(1<<20, "close"), 0o644)
			old := randomBytes(4000, "old")
			writeFile(t, join(dir, "dst"), old, 0o644)
			tr := faultStrace(t, dir, []string{"-e", "trace=close,rename,renameat,renameat2", "-e", "inject=close:error=EIO"},
				"--sync="+mode, "src", "dst")
			wantFailure(t, tr.result, 1, "fastcp: failed to close 'dst': Input/output error\n")
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
			hit := false
			for _, c := range tr.calls {
				hit = hit || c.name == "close" && isTempArg(c.args, "dst") && strings.Contains(c.ret, "(INJECTED)")
				if strings.HasPrefix(c.name, "rename") {
					t.Errorf("renamed after the failed close: %s(%s)", c.name, c.args)
				}
			}
			if !hit {
				t.Errorf("the temporary file's close was not failed:\n%s", tr.log)
			}
		})
	}
}

// TestInjectedDirFsyncEIO fails the fsync of DEST's directory with EIO,
// the last step of a --sync copy, after the rename (or, for a new DEST,
// the link under its name): DEST already is the new copy, and the message
// says exactly that, and that its name may not survive a power cut; exit
// 1, nothing undone (a -b backup keeps the old DEST), no temporary file.
func TestInjectedDirFsyncEIO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"new", []string{"--sync=data"}},
		{"existing", []string{"--sync=data"}},
		{"existing-full", []string{"--sync=full"}},
		{"backup", []string{"--sync=data", "-b"}},
		{"resume", []string{"--sync=data", "--resume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := randomBytes(1<<20, "dirsync")
			writeFile(t, join(dir, "src"), data, 0o644)
			old := randomBytes(4000, "old")
			if tc.name != "new" {
				writeFile(t, join(dir, "dst"), old, 0o644)
			}
			// -P: the fsync calls on DEST's directory alone.
			tr := faultStrace(t, dir, []string{"-e", "trace=fsync", "-e", "inject=fsync:error=EIO:when=1", "-P", dir},
				append(tc.args, "src", "dst")...)
			if tr.injected("EIO") < 0 {
				t.Fatalf("strace injected nothing:\n%s", tr.log)
			}
			wantFailure(t, tr.result, 1, "fastcp: fsync failed for the directory of 'dst': Input/output error; "+
				"'dst' is the new copy, but its name may not survive a power cut\n")
			assertFileBytes(t, join(dir, "dst"), data)
			if tc.name == "backup" {
				assertFileBytes(t, join(dir, "dst~"), old)
			}
			assertNoTemps(t, dir)
		})
	}
}

// freeBytesOf is statfs's available bytes of the filesystem holding dir,
// after a syncfs: ext4 counts the blocks of a removed file as free only
// once the journal has committed.
func freeBytesOf(t testing.TB, dir string) int64 {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		t.Fatal(err)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Bavail) * fs.Bsize
}

// TestENOSPCEveryStrategy fills a small tmpfs and a small loop-mounted ext4
// with a copy, every strategy forced, the source on the same filesystem (so
// copy_file_range works there too): exit 1, No space left on device naming
// DEST, DEST as it was, no temporary file, and the space given back.
func TestENOSPCEveryStrategy(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, c := range []struct {
		kind string
		size int64
	}{{"tmpfs", 12 << 20}, {"ext4", 16 << 20}} {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			needMount(t)
			if c.kind != "tmpfs" {
				needLoop(t)
			}
			small, err := fsfixture.Mount(t.TempDir(), c.kind, c.size)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { small.Unmount() })
			old := randomBytes(64<<10, "old")
			writeFile(t, join(small.Dir, "dst"), old, 0o644)
			writeFile(t, join(small.Dir, "src"), randomBytes(int(freeBytesOf(t, small.Dir)*6/10), "big"), 0o644)
			free := freeBytesOf(t, small.Dir)
			// One after the other: they share the filesystem.
			for _, s := range []string{"auto", "copy_file_range", "direct", "sendfile", "splice", "rw"} {
				t.Run(s, func(t *testing.T) {
					r := fastcp(t, small.Dir, "--strategy="+s, "src", "dst")
					wantOneLineError(t, r, "'dst'", "No space left on device")
					assertFileBytes(t, join(small.Dir, "dst"), old)
					assertNoTemps(t, small.Dir)
					if now := freeBytesOf(t, small.Dir); now < free-(1<<20) {
						t.Errorf("%d bytes free after the failed copy, %d before", now, free)
					}
				})
			}
		})
	}
}

// TestEFBIGUnderUlimit copies a 3 MiB file under ulimit -f 1024 (512 KiB
// in dash's 512-byte blocks): Go ignores SIGXFSZ, so every strategy's call
// fails with EFBIG: exit 1, File too large, DEST as it was.
func TestEFBIGUnderUlimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "src"), randomBytes(3<<20, "efbig"), 0o644)
	old := randomBytes(100, "old")
	for _, s := range []string{"auto", "copy_file_range", "sendfile", "splice", "rw"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			d := mustMkdir(t, join(dir, s))
			writeFile(t, join(d, "dst"), old, 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `ulimit -f 1024 && exec "$@"`, "sh", setup.Bin, "--strategy="+s, "../src", "dst")
			cmd.Dir = d
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			r := runCmd(t, cmd)
			wantOneLineError(t, r, "'dst'", "File too large")
			assertFileBytes(t, join(d, "dst"), old)
			assertNoTemps(t, d)
		})
	}
}

// chattr sets or clears an inode flag (+i, -a) and undoes it at cleanup.
func chattr(t testing.TB, flag, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", flag, path).CombinedOutput(); err != nil {
		t.Fatalf("chattr %s %s: %v: %s", flag, path, err, out)
	}
	undo := "-" + flag[1:]
	t.Cleanup(func() { exec.Command("chattr", undo, path).Run() })
}

// TestImmutableDest: an immutable DEST is refused before anything is
// copied (--debug prints nothing about a copy), in cp's words, with -f too;
// an append-only DEST cannot be replaced; an immutable directory gets no
// temporary file. Everything stays as it was.
func TestImmutableDest(t *testing.T) {
	t.Parallel()
	base := fsDir(t, "ext4")
	writeFile(t, join(base, "src"), randomBytes(1<<20, "src"), 0o644)
	old := []byte("old DEST\n")
	for _, c := range []struct {
		name, flag string
		args       []string
		onDir      bool
		stderr     string // exact, "" for the parts
		parts      []string
		cp         bool // GNU cp says the same
	}{
		{name: "immutable", flag: "+i", stderr: "fastcp: cannot create regular file 'dst': Operation not permitted\n", cp: true},
		{name: "immutable-f", flag: "+i", args: []string{"-f"}, stderr: "fastcp: cannot remove 'dst': Operation not permitted\n", cp: true},
		{name: "immutable-inplace", flag: "+i", args: []string{"--inplace"}, stderr: "fastcp: cannot create regular file 'dst': Operation not permitted\n"},
		{name: "append-only", flag: "+a", parts: []string{"'dst'", "Operation not permitted"}},
		{name: "immutable-dir", flag: "+i", onDir: true, parts: []string{"'dst'", "Operation not permitted", "--inplace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := mustMkdir(t, join(base, c.name))
			dst := join(dir, "dst")
			writeFile(t, dst, old, 0o644)
			if c.onDir {
				chattr(t, c.flag, dir)
			} else {
				chattr(t, c.flag, dst)
			}
			r := fastcp(t, dir, append(append([]string{"--debug"}, c.args...), "../src", "dst")...)
			if strings.Contains(r.stdout, "copy offload:") && c.name != "append-only" {
				t.Errorf("the copy was made before the refusal:\n%s", r.stdout)
			}
			r.stdout = ""
			if c.stderr != "" {
				wantFailure(t, r, 1, c.stderr)
			} else {
				wantOneLineError(t, r, c.parts...)
			}
			assertFileBytes(t, dst, old)
			assertNoTemps(t, dir)
			if c.cp {
				cmd := exec.Command("cp", append(c.args, "../src", "dst")...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				out, _ := cmd.CombinedOutput()
				if want := strings.Replace(c.stderr, "fastcp: ", "cp: ", 1); string(out) != want {
					t.Errorf("GNU cp says %q, fastcp %q", out, c.stderr)
				}
			}
		})
	}
}

// TestSwapFileDest: a swap file in use cannot be written or replaced. The
// copy fails at once with cp's words (not after writing a whole temporary
// file that the rename then cannot put in place) and the swap file is
// untouched.
func TestSwapFileDest(t *testing.T) {
	t.Parallel()
	dir := fsDir(t, "ext4")
	swap := join(dir, "swap")
	writeFile(t, join(dir, "src"), randomBytes(1<<20, "src"), 0o644)
	writeFile(t, swap, make([]byte, 16<<20), 0o600)
	if out, err := exec.Command("mkswap", swap).CombinedOutput(); err != nil {
		t.Fatalf("mkswap: %v: %s", err, out)
	}
	if out, err := exec.Command("swapon", swap).CombinedOutput(); err != nil {
		t.Fatalf("swapon: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("swapoff", swap).Run() })
	// The swap file's header page and inode: the kernel may page out
	// into the rest of it while the test runs.
	header := func() []byte {
		f, err := os.Open(swap)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 4096)
		if _, err := f.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		return b
	}
	before, ino := header(), statT(t, swap).Ino
	for _, args := range [][]string{nil, {"-f"}, {"--inplace"}, {"--sync=full"}} {
		r := fastcp(t, dir, append(args, "src", "swap")...)
		wantFailure(t, r, 1, "fastcp: cannot create regular file 'swap': Text file busy\n")
	}
	cmd := exec.Command("cp", "src", "swap")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, _ := cmd.CombinedOutput(); string(out) != "cp: cannot create regular file 'swap': Text file busy\n" {
		t.Errorf("GNU cp says %q", out)
	}
	if !bytes.Equal(header(), before) || statT(t, swap).Ino != ino || statT(t, swap).Size != 16<<20 {
		t.Error("the swap file was written or replaced")
	}
	assertNoTemps(t, dir)
}

// TestDevFullDest: /dev/full takes nothing; every strategy that can write
// to a character device reports ENOSPC as cp does.
func TestDevFullDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "src"), randomBytes(300<<10, "src"), 0o644)
	for _, args := range [][]string{nil, {"--strategy=rw"}, {"--sync=data"}, {"-v"}} {
		r := fastcp(t, dir, append(args, "src", "/dev/full")...)
		if len(args) > 0 && args[0] == "-v" {
			if r.stdout != "'src' -> '/dev/full'\n" {
				t.Errorf("-v: stdout %q", r.stdout)
			}
			r.stdout = ""
		}
		wantFailure(t, r, 1, "fastcp: error writing '/dev/full': No space left on device\n")
	}
	cmd := exec.Command("cp", "src", "/dev/full")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, _ := cmd.CombinedOutput(); string(out) != "cp: error writing '/dev/full': No space left on device\n" {
		t.Errorf("GNU cp says %q", out)
	}
	assertNoTemps(t, dir)
}

// TestUnwritableDirWritableDest, as an unprivileged user: DEST can be
// written but its directory cannot, so no temporary file can be made
// beside it. fastcp says so and points at --inplace (cp writes in place and
// succeeds); --inplace then works.
func TestUnwritableDirWritableDest(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	dir := mustMkdir(t, join(scratch, "unwritable"))
	ro := mustMkdir(t, join(dir, "ro"))
	writeFile(t, join(dir, "src"), []byte("new data\n"), 0o644)
	dst := join(ro, "dst")
	writeFile(t, dst, []byte("old\n"), 0o666)
	run := func(args ...string) result {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
		return runCmd(t, cmd)
	}
	wantFailure(t, run("src", "ro/dst"), 1,
		"fastcp: cannot create a temporary file in 'ro' to replace 'ro/dst': Permission denied; --inplace writes into 'ro/dst' itself\n")
	assertFileBytes(t, dst, []byte("old\n"))
	assertNoTemps(t, ro)
	wantFailure(t, run("src", "ro/new"), 1, "fastcp: cannot create regular file 'ro/new': Permission denied\n")
	wantSuccess(t, run("--inplace", "src", "ro/dst"))
	assertFileBytes(t, dst, []byte("new data\n"))
}

// changeWhileCopying starts fastcp on src, slowed down by a delay before
// every pwrite64, waits until its temporary file holds data, runs change
// and returns what fastcp did.
func changeWhileCopying(t *testing.T, dir string, change func()) traced {
	t.Helper()
	faultReady(t)
	log := join(t.TempDir(), "strace.log")
	done := make(chan traced, 1)
	go func() {
		// 32 writes of 64 KiB, 60 ms each: about 2 s in which to change src.
		done <- faultStraceLog(t, dir, log, []string{"-e", "trace=pwrite64", "-e", "inject=pwrite64:delay_enter=60000"},
			"--strategy=rw", "--buffer-size=64K", "src", "dst")
	}()
	if !waitFor(func() bool {
		for _, p := range openTempsAnywhere(dir) {
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				return true
			}
		}
		return false
	}) {
		t.Fatal("no temporary file with data appeared")
	}
	change()
	// The change must land while src is still being copied, or the test
	// proves nothing: the temporary file is still open after it.
	if len(openTempsAnywhere(dir)) == 0 {
		t.Fatal("src's copy ended before src changed: the injected delay is too short for this machine")
	}
	select {
	case tr := <-done:
		return tr
	case <-time.After(runTimeout):
		t.Fatal("fastcp did not finish")
		return traced{}
	}
}

// TestSourceChangesWhileCopying: another process appends to, truncates or
// rewrites the source while fastcp (slowed down by strace) copies it.
// fastcp reports it, naming the file, exits 1 and leaves DEST as it was
// instead of putting a mix of old and new data in place.
func TestSourceChangesWhileCopying(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(t *testing.T, src string)
		want   string
	}{
		{"grows", func(t *testing.T, src string) {
			f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(randomBytes(100_000, "more"))
			f.Close()
		}, "changed size while being copied"},
		{"shrinks", func(t *testing.T, src string) {
			if err := os.Truncate(src, 1<<20); err != nil {
				t.Fatal(err)
			}
		}, "changed size while being copied"},
		{"rewritten", func(t *testing.T, src string) {
			f, err := os.OpenFile(src, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte("XXXX"), 0)
			f.Close()
		}, "was modified while being copied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := join(dir, "src")
			writeFile(t, src, randomBytes(2<<20, "changing"), 0o644)
			old := []byte("old DEST\n")
			writeFile(t, join(dir, "dst"), old, 0o644)
			tr := changeWhileCopying(t, dir, func() { c.change(t, src) })
			wantOneLineError(t, tr.result, "'src' "+c.want, "'dst' was not replaced")
			assertFileBytes(t, join(dir, "dst"), old)
			assertNoTemps(t, dir)
		})
	}
}

// TestSourceReplacedBeforeOpen renames another file over SOURCE after
// fastcp stat'ed it and before it opens it (strace holds the stat's return
// for a second and the test waits until the log shows it): the file opened
// is not the one checked, and fastcp refuses it as cp does.
func TestSourceReplacedBeforeOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := join(dir, "src")
	writeFile(t, src, []byte("the file that was checked\n"), 0o644)
	writeFile(t, join(dir, "other"), []byte("another file\n"), 0o644)
	old := []byte("old DEST\n")
	writeFile(t, join(dir, "dst"), old, 0o644)
	faultReady(t)
	log := join(t.TempDir(), "strace.log")
	done := make(chan traced, 1)
	go func() {
		done <- faultStraceLog(t, dir, log, []string{"-P", src, "-e", "trace=newfstatat,statx,openat",
			"-e", "inject=newfstatat,statx:delay_exit=1000000"}, src, "dst")
	}()
	if !waitFor(func() bool {
		b, _ := os.ReadFile(log)
		return bytes.Contains(b, []byte("(DELAYED)"))
	}) {
		t.Fatal("fastcp never stat'ed the source")
	}
	if err := os.Rename(join(dir, "other"), src); err != nil {
		t.Fatal(err)
	}
	tr := <-done
	wantFailure(t, tr.result, 1, fmt.Sprintf("fastcp: skipping file %s, as it was replaced while being copied\n", q(src)))
	assertFileBytes(t, join(dir, "dst"), old)
	assertNoTemps(t, dir)
}
