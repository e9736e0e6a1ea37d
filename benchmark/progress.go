// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"sync"

	"fastcp/durability"
	"fastcp/output"
)

// progress shows where the benchmark is on one line of stderr, rewritten in
// place ("\rsection 1/4: sendfile run 2/3"), only when stderr is a terminal.
// It is erased before a table or a message is printed, at the end, and by
// a fatal signal before the process dies (freezeAt).
type progress struct {
	mu     sync.Mutex
	out    *output.Output // nil: no progress shown
	shown  bool
	frozen bool // the process is dying of a signal: nothing more is drawn
	status string
}

func newProgress(out *output.Output, quiet bool) *progress {
	p := &progress{}
	if !quiet && out.StderrIsTerminal() {
		p.out = out
	}
	return p
}

// set replaces the progress line.
func (p *progress) set(format string, a ...any) {
	if p.out == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		return
	}
	p.status = fmt.Sprintf(format, a...)
	p.out.Redraw(p.status)
	p.shown = true
}

// clear erases the progress line, before a table or a message is printed
// and at the end.
func (p *progress) clear() {
	if p.out == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *progress) clearLocked() {
	if !p.shown {
		return
	}
	p.out.EraseLine()
	p.shown = false
}

// freezeAt makes a fatal signal (s's Interrupt) erase the line and draw no
// more; it returns the function that undoes that.
func (p *progress) freezeAt(s *durability.Session) (unregister func()) {
	if p.out == nil || s == nil {
		return func() {}
	}
	return s.AtInterrupt(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.clearLocked()
		p.frozen = true
	})
}
