// SPDX-License-Identifier: MIT

package integration_test

// --resume: a copy stopped by SIGKILL or SIGINT part-way is
// continued from its checkpoint by the next run with --resume, which writes
// only the rest (counted with --debug's per-strategy byte counts) and gives
// a byte-identical DEST; a changed source, a forged record and a leftover
// without one start over; a leftover another copy is still writing is left
// alone; -r --resume skips what is already complete; a filesystem without
// user xattrs gets one warning and a plain copy.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

const (
	resumeXattr = "user.fastcp.temp"
	resumeTemp  = ".fastcp-dst.000000000000"
)

// resumeFS mounts a tmpfs of size bytes of the test's own, for sources
// larger than the package's filesystems.
func resumeFS(t *testing.T, size int64) string {
	t.Helper()
	needMount(t)
	fs, err := fsfixture.Mount(t.TempDir(), "tmpfs", size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Unmount() })
	return fs.Dir
}

// writePattern writes size bytes to path: a random MiB repeated, each copy
// starting with its own index, so a byte copied to the wrong offset shows.
func writePattern(t *testing.T, path string, size int64, seed string) {
	t.Helper()
	block := randomBytes(1<<20, seed)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 16<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		for i := 0; i < len(buf); i += len(block) {
			copy(buf[i:], block)
			binary.LittleEndian.PutUint64(buf[i:], uint64(off)+uint64(i))
		}
		if _, err := f.Write(buf[:min(int64(len(buf)), size-off)]); err != nil {
			t.Fatal(err)
		}
	}
}

// sameFiles fails the test unless a and b hold the same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	fa, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	ba, bb := make([]byte, 8<<20), make([]byte, 8<<20)
	for off := int64(0); ; {
		na, ea := io.ReadFull(fa, ba)
		nb, _ := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			t.Fatalf("%s and %s differ in the 8 MiB at %d (%d and %d bytes read)", a, b, off, na, nb)
		}
		if ea != nil {
			return
		}
		off += int64(na)
	}
}

// checkpointOf returns the checkpoint recorded in path's resume record, or
// -1 when it has none.
func checkpointOf(path string) int64 {
	b := make([]byte, 1024)
	n, err := unix.Getxattr(path, resumeXattr, b)
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`checkpoint=(\d+)`).FindSubmatch(b[:n])
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

// sizeOf is path's size, -1 when it does not exist.
func sizeOf(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// slowRun is fastcp started under strace with delays injected, so that a
// test can stop it part-way.
type slowRun struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	waited chan error
}

// startSlow starts fastcp args in dir under strace -f, every call in calls
// delayed by delay.
func startSlow(t *testing.T, dir, calls string, delay time.Duration, args ...string) *slowRun {
	t.Helper()
	strace := durStrace(t)
	argv := []string{"-f", "-qq", "-o", "/dev/null", "-e", "trace=" + calls,
		"-e", fmt.Sprintf("inject=%s:delay_enter=%d", calls, delay.Microseconds()), setup.Bin}
	s := &slowRun{cmd: exec.Command(strace, append(argv, args...)...), waited: make(chan error, 1)}
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), "LC_ALL=C")
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		if p := s.tracee(); p > 0 {
			syscall.Kill(p, syscall.SIGKILL)
		}
		<-s.waited
	})
	return s
}

// output is what fastcp wrote to stderr: strace's own complaints (about
// its bookkeeping of the many threads of a Go program) left out.
func (s *slowRun) output() string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s.stderr.String(), "\n") {
		if !strings.Contains(l, "strace: ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// tracee is the pid of the fastcp that strace runs (0 until it exists).
func (s *slowRun) tracee() int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", s.cmd.Process.Pid, s.cmd.Process.Pid))
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	p, _ := strconv.Atoi(f[0])
	return p
}

// signal sends sig to fastcp and waits for strace to end; it returns
// fastcp's wait status as a shell reads it (waitStatus: 128+signal for a
// death by a signal).
func (s *slowRun) signal(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	p := s.tracee()
	if p == 0 {
		t.Fatal("fastcp is not running under strace")
	}
	if err := syscall.Kill(p, sig); err != nil {
		t.Fatal(err)
	}
	return s.wait(t)
}

func (s *slowRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.waited:
		s.waited <- err
		if err == nil {
			return 0
		}
		if code := waitStatus(err); code >= 0 {
			return code
		}
		t.Fatal(err)
	case <-time.After(runTimeout):
		t.Fatal("fastcp did not end")
	}
	return 0
}

