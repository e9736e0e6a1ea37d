// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
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

// runTimeout bounds one fastcp run: none should take more than seconds.
const runTimeout = 2 * time.Minute

// result is what one run of fastcp did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// needRoot skips a test that needs root, except under CI=true, where a
// root-only test that does not run is a failure.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test needs root, and CI=true forbids skipping it")
	}
	t.Skip("needs root")
}

// needMount skips a test that mounts a filesystem of its own (tmpfs,
// ramfs, a bind mount) where root cannot mount (a container without
// CAP_SYS_ADMIN: TestMain's probe), except under CI=true.
func needMount(t testing.TB) {
	t.Helper()
	needRoot(t)
	skipUnless(t, setup.NoMount)
}

// needLoop skips a test that sets up a loop device of its own where none
// can be (TestMain's probe), except under CI=true.
func needLoop(t testing.TB) {
	t.Helper()
	needRoot(t)
	skipUnless(t, setup.NoLoop)
}

// skipUnless skips the test for the reason why, unless why is empty;
// under CI=true a skip is a failure.
func skipUnless(t testing.TB, why string) {
	t.Helper()
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s, and CI=true forbids skipping this test", why)
	}
	t.Skip(why)
}

// needTool returns the path of a program the test needs. Without it the
// test is skipped, except under CI=true, where .ci/run installs it.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true forbids skipping this test", name)
	}
	t.Skipf("%s is not installed", name)
	return ""
}

// fastcpCmd is a command running the built fastcp with args in dir.
func fastcpCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, setup.Bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// fastcp runs the built binary with args in dir and returns what it did.
func fastcp(t testing.TB, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	return runCmd(t, fastcpCmd(ctx, dir, args...))
}

// fastcpUmask runs fastcp under the given umask (through sh, since a child's
// umask cannot be set from os/exec).
func fastcpUmask(t testing.TB, dir string, umask string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	shArgs := append([]string{"-c", `umask "$0" && exec "$@"`, umask, setup.Bin}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	return runCmd(t, cmd)
}

// runCmd runs cmd to the end and collects its exit status and output.
func runCmd(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return cmdResult(t, cmd, err, stdout.String(), stderr.String())
}

// cmdResult is what cmd did: it ended with err (from Wait), having written
// stdout and stderr. A death by a signal fails the test.
func cmdResult(t testing.TB, cmd *exec.Cmd, err error, stdout, stderr string) result {
	t.Helper()
	r := result{stdout: stdout, stderr: stderr}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("%s killed by %v; stderr: %s", cmd.Path, ws.Signal(), r.stderr)
		}
	default:
		t.Fatalf("running %s: %v", cmd.Path, err)
	}
	return r
}

// watched is output that a test waits on as it is written: a command's
// stdout or stderr, or what is drawn on a terminal (copied from its
// master).
type watched struct {
	mu     sync.Mutex
	more   sync.Cond // more was written, or the writer closed it
	buf    bytes.Buffer
	closed bool
}

func newWatched() *watched {
	w := &watched{}
	w.more.L = &w.mu
	return w
}

func (w *watched) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.more.Broadcast()
	return w.buf.Write(b)
}

// close says that nothing more will be written.
func (w *watched) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.more.Broadcast()
}

// waitFor waits until what was written so far satisfies cond; false when
// it was closed first.
func (w *watched) waitFor(cond func(string) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !cond(w.buf.String()) {
		if w.closed {
			return false
		}
		w.more.Wait()
	}
	return true
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wantSuccess fails the test unless r is a silent success: exit 0 and
// nothing on stdout or stderr (no -v, no terminal, so no output at all).
func wantSuccess(t testing.TB, r result) {
	t.Helper()
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("want a silent success (exit 0, no output), got %v", r)
	}
}

// wantFailure fails the test unless r exited with code and printed exactly
// stderr (when stderr is not "") and nothing on stdout.
func wantFailure(t testing.TB, r result, code int, stderr string) {
	t.Helper()
	if r.code != code {
		t.Errorf("want exit %d, got %v", code, r)
	}
	if r.stdout != "" {
		t.Errorf("stdout must be empty on failure, got %q", r.stdout)
	}
	if stderr != "" && r.stderr != stderr {
		t.Errorf("stderr:\n got %q\nwant %q", r.stderr, stderr)
	}
}

// q quotes a path as cp does in its messages (for names without special
// characters): 'name'.
func q(s string) string { return "'" + s + "'" }

// safeName turns a test name into something usable in a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 80 {
		b = b[len(b)-80:]
	}
	return string(b)
}

