package output

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fastcp/copier"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sys/unix"
)

// The progress bar: one for the whole run, on stderr. The copier only
// counts (copier.Counter); a ticker here reads the count and redraws at most
// ten times a second. On a terminal, schollz/progressbar draws it on one
// line fitted to the terminal's width (asked at every redraw, so a resize is
// followed), cleared before any other line is printed and at the end; its
// sizes and rate are in SI units (kB, MB, GB; MB/s is 10^6 bytes a second,
// as in the benchmark). With --progress into a file or pipe it is a plain
// line a second, without escape codes, sizes in KiB/MiB/GiB and the rate in
// MB/s.

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
	cols  func() int // the terminal's width; nil in plain mode
	drawn bool       // a bar is on the terminal line
	start time.Time
	// The terminal's fd (-1 in plain mode) and whether it is dumb
	// (TERM=dumb: no escape sequences, lines blanked with spaces).
	ttyFd int
	dumb  bool
	erase *eraseAfter

	// The drawing goroutine's alone: it makes the bar and is the only
	// one to call into progressbar (its options write the bar's fields
	// unlocked).
	bar      *progressbar.ProgressBar
	barStart time.Time

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
	p := &Progress{w: o.stderr, prog: o.prog, total: total, start: time.Now(), stop: make(chan struct{}), ttyFd: -1}
	p.Describe("")
	if IsTerminal(o.stderr) {
		fd := int(o.stderr.(*os.File).Fd())
		p.cols = func() int { return terminalWidth(fd) }
		p.ttyFd, p.dumb = fd, os.Getenv("TERM") == "dumb"
	}
	o.mu.Lock()
	o.clearLine = p.clear
	o.mu.Unlock()
	p.out = o
	p.wg.Add(1)
	go p.loop(o)
	return p
}

// terminalWidth is the columns of the terminal fd, 80 when it cannot say.
func terminalWidth(fd int) int {
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	return 80
}

func (p *Progress) loop(out *Output) {
	defer p.wg.Done()
	every := redrawEvery
	if p.cols == nil {
		every = plainLineEvery
	} else {
		p.startBar()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			out.mu.Lock()
			if p.foreground() {
				p.draw()
			}
			out.mu.Unlock()
		}
	}
}

// foreground reports whether the process may draw on its terminal: it is
// in the terminal's foreground process group, or the terminal is not its
// controlling one. In the background (cmd &) nothing is drawn, so with
// stty tostop a write never stops it with SIGTTOU, and without tostop no
// bar is drawn over the shell's prompt; asked at every redraw, so a job
// brought to the foreground (fg) draws again.
func (p *Progress) foreground() bool {
	if p.ttyFd < 0 {
		return true
	}
	pgrp, err := unix.IoctlGetInt(p.ttyFd, unix.TIOCGPGRP)
	return err != nil || pgrp == unix.Getpgrp()
}

// startBar makes the terminal's bar and starts its clock (its rate is the
// bytes over the time since), without drawing it.
func (p *Progress) startBar() {
	p.erase = &eraseAfter{w: p.w, dumb: p.dumb}
	max := p.total
	if max == 0 {
		max = 1 // progressbar draws nothing with a max of 0 (empty files only)
	}
	p.bar = progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(p.erase),
		progressbar.OptionUseANSICodes(true), // no blanking of the line with spaces: eraseAfter ends it
		progressbar.OptionSetTheme(progressbar.ThemeASCII),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(), // the bytes so far, and a redraw at every Set64
		progressbar.OptionUseIECUnits(false),
		progressbar.OptionSetPredictTime(false),       // draw decides
		progressbar.OptionThrottle(0),                 // the ticker throttles
		progressbar.OptionSetSpinnerChangeInterval(0), // no goroutine of its own (total unknown)
		progressbar.OptionClearOnFinish(),             // were it ever to finish: no line left
	)
	p.barStart = time.Now()
	p.bar.StartWithoutRender()
}

// eraseAfter ends each of progressbar's writes ("\r" and the line) with
// the escape that erases the rest of the line: a shorter line than the
// last leaves nothing of it, and no line of spaces can wrap on a terminal
// made narrower. On a dumb terminal (TERM=dumb), which has no such escape,
// spaces blank what the last line had beyond this one.
type eraseAfter struct {
	w    io.Writer
	dumb bool
	last int // columns of the last line written (dumb)
}

func (e *eraseAfter) Write(b []byte) (int, error) {
	tail := "\x1b[K"
	if e.dumb {
		w := textWidth(strings.TrimPrefix(string(b), "\r"))
		tail = strings.Repeat(" ", max(0, e.last-w))
		e.last = w
	}
	n, err := e.w.Write(append(b[:len(b):len(b)], tail...))
	return min(n, len(b)), err
}

