// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A copy that goes on while the test asks it how far it is: DEST is a FIFO
// whose reader takes half of the source, then waits for the test's word
// before it reads the rest.

// slowFIFO makes dir/fifo and reads it in a goroutine: half of size bytes
// at once, the rest after release is closed. opened is closed once the
// writer has opened the FIFO (fastcp is running its own code by then, its
// signal handlers set up); got returns what was read.
func slowFIFO(t *testing.T, dir string, size int) (opened, release chan struct{}, got func() []byte) {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	opened, release = make(chan struct{}), make(chan struct{})
	done := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		close(opened)
		if err != nil {
			done <- nil
			return
		}
		defer f.Close()
		half := make([]byte, size/2)
		if _, err := io.ReadFull(f, half); err != nil {
			done <- nil
			return
		}
		<-release
		rest, _ := io.ReadAll(f)
		done <- append(half, rest...)
	}()
	return opened, release, func() []byte { return <-done }
}

// lockedBuffer is stderr, read while fastcp writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// askUntil sends SIGUSR1 to pid every 20 ms until cond holds (a handler
// installed a little into the run answers one of them); false after 10 s.
func askUntil(pid int, cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		syscall.Kill(pid, syscall.SIGUSR1)
	}
	return cond()
}

// statusRE is the status line of a copy of 8 MiB into 'fifo'.
var statusRE = regexp.MustCompile(`^fastcp: copying 'fifo': (\d+) of 8388608 bytes \([0-9.]+ [KMG]?i?B of 8 MiB, (\d+)%\), [0-9.]+ MB/s, (\d+m)?\d+s (left|elapsed)$`)

// TestStatusOnSIGUSR1: without a terminal and without --progress, SIGUSR1
// prints one status line on stderr, and the copy goes on to the end, whole.
func TestStatusOnSIGUSR1(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(8<<20, "usr1")
	writeFile(t, join(dir, "src"), data, 0o644)
	opened, release, got := slowFIFO(t, dir, len(data))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "src", "fifo")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Not in the first moments of the process, when SIGUSR1 still has
	// its default action (the manual page says so): once it copies.
	<-opened
	answered := askUntil(cmd.Process.Pid, func() bool { return strings.Contains(stderr.String(), "\n") })
	close(release)
	err := cmd.Wait()
	if !answered {
		t.Fatalf("no status line on SIGUSR1; stderr %q", stderr.String())
	}
	if err != nil {
		t.Fatalf("fastcp did not survive SIGUSR1: %v; stderr %q", err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		m := statusRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not a status line: %q", l)
			continue
		}
		if m[1] == "0" {
			t.Errorf("the status counts no bytes though half the file was read: %q", l)
		}
	}
	if b := got(); !bytes.Equal(b, data) {
		t.Errorf("the FIFO got %d bytes, want the source's %d", len(b), len(data))
	}
}

// TestStatusWhenSIGUSR1IsIgnored: a caller that starts fastcp with SIGUSR1
// ignored (so that no SIGUSR1 can kill it in its first moments, before
// Go's runtime has its handlers) still gets its status lines; SIGUSR1 sent
// from the moment fastcp runs never kills it.
func TestStatusWhenSIGUSR1IsIgnored(t *testing.T) {
	env := needTool(t, "env")
	if out, err := exec.Command(env, "--ignore-signal=USR1", "true").CombinedOutput(); err != nil {
		t.Skipf("env cannot ignore a signal (coreutils 8.31 or later): %v %s", err, out)
	}
	dir := t.TempDir()
	data := randomBytes(8<<20, "usr1-ignored")
	writeFile(t, join(dir, "src"), data, 0o644)
	_, release, got := slowFIFO(t, dir, len(data))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env, "--ignore-signal=USR1", setup.Bin, "src", "fifo")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "LC_ALL=C")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	// From the moment env has become fastcp (and before the runtime
	// has started, as often as this loop gets there), a SIGUSR1 every
	// millisecond.
	bin, _ := filepath.EvalSymlinks(setup.Bin)
	if !waitFor(func() bool { exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); return exe == bin }) {
		t.Fatal("env did not run fastcp")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(stderr.String(), "\n"); time.Sleep(time.Millisecond) {
		syscall.Kill(pid, syscall.SIGUSR1)
	}
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fastcp with SIGUSR1 ignored: %v; stderr %q", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) == 0 || !statusRE.MatchString(lines[0]) {
		t.Errorf("no status line: %q", stderr.String())
	}
	if b := got(); !bytes.Equal(b, data) {
		t.Errorf("the FIFO got %d bytes, want the source's %d", len(b), len(data))
	}
}