// waitUntil polls cond until it holds; the copy ending first fails the test.
func (s *slowRun) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case err := <-s.waited:
			s.waited <- err
			t.Fatalf("fastcp ended (%v) before %s; stderr %q", err, what, s.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

var (
	resumeLineRE   = regexp.MustCompile(`^resume: '(.*)' from offset (\d+) of (\d+)$`)
	strategyLineRE = regexp.MustCompile(`^strategy: `)
	bytesInRE      = regexp.MustCompile(`(\d+) bytes in \d+ calls?`)
)

// resumed is what the --debug lines of a run say: the offsets it resumed
// from (per file, in order) and the bytes it wrote.
type resumed struct {
	offsets []int64
	written int64
}

func parseResumed(t *testing.T, stdout string) resumed {
	t.Helper()
	var r resumed
	for _, l := range lines(stdout) {
		if m := resumeLineRE.FindStringSubmatch(l); m != nil {
			off, _ := strconv.ParseInt(m[2], 10, 64)
			r.offsets = append(r.offsets, off)
		}
		if strategyLineRE.MatchString(l) {
			for _, m := range bytesInRE.FindAllStringSubmatch(l, -1) {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				r.written += n
			}
		}
	}
	return r
}

var resumedRE = regexp.MustCompile(`^'src' -> 'dst'\nresumed 'dst' at [1-9][0-9.]* [KMG]iB of 64 MiB\n$`)

var keptRE = regexp.MustCompile(`^fastcp: interrupted: '(.*)' keeps [0-9.]+ [KMGT]?i?B of [0-9.]+ [KMGT]?i?B of the copy to '(.*)' \((\d+) of (\d+) bytes\); run again with --resume to continue$`)

// A 2 GiB copy stopped at about half by SIGKILL (after a checkpoint) or
// SIGINT (which records one), with the automatic strategy and a forced
// one: the rerun with --resume writes at most 60% of the file, and DEST is
// the source byte for byte.
func TestResumeLargeCopy(t *testing.T) {
	const size = 2 << 30
	dir := resumeFS(t, 2*size+(256<<20))
	src, dst, temp := join(dir, "src"), join(dir, "dst"), join(dir, resumeTemp)
	writePattern(t, src, size, t.Name())
	for _, tc := range []struct {
		name     string
		args     []string
		calls    string
		delay    time.Duration
		sig      syscall.Signal
		wantCode int
	}{
		// On tmpfs auto copies with copy_file_range, 64 MiB a call.
		{"auto/SIGKILL", nil, "copy_file_range,sendfile,splice", 60 * time.Millisecond, syscall.SIGKILL, -1},
		{"auto/SIGINT", nil, "copy_file_range,sendfile,splice", 60 * time.Millisecond, syscall.SIGINT, 130},
		{"rw/SIGKILL", []string{"--strategy=rw", "--buffer-size=8M"}, "pwrite64", 8 * time.Millisecond, syscall.SIGKILL, -1},
		{"rw/SIGINT", []string{"--strategy=rw", "--buffer-size=8M"}, "pwrite64", 8 * time.Millisecond, syscall.SIGINT, 130},
		// direct writes 3 MiB a call, several at once; its temporary
		// file is preallocated, as large as the source from the start,
		// so its checkpoint tells how far the copy got.
		{"direct/SIGKILL", []string{"--strategy=direct"}, "pwrite64", 4 * time.Millisecond, syscall.SIGKILL, -1},
		{"direct/SIGINT", []string{"--strategy=direct"}, "pwrite64", 4 * time.Millisecond, syscall.SIGINT, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(dst)
			os.Remove(temp)
			args := append(append([]string{"--resume"}, tc.args...), "src", "dst")
			run := startSlow(t, dir, tc.calls, tc.delay, args...)
			if tc.sig == syscall.SIGKILL || strings.HasPrefix(tc.name, "direct/") {
				run.waitUntil(t, "a checkpoint at half", func() bool { return checkpointOf(temp) >= size/2 })
			} else {
				run.waitUntil(t, "half the copy", func() bool { return sizeOf(temp) >= size/2+(64<<20) })
			}
			code := run.signal(t, tc.sig)
			if code != tc.wantCode && !(tc.sig == syscall.SIGKILL && code == 128+9) {
				t.Fatalf("exit status %d after %v, want %d; stderr %q", code, tc.sig, tc.wantCode, run.output())
			}
			assertNotExist(t, dst)
			ckpt := checkpointOf(temp)
			if ckpt < size/2 || ckpt > sizeOf(temp) {
				t.Fatalf("the leftover (%d bytes) has checkpoint %d, want at least half of %d", sizeOf(temp), ckpt, size)
			}
			if tc.sig == syscall.SIGINT {
				m := keptRE.FindStringSubmatch(strings.TrimSpace(run.output()))
				if m == nil || m[1] != resumeTemp || m[3] != strconv.FormatInt(ckpt, 10) || m[4] != strconv.Itoa(size) || m[2] != "dst" {
					t.Fatalf("stderr %q, want the kept file, %d of %d bytes and the hint", run.output(), ckpt, size)
				}
			}
			r := fastcp(t, dir, append(append([]string{"--resume", "--debug"}, tc.args...), "src", "dst")...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("the rerun: %v", r)
			}
			res := parseResumed(t, r.stdout)
			if len(res.offsets) != 1 || res.offsets[0] != ckpt {
				t.Fatalf("the rerun resumed at %v, want [%d]; stdout %q", res.offsets, ckpt, r.stdout)
			}
			if res.written != size-ckpt || res.written > size*6/10 {
				t.Errorf("the rerun wrote %d bytes, want %d (at most 60%% of %d)", res.written, size-ckpt, size)
			}
			sameFiles(t, src, dst)
			assertNotExist(t, temp)
		})
	}
}

