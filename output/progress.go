package output

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"fastcp/copier"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sys/unix"
)

// The progress bar: one for the whole run, on stderr. The copier only
// counts (copier.Counter); a ticker here reads the count and redraws at most
// ten times a second. On a terminal it is a bar that is cleared before any
// other line is printed and at the end; with --progress into a file or
// pipe it is a plain line a second, without escape codes.

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
	bar   *progressbar.ProgressBar // nil in plain mode
	shown string                   // the description the bar has
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
	p := &Progress{w: o.stderr, prog: o.prog, total: total, start: time.Now(), stop: make(chan struct{})}
	p.Describe("")
	if IsTerminal(o.stderr) {
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(o.stderr),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(), // bytes so far, also when the total is unknown
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(25),
			progressbar.OptionThrottle(0), // the ticker below throttles
			progressbar.OptionSetRenderBlankState(true),
		)
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
	if p.bar == nil {
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
	if p.bar != nil {
		if what != p.shown {
			p.shown = what
			p.bar.Describe(shorten(what, 40))
		}
		p.bar.Set64(done)
		return
	}
	elapsed := time.Since(p.start).Seconds()
	rate := float64(done) / max(elapsed, 1e-9)
	line := fmt.Sprintf("progress: %s", Size(done))
	if p.total >= 0 {
		line += fmt.Sprintf(" of %s (%d%%)", Size(p.total), percent(done, p.total))
		if rate > 0 && done < p.total {
			line += fmt.Sprintf(", %s/s, %s left", Size(int64(rate)), time.Duration(float64(p.total-done)/rate*float64(time.Second)).Round(time.Second))
		}
	} else {
		line += fmt.Sprintf(", %s/s", Size(int64(rate)))
	}
	if what != "" {
		line += ", " + what
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.prog, line)
}

// clear removes the bar from the terminal line; the caller holds the
// output lock. The next tick draws it again.
func (p *Progress) clear() {
	if p.bar != nil {
		p.bar.Clear()
	}
}

// Finish stops the ticker and clears the bar.
func (p *Progress) Finish() {
	out := p.out
	close(p.stop)
	p.wg.Wait()
	out.mu.Lock()
	defer out.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
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

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// StderrIsTerminal reports whether stderr is a terminal.
func (o *Output) StderrIsTerminal() bool { return IsTerminal(o.stderr) }
