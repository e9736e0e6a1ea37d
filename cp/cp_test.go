// SPDX-License-Identifier: MIT

package cp

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

func runFastcp(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	opts, err := flags.Parse(args)
	if err != nil {
		t.Fatalf("flags.Parse(%q): %v", args, err)
	}
	o := output.New("fastcp", &out, &errb)
	if Run(opts, o, strings.NewReader(""), durability.NewSession()) {
		code = 1
	}
	return code, out.String(), errb.String()
}

// failingCopy writes half of the source into the destination, as a real
// copy would before the disk fails, then fails with err.
func failingCopy(err error) func(dst, src sysx.Descriptor, o copier.Options) (copier.Result, error) {
	return func(dst, src sysx.Descriptor, o copier.Options) (copier.Result, error) {
		b, _ := os.ReadFile(src.Name())
		unix.Write(int(dst.Fd()), b[:len(b)/2])
		return copier.Result{}, err
	}
}

func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, durability.TempPrefix+"*"))
	return m
}

func TestFailureAfterProgressLeavesDestAsItWas(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&copier.Error{Strategy: copier.RW, Side: copier.SideWrite, Err: os.NewSyscallError("pwrite64", unix.ENOSPC)},
			"fastcp: error writing 'DST': No space left on device\n"},
		{&copier.Error{Strategy: copier.RW, Side: copier.SideRead, Err: os.NewSyscallError("pread64", unix.EIO)},
			"fastcp: error reading 'SRC': Input/output error\n"},
		{&copier.Error{Strategy: copier.CopyFileRange, Side: copier.SideBoth, Err: os.NewSyscallError("copy_file_range", unix.EIO)},
			"fastcp: error copying 'SRC' to 'DST': Input/output error\n"},
		{&copier.Error{Strategy: copier.Sendfile, Side: copier.SideBoth, Refused: true, Err: os.NewSyscallError("sendfile", unix.EINVAL)},
			"fastcp: cannot copy 'SRC' to 'DST' with --strategy=sendfile: sendfile: EINVAL (Invalid argument)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			os.WriteFile(src, bytes.Repeat([]byte("new data "), 10000), 0o644)
			os.WriteFile(dst, []byte("the old destination\n"), 0o640)
			old := copyData
			copyData = failingCopy(tt.err)
			defer func() { copyData = old }()
			code, stdout, stderr := runFastcp(t, "--strategy=sendfile", src, dst)
			want := strings.NewReplacer("SRC", src, "DST", dst).Replace(tt.want)
			if code != 1 || stderr != want || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 1 and %q", code, stderr, stdout, want)
			}
			if b, _ := os.ReadFile(dst); string(b) != "the old destination\n" {
				t.Errorf("DEST changed: %q", b)
			}
			if fi, _ := os.Stat(dst); fi.Mode().Perm() != 0o640 {
				t.Errorf("DEST mode changed: %v", fi.Mode())
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("temporary files left: %v", l)
			}
			// A new DEST is not created at all.
			nd := filepath.Join(dir, "new")
			if code, _, _ := runFastcp(t, src, nd); code != 1 {
				t.Errorf("exit %d", code)
			}
			if _, err := os.Lstat(nd); !os.IsNotExist(err) {
				t.Errorf("a failed copy created DEST: %v", err)
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}