// interrupted leaves the leftover of a --resume copy of the 64 MiB src to
// dst in dir, stopped by SIGINT after 16 MiB, and returns its checkpoint.
func interrupted(t *testing.T, dir string) int64 {
	t.Helper()
	run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "src", "dst")
	temp := join(dir, resumeTemp)
	run.waitUntil(t, "16 MiB copied", func() bool { return sizeOf(temp) >= 16<<20 })
	if code := run.signal(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit status %d after SIGINT, want 130; stderr %q", code, run.output())
	}
	// The last call may have written without being counted yet.
	ckpt := checkpointOf(temp)
	if ckpt < 15<<20 {
		t.Fatalf("checkpoint %d after SIGINT, want at least 16 MiB less one call", ckpt)
	}
	return ckpt
}

// SIGTERM and SIGHUP keep the temporary file as SIGINT does, with their
// own exit statuses; without --resume every signal removes it.
func TestResumeSignals(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	writePattern(t, join(dir, "src"), 64<<20, t.Name())
	temp := join(dir, resumeTemp)
	for _, tc := range []struct {
		sig    syscall.Signal
		code   int
		resume bool
	}{{syscall.SIGTERM, 143, true}, {syscall.SIGHUP, 129, true}, {syscall.SIGINT, 130, false}} {
		t.Run(fmt.Sprintf("%v/resume=%v", tc.sig, tc.resume), func(t *testing.T) {
			os.Remove(temp)
			args := []string{"--strategy=rw", "--buffer-size=1M", "src", "dst"}
			if tc.resume {
				args = append([]string{"--resume"}, args...)
			}
			run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, args...)
			copied := func() bool { return sizeOf(temp) >= 8<<20 }
			if !tc.resume {
				// Without --resume the temporary file has no name (tmpfs
				// has O_TMPFILE).
				copied = func() bool {
					for _, p := range openTempsAnywhere(dir) {
						if sizeOf(p) >= 8<<20 {
							return true
						}
					}
					return false
				}
			}
			run.waitUntil(t, "8 MiB copied", copied)
			if code := run.signal(t, tc.sig); code != tc.code {
				t.Fatalf("exit status %d after %v, want %d", code, tc.sig, tc.code)
			}
			if !tc.resume {
				if run.output() != "" {
					t.Errorf("stderr %q, want nothing", run.output())
				}
				assertNotExist(t, temp)
				assertNoTemps(t, dir)
				return
			}
			ckpt := checkpointOf(temp)
			if m := keptRE.FindStringSubmatch(strings.TrimSpace(run.output())); m == nil || m[3] != strconv.FormatInt(ckpt, 10) {
				t.Errorf("stderr %q, want the kept file and its checkpoint %d", run.output(), ckpt)
			}
			// -v says the copy was resumed, and where.
			if ckpt > 0 {
				r := fastcp(t, dir, "--resume", "-v", "src", "dst")
				if !resumedRE.MatchString(r.stdout) || r.code != 0 {
					t.Errorf("--resume -v: %v, want stdout to match %s", r, resumedRE)
				}
			}
		})
	}
}

