// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/fsdir"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Session is one run's set of destinations being written, for the signal
// handler: main makes one (NewSession), passes it to every Create and
// DirSync.Replace (Options.Session), and on a fatal signal calls
// Interrupt, which removes the temporary files this run made (by
// identity: a name another run took over is left alone) and keeps every
// later rename from happening. It also remembers, per directory, what
// the sweep of leftovers found there, so a directory is listed at most
// once per run.
//
// The signal handlers are armed lazily (SetArm): a run that never names a
// file before it is complete (an unnamed temporary file linked into place,
// the common copy) never pays for them, and a fatal signal before they are
// armed kills the process by the default action, which leaves nothing
// behind because nothing is there to clean up.
type Session struct {
	armOnce sync.Once
	arm     func()

	// mu orders the run's acts on its entries against Interrupt: every
	// create, commit and removal holds it shared, so that -j copies
	// create, link and rename their files at once (on a network
	// filesystem each is a round trip), and Interrupt takes it for good,
	// once those under way are done: nothing is made, linked or renamed
	// after it. tmu guards the maps and each entry's keeper against the
	// shared holders.
	mu      sync.RWMutex
	tmu     sync.Mutex
	temps   map[*tempEntry]struct{}
	inPlace map[*Destination]struct{}
	funcs   map[int]func()
	nextID  int

	dirsMu sync.Mutex
	dirs   map[identity][]string // directory -> its temporary-looking names; nil: none
	seen   map[reportedName]struct{}
}

// NewSession returns an empty session.
func NewSession() *Session { return &Session{} }

// SetArm gives s the function that installs the signal handlers; call it
// before the session is used. s calls it once, before it first holds
// anything Interrupt would act on: a named temporary file or entry, an
// in-place destination, an AtInterrupt function; Arm calls it too.
func (s *Session) SetArm(arm func()) { s.arm = arm }

// Arm installs the signal handlers now, if they are not yet: before
// anything that a fatal signal must leave in order (the progress bar on a
// terminal) is set up outside the session.
func (s *Session) Arm() {
	if s.arm != nil {
		s.armOnce.Do(s.arm)
	}
}

// create makes an entry with mk, which returns the new entry's identity,
// and registers it, all under s's lock taken shared: Interrupt, which
// waits for it, finds the entry registered.
func (s *Session) create(sys *sysCalls, dir *fsdir.Dir, name string, mk func() (identity, error)) (*tempEntry, error) {
	s.Arm()
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, err := mk()
	if err != nil {
		return nil, err
	}
	e := &tempEntry{sys: sys, dir: dir, name: name, id: id}
	s.tmu.Lock()
	if s.temps == nil {
		s.temps = make(map[*tempEntry]struct{})
	}
	s.temps[e] = struct{}{}
	s.tmu.Unlock()
	return e, nil
}

// forget unregisters e without touching it.
func (s *Session) forget(e *tempEntry) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.tmu.Lock()
	delete(s.temps, e)
	s.tmu.Unlock()
}

// remove removes e (if its name still is this run's file) and unregisters it.
func (s *Session) remove(e *tempEntry) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e.removeIfOurs()
	s.drop(e)
}

// drop unregisters e; s is locked, shared or for good.
func (s *Session) drop(e *tempEntry) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	delete(s.temps, e)
	if k := e.keeper; k != nil {
		k.stop()
		k.mu.Lock()
		unix.Close(k.fd)
		k.fd = -1
		k.mu.Unlock()
		e.keeper = nil
	}
}

// keep makes e resumable (--resume): a fatal signal records its last
// checkpoint with k instead of removing it.
func (s *Session) keep(e *tempEntry, k *keeper) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.tmu.Lock()
	e.keeper = k
	s.tmu.Unlock()
}

// commit renames e over target and unregisters it; on failure e is
// removed. Under s's lock, shared: -j copies rename at once, and after
// Interrupt no rename happens.
func (s *Session) commit(e *tempEntry, target string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	err := e.renameOver(target)
	if err != nil {
		e.removeIfOurs()
	}
	s.drop(e)
	return err
}

