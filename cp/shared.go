// SPDX-License-Identifier: MIT

package cp

import (
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The state the -j workers share, each piece in its own small type with its
// own lock.

// scheduler runs entry copies, on -j workers or (work nil) in the walker
// itself, and orders the copies to one DEST (claims).
type scheduler struct {
	work chan func()
	wg   sync.WaitGroup

	// The walker's batch: the small files of one directory that it
	// scheduled last, in walk order, not yet handed to a worker (batch).
	batch      []func()
	batchDir   *dirCopy
	batchBytes int64

	// With several SOURCEs: the copy that last claimed each DEST.
	mu     sync.Mutex
	claims map[claimKey]chan struct{}
}

// claimKey is a DEST entry: its directory and its name.
type claimKey struct {
	dir  devIno
	name string
}

// start starts n workers (none for n <= 1).
func (s *scheduler) start(n int) {
	if n <= 1 {
		return
	}
	s.work = make(chan func(), 4*n)
	for i := 0; i < n; i++ {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for f := range s.work {
				f()
			}
		}()
	}
}

// The small files of one directory go to one worker together, up to
// batchFiles files or batchBytes bytes: -j workers then copy into
// different directories. Four workers each creating files in one
// directory wait for each other on its lock in the kernel (every name
// lookup against every linkat; figures: docs/measurements.md). A file of
// batchAloneBytes or more goes to a worker alone, as every file did
// before: a few large files in one directory are still copied in parallel.
const (
	batchFiles      = 256
	batchBytes      = 8 << 20
	batchAloneBytes = 1 << 20
)

// run runs f, the copy of an entry of size bytes into d, on a worker, or
// at once without workers. The work is handed out in the order run was
// called (a batch is handed out before anything scheduled after it), so a
// copy that waits for an earlier one (a hard link, a DEST claimed before)
// finds it handed out already, or earlier in its own batch.
func (s *scheduler) run(d *dirCopy, size int64, f func()) {
	if s.work == nil {
		f()
		return
	}
	if size >= batchAloneBytes {
		s.flush()
		s.work <- f
		return
	}
	if d != s.batchDir {
		s.flush()
		s.batchDir = d
	}
	s.batch = append(s.batch, f)
	s.batchBytes += size
	if len(s.batch) >= batchFiles || s.batchBytes >= batchBytes {
		s.flush()
	}
}

// flush hands the walker's batch to a worker.
func (s *scheduler) flush() {
	switch len(s.batch) {
	case 0:
	case 1:
		s.work <- s.batch[0]
	default:
		fs := s.batch
		s.work <- func() {
			for _, f := range fs {
				f()
			}
		}
	}
	s.batch, s.batchDir, s.batchBytes = nil, nil, 0
}

// wait waits for the workers to finish everything run gave them.
func (s *scheduler) wait() {
	if s.work != nil {
		s.flush()
		close(s.work)
		s.wg.Wait()
	}
}

// orderDests makes claim order the copies to one DEST (several SOURCEs).
func (s *scheduler) orderDests() { s.claims = make(map[claimKey]chan struct{}) }

// claim takes DEST name in d for the next copy (with several SOURCEs):
// prev, when not nil, is closed once the copy before it is done; done
// is called when this copy is.
func (s *scheduler) claim(d *fsdir.Node, name string) (prev <-chan struct{}, done func()) {
	if s.claims == nil || d.Err() != nil {
		return nil, func() {}
	}
	key := claimKey{d.ID(), name}
	mine := make(chan struct{})
	s.mu.Lock()
	prev = s.claims[key]
	s.claims[key] = mine
	s.mu.Unlock()
	return prev, func() {
		close(mine)
		s.mu.Lock()
		if s.claims[key] == mine {
			delete(s.claims, key)
		}
		s.mu.Unlock()
	}
}

// createdSet is the set of entries this run made, with several SOURCEs
// (a nil set remembers nothing): cp refuses to overwrite what it just made.
type createdSet struct {
	mu sync.Mutex
	m  map[devIno]bool
}

func newCreatedSet() *createdSet { return &createdSet{m: make(map[devIno]bool)} }

// note remembers an entry this run made.
func (c *createdSet) note(id devIno) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.m[id] = true
	c.mu.Unlock()
}

