// SPDX-License-Identifier: MIT

package output

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testBar is a terminal bar drawing into a buffer, on a terminal as wide as
// *cols says.
func testBar(total int64, cols *int) (*Progress, *bytes.Buffer) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, cols: func() int { return *cols }, ttyFd: -1, start: time.Now()}
	p.total.Store(total)
	p.Describe("")
	return p, &buf
}

// redraw draws p once and returns what it wrote: the line ("" when nothing
// was drawn), failing on anything but "\r", the line and the erase of the
// rest of the line.
func redraw(t *testing.T, p *Progress, buf *bytes.Buffer) string {
	t.Helper()
	buf.Reset()
	p.draw()
	out := buf.String()
	if out == "" || out == "\r\x1b[K" {
		return ""
	}
	line, ok1 := strings.CutPrefix(out, "\r")
	line, ok2 := strings.CutSuffix(line, "\x1b[K")
	if !ok1 || !ok2 || strings.ContainsAny(line, "\r\n\x1b") {
		t.Fatalf("a redraw is not one line: %q", out)
	}
	return line
}

// The line fits every width, never reaching the last column, and from 20
// columns on it is always drawn, with the percentage (or, with no total,
// the bytes); from 46 columns (the longest "flushing 100% 1023.9 MiB/1023.9
// MiB 1023 MB/s" and a margin) the word, the percentage, the bytes and the
// rate are all there. With a bar, the line takes the whole width but the
// last column.
func TestBarFits(t *testing.T) {
	names := []string{"", "'x'", "'" + strings.Repeat("long-name-", 12) + "'", "'" + strings.Repeat("日本語", 20) + "'"}
	for _, c := range []struct {
		total, done int64
		files       int64
	}{
		{4 << 30, 1 << 30, 1},
		{4 << 30, 4 << 30, 1}, // all copied, the last file flushing
		{999_950_000, 999_950, 3000},
		{1 << 62, 1, 2},      // a time left of billions of years
		{0, 0, 5},            // empty files only
		{-1, 999_950_000, 1}, // a FIFO: no total
		{-1, 0, 1},
	} {
		for _, verb := range []string{"copying", "flushing"} {
			for _, name := range names {
				cols := 0
				p, buf := testBar(c.total, &cols)
				p.filesTotal.Store(c.files)
				p.start = time.Now().Add(-3 * time.Second)
				p.Describe(strings.TrimSpace(verb + " " + name))
				p.Add(c.done)
				for cols = 200; cols >= 8; cols-- {
					line := redraw(t, p, buf)
					if line == "" {
						if cols >= 20 {
							t.Fatalf("%d columns, %v: nothing drawn", cols, c)
						}
						continue
					}
					w := textWidth(line)
					if w > cols-1 {
						t.Fatalf("%d columns, %v: %d wide: %q", cols, c, w, line)
					}
					known := c.total >= 0
					if known && !strings.Contains(line, "%") || !known && !strings.Contains(line, "B") {
						t.Fatalf("%d columns: no percentage or bytes: %q", cols, line)
					}
					if cols >= 46 && (!strings.HasPrefix(line, verb+" ") || c.done > 0 && !strings.Contains(line, "B/s") || !strings.Contains(line, "iB") && !strings.Contains(line, " B")) {
						t.Fatalf("%d columns: not the word, the bytes and the rate: %q", cols, line)
					}
					if strings.Contains(line, "[") && w != cols-1 {
						t.Fatalf("%d columns: a bar that leaves %d columns unused: %q", cols, cols-1-w, line)
					}
					if name != "" && strings.Contains(line, "…") && !strings.Contains(line, " '…") {
						t.Fatalf("%d columns: a cut name without its opening quote: %q", cols, line)
					}
				}
			}
		}
	}
}