// fsDir returns a fresh directory on the package's filesystem of kind
// (ext4, xfs, btrfs, tmpfs), removed after the test. It needs root and
// the kind's mkfs (skipped without, except under CI=true); a mount that
// failed under root fails the test.
func fsDir(t testing.TB, kind string) string {
	t.Helper()
	needRoot(t)
	if m := setup.Missing[kind]; m != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s filesystem: %s, and CI=true forbids skipping this test", kind, m)
		}
		t.Skipf("no %s filesystem: %s", kind, m)
	}
	if e := setup.MountErr[kind]; e != "" {
		t.Fatalf("the %s filesystem could not be mounted: %s", kind, e)
	}
	mp, ok := setup.Mounts[kind]
	if !ok {
		t.Fatalf("no %s filesystem mounted", kind)
	}
	d, err := os.MkdirTemp(mp, safeName(t.Name())+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// randomBytes returns n pseudo-random bytes determined by seed.
func randomBytes(n int, seed string) []byte {
	var key [32]byte
	h := fnv.New64a()
	io.WriteString(h, seed)
	binary.LittleEndian.PutUint64(key[:], h.Sum64())
	binary.LittleEndian.PutUint64(key[8:], uint64(n))
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// writeFile creates path with data and perm (exactly, whatever the umask)
// and makes it durable, so that st_blocks and extents are settled.
func writeFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Chmod(perm); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// span is data at an offset of a sparse file.
type span struct {
	off  int64
	data []byte
}

// writeSparse creates a file of size bytes that holds spans and holes
// everywhere else.
func writeSparse(t testing.TB, path string, size int64, spans []span) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if _, err := f.WriteAt(s.data, s.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// The big sparse file: 2 GiB + 8 KiB. Its first data run straddles
// 0x7ffff000, the most one read/write/sendfile/copy_file_range call moves
// (MAX_RW_COUNT), and ends at 2 GiB; then a one-block hole; then 100 data
// bytes at the very end, past 2^31. Everything else is a hole.
const (
	bigSparseSize = 2<<30 + 8<<10
	maxRWCount    = 0x7ffff000
)

func bigSparseSpans(seed string) []span {
	return []span{
		{off: maxRWCount - 32<<10, data: randomBytes(36<<10, seed+"/a")},
		{off: bigSparseSize - 100, data: randomBytes(100, seed+"/b")},
	}
}

// dataRanges lists the data regions of f (SEEK_DATA/SEEK_HOLE), or the
// whole file when the filesystem cannot tell.
func dataRanges(f *os.File, size int64) ([][2]int64, error) {
	var rs [][2]int64
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			break
		}
		if err == unix.EINVAL || err == unix.EOPNOTSUPP {
			return [][2]int64{{0, size}}, nil
		}
		if err != nil {
			return nil, err
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			return nil, err
		}
		rs = append(rs, [2]int64{data, min(hole, size)})
		off = hole
	}
	return rs, nil
}

// mergeRanges returns the sorted union of two sorted range lists.
func mergeRanges(a, b [][2]int64) [][2]int64 {
	all := append(append([][2]int64{}, a...), b...)
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j][0] < all[j-1][0]; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	var out [][2]int64
	for _, r := range all {
		if n := len(out); n > 0 && r[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// assertSameContent fails the test unless got holds exactly the bytes of
// want. Regions that are holes in both files read as zeros in both, so
// only the union of their data regions is read: a 2 GiB sparse file
// compares in milliseconds.
func assertSameContent(t testing.TB, want, got string) {
	t.Helper()
	wf, err := os.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	gf, err := os.Open(got)
	if err != nil {
		t.Fatalf("the copy: %v", err)
	}
	defer gf.Close()
	wst, err := wf.Stat()
	if err != nil {
		t.Fatal(err)
	}
	gst, err := gf.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if !gst.Mode().IsRegular() {
		t.Fatalf("%s is %v, not a regular file", got, gst.Mode())
	}
	if wst.Size() != gst.Size() {
		t.Fatalf("%s: size %d, want %d", got, gst.Size(), wst.Size())
	}
	wr, err := dataRanges(wf, wst.Size())
	if err != nil {
		t.Fatal(err)
	}
	gr, err := dataRanges(gf, gst.Size())
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 1 << 20
	wb, gb := make([]byte, chunk), make([]byte, chunk)
	for _, r := range mergeRanges(wr, gr) {
		for off := r[0]; off < r[1]; off += chunk {
			n := int(min(chunk, r[1]-off))
			if _, err := wf.ReadAt(wb[:n], off); err != nil {
				t.Fatal(err)
			}
			if _, err := gf.ReadAt(gb[:n], off); err != nil {
				t.Fatalf("reading %s at %d: %v", got, off, err)
			}
			if !bytes.Equal(wb[:n], gb[:n]) {
				i := 0
				for wb[i] == gb[i] {
					i++
				}
				t.Fatalf("%s differs from %s at offset %d (%#x)", got, want, off+int64(i), off+int64(i))
			}
		}
	}
}

// assertFileBytes fails the test unless path is a regular file holding want.
func assertFileBytes(t testing.TB, path string, want []byte) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v, want a regular file", path, fi.Mode())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d expected (first difference at %d)", path, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// assertNotExist fails the test if path exists (as anything, even a
// dangling symlink).
func assertNotExist(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s must not exist (Lstat: %v)", path, err)
	}
}

// unnamedRE matches the path that strace -y and /proc/PID/fd give an
// unnamed (O_TMPFILE) file: DIR/#INODE (deleted).
var unnamedRE = regexp.MustCompile(`/#[0-9]+>? ?\(deleted\)`)

// isTempArg reports whether s (an strace argument list or return value)
// names fastcp's temporary file for the DEST named base: by its temporary
// name, or as an unnamed file.
func isTempArg(s, base string) bool {
	return strings.Contains(s, "/.fastcp-"+base+".") || strings.Contains(s, `".fastcp-`+base+".") || unnamedRE.MatchString(s)
}

// openTemps lists the temporary files that process pid has open under
// dir (in it, or anywhere below it with tree): the /proc/PID/fd/N paths,
// through which each can be stat'ed and read, of its unnamed (O_TMPFILE)
// files and of its named ones (.fastcp-*), one per file.
func openTemps(pid int, dir string, tree bool) []string {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(fdDir)
	seen := map[string]bool{}
	var out []string
	for _, e := range ents {
		p := join(fdDir, e.Name())
		target, err := os.Readlink(p)
		if err != nil || seen[target] {
			continue
		}
		path, deleted := strings.CutSuffix(target, " (deleted)")
		in, base := filepath.Dir(path), filepath.Base(path)
		if in != dir && !(tree && strings.HasPrefix(in, dir+"/")) {
			continue
		}
		if deleted && strings.HasPrefix(base, "#") || !deleted && strings.HasPrefix(base, ".fastcp-") {
			seen[target] = true
			out = append(out, p)
		}
	}
	return out
}

// openTempsAnywhere is openTemps for every process: for a fastcp started
// by a helper (strace) whose process ID the test does not know.
func openTempsAnywhere(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, p := range procs {
		if pid, err := strconv.Atoi(filepath.Base(p)); err == nil && pid != os.Getpid() {
			out = append(out, openTemps(pid, dir, false)...)
		}
	}
	return out
}

// openTempWithData waits until process pid has a temporary file under dir
// (see openTemps) that holds data, and returns its /proc/PID/fd path.
func openTempWithData(pid int, dir string) (string, bool) {
	var temp string
	ok := waitFor(func() bool {
		for _, p := range openTemps(pid, dir, false) {
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				temp = p
				return true
			}
		}
		return false
	})
	return temp, ok
}

// tempFiles lists fastcp's temporary files (.fastcp-*) in dir.
func tempFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".fastcp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// assertNoTemps fails the test if a .fastcp-* temporary file is left in
// any of dirs.
func assertNoTemps(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if names := tempFiles(t, d); len(names) > 0 {
			t.Errorf("temporary files left in %s: %v", d, names)
		}
	}
}

