// SPDX-License-Identifier: MIT

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

	"golang.org/x/sys/unix"
)

// The progress bar: one for the whole run, on stderr. The copier only
// counts (copier.Counter); a ticker here reads the count and redraws at most
// ten times a second. On a terminal it is one line fitted to the
// terminal's width (asked at every redraw, so a resize is followed), drawn
// only while the process is in the terminal's foreground, cleared before
// any other line is printed and at the end. With --progress into a file or
// pipe it is a plain line a second, without escape codes. Sizes are in
// KiB/MiB/GiB, the rate in MB/s (10^6 bytes a second, as in the benchmark).

const (
	redrawEvery    = 100 * time.Millisecond
	plainLineEvery = time.Second
)

// Progress is the bar of a run; it counts the bytes the copier reports and
// the files done.
type Progress struct {
	done       atomic.Int64 // bytes of the sources accounted for
	total      atomic.Int64 // -1 when a source has no known size (FIFO, device)
	files      atomic.Int64 // files done (copied, skipped or failed)
	filesTotal atomic.Int64 // regular files the run will copy
	scanning   atomic.Bool  // the totals are still being counted (progress_count.go)
	what       atomic.Pointer[string]
	file       atomic.Pointer[string] // the file of what, unquoted (Doing)
	json       bool                   // --progress=json: objects, not a bar
	counting   *counting              // nothing drawn (StartCounting): Doing's words, kept as they are

	w     io.Writer
	prog  string
	cols  func() int // the terminal's width; nil in plain mode
	drawn bool       // a bar is on the terminal line
	start time.Time
	// The terminal's fd (-1 in plain mode) and whether it is dumb
	// (TERM=dumb: no escape sequences, lines blanked with spaces).
	ttyFd int
	dumb  bool
	last  int // columns of the line last drawn

	out  *Output
	stop chan struct{}
	wg   sync.WaitGroup
}

var _ copier.Counter = (*Progress)(nil)

// Add is the copier's counter.
func (p *Progress) Add(n int64) { p.done.Add(n) }