func TestInPlaceFailureSaysDestIsIncomplete(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	os.WriteFile(src, bytes.Repeat([]byte("x"), 1000), 0o644)
	os.WriteFile(dst, []byte("old"), 0o644)
	old := copyData
	copyData = failingCopy(&copier.Error{Side: copier.SideWrite, Err: os.NewSyscallError("pwrite64", unix.EIO)})
	defer func() { copyData = old }()
	code, _, stderr := runFastcp(t, "--inplace", src, dst)
	if code != 1 || !strings.Contains(stderr, "'"+dst+"' was written in place (--inplace) and is now incomplete") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// Output of parallel copies comes out whole and in the sequential order.
func TestSequencerOrdersRecords(t *testing.T) {
	var out, errb bytes.Buffer
	s := sequencer{out: output.New("fastcp", &out, &errb)}
	r1, r2, r3 := s.open(), s.open(), s.open()
	r3.out("three")
	s.close(r3)
	r2.fail("two failed")
	s.close(r2)
	if out.Len() != 0 || errb.Len() != 0 {
		t.Fatalf("printed before the first record closed: %q %q", out.String(), errb.String())
	}
	r1.out("one")
	s.close(r1)
	if out.String() != "one\nthree\n" || errb.String() != "fastcp: two failed\n" || !s.failed {
		t.Errorf("stdout %q stderr %q failed %v", out.String(), errb.String(), s.failed)
	}
}

// A source that grows, shrinks or is rewritten during the copy is reported
// and DEST is not replaced with a mix of old and new data.
func TestSourceChangingDuringCopy(t *testing.T) {
	tests := []struct {
		name   string
		change func(path string)
		want   string
	}{
		{"grows", func(p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte("more"))
			f.Close()
		}, "changed size while being copied (90000 bytes before, 90004 copied, 90004 now)"},
		{"shrinks", func(p string) { os.Truncate(p, 1000) }, "changed size while being copied (90000 bytes before, 1000 copied, 1000 now)"},
		{"rewritten", func(p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt([]byte("X"), 5)
			f.Close()
			later := time.Now().Add(time.Hour)
			os.Chtimes(p, later, later)
		}, "was modified while being copied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
			os.WriteFile(src, bytes.Repeat([]byte("abcdefghi\n"), 9000), 0o644)
			os.WriteFile(dst, []byte("old\n"), 0o644)
			old := copyData
			copyData = func(d, s sysx.Descriptor, o copier.Options) (copier.Result, error) {
				tt.change(src)
				o.SourceStat = nil
				return old(d, s, o)
			}
			defer func() { copyData = old }()
			code, _, stderr := runFastcp(t, src, dst)
			want := "fastcp: '" + src + "' " + tt.want + "; '" + dst + "' was not replaced\n"
			if code != 1 || stderr != want {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
			}
			if b, _ := os.ReadFile(dst); string(b) != "old\n" {
				t.Errorf("DEST replaced: %q", b[:min(len(b), 20)])
			}
			if l := leftovers(t, dir); len(l) != 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}

func TestVerifyRefusesStreamsUpFront(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runFastcp(t, "--verify", fifo, filepath.Join(dir, "dst"))
	want := "fastcp: cannot verify '" + fifo + "': the source is a fifo, which cannot be read again; copy it without --verify\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte("data"), 0o644)
	code, _, stderr = runFastcp(t, "--verify", src, "/dev/null")
	want = "fastcp: cannot verify '/dev/null': the destination is a character special file, which cannot be read again; copy it without --verify\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// Jobs: -i copies one file at a time, else -j wins; without it a tree or
// several SOURCEs get autoJobs workers, a single file one copy.
func TestJobs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args string
		want int
	}{
		{"a b", 1},
		{"-j 3 a b", 3},
		{"-r a b", autoJobs},
		{"-a a b", autoJobs},
		{"-r -j 1 a b", 1},
		{"-r -j 8 a b", 8},
		{"a b c", autoJobs},
		{"-t c a", 1},
		{"-t c a b", autoJobs},
		{"-t c -t d a", 1},
		{"-r -i a b", 1},
		{"-r -i -j 2 a b", 1},
	} {
		opts, err := flags.ParseEnv(strings.Fields(c.args), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if got := Jobs(opts); got != c.want {
			t.Errorf("Jobs(%s) = %d, want %d", c.args, got, c.want)
		}
	}
}

// A run with workers paces the collector at workersGCPercent, unless GOGC
// says otherwise; one copy at a time leaves it alone.
func TestWorkersGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	for _, c := range []struct {
		args string
		gogc string
		want int
	}{
		{"-r", "", workersGCPercent},
		{"-r -j 1", "", 100},
		{"-r", "150", 100},
	} {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runFastcp(t, append(strings.Fields(c.args), filepath.Join(dir, "f"), filepath.Join(dir, "g"+c.gogc+strings.ReplaceAll(c.args, " ", "")))...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.args, code, stderr)
		}
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%s with GOGC=%q: GOGC %d, want %d", c.args, c.gogc, got, c.want)
		}
	}
}

// The signal handlers cost more than a small copy (docs/measurements.md):
// a copy to a new name never installs them, since an unnamed file linked
// in under DEST's name leaves nothing behind; a copy that replaces DEST
// has them in place by the time it returns (its file got a temporary name
// before the rename), installed once for the whole run.
func TestSignalHandlersOnlyWhenDESTIsReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := func(n string) string { return filepath.Join(dir, n) }
	for _, n := range []string{"a", "old1", "t/a", "t/b"} {
		os.MkdirAll(filepath.Dir(in(n)), 0o755)
		if err := os.WriteFile(in(n), []byte("old "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(in("b"), []byte("b"), 0o644)
	os.Mkdir(in("newdir"), 0o755)
	installs := func(args ...string) int32 {
		t.Helper()
		var calls atomic.Int32
		s := durability.NewSession()
		s.SetArm(func() { calls.Add(1) })
		opts, err := flags.Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if Run(opts, output.New("fastcp", &out, &errb), strings.NewReader(""), s) {
			t.Fatalf("fastcp %q failed: %s", args, errb.String())
		}
		return calls.Load()
	}
	for _, tt := range []struct {
		args []string
		want int32
	}{
		{[]string{in("a"), in("new")}, 0},
		{[]string{in("a"), in("b"), in("newdir")}, 0},
		{[]string{in("b"), in("old1")}, 1},
		{[]string{"-t", in("t"), in("a"), in("b")}, 1},
	} {
		if got := installs(tt.args...); got != tt.want {
			t.Errorf("fastcp %q installed the signal handlers %d times, want %d", tt.args, got, tt.want)
		}
	}
	for n, want := range map[string]string{"new": "old a", "newdir/b": "b", "old1": "b", "t/a": "old a", "t/b": "b"} {
		if got, _ := os.ReadFile(in(n)); string(got) != want {
			t.Errorf("%s holds %q, want %q", n, got, want)
		}
	}
}