// statT returns path's raw stat (not following symlinks).
func statT(t testing.TB, path string) *syscall.Stat_t {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// blocks returns path's st_blocks (512-byte units).
func blocks(t testing.TB, path string) int64 { return statT(t, path).Blocks }

// lines splits output into lines without the final newline's empty line.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// debugLineRE is GNU cp's --debug line, with the values the contract allows.
var debugLineRE = regexp.MustCompile(`^copy offload: (yes|no|avoided|unsupported), reflink: (yes|no|unsupported), sparse detection: (no|zeros|SEEK_HOLE|SEEK_HOLE \+ zeros)$`)

// fallbackLineRE is one fallback line of --debug.
var fallbackLineRE = regexp.MustCompile(`^fallback: (reflink|copy_file_range|direct|sendfile|splice|rw) -> (reflink|copy_file_range|direct|sendfile|splice|rw) at offset ([0-9]+): (.+)$`)

// debugInfo is --debug's account of one copy.
type debugInfo struct {
	offload, reflink, sparse string
	strategy                 string
	fallbacks                []string // the fallback lines
}

// parseDebug checks the layout of --debug output for one copy of src to
// dst and returns its content.
func parseDebug(t testing.TB, out, src, dst string) debugInfo {
	t.Helper()
	ls := lines(out)
	if len(ls) < 3 {
		t.Fatalf("--debug printed %d lines, want at least 3:\n%s", len(ls), out)
	}
	if want := q(src) + " -> " + q(dst); ls[0] != want {
		t.Errorf("--debug line 1: got %q, want %q", ls[0], want)
	}
	m := debugLineRE.FindStringSubmatch(ls[1])
	if m == nil {
		t.Fatalf("--debug line 2 is not cp's debug line: %q", ls[1])
	}
	d := debugInfo{offload: m[1], reflink: m[2], sparse: m[3]}
	name, _, ok := strings.Cut(strings.TrimPrefix(ls[2], "strategy: "), " (")
	if !strings.HasPrefix(ls[2], "strategy: ") || !ok {
		t.Fatalf("--debug line 3 does not name the strategy as 'strategy: NAME (': %q", ls[2])
	}
	d.strategy = name
	for _, l := range ls[3:] {
		if strings.HasPrefix(l, "fallback:") {
			if !fallbackLineRE.MatchString(l) {
				t.Errorf("malformed fallback line: %q", l)
			}
			d.fallbacks = append(d.fallbacks, l)
		}
	}
	return d
}

// unblockFIFO lets a goroutine blocked opening the FIFO at path go on:
// opening it for reading and writing at once never blocks and counts as
// both ends; closing it again leaves the other side with EOF or EPIPE.
func unblockFIFO(path string) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
}