// The source changed between the runs: a fresh start, one line saying so,
// and a copy of the source as it is now.
func TestResumeSourceChanged(t *testing.T) {
	for _, change := range []string{"touch", "append"} {
		t.Run(change, func(t *testing.T) {
			dir := fsDir(t, "tmpfs")
			src := join(dir, "src")
			writePattern(t, src, 64<<20, t.Name())
			interrupted(t, dir)
			switch change {
			case "touch":
				later := time.Now().Add(time.Hour)
				os.Chtimes(src, later, later)
			case "append":
				f, _ := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
				f.Write([]byte{'x'})
				f.Close()
			}
			r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
			want := "fastcp: warning: copying 'dst' from the start: source changed (size, mtime or ctime differ from the interrupted copy's)\n"
			if r.code != 0 || r.stderr != want {
				t.Fatalf("%v, want exit 0 and stderr %q", r, want)
			}
			res := parseResumed(t, r.stdout)
			if len(res.offsets) != 0 || res.written != sizeOf(src) {
				t.Errorf("resumed at %v, wrote %d bytes: want a full copy of %d", res.offsets, res.written, sizeOf(src))
			}
			sameFiles(t, src, join(dir, "dst"))
			assertNoTemps(t, dir)
		})
	}
}

// forge writes a leftover holding the given bytes under dst's first
// temporary name, with record as its resume record ("" for none).
func forge(t *testing.T, dir string, content []byte, record string) {
	t.Helper()
	p := join(dir, resumeTemp)
	writeFile(t, p, content, 0o600)
	if record != "" {
		if err := unix.Setxattr(p, resumeXattr, []byte(record), 0); err != nil {
			t.Fatal(err)
		}
	}
}

func recordFor(st *syscall.Stat_t, checkpoint int64) string {
	return fmt.Sprintf("fastcp-resume-1 dev=%d ino=%d size=%d mtime=%d ctime=%d checkpoint=%d",
		st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano(), checkpoint)
}

