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
	"time"
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
	// script merges the terminal's output onto its stdout. A FIFO has no
	// size: no percentage.
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
// for a second, so several redraws show a percentage (and from 80 columns
// a bar).
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
				time.Sleep(time.Second)
				rest, err2 := io.ReadAll(f)
				if err != nil || err2 != nil {
					read <- nil
					return
				}
				read <- append(half, rest...)
			}()

			master, tty := openPTY(t, cols)
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
			drawn := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(master) // EIO once fastcp has closed the terminal
				drawn <- b
			}()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("fastcp on a %d-column terminal: %v", cols, err)
			}
			if got := <-read; !bytes.Equal(got, data) {
				t.Fatalf("the FIFO got %d bytes, want the %d of the source", len(got), len(data))
			}
			out := string(<-drawn)
			if !strings.HasSuffix(out, "\r\x1b[K") {
				t.Errorf("the bar is not erased at the end: output ends %q", out[max(0, len(out)-40):])
			}
			withBar := 0
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
				if strings.Contains(line, "% [") || cols < 80 && strings.Contains(line, "%") {
					withBar++
				}
				if cols >= 80 && strings.Contains(line, "% [") && !siRate.MatchString(line) {
					t.Errorf("no rate at %d columns: %q", cols, line)
				}
			}
			if withBar < 3 {
				t.Errorf("%d redraws with a percentage and a bar in a copy held for a second: %q", withBar, out)
			}
		})
	}
}
