// SPDX-License-Identifier: MIT

// Package crashfs is a crash-simulating filesystem for tests: an in-memory
// filesystem served over FUSE that keeps what is durable apart from what is
// only volatile, so that a test can cut the power after any operation and
// look at what a real disk may hold afterwards.
//
// # The model
//
// It is the weakest common model of a POSIX filesystem on Linux, the one
// LazyFS and ALICE (OSDI 2014) use:
//
//   - File data written but not yet covered by an fsync or fdatasync of
//     that file is volatile. So is a truncation (O_TRUNC, ftruncate) and a
//     fallocate: they change what a read returns, as a write does. A write
//     through a descriptor opened with O_SYNC or O_DSYNC is durable when it
//     returns (as if fdatasync followed it).
//   - fsync and fdatasync of a file make its data and size durable. They do
//     not make its name durable: "Calling fsync() does not necessarily
//     ensure that the entry in the directory containing the file has also
//     reached disk" (fsync(2)). ext4 in practice commits a new file's
//     directory entry with the inode; xfs and btrfs need not, and this
//     model does not.
//   - Every create, mkdir, symlink, mknod, link, unlink, rmdir and rename
//     changes directories, and those changes are volatile until the
//     directory holding them is fsynced. A rename between two directories
//     is two changes, each durable with its own directory.
//   - Extended attributes are durable once the file is fsynced (not
//     fdatasynced: they are not needed to read the data back). --resume
//     keeps its checkpoint in one. The other inode attributes (mode,
//     owner, times) are kept as last set: the tests check data, names and
//     what --resume reads back.
//
// At a crash, what reaches the disk is any state the model permits, which
// is not one state but many. Directory changes are journalled in order, as
// ext4, xfs and btrfs commit them: a crash state keeps a prefix of the
// volatile directory changes (none, some, all). Unsynced file data is
// written back in no order relative to them, nor among themselves: a crash
// state keeps none of a file's unsynced changes, only the first, the first
// half, every other one, all of them, or the sizes but not the bytes (a file
// of the right length that reads as zeros, as xfs can leave one). Unsynced extended attributes are lost with
// the data in the first policy and kept in the others (the one that hurts:
// a record newer than the data it describes). Snapshot.Images lists every
// combination.
//
// # Crash points
//
// Every request that changes the filesystem (a write, a truncation, a
// create, a rename, an fsync...) is one operation. Arm(k) makes the k+1-th
// one the crash: it is refused, the process that sent it is killed with
// SIGKILL before it can run another instruction, and every later request
// fails with EIO. Crash then plays the reboot: it keeps the state at the
// crash (a Snapshot, whose Images are every state the disk may hold) and
// mounts the filesystem again holding one of them, the volatile state gone.
package crashfs

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"syscall"
)

// rootIno is FUSE's root node id.
const rootIno = 1

// inode is one file, directory or symbolic link.
type inode struct {
	ino    uint64
	mode   uint32 // S_IFMT and permission bits
	uid    uint32
	gid    uint32
	mtime  int64 // nanoseconds
	atime  int64
	ctime  int64
	xattr  map[string][]byte // as last set
	dxattr map[string][]byte // as on the disk
	target string            // symbolic link

	// Regular files: what reads return, what is on the disk, and the
	// changes made since the last flush, in order.
	data    []byte
	durable []byte
	pending []dataOp

	// Directories: the entries as seen, and as on the disk.
	kids  map[string]uint64
	dkids map[string]uint64
}

