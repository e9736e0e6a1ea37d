// SPDX-License-Identifier: MIT

package cp

import (
	"sync/atomic"

	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// The progress bar's total. The copy walks a tree as it copies it, so it
// does not know the tree's size before it is done; a scan does, running
// ahead of the copy in a goroutine of its own: it lists each directory and
// looks at each entry as the copy will (the same links followed, the same
// cycles refused, -x's mount points not entered), counts the regular files
// and their bytes, and keeps no more than the copy does (the directories
// on its path, each with the names of the subdirectories it has yet to
// enter, and a few descriptors of its own). Until it ends the bar says it
// is still counting. It runs only for a bar: without one nothing reads its
// counts.

// scanner counts the regular files of trees, handing what it counts to
// count: the bar's total, or, for a tree the copy leaves out, its done.
type scanner struct {
	a     *app
	w     *fsdir.Window
	count func(bytes, files int64)
	stop  atomic.Bool
	done  chan struct{}

	bytes, files, seen int64 // counted, not yet handed over
}

// scanBatch is how many entries the scan looks at between two handings
// of its counts to the bar.
const scanBatch = 1024

// startScan starts the scan of the plan's trees, with a window of dirs
// directories.
func (a *app) startScan(p *plan, dirs int) {
	s := &scanner{a: a, w: fsdir.NewWindow(dirs), count: a.progress.AddTotal, done: make(chan struct{})}
	a.scan = s
	root := s.w.Fixed(cwd)
	go func() {
		defer close(s.done)
		// A SOURCE copied into several -t DIRECTORYs is walked and
		// read once: counted once.
		for i := 0; i < len(p.ops); i += p.targets {
			for _, op := range p.ops[i : i+p.targets] {
				e := op.e
				if s.stop.Load() {
					return
				}
				if op.again || op.refused != "" || e.statErr != nil || !isDir(&e.st) {
					continue
				}
				s.tree(root, e.name, follows(a.opts, true), &e.st, nil)
				break
			}
		}
		s.flush()
		if !s.stop.Load() {
			a.progress.TotalsCounted()
		}
	}()
}

// stopScan stops the scan, if it still runs (the copy outran it: what
// it copied is then the totals), and waits for it.
func (a *app) stopScan() {
	if a.scan == nil {
		return
	}
	a.scan.stop.Store(true)
	<-a.scan.done
	a.progress.TotalsDone()
}

// skipTree counts as done, on the bar, the regular files of the tree e
// (in the directory parent, followed as follow says; anc the directories
// above it) that the copy leaves out (its DEST could not be made), as the
// scan counted them in its total.
func (a *app) skipTree(parent *fsdir.Node, e *entry, follow bool, anc *ancestor) {
	if a.scan == nil || e.statErr != nil || !isDir(&e.st) || !a.opts.Recursive {
		return
	}
	s := &scanner{a: a, w: a.window, count: a.progress.AddDone}
	s.tree(parent, e.name, follow, &e.st, anc)
	s.flush()
}

// tree counts the tree name in parent, which was looked at as st, below
// the directories anc.
func (s *scanner) tree(parent *fsdir.Node, name string, follow bool, st *unix.Stat_t, anc *ancestor) {
	o := s.a.opts
	pd, err := parent.Get()
	if err != nil {
		return
	}
	sub, sst, err := pd.OpenReadable(name, follow)
	parent.Put()
	if err != nil {
		return
	}
	if idOf(&sst) != idOf(st) {
		sub.Release()
		return
	}
	n := s.w.Child(parent, name, follow, true, sub, idOf(&sst))
	defer n.Done()
	names, _ := sub.ReadNames()
	here := &ancestor{id: idOf(st), parent: anc}
	below := follows(o, false)
	// The subdirectories are entered once the directory is counted: the
	// scan then holds their names and what it checks them by, not the
	// whole listing.
	type subdir struct {
		name string
		st   unix.Stat_t
	}
	var subs []subdir
	for _, nm := range names {
		if s.stop.Load() {
			break
		}
		est, err := sub.Stat(nm, below)
		if err != nil {
			continue
		}
		switch est.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			s.bytes += est.Size
			s.files++
		case unix.S_IFDIR:
			// As the copy: a cycle is refused, and -x copies a mount
			// point without entering it.
			if !here.has(idOf(&est)) && (!o.OneFileSystem || est.Dev == st.Dev) {
				subs = append(subs, subdir{nm, est})
			}
		}
		if s.seen++; s.seen >= scanBatch {
			s.flush()
		}
	}
	n.Put()
	for i := range subs {
		if s.stop.Load() {
			return
		}
		s.tree(n, subs[i].name, below, &subs[i].st, here)
	}
}

// flush hands the counts over.
func (s *scanner) flush() {
	if s.bytes != 0 || s.files != 0 {
		s.count(s.bytes, s.files)
	}
	s.bytes, s.files, s.seen = 0, 0, 0
}
