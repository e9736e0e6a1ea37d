// SPDX-License-Identifier: MIT

package fsdir

import (
	"errors"
	"strings"
	"sync"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// A tree walked by directory descriptor needs its directories again after
// it went deeper: to finish one (its mode and times, once its entries are
// written), to go on listing it, to link a file to a copy made in it. A
// descriptor held for each of them would make a deep tree fail with "Too
// many open files" under a low limit (a container, a service), so the
// directories are Nodes: a directory known by where it was found (its
// parent and its name, and its device and inode numbers), open while it is
// in use (pinned) and kept open afterwards only within a Window of a few.
// A node closed meanwhile is opened again when needed, relative to its
// parent (opened again the same way where it was closed too) or, for a
// directory whose child is open, as that child's "..", and it must then
// have the device and inode numbers it was found with: a directory renamed
// or replaced meanwhile is refused (ErrReplaced), never entered.

// ErrReplaced is a directory opened again that is no longer the one found
// there before.
var ErrReplaced = errors.New("replaced while being copied")

// Window bounds the directories its nodes keep open when none is using
// them: at most limit are open in all, but a pinned node is never closed,
// so a caller that pins more than limit at once (each of -j workers in its
// own directory) goes over it by those, and no further.
type Window struct {
	mu    sync.Mutex
	limit int
	open  int   // nodes open, pinned or idle (fixed ones not counted)
	idle  nodes // open, not pinned: least recently used first
	spent nodes // the same, of nodes Done: closed before any of idle
}

// NewWindow is a window of limit directories (at least 2).
func NewWindow(limit int) *Window { return &Window{limit: max(limit, 2)} }

// Node is a directory of a walked tree, open or not.
type Node struct {
	w      *Window
	parent *Node  // nil: a root, opened again by its path
	name   string // in parent; a root's path
	id     ID     // a root's is taken when first needed (rootID)
	root   bool
	follow bool // a final symbolic link is followed (operands, -L)
	// readable: the directory is listed, so it is opened for reading
	// (OpenReadable), never O_PATH.
	readable bool
	fixed    *Dir // Cwd or a directory that could not be opened: never closed

	reopen sync.Mutex // one opening at a time

	// Guarded by w.mu.
	d          *Dir
	idKnown    bool // a root's id is taken
	pins       int
	done       bool  // not needed but as the way back to its parent
	lastKid    *Node // the child last found in it: a way back to it
	prev, next *Node // in w.idle or w.spent
}

// Fixed is a node for d that the window never closes: the current
// directory, or one that could not be opened (every call on it fails with
// its error).
func (w *Window) Fixed(d *Dir) *Node {
	return &Node{w: w, fixed: d}
}

// Root is a node for d, opened by its path as the user named it (following
// symbolic links): when it was closed meanwhile, it is opened by that path
// again. A directory that could not be opened is a Fixed node. The node is
// pinned once.
func (w *Window) Root(d *Dir, readable bool) *Node {
	if d.fixed() {
		return w.Fixed(d)
	}
	n := &Node{w: w, name: d.path, follow: true, readable: readable, root: true}
	w.add(n, d)
	return n
}

// Child is a node for d, just opened as name in parent's directory (a
// symbolic link followed or not, as follow says; readable as for Root),
// with the identity id it was checked to have. The node is pinned once.
func (w *Window) Child(parent *Node, name string, follow, readable bool, d *Dir, id ID) *Node {
	n := &Node{w: w, parent: parent, name: name, follow: follow, readable: readable, id: id}
	w.add(n, d)
	w.mu.Lock()
	parent.lastKid = n
	w.mu.Unlock()
	return n
}

// add makes d n's open directory, pinned once.
func (w *Window) add(n *Node, d *Dir) {
	w.mu.Lock()
	n.d, n.pins = d, 1
	w.open++
	w.shrinkLocked(w.limit)
	w.mu.Unlock()
}

// ID is the directory's device and inode numbers.
func (n *Node) ID() ID {
	switch {
	case n.fixed != nil:
		return n.fixed.ID()
	case n.root:
		n.w.mu.Lock()
		defer n.w.mu.Unlock()
		n.rootIDLocked()
	}
	return n.id
}

// rootIDLocked takes a root's identity from its directory, the first time
// it is needed: a single copy into a directory, which never closes it,
// makes no fstat for it. It is taken before the directory is first closed,
// so that the one opened again can be checked.
func (n *Node) rootIDLocked() {
	if !n.idKnown {
		n.id, n.idKnown = n.d.ID(), true
	}
}

// Err is why a Fixed directory could not be opened, or nil.
func (n *Node) Err() error {
	if n.fixed != nil {
		return n.fixed.Err()
	}
	return nil
}

// Path is the directory as messages name it (made from its parent's: a
// node keeps no path of its own, which a deep tree's would make long).
func (n *Node) Path() string {
	var names []string
	top := n
	for ; top.parent != nil; top = top.parent {
		names = append(names, top.name)
	}
	var b strings.Builder
	if top.fixed != nil {
		b.WriteString(top.fixed.path)
	} else {
		b.WriteString(top.name)
	}
	for i := len(names) - 1; i >= 0; i-- {
		// As Dir.Join: "dir/name", or name alone in the current
		// directory.
		if s := b.String(); s != "" && s[len(s)-1] != '/' {
			b.WriteByte('/')
		}
		b.WriteString(names[i])
	}
	return b.String()
}

// Parent is the node n was found in (nil for a root).
func (n *Node) Parent() *Node { return n.parent }

// Get pins the directory and returns it open, opening it again if it was
// closed; Put unpins it. The error is the opening's (ErrReplaced: not the
// directory found there before).
func (n *Node) Get() (*Dir, error) { return n.GetNear(nil) }

// GetNear is Get, where near, if it is a child of n still open, is the
// cheapest way back to n (its "..").
func (n *Node) GetNear(near *Node) (*Dir, error) {
	if n.fixed != nil {
		return n.fixed, nil
	}
	if d := n.w.pin(n); d != nil {
		return d, nil
	}
	n.reopen.Lock()
	defer n.reopen.Unlock()
	if d := n.w.pin(n); d != nil {
		return d, nil
	}
	d, err := n.openAgain(near)
	if err != nil {
		return nil, err
	}
	n.w.mu.Lock()
	n.d, n.pins, n.done = d, 1, false
	n.w.open++
	n.w.shrinkLocked(n.w.limit)
	n.w.mu.Unlock()
	return d, nil
}

// Put unpins the directory a Get returned.
func (n *Node) Put() {
	if n.fixed != nil {
		return
	}
	w := n.w
	w.mu.Lock()
	defer w.mu.Unlock()
	n.pins--
	switch {
	case n.pins < 0:
		panic("fsdir: Put of a node not pinned: " + n.Path())
	case n.pins == 0:
		w.list(n).pushBack(n)
		w.shrinkLocked(w.limit)
	}
}

// list is the list n is in when idle.
func (w *Window) list(n *Node) *nodes {
	if n.done {
		return &w.spent
	}
	return &w.idle
}

// Done says the directory is not needed any more but as the way back to
// its parent: it stays open, first in line to be closed when the window
// needs room (once the last pin goes). A later Get opens it again.
func (n *Node) Done() {
	if n.fixed != nil {
		return
	}
	w := n.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.d == nil || n.done {
		return
	}
	if n.pins == 0 {
		w.idle.remove(n)
		w.spent.pushBack(n)
	}
	n.done = true
}

// pin returns n's directory pinned, or nil when it is closed.
func (w *Window) pin(n *Node) *Dir {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.d == nil {
		return nil
	}
	if n.pins == 0 {
		w.list(n).remove(n)
	}
	n.pins++
	return n.d
}

// closeLocked closes n, which is open and neither pinned nor in a list.
func (w *Window) closeLocked(n *Node) {
	if n.root {
		n.rootIDLocked()
	}
	n.d.Release()
	n.d, n.done = nil, false
	w.open--
}

// shrinkLocked closes idle directories, those Done first, least recently
// used first, until at most keep are open or none is idle.
func (w *Window) shrinkLocked(keep int) {
	for w.open > keep {
		l := &w.spent
		if l.head == nil {
			l = &w.idle
		}
		n := l.head
		if n == nil {
			return
		}
		l.remove(n)
		w.closeLocked(n)
	}
}

// openAgain opens n again and checks that it is the directory it was:
// through the ".." of a child of n that is open (near, or the child last
// found in n), else in its parent (opened again first if it was closed),
// or by its path for a root.
func (n *Node) openAgain(near *Node) (*Dir, error) {
	n.w.mu.Lock()
	last := n.lastKid
	n.w.mu.Unlock()
	for _, kid := range [...]*Node{near, last} {
		if kid == nil || kid.parent != n {
			continue
		}
		if kd := n.w.pin(kid); kd != nil {
			// kd is "path/name": n is path.
			shown := strings.TrimSuffix(kd.path, kid.name)
			if len(shown) > 1 {
				shown = strings.TrimSuffix(shown, "/")
			}
			d, err := n.openIn(kd, "..", shown, false)
			kid.Put()
			if err == nil {
				return d, nil
			}
		}
	}
	if n.parent == nil {
		name := n.name
		if name == "" {
			name = "."
		}
		return n.openIn(Cwd, name, n.name, n.follow)
	}
	pd, err := n.parent.Get()
	if err != nil {
		return nil, err
	}
	defer n.parent.Put()
	return n.openIn(pd, n.name, pd.Join(n.name), n.follow)
}

// openIn opens name in d as n (shown in messages), and checks its
// identity. Out of descriptors, it closes the window's idle directories
// and tries again.
func (n *Node) openIn(d *Dir, name, shown string, follow bool) (*Dir, error) {
	for try := 0; ; try++ {
		var sub *Dir
		var st unix.Stat_t
		var err error
		if n.readable {
			sub, st, err = d.openReadable(name, shown, follow)
		} else if sub, err = d.open(name, shown, follow); err == nil {
			err = sysx.IgnoringEINTR(func() error { return unix.Fstat(sub.fd, &st) })
			if err != nil {
				sub.Release()
			}
		}
		if (err == unix.EMFILE || err == unix.ENFILE) && try == 0 {
			n.w.mu.Lock()
			n.w.shrinkLocked(0)
			n.w.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, err
		}
		if IDOf(&st) != n.id {
			sub.Release()
			return nil, ErrReplaced
		}
		sub.idOnce.Do(func() { sub.ident = n.id })
		return sub, nil
	}
}

// nodes is a doubly linked list of nodes.
type nodes struct{ head, tail *Node }

func (l *nodes) pushBack(n *Node) {
	n.prev, n.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = n
	} else {
		l.head = n
	}
	l.tail = n
}

func (l *nodes) remove(n *Node) {
	if n.prev != nil {
		n.prev.next = n.next
	} else if l.head == n {
		l.head = n.next
	} else {
		return // not in the list
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

// ReadNames lists d's entries, in the order the directory gives them, from
// its own descriptor, read with getdents(2) from the start: nobody else may
// read d's entries at the same time. (Names lists them through a
// descriptor of its own, at the cost of an open.)
func (d *Dir) ReadNames() ([]string, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.opath {
		return d.Names()
	}
	if _, err := unix.Seek(d.fd, 0, 0); err != nil {
		return nil, err
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var names []string
	for {
		n, err := sysx.Retry(func() (int, error) { return unix.Getdents(d.fd, buf) })
		if err != nil {
			return names, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// direntBufs are getdents(2) buffers: 32 KiB, as the C library's readdir
// uses, takes a few hundred entries a call.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