func (n *inode) isDir() bool { return n.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (n *inode) isReg() bool { return n.mode&syscall.S_IFMT == syscall.S_IFREG }

// dataOp is one unsynced change to a file's data: a write of buf at off, or
// (buf nil) setting the size to size.
type dataOp struct {
	off  int64
	buf  []byte
	size int64
}

// apply returns data changed by op; zero writes zeros in place of buf.
func (op dataOp) apply(data []byte, zero bool) []byte {
	if op.buf == nil {
		if op.size <= int64(len(data)) {
			return data[:op.size]
		}
		return append(data, make([]byte, op.size-int64(len(data)))...)
	}
	end := op.off + int64(len(op.buf))
	if end > int64(len(data)) {
		data = append(data, make([]byte, end-int64(len(data)))...)
	}
	if zero {
		clear(data[op.off:end])
	} else {
		copy(data[op.off:end], op.buf)
	}
	return data
}

// dirChange is one change of a directory entry: name now refers to ino, or
// (ino 0) is gone.
type dirChange struct {
	dir  uint64
	name string
	ino  uint64
}

// metaOp is one operation's volatile directory changes, which reach the
// disk together (a rename within a directory is atomic).
type metaOp struct {
	what    string
	changes []dirChange
}

// DataPolicy says which of a file's unsynced changes a crash state keeps.
type DataPolicy int

// The data policies, applied to every file of a crash state alike.
const (
	DataLost  DataPolicy = iota // none: the last flushed data
	DataFirst                   // the first change only (an O_TRUNC, a first write)
	DataHalf                    // the first half of the changes
	DataAll                     // all of them
	DataZeros                   // the sizes they gave, but zeros for every byte they wrote
	DataOdd                     // every other one (the first, the third...): written back out of order
)

// DataPolicies lists every policy.
var DataPolicies = []DataPolicy{DataLost, DataFirst, DataHalf, DataAll, DataZeros, DataOdd}

func (p DataPolicy) String() string {
	return [...]string{"data lost", "first change", "half the changes", "all changes", "sizes but zeros", "every other change"}[p]
}

// state is the whole filesystem: inodes, the volatile directory changes in
// the order they were made.
type state struct {
	inodes  map[uint64]*inode
	meta    []*metaOp
	nextIno uint64
}

func newState() *state {
	root := &inode{ino: rootIno, mode: syscall.S_IFDIR | 0o755, kids: map[string]uint64{}, dkids: map[string]uint64{}}
	return &state{inodes: map[uint64]*inode{rootIno: root}, nextIno: rootIno + 1}
}

// newInode makes an inode (not yet in any directory).
func (s *state) newInode(mode uint32, now int64) *inode {
	n := &inode{ino: s.nextIno, mode: mode, mtime: now, atime: now, ctime: now}
	s.nextIno++
	if n.isDir() {
		n.kids = map[string]uint64{}
		n.dkids = map[string]uint64{}
	}
	s.inodes[n.ino] = n
	return n
}

// change records the directory changes of one operation, already applied
// to the volatile entries, as volatile.
func (s *state) change(what string, changes ...dirChange) {
	s.meta = append(s.meta, &metaOp{what: what, changes: changes})
}

// setEntry changes dir's volatile entry name (ino 0 removes it) and returns
// the change for the log.
func (s *state) setEntry(dir *inode, name string, ino uint64) dirChange {
	if ino == 0 {
		delete(dir.kids, name)
	} else {
		dir.kids[name] = ino
	}
	return dirChange{dir: dir.ino, name: name, ino: ino}
}

// syncData makes a file's data durable (fsync, fdatasync, O_DSYNC writes);
// full (fsync, O_SYNC writes) its extended attributes too.
func (s *state) syncData(n *inode, full bool) {
	if full {
		n.dxattr = maps.Clone(n.xattr)
	}
	if !n.isReg() {
		return
	}
	n.durable = slices.Clone(n.data)
	n.pending = nil
}

// syncDir makes a directory's entries durable (fsync of the directory): its
// changes leave the volatile log.
func (s *state) syncDir(n *inode) {
	if !n.isDir() {
		return
	}
	n.dkids = maps.Clone(n.kids)
	kept := s.meta[:0]
	for _, op := range s.meta {
		changes := op.changes[:0:0]
		for _, c := range op.changes {
			if c.dir != n.ino {
				changes = append(changes, c)
			}
		}
		if len(changes) > 0 {
			kept = append(kept, &metaOp{what: op.what, changes: changes})
		}
	}
	s.meta = kept
}

// writeData applies a data change to what reads see and, unless sync,
// keeps it as unsynced.
func (s *state) writeData(n *inode, op dataOp, sync bool) {
	n.data = op.apply(n.data, false)
	if sync {
		s.syncData(n, false)
		return
	}
	if op.buf != nil {
		op.buf = slices.Clone(op.buf)
	}
	n.pending = append(n.pending, op)
}

// clone copies the state deeply enough that changing either side leaves the
// other as it was (written buffers are never changed, so they are shared).
func (s *state) clone() *state {
	c := &state{inodes: make(map[uint64]*inode, len(s.inodes)), nextIno: s.nextIno}
	for ino, n := range s.inodes {
		m := *n
		m.xattr = maps.Clone(n.xattr)
		m.dxattr = maps.Clone(n.dxattr)
		m.data = slices.Clone(n.data)
		m.durable = slices.Clone(n.durable)
		m.pending = slices.Clone(n.pending)
		m.kids = maps.Clone(n.kids)
		m.dkids = maps.Clone(n.dkids)
		c.inodes[ino] = &m
	}
	for _, op := range s.meta {
		c.meta = append(c.meta, &metaOp{what: op.what, changes: slices.Clone(op.changes)})
	}
	return c
}

// Snapshot is the filesystem as it was at a crash (or at any moment), from
// which the states a disk may hold afterwards are drawn.
type Snapshot struct {
	s *state
}

// MetaOps is how many volatile directory operations there were: an image
// keeps 0 to MetaOps of them.
func (sn *Snapshot) MetaOps() int { return len(sn.s.meta) }

// Pending describes the volatile state, for messages.
func (sn *Snapshot) Pending() string {
	var b strings.Builder
	for _, op := range sn.s.meta {
		fmt.Fprintf(&b, " %s", op.what)
	}
	files := 0
	for _, n := range sn.s.inodes {
		if len(n.pending) > 0 {
			files++
		}
	}
	return fmt.Sprintf("%d directory ops not durable [%s ], %d files with unsynced data", len(sn.s.meta), strings.TrimSpace(b.String()), files)
}

// Image returns the crash state that keeps the first meta volatile
// directory operations and each file's unsynced data as p says.
func (sn *Snapshot) Image(meta int, p DataPolicy) *Image {
	return &Image{s: sn.s, meta: meta, policy: p, dirs: map[uint64]map[string]uint64{}, files: map[uint64][]byte{}}
}

// Images returns every crash state the model permits, as described in the
// package comment.
func (sn *Snapshot) Images() []*Image {
	var out []*Image
	for m := 0; m <= len(sn.s.meta); m++ {
		for _, p := range DataPolicies {
			out = append(out, sn.Image(m, p))
		}
	}
	return out
}

// Image is one state a disk may hold after the crash.
type Image struct {
	s      *state
	meta   int
	policy DataPolicy
	dirs   map[uint64]map[string]uint64 // computed lazily
	files  map[uint64][]byte
}

func (im *Image) String() string {
	return fmt.Sprintf("%d of %d directory ops kept, %s", im.meta, len(im.s.meta), im.policy)
}

// entries returns a directory's durable entries in this image.
func (im *Image) entries(dir uint64) map[string]uint64 {
	if e, ok := im.dirs[dir]; ok {
		return e
	}
	e := maps.Clone(im.s.inodes[dir].dkids)
	for _, op := range im.s.meta[:im.meta] {
		for _, c := range op.changes {
			if c.dir != dir {
				continue
			}
			if c.ino == 0 {
				delete(e, c.name)
			} else {
				e[c.name] = c.ino
			}
		}
	}
	im.dirs[dir] = e
	return e
}

// content returns a regular file's data in this image.
func (im *Image) content(ino uint64) []byte {
	if d, ok := im.files[ino]; ok {
		return d
	}
	n := im.s.inodes[ino]
	d := slices.Clone(n.durable)
	keep := len(n.pending)
	switch im.policy {
	case DataLost:
		keep = 0
	case DataFirst:
		keep = min(1, keep)
	case DataHalf:
		keep /= 2
	}
	for i, op := range n.pending[:keep] {
		if im.policy == DataOdd && i%2 == 1 {
			continue
		}
		d = op.apply(d, im.policy == DataZeros)
	}
	im.files[ino] = d
	return d
}

// xattrs returns an inode's extended attributes in this image.
func (im *Image) xattrs(n *inode) map[string][]byte {
	if im.policy == DataLost {
		return n.dxattr
	}
	return n.xattr
}

// lookup resolves a slash-separated path from the root ("" is the root).
func (im *Image) lookup(p string) (*inode, bool) {
	n := im.s.inodes[rootIno]
	for _, part := range strings.Split(path.Clean("/"+p), "/") {
		if part == "" {
			continue
		}
		if !n.isDir() {
			return nil, false
		}
		ino, ok := im.entries(n.ino)[part]
		if !ok {
			return nil, false
		}
		n = im.s.inodes[ino]
	}
	return n, true
}

// Entry is what an image holds under a name.
type Entry struct {
	Mode   uint32            // S_IFMT and permission bits
	Data   []byte            // a regular file's content
	Target string            // a symbolic link's target
	Xattrs map[string][]byte // its extended attributes
	Uid    uint32            // its owner
}

// Stat returns what the image holds at path, and whether there is anything.
func (im *Image) Stat(p string) (Entry, bool) {
	n, ok := im.lookup(p)
	if !ok {
		return Entry{}, false
	}
	e := Entry{Mode: n.mode, Target: n.target, Xattrs: im.xattrs(n), Uid: n.uid}
	if n.isReg() {
		e.Data = im.content(n.ino)
	}
	return e, true
}

// Names lists a directory of the image, sorted (nil if it is not one).
func (im *Image) Names(p string) []string {
	n, ok := im.lookup(p)
	if !ok || !n.isDir() {
		return nil
	}
	return slices.Sorted(maps.Keys(im.entries(n.ino)))
}

// Walk lists every path under the root, depth first, sorted.
func (im *Image) Walk() []string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		for _, name := range im.Names(dir) {
			p := path.Join(dir, name)
			out = append(out, p)
			if e, _ := im.Stat(p); e.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				walk(p)
			}
		}
	}
	walk("")
	return out
}

