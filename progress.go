package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"fastcp/flags"

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

type progress struct {
	done  atomic.Int64 // bytes of the sources accounted for
	total int64        // -1 when a source has no known size (FIFO, device)
	what  atomic.Pointer[string]

	w     io.Writer
	prog  string
	bar   *progressbar.ProgressBar // nil in plain mode
	shown string                   // the description the bar has
	start time.Time

	stop chan struct{}
	wg   sync.WaitGroup
}

// Add is the copier's counter.
func (p *progress) Add(n int64) { p.done.Add(n) }

// describe says what is being done now ("copying 'x'", "flushing 'x'").
func (p *progress) describe(s string) { p.what.Store(&s) }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// startProgress starts the bar if the options and stderr call for one.
func (a *app) startProgress(stderr io.Writer) {
	o := a.opts
	tty := isTerminal(stderr)
	switch {
	case o.Progress == flags.ProgressOff:
		return
	case o.Progress == flags.ProgressAuto && !tty:
		return
	}
	p := &progress{w: stderr, prog: a.out.prog, total: a.totalBytes(), start: time.Now(), stop: make(chan struct{})}
	p.describe("")
	if tty {
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(), // bytes so far, also when the total is unknown
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(25),
			progressbar.OptionThrottle(0), // the ticker below throttles
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	a.progress = p
	a.out.clearLine = p.clear
	p.wg.Add(1)
	go p.loop(a.out)
}

func (p *progress) loop(out *output) {
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
func (p *progress) draw() {
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
	line := fmt.Sprintf("progress: %s", size(done))
	if p.total >= 0 {
		line += fmt.Sprintf(" of %s (%d%%)", size(p.total), percent(done, p.total))
		if rate > 0 && done < p.total {
			line += fmt.Sprintf(", %s/s, %s left", size(int64(rate)), time.Duration(float64(p.total-done)/rate*float64(time.Second)).Round(time.Second))
		}
	} else {
		line += fmt.Sprintf(", %s/s", size(int64(rate)))
	}
	if what != "" {
		line += ", " + what
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.prog, line)
}

// clear removes the bar from the terminal line; the caller holds the
// output lock. The next tick draws it again.
func (p *progress) clear() {
	if p.bar != nil {
		p.bar.Clear()
	}
}

// finish stops the ticker and clears the bar.
func (p *progress) finish(out *output) {
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

// size prints a byte count with IEC units.
func size(n int64) string {
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

// totalBytes adds up the sizes of everything the run will copy, walking
// the trees as the copy will; -1 when a source's size cannot be known.
func (a *app) totalBytes() int64 {
	var total int64
	var walk func(path string, top bool)
	walk = func(path string, top bool) {
		fi, err := a.statSource(path, top)
		if err != nil || total < 0 {
			return
		}
		switch {
		case fi.IsDir() && a.opts.Recursive:
			names, _ := readNames(path)
			for _, n := range names {
				walk(joinPath(path, n), false)
			}
		case fi.Mode().IsRegular():
			total += fi.Size()
		case fi.Mode()&(os.ModeNamedPipe|os.ModeDevice|os.ModeCharDevice) != 0 && !a.opts.Recursive:
			total = -1
		}
	}
	ops := a.opts.Operands
	if a.opts.TargetDir == "" && len(ops) > 0 {
		ops = ops[:len(ops)-1]
	}
	for _, op := range ops {
		walk(op, true)
	}
	return total
}
