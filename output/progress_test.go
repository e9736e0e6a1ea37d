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
	p := &Progress{w: &buf, total: total, cols: func() int { return *cols }}
	p.Describe("")
	p.startBar()
	return p, &buf
}

// redraw draws p once and returns what it wrote: the line progressbar drew
// ("" when nothing was drawn), failing on anything but "\r", the line and
// the erase of the rest of the line.
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

var spinnerFirst = regexp.MustCompile(`^[|/\\-] `)

// The line fits every width, never reaching the last column, counting
// progressbar's text at its longest ("1000 kB/1000 MB", a time left from a
// rate near zero), and starts with the verb (after the spinner when the
// total is unknown); from 60 columns it is always drawn. The same bar is
// redrawn at each width in turn: a resize is followed.
func TestBarFits(t *testing.T) {
	names := []string{
		"",
		"'dst'",
		"'/srv/backups/2026/12/01/a-very-long-directory-name/and-a-longer-file-name-still.tar.zst'",
		"'日本語のファイル名はとても長いです日本語のファイル名はとても長いです.iso'",
	}
	for _, c := range []struct{ total, done int64 }{
		{4 << 30, 1 << 30},
		{4 << 30, 4 << 30},     // all copied, the last file flushing
		{999_950_000, 999_950}, // "1000 kB/1000 MB"
		{1 << 62, 1},           // a time left of billions of years
		{0, 0},                 // empty files only
		{-1, 999_950_000},      // a FIFO: no total
		{-1, 0},
	} {
		for _, verb := range []string{"copying", "flushing"} {
			for _, name := range names {
				cols := 0
				p, buf := testBar(c.total, &cols)
				p.Describe(strings.TrimSpace(verb + " " + name))
				p.Add(c.done)
				for cols = 200; cols >= 12; cols-- {
					line := redraw(t, p, buf)
					if line == "" {
						if cols >= 60 {
							t.Fatalf("%d columns, %v: nothing drawn", cols, c)
						}
						continue
					}
					if w := textWidth(line); w > cols-1 {
						t.Fatalf("%d columns, %v: %d wide: %q", cols, c, w, line)
					}
					rest := line
					if c.total < 0 {
						if !spinnerFirst.MatchString(line) {
							t.Fatalf("%d columns: no spinner first: %q", cols, line)
						}
						rest = line[2:]
					}
					if !strings.HasPrefix(rest, verb+" ") {
						t.Fatalf("%d columns: %q does not start with %q", cols, line, verb)
					}
					if c.total >= 0 && !strings.Contains(line, "% [") {
						t.Fatalf("%d columns: no percentage and bar: %q", cols, line)
					}
				}
			}
		}
	}
}

// The layout at 60, 80 and 120 columns, with progressbar's SI units.
func TestBarWidths(t *testing.T) {
	const name = "'/srv/backups/2026/12/01/a-very-long-directory-name/disk.img'"
	cols := 0
	p, buf := testBar(4<<30, &cols)
	p.Describe("copying " + name)
	p.Add(1 << 30)
	for _, c := range []struct {
		cols int
		want *regexp.Regexp
	}{
		// 60: the verb, the end of the name, the percentage, a short
		// bar, the bytes and the rate.
		{60, regexp.MustCompile(`^copying '…isk\.img'  25% \[=?>?\.*\] \(1\.1/4\.3 GB, [0-9.]+ [kMGTPE]?B/s\) $`)},
		// 80: 23 columns of the name, a bar of 10.
		{80, regexp.MustCompile(`^copying '…ectory-name/disk\.img'  25% \[=>\.{8}\] \(1\.1/4\.3 GB, [0-9.]+ [kMGTPE]?B/s\) $`)},
		// 120: and the elapsed time and the time left (room kept for the
		// longest time), the name 24 columns, the bar 20.
		{120, regexp.MustCompile(`^copying '…rectory-name/disk\.img'  25% \[====>\.{15}\] \(1\.1/4\.3 GB, [0-9.]+ [kMGTPE]?B/s\) \[0s:[0-9hms.]+\]$`)},
	} {
		cols = c.cols
		line := redraw(t, p, buf)
		if !c.want.MatchString(line) {
			t.Errorf("%d columns: %q does not match %s", c.cols, line, c.want)
		}
		if w := textWidth(line); w > c.cols-1 {
			t.Errorf("%d columns: %d wide: %q", c.cols, w, line)
		}
		t.Logf("%3d: %s", c.cols, line)
	}
	// Flushing the last file at 60 columns: the word stays, with the
	// percentage (99 until the bar is erased: a finished progressbar would
	// draw no more).
	cols = 60
	p.Describe("flushing " + name)
	p.Add(3 << 30)
	if line := redraw(t, p, buf); !strings.HasPrefix(line, "flushing '…") || !strings.Contains(line, "  99% [") || !strings.Contains(line, "(4.3/4.3 GB") {
		t.Errorf("flushing at 60 columns: %q", line)
	}
	// And again: still drawn.
	if line := redraw(t, p, buf); !strings.HasPrefix(line, "flushing '…") {
		t.Errorf("flushing at 60 columns, redrawn: %q", line)
	}
	// Too narrow for the verb and the numbers: the line is erased, nothing drawn.
	cols = 40
	if buf.Reset(); true {
		p.draw()
	}
	if buf.String() != "\r\x1b[K" {
		t.Errorf("40 columns: %q, want the line erased", buf.String())
	}
	cols = 60
	if line := redraw(t, p, buf); line == "" {
		t.Errorf("60 columns again: nothing drawn")
	}
}