// Leftovers whose records cannot be trusted (forged, or another source's)
// or that have none: a fresh start with its reason, never a wrong copy. The
// first case, a true record, shows the forged ones are read as records.
func TestResumeForgedRecords(t *testing.T) {
	const size = 8 << 20
	dir := fsDir(t, "tmpfs")
	src := join(dir, "src")
	writePattern(t, src, size, t.Name())
	data, _ := os.ReadFile(src)
	junk := bytes.Repeat([]byte{0xEE}, size)
	writeFile(t, join(dir, "other"), data, 0o644)
	st, other := statT(t, src), statT(t, join(dir, "other"))
	for _, tc := range []struct {
		name, record string
		content      []byte
		why          string // "": resumed
	}{
		{"a true record", recordFor(st, 4<<20), data[:6<<20], ""},
		{"checkpoint past the source's end", recordFor(st, size+1), append(junk, 0), "foreign leftover (its checkpoint 8388609 lies past the end of the file)"},
		{"checkpoint past the file's end", recordFor(st, 4<<20), junk[:1<<20], "foreign leftover (its checkpoint 4194304 lies past the end of the file)"},
		{"another source's identity", recordFor(other, 4<<20), junk, "foreign leftover (it is a copy of another source)"},
		{"not a record", "checkpoint=4194304", junk, "foreign leftover (not a resume record)"},
		{"a plain temporary file", markValue, junk, "no checkpoint (it has no resume record)"},
		// Not fastcp's (no mark): a user's file, which stays.
		{"no mark", "", junk, "foreign leftover (it is not marked as fastcp's)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(join(dir, "dst"))
			forge(t, dir, tc.content, tc.record)
			r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
			res := parseResumed(t, r.stdout)
			if tc.why == "" {
				if r.code != 0 || r.stderr != "" || len(res.offsets) != 1 || res.offsets[0] != 4<<20 || res.written != size-4<<20 {
					t.Fatalf("%v: want a resume at 4 MiB writing 4 MiB, got %+v", r, res)
				}
			} else {
				// Named once: the sweep of the fresh copy does not name
				// the file it leaves a second time.
				want := "fastcp: warning: copying 'dst' from the start: " + tc.why + "\n"
				if tc.record == "" || !strings.HasPrefix(tc.record, "fastcp-") {
					// Not fastcp's value: left, and named.
					want = strings.TrimSuffix(want, "\n") + "; '" + resumeTemp + "' left alone\n"
				}
				if r.code != 0 || r.stderr != want {
					t.Fatalf("%v, want exit 0 and stderr %q", r, want)
				}
				if len(res.offsets) != 0 || res.written != size {
					t.Errorf("resumed at %v, wrote %d: want a full copy", res.offsets, res.written)
				}
			}
			sameFiles(t, src, join(dir, "dst"))
			if tc.record == "" || !strings.HasPrefix(tc.record, "fastcp-") {
				// A value fastcp never writes: the file is not touched.
				assertFileBytes(t, join(dir, resumeTemp), tc.content)
				os.Remove(join(dir, resumeTemp))
			}
			assertNoTemps(t, dir)
		})
	}
}

// A leftover forged with the source's true identity cannot be told from a
// real one, but --verify compares the whole file, the resumed part too:
// the copy fails and the old DEST stays.
func TestResumeVerifyCoversTheWholeFile(t *testing.T) {
	const size = 8 << 20
	dir := fsDir(t, "tmpfs")
	src := join(dir, "src")
	writePattern(t, src, size, t.Name())
	writeFile(t, join(dir, "dst"), []byte("old\n"), 0o644)
	forge(t, dir, bytes.Repeat([]byte{0xEE}, 4<<20), recordFor(statT(t, src), 4<<20))
	r := fastcp(t, dir, "--resume", "--verify", "src", "dst")
	if r.code != 1 || !strings.Contains(r.stderr, "checksums differ in bytes 0-4194303") {
		t.Fatalf("%v: want exit 1 and the mismatch in the resumed part", r)
	}
	assertFileBytes(t, join(dir, "dst"), []byte("old\n"))
	assertNoTemps(t, dir)
	// Resumed from a true leftover, --verify passes.
	data, _ := os.ReadFile(src)
	forge(t, dir, data[:4<<20], recordFor(statT(t, src), 4<<20))
	r = fastcp(t, dir, "--resume", "--verify", "--debug", "src", "dst")
	if res := parseResumed(t, r.stdout); r.code != 0 || r.stderr != "" || len(res.offsets) != 1 || res.offsets[0] != 4<<20 {
		t.Fatalf("%v: want a verified copy resumed at 4 MiB", r)
	}
	sameFiles(t, src, join(dir, "dst"))
}