// progressKeys is --progress=json's schema, as the manual page documents
// it: every key in every object.
var progressKeys = []string{"schema", "event", "elapsed_s", "state", "file", "bytes", "total_bytes", "percent", "files", "total_files", "bytes_per_s", "eta_s"}

// progressObject is one line of --progress=json.
type progressObject struct {
	Schema     int     `json:"schema"`
	Event      string  `json:"event"`
	ElapsedS   float64 `json:"elapsed_s"`
	State      string  `json:"state"`
	File       string  `json:"file"`
	Bytes      int64   `json:"bytes"`
	TotalBytes int64   `json:"total_bytes"`
	Percent    int64   `json:"percent"`
	Files      int64   `json:"files"`
	TotalFiles int64   `json:"total_files"`
	BytesPerS  float64 `json:"bytes_per_s"`
	ETAS       float64 `json:"eta_s"`
}

// parseProgress reads --progress=json's stderr: every line one object with
// exactly the schema's keys.
func parseProgress(t *testing.T, stderr string) []progressObject {
	t.Helper()
	var objs []progressObject
	want := slices.Clone(progressKeys)
	slices.Sort(want)
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a line that is not a JSON object: %q", l)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("keys %v, want %v: %s", keys, want, l)
		}
		var o progressObject
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		objs = append(objs, o)
	}
	return objs
}

// TestProgressJSON runs a copy with --progress=json: a start object, one a
// second while it goes on, one on SIGUSR1, an end object, each a line of
// its own with every key of the schema, the counts growing.
func TestProgressJSON(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(8<<20, "progress-json")
	writeFile(t, join(dir, "src"), data, 0o644)
	_, release, got := slowFIFO(t, dir, len(data))
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "--progress=json", "src", "fifo")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Wait for the copy to be under way (a progress object a second on,
	// naming the file), then for the status object SIGUSR1 asks for.
	if !waitFor(func() bool {
		s := stderr.String()
		return strings.Contains(s, `"event":"progress"`) && strings.Contains(s, `"file":"fifo"`)
	}) {
		t.Fatalf("no progress object naming the file: %q", stderr.String())
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGUSR1)
	ok := waitFor(func() bool { return strings.Contains(stderr.String(), `"event":"status"`) })
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fastcp --progress=json: %v; stderr %q", err, stderr.String())
	}
	if !ok {
		t.Fatalf("no status or no progress object: %q", stderr.String())
	}
	objs := parseProgress(t, stderr.String())
	var events []string
	for i, o := range objs {
		events = append(events, o.Event)
		if o.Schema != 1 || o.TotalBytes != int64(len(data)) || o.TotalFiles != 1 {
			t.Errorf("object %d: %+v", i, o)
		}
		if i > 0 && (o.Bytes < objs[i-1].Bytes || o.ElapsedS < objs[i-1].ElapsedS) {
			t.Errorf("object %d goes back: %+v after %+v", i, o, objs[i-1])
		}
		switch {
		case o.Event == "progress" && o.File == "" && o.Bytes == 0:
			// A second went by before the copy began (a busy
			// machine): no file yet, as the schema says.
		case o.Event == "progress" || o.Event == "status":
			if o.File != "fifo" || o.State != "copying" || o.Bytes <= 0 || o.Percent != o.Bytes*100/o.TotalBytes || o.Files != 0 {
				t.Errorf("object %d: %+v", i, o)
			}
		}
	}
	if events[0] != "start" || events[len(events)-1] != "end" {
		t.Errorf("events %v: want start first and end last", events)
	}
	end := objs[len(objs)-1]
	if end.Bytes != int64(len(data)) || end.Percent != 100 || end.Files != 1 || end.State != "done" || end.ETAS != 0 {
		t.Errorf("end object %+v", end)
	}
	if b := got(); !bytes.Equal(b, data) {
		t.Errorf("the FIFO got %d bytes, want the source's %d", len(b), len(data))
	}
}