// FileDone counts one file of the run as done, whatever became of it.
func (p *Progress) FileDone() { p.files.Add(1) }

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
// source's size cannot be known; files is the number of files. Finish
// stops it.
func (o *Output) StartProgress(total int64, files int) *Progress {
	p := &Progress{w: o.stderr, prog: o.prog, start: time.Now(), stop: make(chan struct{}), ttyFd: -1}
	p.total.Store(total)
	p.filesTotal.Store(int64(files))
	p.Describe("")
	if IsTerminal(o.stderr) {
		fd := int(o.stderr.(*os.File).Fd())
		p.cols = func() int { return terminalWidth(fd) }
		p.ttyFd, p.dumb = fd, os.Getenv("TERM") == "dumb"
	}
	o.mu.Lock()
	o.clearLine = p.clear
	o.status = p
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

// state is what the line shows now.
func (p *Progress) state() lineState {
	elapsed := time.Since(p.start)
	s := lineState{done: p.done.Load(), total: p.total.Load(), files: p.files.Load(), filesTotal: p.filesTotal.Load(), elapsed: elapsed}
	s.counting = p.scanning.Load()
	s.verb, s.name, _ = strings.Cut(*p.what.Load(), " ")
	if s.verb == "" {
		s.verb = "copying"
	}
	switch {
	case s.counting:
		s.countingTotals()
	case s.total >= 0:
		// A source that grew is not counted past the total.
		s.done = min(s.done, s.total)
	}
	if secs := elapsed.Seconds(); secs > 0 {
		s.rate = float64(s.done) / secs
	}
	return s
}

// draw renders the current state; the caller holds the output lock.
func (p *Progress) draw() {
	if p.json {
		p.writeJSON(EventProgress)
		return
	}
	s := p.state()
	if p.cols != nil {
		p.drawLine(layLine(p.cols(), s))
		return
	}
	line := fmt.Sprintf("progress: %s", Size(s.done))
	if s.counting {
		line += s.countingPlain()
	} else if s.total >= 0 {
		line += fmt.Sprintf(" of %s (%d%%)", Size(s.total), percent(s.done, s.total))
		if s.rate > 0 && s.done < s.total {
			line += fmt.Sprintf(", %s, %s left", Rate(s.rate), left(s.done, s.total, s.rate))
		}
	} else {
		line += ", " + Rate(s.rate)
	}
	if s.filesTotal > 1 && !s.counting {
		line += fmt.Sprintf(", %d/%d files", min(s.files, s.filesTotal), s.filesTotal)
	}
	if s.verb != "" && s.name != "" {
		line += ", " + s.verb + " " + s.name
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.prog, line)
}

// drawLine puts line on the terminal's line, over the last one: the rest
// of the line is erased (ESC[K), or on a dumb terminal blanked with spaces.
// An empty line (a terminal too narrow) clears the bar.
func (p *Progress) drawLine(line string) {
	if line == "" {
		p.clear()
		return
	}
	w := textWidth(line)
	tail := "\x1b[K"
	if p.dumb {
		tail = strings.Repeat(" ", max(0, p.last-w))
	}
	io.WriteString(p.w, "\r"+line+tail)
	p.last, p.drawn = w, true
}

// lineState is one moment of the run, as the line shows it.
type lineState struct {
	verb, name        string // "copying", "'dst'"
	done, total       int64  // bytes; total -1 when unknown
	files, filesTotal int64
	counting          bool    // the totals are what is counted so far
	rate              float64 // bytes a second since the start
	elapsed           time.Duration
}

// The parts of the line, in the order they are shown.
const (
	partVerb = iota
	partName
	partPercent
	partBar
	partBytes
	partRate
	partFiles
	partTime
	numParts
)

// What is kept when the terminal is narrow, most needed first: the
// percentage, the word, the bytes and the rate; then the time left, the
// files done, the name and a bar.
var partPriority = [...]int{partPercent, partVerb, partBytes, partRate, partTime, partFiles, partName, partBar}

const (
	nameMin = 12 // columns of a name cut short: "'…/big.bin'"
	barMin  = 7  // "[" 5 cells "]"
)

// layLine lays the line out for a terminal cols columns wide, never
// reaching the last column (a full line makes terminals wrap, and every
// redraw would then leave a line behind). Parts are taken by priority as
// long as they fit; what room is left widens the name to its whole length,
// then the bar to the rest of the line, so a bar uses the full width. An
// empty line means not even the percentage (or, with no total, the bytes)
// fits.
func layLine(cols int, s lineState) string {
	width := cols - 1
	known := s.total >= 0 && !s.counting
	var text [numParts]string
	text[partVerb] = s.verb
	text[partBytes] = Size(s.done)
	if known {
		text[partPercent] = fmt.Sprintf("%3d%%", percent(s.done, s.total))
		text[partBytes] += "/" + Size(s.total)
	}
	if s.rate > 0 {
		text[partRate] = Rate(s.rate)
	}
	switch {
	case known && s.rate > 0 && s.done < s.total:
		text[partTime] = left(s.done, s.total, s.rate) + " left"
	case !known:
		text[partTime] = clock(int64(s.elapsed / time.Second))
	}
	if s.filesTotal > 1 {
		text[partFiles] = fmt.Sprintf("%d/%d files", min(s.files, s.filesTotal), s.filesTotal)
	}
	if s.counting {
		s.countingParts(&text)
	}
	var widths [numParts]int
	for i, t := range text {
		widths[i] = textWidth(t)
	}
	if s.name != "" {
		widths[partName] = min(nameMin, textWidth(s.name))
	}
	if known {
		widths[partBar] = barMin
	}
	var on [numParts]bool
	used := -1 // no separator before the first part
	for _, i := range partPriority {
		if widths[i] > 0 && used+1+widths[i] <= width {
			on[i], used = true, used+1+widths[i]
		}
	}
	if !on[partPercent] && !on[partBytes] {
		return ""
	}
	name := ""
	if on[partName] {
		grow := min(textWidth(s.name)-widths[partName], width-used)
		name = shortenName(s.name, widths[partName]+grow)
		// A wide character may not fill the last column given.
		used += textWidth(name) - widths[partName]
	}
	if on[partBar] {
		widths[partBar] += width - used
	}
	var parts []string
	for i := range numParts {
		switch {
		case !on[i]:
		case i == partName:
			parts = append(parts, name)
		case i == partBar:
			parts = append(parts, bar(widths[i]-2, s.done, s.total))
		default:
			parts = append(parts, text[i])
		}
	}
	return strings.Join(parts, " ")
}

// bar is the bar itself, cells wide between its brackets: "[===>.....]",
// filled in proportion to done of total (rounded down; a full bar has no
// head), drawn as the progressbar library drew it. It is a string of its
// own making: the line around it is laid out by layLine, and a library
// for the bar alone cost a 4 KiB copy's start-up more than its bytes
// (its packages' initialisation compiles regular expressions and builds
// tables). An empty total (empty files only) is a full bar.
func bar(cells int, done, total int64) string {
	if total <= 0 {
		done, total = 1, 1
	}
	cells = max(cells, 0)
	fill := int(float64(min(max(done, 0), total)) / float64(total) * float64(cells))
	var b strings.Builder
	b.Grow(cells + 2)
	b.WriteByte('[')
	if fill > 0 {
		b.WriteString(strings.Repeat("=", fill-1))
		if fill == cells {
			b.WriteByte('=')
		} else {
			b.WriteByte('>')
		}
	}
	b.WriteString(strings.Repeat(".", cells-fill))
	b.WriteByte(']')
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
	return clock(int64(float64(total-done)/rate + 0.5))
}

// clock prints s seconds as "7s", "2m05s", "1h02m".
func clock(s int64) string {
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
	if p.dumb {
		io.WriteString(p.w, "\r"+strings.Repeat(" ", p.last)+"\r")
	} else {
		io.WriteString(p.w, "\r\x1b[K")
	}
	p.last = 0
}

// Finish stops the ticker and clears the bar.
func (p *Progress) Finish() {
	out := p.out
	if p.stop != nil { // not counting only
		close(p.stop)
		p.wg.Wait()
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if p.json {
		p.writeJSON(EventEnd)
	}
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
