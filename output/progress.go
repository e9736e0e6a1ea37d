package output

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fastcp/copier"

	"golang.org/x/sys/unix"
)

// The progress bar: one for the whole run, on stderr. The copier only
// counts (copier.Counter); a ticker here reads the count and redraws at most
// ten times a second. On a terminal it is one line fitted to the terminal's
// width (asked at every redraw, so a resize is followed), cleared before
// any other line is printed and at the end; with --progress into a file or
// pipe it is a plain line a second, without escape codes. Sizes are in
// KiB/MiB/GiB, rates in MB/s (10^6 bytes per second), as in the benchmark.

const (
	redrawEvery    = 100 * time.Millisecond
	plainLineEvery = time.Second
)

// Progress is the bar of a run; it counts the bytes the copier reports.
type Progress struct {
	done  atomic.Int64 // bytes of the sources accounted for
	total int64        // -1 when a source has no known size (FIFO, device)
	what  atomic.Pointer[string]

	w     io.Writer
	prog  string
	tty   int  // the terminal's fd; -1 in plain mode
	drawn bool // a bar is on the terminal line
	start time.Time

	out  *Output
	stop chan struct{}
	wg   sync.WaitGroup
}

var _ copier.Counter = (*Progress)(nil)

// Add is the copier's counter.
func (p *Progress) Add(n int64) { p.done.Add(n) }

// Describe says what is being done now ("copying 'x'", "flushing 'x'").
func (p *Progress) Describe(s string) { p.what.Store(&s) }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// StartProgress starts the bar on stderr: a bar on a terminal, a plain
// line a second otherwise. total is the bytes the run will copy, -1 when a
// source's size cannot be known. Finish stops it.
func (o *Output) StartProgress(total int64) *Progress {
	p := &Progress{w: o.stderr, prog: o.prog, total: total, tty: -1, start: time.Now(), stop: make(chan struct{})}
	p.Describe("")
	if IsTerminal(o.stderr) {
		p.tty = int(o.stderr.(*os.File).Fd())
	}
	o.mu.Lock()
	o.clearLine = p.clear
	o.mu.Unlock()
	p.out = o
	p.wg.Add(1)
	go p.loop(o)
	return p
}

func (p *Progress) loop(out *Output) {
	defer p.wg.Done()
	every := redrawEvery
	if p.tty < 0 {
		every = plainLineEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			out.mu.Lock()
			p.draw()
			out.mu.Unlock()
		}
	}
}

// draw renders the current state; the caller holds the output lock.
func (p *Progress) draw() {
	done, what := p.done.Load(), *p.what.Load()
	elapsed := time.Since(p.start).Seconds()
	rate := float64(done) / max(elapsed, 1e-9)
	if p.tty >= 0 {
		cols := 80
		if ws, err := unix.IoctlGetWinsize(p.tty, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			cols = int(ws.Col)
		}
		fmt.Fprintf(p.w, "\r%s\x1b[K", BarLine(cols, what, done, p.total, rate))
		p.drawn = true
		return
	}
	line := fmt.Sprintf("progress: %s", Size(done))
	if p.total >= 0 {
		line += fmt.Sprintf(" of %s (%d%%)", Size(p.total), percent(done, p.total))
		if rate > 0 && done < p.total {
			line += fmt.Sprintf(", %s, %s left", Rate(rate), left(done, p.total, rate))
		}
	} else {
		line += ", " + Rate(rate)
	}
	if what != "" {
		line += ", " + what
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.prog, line)
}