// unlessInterrupted runs fn under s's lock, taken shared, so that -j
// copies do not wait for each other: Interrupt waits for an fn that runs,
// and after Interrupt none runs (nothing is linked in, no record dropped).
func (s *Session) unlessInterrupted(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn()
}

// writingInPlace notes (on) or forgets an in-place destination being
// written, so Interrupt can say that it is left partial.
func (s *Session) writingInPlace(d *Destination, on bool) {
	if on {
		s.Arm()
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if !on {
		delete(s.inPlace, d)
		return
	}
	if s.inPlace == nil {
		s.inPlace = make(map[*Destination]struct{})
	}
	s.inPlace[d] = struct{}{}
}

// AtInterrupt registers fn to run at Interrupt, e.g. the benchmark removing
// its test files. The returned function unregisters it.
func (s *Session) AtInterrupt(fn func()) (unregister func()) {
	s.Arm()
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.tmu.Lock()
	defer s.tmu.Unlock()
	s.nextID++
	id := s.nextID
	if s.funcs == nil {
		s.funcs = make(map[int]func())
	}
	s.funcs[id] = fn
	return func() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		s.tmu.Lock()
		delete(s.funcs, id)
		s.tmu.Unlock()
	}
}

// Interrupted is what Interrupt left behind.
type Interrupted struct {
	// Kept are the resumable temporary files (--resume), flushed and
	// recorded at the copy's progress, sorted by name.
	Kept []Kept
	// Partial are the in-place destinations that were being written,
	// sorted: they now hold part of the copy.
	Partial []string
}

// Interrupt is for a fatal signal, right before the process exits: it
// removes every temporary file and entry still being written (each only if
// its name still is the file this run made) but the resumable ones, which
// it flushes and records a last checkpoint in; it runs the AtInterrupt
// functions and returns what it kept and which in-place destinations it
// leaves partial, with the session locked for good, so no rename can
// happen before the process exits.
//
// For the files it removes it waits for nothing: they are unlinked, not
// flushed. What the kernel has already sent to the device still has to
// finish before the exiting process's last reference to such a file is
// dropped (the kernel waits for pages under writeback when it frees the
// inode); that is at most what the writeback pipeline keeps in flight
// (writeback.go), and what the kernel's own flusher started.
func (s *Session) Interrupt() Interrupted {
	s.mu.Lock()
	// Every other holder of tmu holds mu shared, so after this nothing
	// is registered or dropped any more.
	s.tmu.Lock()
	defer s.tmu.Unlock()
	var r Interrupted
	// A call of the copy in flight (a sendfile or copy_file_range of up
	// to 64 MiB) has written bytes that its progress does not count
	// yet: let it return, within a second for all, so that what is
	// recorded and said is what the file holds.
	deadline := time.Now().Add(settleTime)
	for e := range s.temps {
		if e.keeper != nil {
			e.keeper.settle(deadline)
		}
	}
	for e := range s.temps {
		if e.keeper != nil {
			r.Kept = append(r.Kept, e.keeper.keepForExit(e.path()))
			continue
		}
		e.removeIfOurs()
	}
	for _, fn := range s.funcs {
		fn()
	}
	for d := range s.inPlace {
		r.Partial = append(r.Partial, d.Path)
	}
	slices.SortFunc(r.Kept, func(a, b Kept) int { return strings.Compare(a.Temp, b.Temp) })
	slices.Sort(r.Partial)
	return r
}

// DirCreated tells the session that this run created the directory open
// as dirfd: nothing can be left over in it, and the sweep need not list it.
func (s *Session) DirCreated(dirfd int) {
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return
	}
	s.dirsMu.Lock()
	defer s.dirsMu.Unlock()
	if s.dirs == nil {
		s.dirs = make(map[identity][]string)
	}
	s.dirs[identityOf(&st)] = nil
}

// DirDone tells the session that this run makes nothing more in the
// directory d: what it knows of d goes, so that a run over a tree of any
// size keeps it only for the directories being filled.
func (s *Session) DirDone(d *fsdir.Dir) {
	id := d.ID()
	s.dirsMu.Lock()
	defer s.dirsMu.Unlock()
	delete(s.dirs, identity{dev: id.Dev, ino: id.Ino})
}
