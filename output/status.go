// SPDX-License-Identifier: MIT

package output

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"
)

// Status on request, and progress for programs: what a run has done so far,
// as one line. SIGUSR1 asks for it (as it asks dd), whether or not a bar is
// drawn: every run counts its bytes and files (Progress in counting mode
// when nothing is drawn), and Status prints the line. --progress=json
// writes one JSON object a line instead of the bar, a second apart, for a
// program that wraps fastcp (an installer, a GUI); SIGUSR1 then writes one
// more object.

// ProgressSchema is the version of the JSON objects --progress=json
// writes; a change that removes or redefines a key raises it.
const ProgressSchema = 1

// Progress events, the "event" key of --progress=json.
const (
	EventStart    = "start"    // the run starts copying: the totals are known
	EventProgress = "progress" // a second has passed
	EventStatus   = "status"   // SIGUSR1 asked
	EventEnd      = "end"      // the run is done, failed files or not
)

// ProgressJSON is one line of --progress=json. Every key is always there.
type ProgressJSON struct {
	Schema   int     `json:"schema"`    // ProgressSchema
	Event    string  `json:"event"`     // start, progress, status, end
	ElapsedS float64 `json:"elapsed_s"` // seconds since the copy started
	// State is what is being done: "copying", "flushing" (--sync,
	// --verify), "hashing" (--checksum); "done" in the end object.
	State string `json:"state"`
	// File is the DEST being written, as named on the command line or
	// below a DEST directory; "" before the first and in the end object.
	File       string  `json:"file"`
	Bytes      int64   `json:"bytes"`       // of the sources, copied or skipped as holes
	TotalBytes int64   `json:"total_bytes"` // -1: a source's size cannot be known (FIFO, device)
	Percent    int64   `json:"percent"`     // 0-100, -1 without a total
	Files      int64   `json:"files"`       // files done, copied or failed
	TotalFiles int64   `json:"total_files"` // regular files the run copies
	BytesPerS  float64 `json:"bytes_per_s"` // since the start
	ETAS       float64 `json:"eta_s"`       // seconds left at that rate; -1 unknown
}

// StartProgressJSON starts --progress=json on stderr: a "start" object now,
// a "progress" object every second, an "end" object at Finish.
func (o *Output) StartProgressJSON(total int64, files int) *Progress {
	return o.startJSON(o.newProgress(total, files))
}

// startJSON starts --progress=json for p.
func (o *Output) startJSON(p *Progress) *Progress {
	p.json = true
	o.mu.Lock()
	p.writeJSON(EventStart)
	o.mu.Unlock()
	p.wg.Add(1)
	go p.loop(o)
	return p
}

// StartCounting counts what the run does without drawing anything, so that
// Status (SIGUSR1) can say it. Finish stops it.
func (o *Output) StartCounting(total int64, files int) *Progress {
	p := o.newProgress(total, files)
	p.stop = nil
	p.counting = &counting{}
	return p
}

// counting is what Doing was told in a run that draws nothing: kept as
// given, without the quoting and the allocations a bar needs at every
// file, and put in words only if Status asks.
type counting struct {
	mu         sync.Mutex
	verb, path string
}

// newProgress is a Progress of o's that Status reports on.
func (o *Output) newProgress(total int64, files int) *Progress {
	p := &Progress{w: o.stderr, prog: o.prog, start: time.Now(), stop: make(chan struct{}), ttyFd: -1, out: o}
	p.total.Store(total)
	p.filesTotal.Store(int64(files))
	p.Describe("")
	o.mu.Lock()
	o.status = p
	o.mu.Unlock()
	return p
}

// Doing says what is being done now, to which file (path as named, not
// quoted): the bar shows it quoted, --progress=json as it is.
func (p *Progress) Doing(verb, path string) {
	if c := p.counting; c != nil {
		c.mu.Lock()
		c.verb, c.path = verb, path
		c.mu.Unlock()
		return
	}
	shown := path // only this branch keeps a copy of the name
	p.file.Store(&shown)
	p.Describe(verb + " " + Quote(path))
}

// describeCounted puts what a counting run was told in the words a bar
// would have had (for Status).
func (p *Progress) describeCounted() {
	if c := p.counting; c != nil {
		c.mu.Lock()
		verb, path := c.verb, c.path
		c.mu.Unlock()
		if verb != "" {
			p.file.Store(&path)
			p.Describe(verb + " " + Quote(path))
		}
	}
}

// Status prints one line on stderr saying how far the run is: the file
// being written, the bytes done of the total, the rate and the time left
// (SIGUSR1). With --progress=json it is one more JSON object. A bar on the
// terminal is cleared first, and drawn again at its next tick.
func (o *Output) Status() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clearLine != nil {
		o.clearLine()
	}
	p := o.status
	if p == nil {
		fmt.Fprintf(o.stderr, "%s: nothing copied yet\n", o.prog)
		return
	}
	if p.json {
		p.writeJSON(EventStatus)
		return
	}
	p.describeCounted()
	fmt.Fprintf(o.stderr, "%s: %s\n", o.prog, statusLine(p.state()))
}

// statusLine is Status's line: "copying 'big.img': 1288490188 of
// 4294967296 bytes (1.2 GiB of 4 GiB, 30%), 2 of 10 files, 456 MB/s, 6s
// left".
func statusLine(s lineState) string {
	line := s.verb
	if s.name != "" {
		line += " " + s.name
	}
	if s.counting {
		return line + s.countingStatus()
	}
	if s.total >= 0 {
		line += fmt.Sprintf(": %d of %d bytes (%s of %s, %d%%)", s.done, s.total, Size(s.done), Size(s.total), percent(s.done, s.total))
	} else {
		line += fmt.Sprintf(": %d bytes (%s)", s.done, Size(s.done))
	}
	if s.filesTotal > 1 {
		line += fmt.Sprintf(", %d of %d files", min(s.files, s.filesTotal), s.filesTotal)
	}
	line += ", " + Rate(s.rate)
	if s.total >= 0 && s.rate > 0 && s.done < s.total {
		return line + ", " + left(s.done, s.total, s.rate) + " left"
	}
	return line + ", " + clock(int64(s.elapsed/time.Second)) + " elapsed"
}

// progressJSON is the JSON object of the current state.
func (p *Progress) progressJSON(event string) ProgressJSON {
	s := p.state()
	j := ProgressJSON{
		Schema: ProgressSchema, Event: event, ElapsedS: round3(s.elapsed.Seconds()), State: s.verb,
		Bytes: s.done, TotalBytes: s.total, Percent: -1, Files: min(s.files, max(s.filesTotal, s.files)),
		TotalFiles: s.filesTotal, BytesPerS: math.Round(s.rate), ETAS: -1,
	}
	switch f := p.file.Load(); {
	case event == EventEnd:
		j.State = "done"
	case f != nil && s.name != "" && Quote(*f) == s.name:
		j.File = *f
	default:
		j.File = s.name // described otherwise: as shown
	}
	if s.total >= 0 && !s.counting {
		j.Percent = percent(s.done, s.total)
		if s.rate > 0 {
			j.ETAS = round3(float64(s.total-s.done) / s.rate)
		}
	}
	if s.counting {
		// Still counted: not known yet.
		j.TotalBytes, j.TotalFiles = -1, -1
	}
	return j
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// writeJSON writes one object; the caller holds the output lock.
func (p *Progress) writeJSON(event string) {
	b, err := json.Marshal(p.progressJSON(event))
	if err != nil {
		return
	}
	p.w.Write(append(b, '\n'))
}