// A leftover that is a FIFO, a symlink or has a second link is not
// fastcp's: it is not opened, not removed, and the copy goes on under
// another name.
func TestResumeForeignLeftoverUntouched(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	writePattern(t, join(dir, "src"), 1<<20, t.Name())
	temp := join(dir, resumeTemp)
	for _, kind := range []string{"fifo", "symlink", "hardlink"} {
		t.Run(kind, func(t *testing.T) {
			os.Remove(temp)
			switch kind {
			case "fifo":
				if err := unix.Mkfifo(temp, 0o600); err != nil {
					t.Fatal(err)
				}
			case "symlink":
				os.Symlink("src", temp)
			case "hardlink":
				writeFile(t, join(dir, "user"), []byte("user data"), 0o600)
				os.Link(join(dir, "user"), temp)
			}
			before := lstatT(t, temp)
			r := fastcp(t, dir, "--resume", "src", "dst")
			if r.code != 0 || !strings.Contains(r.stderr, "copying 'dst' from the start: foreign leftover") {
				t.Fatalf("%v: want a fresh start and the reason", r)
			}
			if after := lstatT(t, temp); after.Ino != before.Ino || after.Mode != before.Mode {
				t.Errorf("the %s under the temporary name was replaced", kind)
			}
			sameFiles(t, join(dir, "src"), join(dir, "dst"))
		})
	}
}

func lstatT(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// A leftover that another copy is still writing: the rerun fails, says
// so, and the running copy finishes undisturbed.
func TestResumeLiveLeftover(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	writePattern(t, join(dir, "src"), 64<<20, t.Name())
	temp := join(dir, resumeTemp)
	run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "src", "dst")
	run.waitUntil(t, "the copy's record", func() bool { return checkpointOf(temp) >= 0 && sizeOf(temp) >= 4<<20 })
	r := fastcp(t, dir, "--resume", "src", "dst")
	wantFailure(t, r, 1, "fastcp: cannot resume the copy to 'dst': another copy to it is running ('"+resumeTemp+"' is locked)\n")
	if code := run.wait(t); code != 0 {
		t.Fatalf("the running copy exited %d; stderr %q", code, run.output())
	}
	sameFiles(t, join(dir, "src"), join(dir, "dst"))
	assertNoTemps(t, dir)
}