// BarLine is the terminal's progress line for a terminal cols columns
// wide: it never reaches the last column (a full line makes terminals
// wrap, and every redraw would then leave a line behind). what is
// "copying 'x'" or "flushing 'x'"; its first word always stays. Then, as
// room allows: the percentage, the name (at least 10 columns of it), a bar
// of at least 10, the bytes, the rate, the time left; what room is left
// widens the name to 24 columns, the bar to 30, then the name to 40.
func BarLine(cols int, what string, done, total int64, rate float64) string {
	width := cols - 1
	verb, name, _ := strings.Cut(what, " ")
	if verb == "" {
		verb = "copying"
	}
	known := total >= 0
	var pct, sizes, speed, eta string
	sizes = Size(done)
	if known {
		pct = fmt.Sprintf("%3d%%", percent(done, total))
		sizes += "/" + Size(total)
		if rate > 0 && done < total {
			eta = left(done, total, rate) + " left"
		}
	}
	if rate > 0 {
		speed = Rate(rate)
	}

	used := textWidth(verb)
	room := func(n int) bool {
		if used+1+n > width {
			return false
		}
		used += 1 + n
		return true
	}
	showPct := known && room(len(pct))
	nameW := 0
	if name != "" && room(min(10, textWidth(name))) {
		nameW = min(10, textWidth(name))
	}
	barW := 0
	if showPct && room(2+10) {
		barW = 10
	}
	showSizes := room(len(sizes))
	showSpeed := speed != "" && room(len(speed))
	showEta := eta != "" && room(len(eta))
	growName := func(upTo int) {
		if nameW > 0 {
			grow := max(0, min(min(textWidth(name), upTo)-nameW, width-used))
			nameW, used = nameW+grow, used+grow
		}
	}
	growName(24)
	if barW > 0 {
		grow := min(30-barW, width-used)
		barW, used = barW+grow, used+grow
	}
	growName(40)

	var b strings.Builder
	b.WriteString(shortenTo(verb, max(width, 1)))
	add := func(s string) { b.WriteByte(' '); b.WriteString(s) }
	if nameW > 0 {
		add(shortenTo(name, nameW))
	}
	if showPct {
		add(pct)
	}
	if barW > 0 {
		inner := barW - 2
		full := int(int64(inner) * percent(done, total) / 100)
		add("[" + strings.Repeat("=", full) + strings.Repeat(" ", inner-full) + "]")
	}
	if showSizes {
		add(sizes)
	}
	if showSpeed {
		add(speed)
	}
	if showEta {
		add(eta)
	}
	return b.String()
}

// Rate prints bytes per second in MB/s (10^6 bytes), as the benchmark does.
func Rate(bytesPerSecond float64) string {
	mb := bytesPerSecond / 1e6
	if mb >= 100 {
		return fmt.Sprintf("%.0f MB/s", mb)
	}
	return fmt.Sprintf("%.1f MB/s", mb)
}

// left is the time the rest takes at rate: "7s", "2m05s", "1h02m".
func left(done, total int64, rate float64) string {
	s := int64(float64(total-done)/rate + 0.5)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
}

// textWidth is the columns s takes on a terminal, counted high: a wide
// character (East Asian, emoji) as two.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n++
		if wide(r) {
			n++
		}
	}
	return n
}

// wide reports whether r takes two columns: the East Asian wide and
// fullwidth blocks and the emoji, broadly (counting high is safe).
func wide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1faff, r >= 0x20000 && r <= 0x3fffd:
		return true
	}
	return false
}

// shortenTo cuts s to n columns, keeping its end (a file name's end is what
// tells files apart) after a "…".
func shortenTo(s string, n int) string {
	if textWidth(s) <= n {
		return s
	}
	r := []rune(s)
	w := 1 // the "…"
	i := len(r)
	for i > 0 && w+textWidth(string(r[i-1])) <= n {
		i--
		w += textWidth(string(r[i]))
	}
	return "…" + string(r[i:])
}

// clear removes the bar from the terminal line; the caller holds the
// output lock. The next tick draws it again.
func (p *Progress) clear() {
	if p.drawn {
		io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Finish stops the ticker and clears the bar.
func (p *Progress) Finish() {
	out := p.out
	close(p.stop)
	p.wg.Wait()
	out.mu.Lock()
	defer out.mu.Unlock()
	p.clear()
	out.clearLine = nil
}

func percent(done, total int64) int64 {
	if total <= 0 {
		return 100
	}
	return min(100, done*100/total)
}

// Size prints a byte count with IEC units.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		v /= unit
		if v < unit {
			return fmt.Sprintf("%.1f %s", v, u)
		}
	}
	return fmt.Sprintf("%.1f PiB", v/unit)
}

// StderrIsTerminal reports whether stderr is a terminal.
func (o *Output) StderrIsTerminal() bool { return IsTerminal(o.stderr) }
