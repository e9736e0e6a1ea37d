// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"io"

	"fastcp/output"
)

// progress shows where the benchmark is on one line of stderr, rewritten in
// place ("\rsection 1/4: sendfile run 2/3"), only when stderr is a terminal.
type progress struct {
	w      io.Writer // nil: no progress shown
	shown  bool
	status string
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	p := &progress{}
	if !quiet && output.IsTerminal(stderr) {
		p.w = stderr
	}
	return p
}

// set replaces the progress line.
func (p *progress) set(format string, a ...any) {
	if p.w == nil {
		return
	}
	p.status = fmt.Sprintf(format, a...)
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.status)
	p.shown = true
}

// clear erases the progress line, before a table or a message is printed
// and at the end.
func (p *progress) clear() {
	if p.w == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	p.shown = false
}