// A tree of 20 files SIGKILLed after 10: the rerun with -a --resume copies
// only the files that were not complete (its -v lines name exactly those)
// and writes only their bytes.
func TestResumeTree(t *testing.T) {
	const n, fsize = 20, 4 << 20
	dir := fsDir(t, "tmpfs")
	mustMkdir(t, join(dir, "src"))
	for i := range n {
		writePattern(t, join(dir, "src", fmt.Sprintf("f%02d", i)), fsize+int64(i), fmt.Sprint(t.Name(), i))
	}
	complete := func() map[string]bool {
		m := map[string]bool{}
		ents, _ := os.ReadDir(join(dir, "dst"))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".fastcp-") {
				m[e.Name()] = true
			}
		}
		return m
	}
	// Each file waits 100 ms for its rename.
	run := startSlow(t, dir, "rename,renameat,renameat2", 100*time.Millisecond, "-aT", "--resume", "src", "dst")
	run.waitUntil(t, "10 files copied", func() bool { return len(complete()) >= 10 })
	run.signal(t, syscall.SIGKILL)
	done := complete()
	if len(done) >= n {
		t.Fatalf("all %d files were copied before the kill", len(done))
	}
	r := fastcp(t, dir, "-aT", "--resume", "--debug", "src", "dst")
	if r.code != 0 {
		t.Fatalf("the rerun: %v", r)
	}
	// The files being copied at the kill may have left leftovers without
	// a checkpoint yet: they start over, and say so. One killed at its
	// rename has lost its mark already (DEST must appear with its
	// attributes final): it is not provably fastcp's, so it starts over
	// beside it and leaves it alone. There are as many of those at most as
	// files copied at once (four without -j).
	var unmarked []string
	for _, l := range lines(r.stderr) {
		if m := regexp.MustCompile(`^fastcp: warning: 'dst/\.fastcp-(f\d\d)\.000000000000' has the name of a temporary file of fastcp but not its mark: left alone$`).FindStringSubmatch(l); m != nil && !done[m[1]] {
			continue // the sweep's word for the same leftover
		}
		m := regexp.MustCompile(`^fastcp: warning: copying 'dst/(f\d\d)' from the start: (no checkpoint \((no checkpoint was recorded|it has no resume record)\)|foreign leftover \(it is not marked as fastcp's\); 'dst/\.fastcp-f\d\d\.000000000000' left alone)$`).FindStringSubmatch(l)
		if m == nil || done[m[1]] {
			t.Errorf("the rerun's stderr: %q", l)
			continue
		}
		if strings.HasPrefix(m[2], "foreign") {
			unmarked = append(unmarked, join(dir, "dst", ".fastcp-"+m[1]+".000000000000"))
		}
	}
	if len(unmarked) > 4 {
		t.Errorf("%d leftovers without a mark, want at most the four killed at their rename: %v", len(unmarked), unmarked)
	}
	for _, p := range unmarked {
		if err := os.Remove(p); err != nil {
			t.Errorf("the leftover killed at its rename: %v", err)
		}
	}
	var copied []string
	for _, l := range lines(r.stdout) {
		if m := regexp.MustCompile(`^'src/(f\d\d)' -> 'dst/f\d\d'$`).FindStringSubmatch(l); m != nil {
			copied = append(copied, m[1])
		}
	}
	var want []string
	var wantBytes int64
	for i := range n {
		name := fmt.Sprintf("f%02d", i)
		if !done[name] {
			want = append(want, name)
			wantBytes += fsize + int64(i)
		}
	}
	if strings.Join(copied, " ") != strings.Join(want, " ") {
		t.Errorf("the rerun copied %v, want only the files not complete: %v", copied, want)
	}
	res := parseResumed(t, r.stdout)
	var from int64
	for _, o := range res.offsets {
		from += o
	}
	if res.written+from != wantBytes {
		t.Errorf("the rerun wrote %d bytes (and resumed %d), want %d: the files not complete", res.written, from, wantBytes)
	}
	for i := range n {
		name := fmt.Sprintf("f%02d", i)
		sameFiles(t, join(dir, "src", name), join(dir, "dst", name))
		if s, d := statT(t, join(dir, "src", name)), statT(t, join(dir, "dst", name)); s.Mtim != d.Mtim {
			t.Errorf("%s: mtime not preserved", name)
		}
	}
	assertNoTemps(t, join(dir, "dst"))
}