// Unknown total (a FIFO): a spinner, no percentage, the bytes, the rate and
// the elapsed time.
func TestBarUnknownTotal(t *testing.T) {
	cols := 80
	p, buf := testBar(-1, &cols)
	p.Describe("copying 'dst'")
	p.Add(8 << 20)
	line := redraw(t, p, buf)
	if !regexp.MustCompile(`^[|/\\-] copying 'dst' \(8\.4 MB, [0-9.]+ [kMGTPE]?B/s\) \[0s\] $`).MatchString(line) {
		t.Errorf("unknown total: %q", line)
	}
	if strings.Contains(line, "%") {
		t.Errorf("a percentage without a total: %q", line)
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

// openPTY opens a pseudo-terminal cols columns wide: the master, read until
// it is closed, and the terminal itself.
func openPTY(t *testing.T, cols int) (tty *os.File, drawn <-chan []byte) {
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
	ch := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(m) // EIO once the terminal is closed
		m.Close()
		ch <- b
	}()
	return s, ch
}

// The whole bar on a real terminal, with the copier's counting, a new
// description and messages from other goroutines while it redraws, and the
// terminal resized: run under -race, no progressbar call but from the
// drawing goroutine (progressbar's own spinner goroutine, for an unknown
// total, would race with the width set on the bar). Every redraw fits the
// width of its moment (the last one, after the resize, the new width); the
// line is erased at the end.
func TestBarOnATerminal(t *testing.T) {
	for _, total := range []int64{64 << 20, -1} {
		tty, drawn := openPTY(t, 120)
		o := New("fastcp", io.Discard, tty)
		p := o.StartProgress(total)
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 35 {
					p.Add(1 << 20)
					p.Describe(fmt.Sprintf("copying 'file-%d-%d'", g, i))
					if i%10 == 9 {
						o.Errorf("message %d-%d", g, i)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		time.Sleep(150 * time.Millisecond)
		unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 60})
		wg.Wait()
		time.Sleep(250 * time.Millisecond)
		p.Finish()
		tty.Close()
		out := string(<-drawn)
		if !strings.HasSuffix(out, "\r\x1b[K") {
			t.Errorf("total %d: not erased at the end: %q", total, out)
		}
		bars, last := 0, ""
		for _, seg := range strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' }) {
			line := strings.ReplaceAll(seg, "\x1b[K", "")
			if line == "" || strings.HasPrefix(line, "fastcp: message ") {
				continue
			}
			bars, last = bars+1, line
			if n := textWidth(line); n >= 120 {
				t.Errorf("total %d: %d wide: %q", total, n, line)
			}
			if !strings.Contains(line, "copying") {
				t.Errorf("total %d: no verb: %q", total, line)
			}
		}
		if n := textWidth(last); n >= 60 {
			t.Errorf("total %d: the last redraw, after the resize to 60 columns, is %d wide: %q", total, n, last)
		}
		if bars < 3 {
			t.Errorf("total %d: %d redraws in half a second: %q", total, bars, out)
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
	p := &Progress{w: &buf, total: 4 << 30, cols: func() int { return cols }, dumb: true, ttyFd: -1}
	p.Describe("copying 'a-rather-long-file-name.img'")
	p.startBar()
	p.Add(1 << 30)
	p.draw()
	first := buf.String()
	buf.Reset()
	cols = 60
	p.Describe("copying 'b'")
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