// has reports whether this run made the entry id.
func (c *createdSet) has(id devIno) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
}

// linkRegistry is -a's record of the first copy of each multiply-linked
// source inode, to which its further names are linked. As cp's, it keeps
// a record for every such inode until the end: an inode may be met again
// through any number of names (links followed by -L or -H, a directory
// bind-mounted twice in the tree, operands that overlap), whatever its
// link count says. A record holds no descriptor: the directory of the
// first copy is a node of the window, opened again, checked, when a
// further name is linked.
type linkRegistry struct {
	mu      sync.Mutex
	settled sync.Cond // a first copy is done (-j: a further name waits for it)
	m       map[linkKey]*linkFirst
}

// linkKey is a source inode in one destination tree (dirCopy.t): each
// -t DIRECTORY has its own first copy of it.
type linkKey struct {
	id devIno
	t  int
}

// linkFirst is the first copy of a source inode with several links (-a):
// name in the destination directory dir, made as the inode id.
type linkFirst struct {
	state  linkState
	dir    *fsdir.Node
	name   string
	id     devIno
	digest []byte // --checksum: the copy's digest, for the further names' lines
}

type linkState uint8

const (
	linkPending linkState = iota // the first copy is still being made
	linkMade                     // the first copy is name in dir
	linkNone                     // no first copy: the further names are copied
)

// first returns the first copy of inode id in the destination tree t,
// registering one when there is none yet (seen false): its copy then
// settles it (made or none).
func (l *linkRegistry) first(id devIno, t int) (first *linkFirst, seen bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := linkKey{id, t}
	if first, seen = l.m[key]; seen {
		return first, true
	}
	if l.m == nil {
		l.m = make(map[linkKey]*linkFirst)
		l.settled.L = &l.mu
	}
	first = &linkFirst{}
	l.m[key] = first
	return first, false
}

// made records the first copy as name in dir (open as d): the inode it
// now is. One that cannot be looked at is no first copy.
func (l *linkRegistry) made(f *linkFirst, dir *fsdir.Node, d *fsdir.Dir, name string, digest []byte) {
	st, err := d.Stat(name, false)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		f.dir, f.name, f.id, f.digest, f.state = dir, name, idOf(&st), digest, linkMade
	}
}

// settle ends the first copy, made or not, and wakes those waiting for it.
func (l *linkRegistry) settle(f *linkFirst) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f.state == linkPending {
		f.state = linkNone
	}
	l.settled.Broadcast()
}

// wait waits for the first copy f (queued earlier, so running or done)
// and reports whether it was made.
func (l *linkRegistry) wait(f *linkFirst) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for f.state == linkPending {
		l.settled.Wait()
	}
	return f.state == linkMade
}

// swapFiles is the set of swap files in use, read from /proc/swaps once
// per run, and only when an existing regular DEST is replaced.
type swapFiles struct {
	read func() map[devIno]bool
}

func newSwapFiles() *swapFiles { return &swapFiles{read: sync.OnceValue(readSwapFiles)} }

// active reports whether st is a swap file in use.
func (s *swapFiles) active(st *unix.Stat_t) bool { return s.read()[idOf(st)] }

// readSwapFiles returns the device and inode numbers of the swap files in
// use. /proc/swaps names one per line after a header, with blanks and
// backslashes in the name escaped as octal (\040). Where no swap is in
// use at all (sysinfo's total swap is 0, as on most machines that
// run scripts), it is not read: one call instead of five.
func readSwapFiles() map[devIno]bool {
	if noSwap() {
		return nil
	}
	b, err := readFileRaw("/proc/swaps")
	if err != nil {
		return nil
	}
	var m map[devIno]bool
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != "file" {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(sysx.UnescapeOctal(f[0]), &st) != nil {
			continue
		}
		if m == nil {
			m = make(map[devIno]bool)
		}
		m[idOf(&st)] = true
	}
	return m
}

// noSwap reports whether the kernel has no swap area in use, neither
// partition nor file: sysinfo counts every area swapon added.
var noSwap = func() bool {
	var si unix.Sysinfo_t
	return unix.Sysinfo(&si) == nil && si.Totalswap == 0
}
