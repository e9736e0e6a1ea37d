package integration_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The progress bar: drawn on a terminal, silent otherwise, plain lines with
// --progress into a file.

func TestProgressBarOnATerminal(t *testing.T) {
	needTool(t, "script") // gives fastcp a terminal
	dir := t.TempDir()
	src := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(src, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO held open for a second: several redraws (every 100 ms) see
	// the 8 MiB already copied, however fast the machine.
	data := randomBytes(8<<20, t.Name())
	hold := make(chan struct{})
	time.AfterFunc(time.Second, func() { close(hold) })
	written := fifoWriter(src, data, hold)
	cmdline := strings.Join([]string{setup.Bin, src, filepath.Join(dir, "dst")}, " ")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qfec", cmdline, "/dev/null")
	r := runCmd(t, cmd)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		t.Fatalf("under a terminal: %v", r)
	}
	// script merges the terminal's output onto its stdout.
	out := r.stdout
	if !strings.Contains(out, "\r") || !strings.Contains(out, "8.0 MiB") {
		t.Errorf("no progress bar with the bytes copied on the terminal: %q", out)
	}
	// Cleared at the end: the last thing written is not a bar.
	last := out[strings.LastIndex(out, "\r")+1:]
	if strings.Contains(last, "MiB") {
		t.Errorf("the bar was left on the terminal: last line %q", last)
	}
	assertFileBytes(t, filepath.Join(dir, "dst"), data)
}

func TestNoProgressWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	writeFile(t, src, randomBytes(8<<20, t.Name()), 0o644)
	wantSuccess(t, fastcp(t, dir, "--strategy=rw", "--buffer-size=4K", src, filepath.Join(dir, "dst")))
	// -q wins over nothing, and --no-progress is silent too.
	wantSuccess(t, fastcp(t, dir, "--no-progress", src, filepath.Join(dir, "dst2")))
}

func TestProgressLinesIntoAFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(src, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO held open for 1.5 s: the copy lasts past the first line,
	// which is due after a second.
	data := randomBytes(8<<20, t.Name())
	hold := make(chan struct{})
	time.AfterFunc(1500*time.Millisecond, func() { close(hold) })
	written := fifoWriter(src, data, hold)
	r := fastcp(t, dir, "--progress", src, filepath.Join(dir, "dst"))
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("%v", r)
	}
	if strings.ContainsAny(r.stderr, "\r\x1b") {
		t.Errorf("escape codes or carriage returns without a terminal: %q", r.stderr)
	}
	ls := lines(r.stderr)
	if len(ls) == 0 {
		t.Fatalf("--progress into a file printed nothing in 1.5 s")
	}
	for _, l := range ls {
		if !strings.HasPrefix(l, "fastcp: progress: 8.0 MiB, ") || !strings.Contains(l, "MiB/s") {
			t.Errorf("unexpected progress line %q", l)
		}
	}
	assertFileBytes(t, filepath.Join(dir, "dst"), data)
}