// waitFIFOPeer waits for a goroutine using the FIFO at path to finish,
// unblocking its open if the other side never came.
func waitFIFOPeer[T any](t testing.TB, path string, done <-chan T) T {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case v := <-done:
			return v
		case <-time.After(100 * time.Millisecond):
			unblockFIFO(path)
		case <-deadline:
			t.Fatalf("the writer of FIFO %s did not finish", path)
		}
	}
}

// fifoWriter opens the FIFO at path for writing (blocking until a reader
// comes), writes data and, once hold is closed (at once when hold is nil),
// closes it. The returned channel gets the write error.
func fifoWriter(path string, data []byte, hold <-chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		_, err = f.Write(data)
		if hold != nil {
			<-hold
		}
		f.Close()
		done <- err
	}()
	return done
}

// fifoRead is what a FIFO reader got.
type fifoRead struct {
	data []byte
	err  error
}

// fifoReader opens the FIFO at path for reading and reads it to EOF in a
// goroutine. It holds a write end of its own, so that neither its open nor
// the writer's blocks, whatever the writer does (even replace the FIFO);
// EOF comes once release has dropped that write end: call it after the
// writer under test has exited. wait returns what was read.
func fifoReader(t testing.TB, path string) (release func(), wait func() fifoRead) {
	t.Helper()
	keep, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { unix.Close(keep) }) }
	t.Cleanup(release)
	f, err := os.Open(path)
	if err != nil {
		release()
		t.Fatal(err)
	}
	done := make(chan fifoRead, 1)
	go func() {
		b, err := io.ReadAll(f)
		f.Close()
		done <- fifoRead{b, err}
	}()
	wait = func() fifoRead {
		release()
		select {
		case r := <-done:
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("reading FIFO %s did not end", path)
			return fifoRead{}
		}
	}
	return release, wait
}

// mustMkdir creates dir (and parents).
func mustMkdir(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// join is filepath.Join.
var join = filepath.Join

// wantSignalDeath checks cmd.Wait's err for a fastcp sent the signal
// named sig: it must have cleaned up and then died of that signal, as cp
// does, so that a shell sees a signal death (wait status 128+signal) and
// stops its loop or script.
func wantSignalDeath(t testing.TB, err error, sig string, code int, stderr string) {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		t.Errorf("fastcp exited 0 after %s", sig)
	case errors.As(err, &ee):
		if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() {
			t.Errorf("fastcp exited %d after %s instead of dying of it; stderr %q", ee.ExitCode(), sig, stderr)
		} else if 128+int(ws.Signal()) != code {
			t.Errorf("fastcp died of %v after %s, want status %d; stderr %q", ws.Signal(), sig, code, stderr)
		}
	default:
		t.Fatal(err)
	}
}

// waitStatus is the shell's $? for cmd.Wait's err: the exit status, or
// 128+signal for a death by a signal (strace ends itself with the signal
// its tracee died of, so a traced fastcp's death reads the same).
func waitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}
