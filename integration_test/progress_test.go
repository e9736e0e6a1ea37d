// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

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
	// The FIFO is held open until the terminal shows the 8 MiB copied
	// (script merges the terminal's output onto its stdout).
	data := randomBytes(8<<20, t.Name())
	stdout := newWatched()
	hold := make(chan struct{})
	go func() {
		stdout.waitFor(func(out string) bool { return strings.Contains(out, "\r") && strings.Contains(out, " 8 MiB ") })
		close(hold)
	}()
	written := fifoWriter(src, data, hold)
	cmdline := strings.Join([]string{setup.Bin, src, filepath.Join(dir, "dst")}, " ")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qfec", cmdline, "/dev/null")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	stdout.close()
	r := cmdResult(t, cmd, err, stdout.String(), stderr.String())
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		t.Fatalf("under a terminal: %v", r)
	}
	// A FIFO has no size: no percentage.
	out := r.stdout
	if !strings.Contains(out, "\r") || !strings.Contains(out, " 8 MiB ") {
		t.Errorf("no progress bar with the bytes copied on the terminal: %q", out)
	}
	if strings.Contains(out, "%") {
		t.Errorf("a percentage without a total: %q", out)
	}
	// Cleared at the end: the last thing written is not a bar.
	last := out[strings.LastIndex(out, "\r")+1:]
	if strings.Contains(last, " MiB") {
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
	// The FIFO is held open until the first line (due after a second)
	// was printed.
	data := randomBytes(8<<20, t.Name())
	stderr := newWatched()
	hold := make(chan struct{})
	go func() {
		stderr.waitFor(func(out string) bool { return strings.Contains(out, "\n") })
		close(hold)
	}()
	written := fifoWriter(src, data, hold)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "--progress", src, filepath.Join(dir, "dst"))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	stderr.close()
	r := cmdResult(t, cmd, err, stdout.String(), stderr.String())
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
		t.Fatalf("--progress into a file printed nothing")
	}
	for _, l := range ls {
		if !strings.HasPrefix(l, "fastcp: progress: 8 MiB, ") || !strings.Contains(l, " MB/s") {
			t.Errorf("unexpected progress line %q", l)
		}
	}
	assertFileBytes(t, filepath.Join(dir, "dst"), data)
}

// openPTY opens a pseudo-terminal cols columns wide: the master, to read
// what is drawn, and the terminal itself, to give a child as its stderr.
func openPTY(t *testing.T, cols int) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal("unlockpt:", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal("ptsname:", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// siRate is a rate as the bar prints it, in SI units: "450 MB/s".
var siRate = regexp.MustCompile(`[0-9] [kMGTPE]?B/s\b`)

// The bar fits the terminal's width: at 60, 80 and 120 columns every
// redraw is shorter than the line (a full line wraps, and each redraw then
// leaves a stale line behind), starts with the "copying" word, and is
// erased at the end. The copy goes into a FIFO whose reader stops half-way
// until three redraws showed a percentage (and from 80 columns a bar).
func TestProgressBarFitsTheTerminal(t *testing.T) {
	for _, cols := range []int{60, 80, 120} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := randomBytes(8<<20, t.Name())
			src := filepath.Join(dir, "src")
			writeFile(t, src, data, 0o644)
			dst := filepath.Join(dir, strings.Repeat("a-long-file-name-", 5)+"end")
			if err := unix.Mkfifo(dst, 0o644); err != nil {
				t.Fatal(err)
			}
			master, tty := openPTY(t, cols)
			drawn := newWatched()
			go func() {
				io.Copy(drawn, master) // EIO once fastcp has closed the terminal
				drawn.close()
			}()
			withBar := func(line string) bool {
				return strings.Contains(line, "% [") || cols < 80 && strings.Contains(line, "%")
			}
			read := make(chan []byte, 1)
			go func() {
				f, err := os.Open(dst)
				if err != nil {
					read <- nil
					return
				}
				defer f.Close()
				half := make([]byte, 4<<20)
				_, err = io.ReadFull(f, half)
				redrawn := drawn.waitFor(func(out string) bool {
					n := 0
					for _, m := range redrawRE.FindAllStringSubmatch(out, -1) {
						if withBar(m[1]) {
							n++
						}
					}
					return n >= 3
				})
				rest, err2 := io.ReadAll(f)
				if err != nil || err2 != nil || !redrawn {
					read <- nil
					return
				}
				read <- append(half, rest...)
			}()

			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, setup.Bin, src, dst)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &stdout, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("fastcp on a %d-column terminal: %v", cols, err)
			}
			if got := <-read; !bytes.Equal(got, data) {
				t.Fatalf("the FIFO got %d bytes, want the %d of the source (and three redraws with a percentage meanwhile)", len(got), len(data))
			}
			drawn.waitFor(func(string) bool { return false }) // until the terminal is closed
			out := drawn.String()
			if !strings.HasSuffix(out, "\r\x1b[K") {
				t.Errorf("the bar is not erased at the end: output ends %q", out[max(0, len(out)-40):])
			}
			for _, seg := range strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' }) {
				line := strings.ReplaceAll(seg, "\x1b[K", "")
				if line == "" {
					continue
				}
				if n := utf8.RuneCountInString(line); n >= cols {
					t.Errorf("a %d-column redraw on a %d-column terminal: %q", n, cols, line)
				}
				if !strings.HasPrefix(line, "copying ") {
					t.Errorf("a redraw without the copying word: %q", line)
				}
				// Before the first byte there is no rate to show (a
				// bar drawn at once on a busy machine): "0 B/8 MiB".
				if cols >= 80 && strings.Contains(line, "% [") && !strings.Contains(line, " 0 B/") && !siRate.MatchString(line) {
					t.Errorf("no rate at %d columns: %q", cols, line)
				}
			}
		})
	}
}

// redrawRE is one whole redraw of the bar on a terminal: the line, written
// over the last one, and the rest of the line erased.
var redrawRE = regexp.MustCompile("\r([^\r\n\x1b]+)\x1b\\[K")