// The layout at several widths: what each keeps, in order.
func TestBarWidths(t *testing.T) {
	const name = "'/srv/backups/2026/12/01/a-very-long-directory-name/disk.img'"
	s := lineState{verb: "copying", name: name, done: 1 << 30, total: 4 << 30, files: 3, filesTotal: 10, rate: 100e6, elapsed: 10 * time.Second}
	for _, c := range []struct {
		cols int
		want string
	}{
		{20, "copying  25%"},
		{40, "copying  25% 1 GiB/4 GiB 100 MB/s"},
		{50, "copying  25% 1 GiB/4 GiB 100 MB/s 32s left"},
		{62, "copying  25% [>....] 1 GiB/4 GiB 100 MB/s 3/10 files 32s left"},
		{80, "copying '…-name/disk.img'  25% [>....] 1 GiB/4 GiB 100 MB/s 3/10 files 32s left"},
		{120, "copying '…backups/2026/12/01/a-very-long-directory-name/disk.img'  25% [>....] 1 GiB/4 GiB 100 MB/s 3/10 files 32s left"},
		{160, "copying '/srv/backups/2026/12/01/a-very-long-directory-name/disk.img'  25% [=========>...............................] 1 GiB/4 GiB 100 MB/s 3/10 files 32s left"},
	} {
		got := layLine(c.cols, s)
		if got != c.want {
			t.Errorf("%d columns:\n got %q\nwant %q", c.cols, got, c.want)
		}
		if strings.Contains(got, "[") && textWidth(got) != c.cols-1 {
			t.Errorf("%d columns: %d wide, want the width but the last column", c.cols, textWidth(got))
		}
	}
	// A single file: no file count, still the time left.
	s.filesTotal = 1
	if got := layLine(80, s); strings.Contains(got, "files") || !strings.HasSuffix(got, " 32s left") {
		t.Errorf("one file at 80 columns: %q", got)
	}
	// Too narrow for the percentage: nothing.
	if got := layLine(4, s); got != "" {
		t.Errorf("4 columns: %q, want nothing", got)
	}
}

// Unknown total (a FIFO): no percentage and no bar; the bytes, the rate
// and the elapsed time.
func TestBarUnknownTotal(t *testing.T) {
	s := lineState{verb: "copying", name: "'dst'", done: 8 << 20, total: -1, rate: 4e6, elapsed: 2 * time.Second}
	if got, want := layLine(80, s), "copying 'dst' 8 MiB 4.0 MB/s 2s"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
}

// Clear erases a drawn bar, once.
func TestBarClear(t *testing.T) {
	cols := 80
	p, buf := testBar(100, &cols)
	p.clear()
	if buf.Len() != 0 {
		t.Errorf("cleared before drawn: %q", buf.String())
	}
	redraw(t, p, buf)
	buf.Reset()
	p.clear()
	p.clear()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("clear: %q", buf.String())
	}
}

func TestRateAndLeft(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want string
	}{{450e6, "450 MB/s"}, {2.25e6, "2.2 MB/s"}, {12345e6, "12345 MB/s"}} {
		if got := Rate(c.rate); got != c.want {
			t.Errorf("Rate(%g) = %q, want %q", c.rate, got, c.want)
		}
	}
	for _, c := range []struct {
		rest float64
		want string
	}{{7, "7s"}, {125, "2m05s"}, {3725, "1h02m"}} {
		if got := left(0, int64(c.rest*1e6), 1e6); got != c.want {
			t.Errorf("left(%gs) = %q, want %q", c.rest, got, c.want)
		}
	}
}

// The bar is erased before any other line is printed.
func TestBarClearedBeforeALine(t *testing.T) {
	cols := 80
	p, buf := testBar(4<<30, &cols)
	o := New("fastcp", io.Discard, buf)
	o.clearLine, p.out = p.clear, o
	p.Describe("copying 'dst'")
	p.Add(1 << 30)
	redraw(t, p, buf)
	o.Errorf("cannot stat 'x'")
	if out := buf.String(); !strings.HasSuffix(out, "\x1b[K\r\x1b[Kfastcp: cannot stat 'x'\n") {
		t.Errorf("the bar was not erased before the message: %q", out)
	}
}

// screen is what a program wrote to a pseudo-terminal, read from its master
// as it comes.
type screen struct {
	tty *os.File // the terminal itself
	mu  sync.Mutex
	got sync.Cond // more was read, or the master was closed
	out []byte
	eof bool
}

// openPTY opens a pseudo-terminal cols columns wide: the terminal itself,
// and its master read until the terminal is closed.
func openPTY(t *testing.T, cols int) *screen {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
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
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	sc := &screen{tty: s}
	sc.got.L = &sc.mu
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b) // EIO once the terminal is closed
			sc.mu.Lock()
			sc.out = append(sc.out, b[:n]...)
			sc.eof = err != nil
			sc.got.Broadcast()
			sc.mu.Unlock()
			if err != nil {
				m.Close()
				return
			}
		}
	}()
	return sc
}