// draw renders the current state; the caller holds the output lock.
func (p *Progress) draw() {
	done, what := p.done.Load(), *p.what.Load()
	if p.cols != nil {
		p.drawBar(p.cols(), done, what)
		return
	}
	elapsed := time.Since(p.start).Seconds()
	rate := float64(done) / max(elapsed, 1e-9)
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

// drawBar lays the bar out for a terminal cols wide and has progressbar
// draw it with done bytes; on a terminal too narrow for the shortest line
// it erases the line instead.
func (p *Progress) drawBar(cols int, done int64, what string) {
	l, ok := layBar(cols, what, p.total >= 0, time.Since(p.barStart))
	if !ok {
		p.clear()
		return
	}
	// Options applied to the live bar: they set its fields, and only
	// this goroutine touches it.
	progressbar.OptionSetDescription(l.desc)(p.bar)
	if p.total >= 0 {
		progressbar.OptionSetWidth(l.width)(p.bar)
		progressbar.OptionSetPredictTime(l.times)(p.bar)
		// Never the max: progressbar finishes a bar that reaches it and
		// draws nothing after, so the flush of the last file (and a tree's
		// last entries) would go unshown; the line shows 99% until erased.
		// A source that grew is not counted past it either.
		done = min(done, max(p.total, 1)-1)
	}
	p.bar.Set64(done)
	p.drawn = true
}

// What progressbar writes beside the description, at its longest. A size
// is at most 4 digits, a space and 2 letters ("1000 kB": it rounds 999.96
// up); the time is a time.Duration's String(), whose longest is that of a
// product that overflowed ("2562047h47m16.854775807s"), which a rate near
// zero gives its time left.
const (
	sizeMax     = len("1000 kB")
	countsKnown = 2*sizeMax + 1                     // "1000 kB/1000 MB"
	rateMax     = sizeMax + len("/s")               // "1000 MB/s"
	statsKnown  = 1 + countsKnown + 2 + rateMax + 1 // "(1000 kB/1000 MB, 1000 MB/s)"
	statsUnkn   = 1 + sizeMax + 2 + rateMax + 1     // "(1000 MB, 1000 MB/s)"
	durationMax = len("2562047h47m16.854775807s")
	// Known total: "%4d%% [" bar "] " stats " " after the description.
	lineKnown = 5 + 2 + 2 + statsKnown + 1
	// ... with the times, " [" elapsed ":" left "]" instead of the last " ".
	timesKnown = -1 + 2 + 1 + durationMax + 1 // plus the elapsed time's width
	// Unknown total: spinner (|/-\\, one column) " " description " " stats
	// " [" elapsed "] ".
	lineUnknown = 1 + 1 + 1 + statsUnkn + 2 + 2 // plus the elapsed time's width
)

// barLayout is what drawBar gives progressbar: the description, the bar's
// width in cells, and whether the elapsed time and the time left are shown.
type barLayout struct {
	desc  string
	width int
	times bool
}

// layBar lays the line out for a terminal cols columns wide so that it
// never reaches the last column (a full line makes terminals wrap, and
// every redraw would then leave a line behind), counting progressbar's text
// at its longest. what is "copying 'x'" or "flushing 'x'"; its first word
// always stays, with the percentage, the bytes and the rate. Then, as room
// allows: the name (its end, at least 10 columns of it), a bar of up to 10
// cells, the elapsed time and the time left; what room is left widens the
// name to 24 columns, the bar to 30, then the name to 40. ok is false when
// not even the first word and the numbers fit: nothing is drawn then.
// elapsed is the time since the bar started, for the width of its time.
func layBar(cols int, what string, known bool, elapsed time.Duration) (l barLayout, ok bool) {
	width := cols - 1
	verb, name, _ := strings.Cut(what, " ")
	if verb == "" {
		verb = "copying"
	}
	// progressbar prints whole seconds since its start; the two clocks
	// differ by less than a second either way.
	s := int64(elapsed / time.Second)
	elapsedMax := 0
	for _, d := range []int64{max(s-1, 0), s, s + 1} {
		elapsedMax = max(elapsedMax, len((time.Duration(d) * time.Second).String()))
	}
	used := textWidth(verb)
	if known {
		used += lineKnown
	} else {
		used += lineUnknown + elapsedMax
	}
	if used > width {
		return l, false
	}
	room := func(n int) bool {
		if used+n > width {
			return false
		}
		used += n
		return true
	}
	nameW := 0
	if name != "" && room(1+min(10, textWidth(name))) {
		nameW = min(10, textWidth(name))
	}
	growBar := func(upTo int) {
		if known {
			grow := max(0, min(upTo-l.width, width-used))
			l.width, used = l.width+grow, used+grow
		}
	}
	growName := func(upTo int) {
		if nameW > 0 {
			grow := max(0, min(min(textWidth(name), upTo)-nameW, width-used))
			nameW, used = nameW+grow, used+grow
		}
	}
	growBar(10)
	l.times = known && room(timesKnown+elapsedMax)
	growName(24)
	growBar(30)
	growName(40)
	l.desc = verb
	if nameW > 0 {
		l.desc += " " + shortenName(name, nameW)
	}
	return l, true
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

// shortenName is shortenTo for a quoted name ('dir/file'): its opening
// quote stays, so that the cut shows as a cut ('…dir/file').
func shortenName(s string, n int) string {
	if textWidth(s) <= n || !strings.HasPrefix(s, "'") || n < 3 {
		return shortenTo(s, n)
	}
	return "'" + shortenTo(s[1:], n-1)
}

// clear removes the bar from the terminal line; the caller holds the
// output lock. The next tick draws it again.
func (p *Progress) clear() {
	if !p.drawn {
		return
	}
	p.drawn = false
	if !p.foreground() {
		return // sent to the background since: leave the line as it is
	}
	if p.dumb && p.erase != nil {
		io.WriteString(p.w, "\r"+strings.Repeat(" ", p.erase.last)+"\r")
		p.erase.last = 0
		return
	}
	io.WriteString(p.w, "\r\x1b[K")
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

// Size prints a byte count in binary units: "256 MiB", "1.5 GiB", "4 KiB",
// rounded down to a tenth, so that "127.9 MiB available" is never printed
// as the 128 MiB that is needed. It is fastcp's one size formatter.
func Size(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	i := 0
	for ; i < len(units)-1 && (v >= 1024 || v <= -1024); i++ {
		v /= 1024
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d %s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", math.Trunc(v*10)/10, units[i])
}

// StderrIsTerminal reports whether stderr is a terminal.
func (o *Output) StderrIsTerminal() bool { return IsTerminal(o.stderr) }