// reboot returns the state the image describes as a fresh, fully durable
// filesystem: only what is reachable from the root survives.
func (im *Image) reboot() *state {
	s := &state{inodes: map[uint64]*inode{}, nextIno: im.s.nextIno}
	var visit func(ino uint64)
	visit = func(ino uint64) {
		if _, done := s.inodes[ino]; done {
			return
		}
		old := im.s.inodes[ino]
		n := &inode{ino: ino, mode: old.mode, uid: old.uid, gid: old.gid, mtime: old.mtime,
			atime: old.atime, ctime: old.ctime, xattr: maps.Clone(im.xattrs(old)), target: old.target}
		n.dxattr = maps.Clone(n.xattr)
		s.inodes[ino] = n
		switch {
		case n.isReg():
			n.data = slices.Clone(im.content(ino))
			n.durable = slices.Clone(n.data)
		case n.isDir():
			n.kids = maps.Clone(im.entries(ino))
			n.dkids = maps.Clone(n.kids)
			for _, k := range n.kids {
				visit(k)
			}
		}
	}
	visit(rootIno)
	return s
}

// Equal reports whether two entries hold the same thing (type, content,
// target; permission bits are not compared).
func (e Entry) Equal(o Entry) bool {
	return e.Mode&syscall.S_IFMT == o.Mode&syscall.S_IFMT && bytes.Equal(e.Data, o.Data) && e.Target == o.Target
}