// ramfs has no user xattrs: --resume says once, at the start, that its
// records go into side records beside the temporary files, and keeps its
// promise with them: an interrupted copy there is kept, and the next run
// continues it.
func TestResumeWithoutUserXattrs(t *testing.T) {
	needMount(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "ramfs", "ramfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount ramfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	mustMkdir(t, join(dir, "tree"))
	for i := range 3 {
		writePattern(t, join(dir, "tree", fmt.Sprint(i)), 1<<20, fmt.Sprint(t.Name(), i))
	}
	writePattern(t, join(dir, "src"), 64<<20, t.Name())
	warning := func(dst, temp string) string {
		return "fastcp: warning: --resume: the filesystem of " + q(dst) + " keeps no user extended attributes; the resume records go into files beside the temporary files, as " + q(temp+".rec") + "\n"
	}
	r := fastcp(t, dir, "--resume", "src", "dst")
	if want := warning("dst", resumeTemp); r.code != 0 || r.stderr != want {
		t.Fatalf("%v, want exit 0 and stderr %q", r, want)
	}
	sameFiles(t, join(dir, "src"), join(dir, "dst"))
	r = fastcp(t, dir, "-r", "--resume", "tree", "copy")
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "keeps no user extended attributes") {
		t.Fatalf("%v, want exit 0 and one warning", r)
	}
	assertNoTemps(t, dir, join(dir, "copy"))
	os.Remove(join(dir, "dst"))
	run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "src", "dst")
	run.waitUntil(t, "8 MiB copied", func() bool { return sizeOf(join(dir, resumeTemp)) >= 8<<20 })
	if code := run.signal(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130; stderr %q", code, run.output())
	}
	out := strings.SplitAfterN(run.output(), "\n", 2)
	if len(out) != 2 || out[0] != warning("dst", resumeTemp) || keptRE.FindStringSubmatch(strings.TrimSpace(out[1])) == nil {
		t.Fatalf("stderr %q: want the warning, then the kept file", run.output())
	}
	for _, p := range []string{resumeTemp, resumeTemp + ".rec"} {
		if fi, err := os.Stat(join(dir, p)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s after SIGINT: %v, %v; want it kept, mode 0600", p, fi, err)
		}
	}
	r = fastcp(t, dir, "--resume", "--debug", "src", "dst")
	res := parseResumed(t, r.stdout)
	if r.code != 0 || r.stderr != warning("dst", resumeTemp) || len(res.offsets) != 1 || res.offsets[0] < 7<<20 || res.written > 57<<20 {
		t.Fatalf("%v: want the copy resumed from about 8 MiB", r)
	}
	sameFiles(t, join(dir, "src"), join(dir, "dst"))
	assertNoTemps(t, dir)
}

// On xfs and btrfs a resumed copy clones the rest (FICLONERANGE from the
// checkpoint): the bytes below it stay the leftover's, those after it are
// shared with the source.
func TestResumeReflink(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			const size = 8 << 20
			dir := fsDir(t, kind)
			src := join(dir, "src")
			writePattern(t, src, size, t.Name())
			data, _ := os.ReadFile(src)
			forge(t, dir, data[:3<<20], recordFor(statT(t, src), 3<<20))
			r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
			res := parseResumed(t, r.stdout)
			if r.code != 0 || r.stderr != "" || len(res.offsets) != 1 || res.offsets[0] != 3<<20 || !strings.Contains(r.stdout, "reflink: yes") {
				t.Fatalf("%v: want a resume at 3 MiB by reflink", r)
			}
			sameFiles(t, src, join(dir, "dst"))
			assertNoTemps(t, dir)
		})
	}
}

// A leftover that holds junk past its recorded checkpoint and is longer
// than SOURCE (bytes written past the last checkpoint before a kill, or
// anything else's): the copy continues from the checkpoint, and DEST is
// SOURCE byte for byte, not as long as the leftover was. Only the cut back
// to the checkpoint makes it so: the rest of the copy overwrites the junk
// up to SOURCE's end, not past it.
func TestResumeCutsJunkPastTheCheckpoint(t *testing.T) {
	const size = 3 << 20
	dir := fsDir(t, "tmpfs")
	src := join(dir, "src")
	writePattern(t, src, size, t.Name())
	data, _ := os.ReadFile(src)
	content := append(append([]byte{}, data[:2<<20]...), bytes.Repeat([]byte{0xEE}, 3<<20)...)
	forge(t, dir, content, recordFor(statT(t, src), 2<<20))
	r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
	if res := parseResumed(t, r.stdout); r.code != 0 || r.stderr != "" || len(res.offsets) != 1 || res.offsets[0] != 2<<20 || res.written != size-2<<20 {
		t.Fatalf("%v: want a resume at 2 MiB writing 1 MiB, got %+v", r, res)
	}
	assertFileBytes(t, join(dir, "dst"), data)
	assertNoTemps(t, dir)
}