// TestProgressBarErasedOnFailure: a copy that fails while its bar is on
// the terminal (DEST past the file size limit) erases the bar before its
// error line, and leaves none behind.
func TestProgressBarErasedOnFailure(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := unix.Mkfifo(src, 0o600); err != nil {
		t.Fatal(err)
	}
	master, tty := openPTY(t, 100)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	// 8 MiB at most (ulimit -f counts 512-byte blocks); Go ignores
	// SIGXFSZ, so the write past it fails with EFBIG.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `ulimit -f 16384 && exec "$0" "$@"`, setup.Bin, "src", "dst")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "LC_ALL=C")
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	tty.Close()
	var mu sync.Mutex
	var seen []byte
	drawn := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			seen = append(seen, buf[:n]...)
			mu.Unlock()
			if err != nil {
				mu.Lock()
				drawn <- string(seen)
				mu.Unlock()
				return
			}
		}
	}()
	w, err := os.OpenFile(src, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunk := randomBytes(1<<20, "fail")
	w.Write(chunk)
	if !waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return bytes.Contains(seen, []byte("copying 'dst'")) }) {
		t.Fatal("no bar drawn")
	}
	for range 16 {
		if _, err := w.Write(chunk); err != nil {
			break // fastcp gave up reading
		}
	}
	w.Close()
	err = cmd.Wait()
	out := <-drawn
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v; terminal %q", err, out)
	}
	msg := "fastcp: error writing 'dst': File too large\r\n"
	i := strings.Index(out, msg)
	if i < 0 {
		t.Fatalf("no error line on the terminal: %q", out)
	}
	if before := out[:i]; !strings.HasSuffix(before, "\r\x1b[K") && !strings.HasSuffix(before, "\n") {
		t.Errorf("the bar was not erased before the error line: %q", before[max(0, len(before)-60):])
	}
	if last := strings.LastIndex(out, "copying 'dst'"); last > i && !strings.Contains(out[last:], "\r\x1b[K") {
		t.Errorf("a bar drawn after the error was left on the terminal: %q", out[last:])
	}
	if _, err := os.Stat(join(dir, "dst")); !os.IsNotExist(err) {
		t.Errorf("a failed copy left DEST: %v", err)
	}
}

// TestProgressBarErasedOnSIGINT: Ctrl-C in the middle of a copy erases the
// bar before fastcp dies of the signal.
func TestProgressBarErasedOnSIGINT(t *testing.T) {
	dir := t.TempDir()
	data := randomBytes(8<<20, "sigint-bar")
	writeFile(t, join(dir, "src"), data, 0o644)
	opened, release, _ := slowFIFO(t, dir, len(data))
	defer close(release)
	master, tty := openPTY(t, 100)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "src", "fifo")
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	tty.Close()
	var mu sync.Mutex
	var seen []byte
	drawn := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			seen = append(seen, buf[:n]...)
			if err != nil {
				drawn <- string(seen)
				mu.Unlock()
				return
			}
			mu.Unlock()
		}
	}()
	<-opened
	if !waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return bytes.Contains(seen, []byte("copying 'fifo'")) }) {
		t.Fatal("no bar drawn")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	out := <-drawn
	wantSignalDeath(t, err, "SIGINT", 130, "")
	last := strings.LastIndex(out, "copying 'fifo'")
	if !strings.Contains(out[last:], "\r\x1b[K") {
		t.Errorf("the bar was left on the terminal at SIGINT: output ends %q", out[max(0, len(out)-80):])
	}
}
