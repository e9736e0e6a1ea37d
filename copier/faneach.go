// SPDX-License-Identifier: MIT

package copier

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Kernel copies from the page cache (CopyMany, Auto): where the source is
// there already, the shared read would only copy it from the cache into
// the ring for every destination to copy it out again. Each destination
// then gets a copy of its own (Copy: sendfile, copy_file_range, holes
// kept), all reading the same cached pages, so the device reads the source
// at most once still:
//   - a small source (less than the rw loop's buffer): one call a
//     destination, one after the other, and no read into user space;
//   - a source wholly in the page cache (cachestat): each destination on
//     a goroutine of its own, beside the others, none pacing another.
//
// Not with --checksum (the hash is given the bytes the shared read reads)
// nor --nocache (Auto's direct reads would each read the device).
// docs/measurements.md ("One read, many writes") has what each saves.

// eachWanted says whether the destinations of live get kernel copies of
// their own from the page cache, and whether those run beside each other.
func (f *fan) eachWanted(live []*fanDest) (each, parallel bool) {
	o := f.opts
	if len(live) < 2 || o.Hash != nil || o.NoCache || f.srcSt.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, false
	}
	for _, d := range live {
		if !d.c.dstRegular {
			return false, false
		}
	}
	size := f.srcSt.Size - f.start
	if size < int64(live[0].c.bufSize) {
		return true, false
	}
	if o.SourceCached == nil {
		return false, false
	}
	cached, err := o.SourceCached()
	if err != nil || cached < f.srcSt.Size {
		return false, false
	}
	return true, true
}

// each copies the source into every destination of live on its own (see
// above), and returns the source's end as copied (-1: every destination
// failed). Progress is given the bytes that reached every destination
// still being written.
func (f *fan) each(live []*fanDest, parallel bool) int64 {
	var prog *eachProgress
	if p := f.opts.Progress; p != nil {
		prog = &eachProgress{out: p, n: make([]int64, len(live)), gone: make([]bool, len(live)), sent: f.start}
	}
	copyOne := func(i int, d *fanDest) {
		o := d.c.opts
		if prog != nil {
			o.Progress = eachCounter{prog, i}
		}
		if _, err := f.copyOwn(d, o); err != nil && prog != nil {
			prog.drop(i)
		}
		d.c.result.Each = len(live)
	}
	if parallel {
		var wg sync.WaitGroup
		for i, d := range live {
			wg.Add(1)
			go func() {
				defer wg.Done()
				copyOne(i, d)
			}()
		}
		wg.Wait()
	} else {
		for i, d := range live {
			copyOne(i, d)
		}
	}
	end := int64(-1)
	for _, d := range live {
		if d.err == nil {
			end = max(end, d.c.result.Size)
		}
	}
	if prog != nil && end >= 0 {
		prog.finish(end)
	}
	return end
}

// eachProgress gives a Counter the least of the bytes its destinations'
// copies counted, leaving out those that failed.
type eachProgress struct {
	mu   sync.Mutex
	out  Counter
	n    []int64
	gone []bool
	sent int64 // given to out so far (from the start, which fan.init gave)
}

type eachCounter struct {
	p *eachProgress
	i int
}

func (c eachCounter) Add(n int64) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.n[c.i] += n
	c.p.forward()
}

func (p *eachProgress) drop(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone[i] = true
	p.forward()
}

// forward gives out what every destination still written has reached
// beyond what it was given.
func (p *eachProgress) forward() {
	least := int64(-1)
	for i, n := range p.n {
		if !p.gone[i] && (least < 0 || n < least) {
			least = n
		}
	}
	if least > p.sent {
		p.out.Add(least - p.sent)
		p.sent = least
	}
}

// finish gives out the rest up to end, once a copy succeeded.
func (p *eachProgress) finish(end int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if end > p.sent {
		p.out.Add(end - p.sent)
		p.sent = end
	}
}
