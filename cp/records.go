// SPDX-License-Identifier: MIT

package cp

import (
	"sync"

	"fastcp/output"
)

// A record collects the output of one entry (a file, a directory, a link):
// its -v and --debug lines and its errors, in order. Records are printed in
// the order they were opened, each as a whole, when it and every record
// before it are closed, so parallel copies (-j) print the same lines in the
// same order as a sequential run.
type record struct {
	lines  []outLine
	failed bool
	done   bool
	// sum is the entry's line of the manifest (--checksum-file), for
	// sumName; "" for none.
	sum, sumName string
}

type lineKind int

const (
	lineOut  lineKind = iota // stdout: -v, --debug
	lineErr                  // stderr: an error
	lineWarn                 // stderr: a warning, dropped under -q
)

type outLine struct {
	kind lineKind
	text string
}

// out adds a line for stdout.
func (r *record) out(line string) { r.lines = append(r.lines, outLine{lineOut, line}) }

// fail adds an error message and marks the entry failed.
func (r *record) fail(msg string) {
	r.lines = append(r.lines, outLine{lineErr, msg})
	r.failed = true
}

// failQuietly marks the entry failed without a message (a "no" to -i).
func (r *record) failQuietly() { r.failed = true }

// warn adds a warning without failing the entry.
func (r *record) warn(msg string) { r.lines = append(r.lines, outLine{lineWarn, msg}) }

type sequencer struct {
	mu      sync.Mutex
	out     *output.Output
	sums    *manifest // --checksum-file's, given the records' lines in order
	pending []*record
	failed  bool
}

// open starts the record of the next entry in output order.
func (s *sequencer) open() *record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &record{}
	s.pending = append(s.pending, r)
	return r
}

// close finishes r and prints every leading finished record.
func (s *sequencer) close(r *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.done = true
	n := 0
	for _, p := range s.pending {
		if !p.done {
			break
		}
		for _, l := range p.lines {
			switch l.kind {
			case lineOut:
				s.out.Println(l.text)
			case lineErr:
				s.out.Errorf("%s", l.text)
			case lineWarn:
				s.out.Warnf("%s", l.text)
			}
		}
		if p.failed {
			s.failed = true
		}
		if p.sum != "" && s.sums != nil {
			s.sums.add(p.sum, p.sumName)
		}
		n++
	}
	s.pending = s.pending[n:]
}

// emit records one message outside any entry (operand errors).
func (s *sequencer) emit(fail bool, msg string) {
	r := s.open()
	if fail {
		r.fail(msg)
	} else {
		r.out(msg)
	}
	s.close(r)
}