// waitFor waits until what was written so far satisfies cond; false when
// the terminal was closed first.
func (sc *screen) waitFor(cond func(out string) bool) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for !cond(string(sc.out)) {
		if sc.eof {
			return false
		}
		sc.got.Wait()
	}
	return true
}

// all closes the terminal and returns everything written to it.
func (sc *screen) all() string {
	sc.tty.Close()
	sc.waitFor(func(string) bool { return false })
	return string(sc.out)
}

// redrawRE is one whole redraw of the bar on a terminal: the line, written
// over the last one, and the rest of the line erased.
var redrawRE = regexp.MustCompile("\r([^\r\n\x1b]+)\x1b\\[K")

// redraws are the lines of the whole redraws in out.
func redraws(out string) []string {
	var lines []string
	for _, m := range redrawRE.FindAllStringSubmatch(out, -1) {
		lines = append(lines, m[1])
	}
	return lines
}

// drawnWith returns a condition that holds once a whole redraw starts
// with verb (which the bar shows whatever the width).
func drawnWith(verb string) func(string) bool {
	return func(out string) bool {
		for _, l := range redraws(out) {
			if strings.HasPrefix(l, verb+" ") {
				return true
			}
		}
		return false
	}
}

// The whole bar on a real terminal, with the copier's counting, a new
// description and messages from other goroutines while it redraws, and the
// terminal resized: run under -race. Every redraw fits the width of its
// moment: the ones after the resize, the new width; the line is erased at
// the end. The writers wait for the bar's redraws, never for the clock.
func TestBarOnATerminal(t *testing.T) {
	for _, total := range []int64{64 << 20, -1} {
		sc := openPTY(t, 120)
		o := New("fastcp", io.Discard, sc.tty)
		p := o.StartProgress(total, 105)
		var writers, paused sync.WaitGroup
		resized := make(chan struct{})
		for g := range 3 {
			writers.Add(1)
			paused.Add(1)
			go func() {
				defer writers.Done()
				for i := range 35 {
					switch i {
					case 12:
						// The ticker draws while the others go on.
						sc.waitFor(func(out string) bool { return len(redraws(out)) > 0 })
					case 17:
						paused.Done()
						<-resized
					}
					p.Add(1 << 20)
					p.Describe(fmt.Sprintf("copying 'file-%d-%d'", g, i))
					if i%10 == 9 {
						o.Errorf("message %d-%d", g, i)
					}
				}
			}()
		}
		paused.Wait()
		if err := unix.IoctlSetWinsize(int(sc.tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 60}); err != nil {
			t.Fatal(err)
		}
		// Described after the resize: a redraw that shows it was laid
		// out for 60 columns.
		p.Describe("verifying 'x'")
		if !sc.waitFor(drawnWith("verifying")) {
			t.Fatal("the terminal was closed")
		}
		close(resized)
		writers.Wait()
		p.Describe("flushing 'x'")
		if !sc.waitFor(drawnWith("flushing")) {
			t.Fatal("the terminal was closed")
		}
		p.Finish()
		out := sc.all()
		if !strings.HasSuffix(out, "\r\x1b[K") {
			t.Errorf("total %d: not erased at the end: %q", total, out)
		}
		after := false
		for _, line := range redraws(out) {
			after = after || strings.HasPrefix(line, "verifying ")
			if n := textWidth(line); n >= 120 || after && n >= 60 {
				t.Errorf("total %d: %d wide (after the resize to 60 columns: %v): %q", total, n, after, line)
			}
			if verb, _, _ := strings.Cut(line, " "); verb != "copying" && verb != "verifying" && verb != "flushing" {
				t.Errorf("total %d: no verb: %q", total, line)
			}
		}
		if n := strings.Count(out, "fastcp: message "); n != 9 {
			t.Errorf("total %d: %d messages, want 9: %q", total, n, out)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0:                 "0 B",
		1023:              "1023 B",
		1024:              "1 KiB",
		1536:              "1.5 KiB",
		1<<20 - 1:         "1023.9 KiB",
		8 << 20:           "8 MiB",
		1<<30 + 1<<29:     "1.5 GiB",
		1 << 40:           "1 TiB",
		3 << 50:           "3 PiB",
		16<<20 - 16<<10*3: "15.9 MiB",
	} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TERM=dumb: no escape sequence is ever written; a shorter line blanks
// what the longer one before it left with spaces, and clearing the bar
// blanks the whole line.
func TestBarOnDumbTerminal(t *testing.T) {
	var buf bytes.Buffer
	cols := 120
	p := &Progress{w: &buf, cols: func() int { return cols }, dumb: true, ttyFd: -1, start: time.Now()}
	p.total.Store(4 << 30)
	p.Describe("copying 'a-rather-long-file-name.img'")
	p.Add(1 << 30)
	p.draw()
	first := buf.String()
	buf.Reset()
	cols = 30
	p.draw()
	second := buf.String()
	buf.Reset()
	p.clear()
	cleared := buf.String()
	for _, s := range []string{first, second, cleared} {
		if strings.Contains(s, "\x1b") {
			t.Errorf("an escape sequence on a dumb terminal: %q", s)
		}
	}
	w1 := textWidth(strings.TrimPrefix(first, "\r"))
	if w2 := textWidth(strings.TrimPrefix(second, "\r")); w2 != w1 || !strings.HasSuffix(second, " ") {
		t.Errorf("the shorter line is %d columns with its blanks, want the first line's %d: %q then %q", w2, w1, first, second)
	}
	if strings.Trim(cleared, "\r ") != "" || !strings.HasPrefix(cleared, "\r") || !strings.HasSuffix(cleared, "\r") {
		t.Errorf("clear wrote %q, want a line of spaces between carriage returns", cleared)
	}
}

// A cut name keeps its opening quote.
func TestShortenNameKeepsQuote(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"'dir/big.bin'", 20, "'dir/big.bin'"},
		{"'a/long/dir/big.bin'", 11, "'…/big.bin'"},
		{"plain-name.bin", 8, "…ame.bin"},
	} {
		if got := shortenName(c.in, c.n); got != c.want || textWidth(got) > c.n {
			t.Errorf("shortenName(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// The bar is as wide as the cells layLine gave, filled in proportion and
// rounded down, with a head until it is full: at every width from 20 to
// 200 columns the bar in the line is the cells layLine gave it, its
// brackets and the line filling the width but the last column.
func TestBarFillsTheCellsItIsGiven(t *testing.T) {
	for _, c := range []struct {
		cells       int
		done, total int64
		want        string
	}{
		{8, 1, 2, "[===>....]"},
		{8, 0, 2, "[........]"},
		{8, 2, 2, "[========]"},
		{10, 19, 100, "[>.........]"},
		{10, 99, 100, "[========>.]"},
		{1, 1, 2, "[.]"},
		{1, 2, 2, "[=]"},
		{0, 1, 2, "[]"},
		{4, -5, 10, "[....]"},
		{4, 50, 10, "[====]"},
	} {
		if got := bar(c.cells, c.done, c.total); got != c.want {
			t.Errorf("bar(%d, %d, %d) = %q, want %q", c.cells, c.done, c.total, got, c.want)
		}
	}
	s := lineState{verb: "copying", name: "'dir/disk.img'", done: 1 << 30, total: 4 << 30, files: 3, filesTotal: 10, rate: 100e6, elapsed: 10 * time.Second}
	for _, done := range []int64{0, 1, 1 << 30, 4<<30 - 1, 4 << 30} {
		s.done = done
		for cols := 20; cols <= 200; cols++ {
			line := layLine(cols, s)
			i, j := strings.Index(line, "["), strings.LastIndex(line, "]")
			if i < 0 {
				if cols >= 80 {
					t.Fatalf("%d columns: no bar: %q", cols, line)
				}
				continue
			}
			seg := line[i : j+1]
			cells := len(seg) - 2
			if want := bar(cells, done, s.total); seg != want {
				t.Fatalf("%d columns, %d done: bar %q, want %q", cols, done, seg, want)
			}
			if textWidth(line) != cols-1 || cells < barMin-2 {
				t.Fatalf("%d columns: %d wide with %d cells: %q", cols, textWidth(line), cells, line)
			}
		}
	}
	for cells := 1; cells <= 200; cells++ {
		for _, done := range []int64{0, 1, 50, 99, 100} {
			if got := bar(cells, done, 100); len(got) != cells+2 || got[0] != '[' || got[len(got)-1] != ']' {
				t.Fatalf("bar(%d, %d, 100) = %q: not %d cells", cells, done, got, cells)
			}
		}
	}
	if got := bar(5, 100, 100); got != "[=====]" {
		t.Errorf("a full bar is %q, want [=====]", got)
	}
	if got := bar(5, 0, 0); got != "[=====]" {
		t.Errorf("empty files only: %q, want a full bar", got)
	}
}
