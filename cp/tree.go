// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"fastcp/internal/fsdir"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// dirCopy is a directory being copied, or the directory an operand's DEST
// goes into: it stays until the last entry copied into it is done; then
// it is finished (mode, owner, times, --sync) and lets go of its parent.
// Directories are thus finished deepest first, each once everything
// inside it is written, whichever -j worker wrote it. Its source and
// destination are nodes of the run's window of open directories
// (fsdir.Window): open while an entry's copy uses them, and opened again,
// checked, when the window closed them meanwhile.
type dirCopy struct {
	srcN, dstN       *fsdir.Node // srcN nil: a source directory that could not be opened
	e                *entry      // nil for an operand's DEST directory
	anc              *ancestor   // the source directories down to this one, nil for an operand's DEST directory
	srcPath, dstPath string
	created          bool // made by this run (or left unfinished by an interrupted one)
	made             bool // made by this run: nothing can be left over in it
	parent           *dirCopy
	pending          atomic.Int32       // entries not done yet, +1 while the walker schedules
	rec              *record            // the finish's record, after those of the entries
	dirSync          durability.DirSync // entries added, for durability's directory fsync
	keepOnce         sync.Once          // keep is looked up once, for the first new file
	keep             uint32             // createKeeps' answer for dst
}

// createKeeps returns createKeeps' answer for the directory new files go
// into (the one dest, a new file's path, is in), looked up for the first
// and kept for the others: one xattr read per directory, not per file.
func (d *dirCopy) createKeeps(a *app, dest string) uint32 {
	d.keepOnce.Do(func() { d.keep = a.createKeeps(filepath.Dir(dest)) })
	return d.keep
}

// copyAll copies what the plan says.
func (a *app) copyAll(p *plan) {
	if p.fail != "" {
		a.seq.emit(true, p.fail)
		return
	}
	if len(p.ops) > 1 {
		// Two SOURCEs can have the same DEST: cp refuses to overwrite
		// what it just made.
		a.created = newCreatedSet()
		a.sched.orderDests()
	}
	for _, op := range p.ops {
		a.copyTop(op)
	}
}

// copyTop copies one command-line SOURCE to DEST.
func (a *app) copyTop(op operand) {
	// A copy of its own: the copy of a file takes its stat anew, and
	// with several -t each DIRECTORY has a copy of the operand.
	ec := *op.e
	e := &ec
	if a.opts.Parents {
		if _, ok := a.parentsDest(op.src, op.target); !ok {
			a.skipTree(a.cwdNode, e, follows(a.opts, true), nil)
			return
		}
	}
	if e.statErr == nil && op.refused != "" {
		a.seq.emit(true, op.refused)
		return
	}
	if e.statErr == nil && a.namedAgain(op) {
		return
	}
	dirPath, name := splitDest(op.dst)
	root := &dirCopy{srcN: a.cwdNode, dstN: a.window.Root(openOperandDir(dirPath), false)}
	root.dstN.Put()
	root.pending.Store(1)
	a.copyEntry(root, e, name, op.src, op.dst)
	a.finishScheduling(root, nil)
}

// namedAgain reports whether SOURCE was named before for the same DEST:
// cp copies it once and warns (or, without -r, omits a directory again).
func (a *app) namedAgain(op operand) bool {
	key := topCopy{idOf(&op.e.st), filepath.Clean(op.dst)}
	if !a.tops[key] {
		if a.tops == nil {
			a.tops = make(map[topCopy]bool)
		}
		a.tops[key] = true
		return false
	}
	what := "file"
	if isDir(&op.e.st) {
		if !a.opts.Recursive {
			return false // omitting directory, again
		}
		what = "directory"
	}
	r := a.seq.open()
	r.warn(fmt.Sprintf("source %s %s specified more than once", what, quote(op.src)))
	a.seq.close(r)
	return true
}

// topCopy is a command-line SOURCE (by inode) and the DEST it goes to.
type topCopy struct {
	src devIno
	dst string
}

// openOperandDir opens the directory an operand's DEST goes into, by the name
// the user gave (cp follows links there too). Without read permission it is
// opened O_PATH, which is enough to create entries in it. When it cannot be
// opened, the error is kept: each entry then reports it as cp would (cannot
// create, cannot stat).
func openOperandDir(path string) *dir {
	d, err := fsdir.Open(path)
	if err != nil {
		return fsdir.Failed(path, err)
	}
	return d
}

// copyEntry copies one entry of any type into p under name.
func (a *app) copyEntry(p *dirCopy, e *entry, name, src, dst string) {
	if e.statErr != nil {
		a.seq.emit(true, fmt.Sprintf("cannot stat %s: %s", quote(src), errText(e.statErr)))
		return
	}
	st := &e.st
	j := &job{a: a, p: p, e: e, name: name, src: src, dst: dst}
	if isDir(st) {
		if !a.opts.Recursive {
			a.seq.emit(true, fmt.Sprintf("-r not specified; omitting directory %s", quote(src)))
			return
		}
		a.copyDir(j)
		return
	}
	switch {
	case a.opts.Link != flags.LinkNone:
		// -l, -s: a link instead of a copy, whatever the type. A hard
		// link to a symbolic link follows it when the walk did.
		follow := !isSymlink(st)
		a.schedule(j, func() { j.linkEntry(follow) })
	case isSymlink(st):
		a.schedule(j, j.copySymlink)
	case isRegular(st):
		a.scheduleFile(j)
	case a.opts.Recursive && !a.opts.CopyContents:
		// cp -R recreates FIFOs, devices and sockets rather than reading
		// them (--copy-contents reads them).
		a.schedule(j, j.copySpecial)
	default:
		// Without -r a FIFO or device SOURCE is read as data.
		a.schedule(j, func() { j.copyFile() })
	}
}

// scheduleFile copies a regular file, or with -a makes a further link to
// the copy of an inode already copied in this run, as cp -a does.
func (a *app) scheduleFile(j *job) {
	// The first copy of an inode counts as made when -u kept the DEST
	// that is already there: the later names are linked to it, as cp
	// does (replacing whatever they were, newer or not).
	// Besides files with several links, a file reached through symbolic
	// links that are followed (-L; -H on the command line) may be met
	// twice, as cp remembers.
	o := a.opts
	followed := o.Deref == flags.DerefAlways || o.Deref == flags.DerefCommandLine && j.top()
	if !o.HardLinks || j.e.st.Nlink < 2 && !followed {
		a.schedule(j, func() { j.copyFile() })
		return
	}
	first, seen := a.links.first(idOf(&j.e.st))
	if !seen {
		// Whatever becomes of the copy, the further names wait no more.
		j.finally = func() { a.links.settle(first) }
		a.schedule(j, func() {
			if j.copyFile() {
				a.links.made(first, j.p.dstN, j.dd, j.name, j.digest)
			}
		})
		return
	}
	a.schedule(j, func() {
		// The first copy was queued earlier, so it is running or done.
		if a.links.wait(first) {
			j.makeHardLink(first)
		} else {
			j.copyFile()
		}
	})
}

// copyDir creates DEST (or merges into an existing directory), then lists
// SOURCE and copies its entries into it in name order, each looked at
// when its turn comes.
func (a *app) copyDir(j *job) {
	j.r = a.seq.open()
	d, names, ok := j.openDirCopy()
	if !ok {
		j.sub = nil
		a.seq.close(j.r)
		return
	}
	j.p.pending.Add(1)
	d.pending.Store(1)
	a.seq.close(j.r)
	var last *dirCopy // the last directory copied: the way back to d
	for i, name := range names {
		names[i] = "" // copied: let go of it
		kid, err := a.lookAt(d, name, last)
		if err != nil {
			a.seq.emit(true, fmt.Sprintf("cannot access %s: %s", quote(j.src), errText(err)))
			break
		}
		sub := a.copyEntryIn(d, kid, name, joinPath(j.src, name), joinPath(j.dst, name))
		if sub != nil {
			last = sub
		}
	}
	a.finishScheduling(d, last)
}

// copyEntryIn is copyEntry for an entry of the directory d, and returns
// the directory copied when the entry is one.
func (a *app) copyEntryIn(d *dirCopy, e *entry, name, src, dst string) *dirCopy {
	if e.statErr == nil && isDir(&e.st) && a.opts.Recursive {
		j := &job{a: a, p: d, e: e, name: name, src: src, dst: dst}
		a.copyDir(j)
		return j.sub
	}
	a.copyEntry(d, e, name, src, dst)
	return nil
}

// lookAt looks at the entry name of d's source (lstat, or stat where -L
// follows links) when its turn comes; near is a directory of d copied
// last, through which d is opened again when the window closed it.
func (a *app) lookAt(d *dirCopy, name string, near *dirCopy) (*entry, error) {
	var nearN *fsdir.Node
	if near != nil {
		nearN = near.srcN
	}
	sd, err := d.srcN.GetNear(nearN)
	if err != nil {
		return nil, err
	}
	defer d.srcN.Put()
	return a.look(sd, name, false), nil
}

// openDirCopy opens SOURCE's directory (checking that it still is the
// one looked at), lists it and creates or opens DEST's. It returns the
// names to copy, sorted.
func (j *job) openDirCopy() (*dirCopy, []string, bool) {
	a, r, p, e, src, dst := j.a, j.r, j.p, j.e, j.src, j.dst
	st := &e.st
	if p.anc.has(idOf(st)) {
		// A symbolic link (-L, -H) or a bind mount leading back up.
		r.fail(fmt.Sprintf("cannot copy cyclic symbolic link %s", quote(src)))
		return nil, nil, false
	}
	if p.madeAbove(idOf(st)) {
		// A link in SOURCE leading into DEST, to a directory this run
		// made and is filling: it was not there when the run began,
		// and its copy would go on for ever.
		return nil, nil, false
	}
	d := &dirCopy{e: e, srcPath: src, dstPath: dst, parent: p, anc: &ancestor{id: idOf(st), parent: p.anc}}
	j.sub = d
	// -x: a mount point is copied, not what is mounted on it.
	list := !a.opts.OneFileSystem || p.anc == nil || p.anc.id.Dev == st.Dev
	names, listErr := j.openSourceDir(d, list)
	if listErr == errSkip {
		return nil, nil, false
	}
	if !j.openDestDir(d) {
		if d.srcN != nil {
			d.srcN.Done()
		}
		if list {
			// Not copied: its entries count as done for the bar.
			a.skipTree(p.srcN, e, follows(a.opts, j.top()), p.anc)
		}
		return nil, nil, false
	}
	if listErr != nil {
		r.fail(fmt.Sprintf("cannot access %s: %s", quote(src), errText(listErr)))
	}
	slices.Sort(names)
	return d, names, true
}

// errSkip: the entry is done (its record says why).
var errSkip = errors.New("skipped")

// madeAbove reports whether id is d's destination directory or one above
// it that this run made.
func (d *dirCopy) madeAbove(id devIno) bool {
	for ; d != nil; d = d.parent {
		if d.made && d.dstN.ID() == id {
			return true
		}
	}
	return false
}

// openSourceDir opens d's source directory in its parent's and, if list,
// lists it. A directory that is not the one looked at is skipped (errSkip);
// one that cannot be opened or listed is an error, with the names listed
// so far.
func (j *job) openSourceDir(d *dirCopy, list bool) ([]string, error) {
	p, e := j.p, j.e
	pd, err := p.srcN.Get()
	if err != nil {
		return nil, err
	}
	follow := follows(j.a.opts, j.top())
	sd, sst, err := pd.OpenReadable(e.name, follow)
	p.srcN.Put()
	if err != nil {
		return nil, err
	}
	if idOf(&sst) != idOf(&e.st) {
		sd.Release()
		j.r.fail(fmt.Sprintf("skipping directory %s, as it was replaced while being copied", quote(j.src)))
		return nil, errSkip
	}
	d.srcN = j.a.window.Child(p.srcN, e.name, follow, true, sd, idOf(&sst))
	defer d.srcN.Put()
	if !list {
		return nil, nil
	}
	return sd.ReadNames()
}

// openDestDir creates DEST's directory, or opens an existing one to merge
// into.
func (j *job) openDestDir(d *dirCopy) bool {
	a, r, p, name, src, dst := j.a, j.r, j.p, j.name, j.src, j.dst
	pd, err := p.dstN.Get()
	if err != nil {
		r.fail(fmt.Sprintf("cannot access %s: %s", quote(p.dstN.Path()), errText(err)))
		return false
	}
	defer p.dstN.Put()
	// Not followed, as cp: a symbolic link in DEST's tree, even to a
	// directory, is not a directory to merge into, and following it would
	// write outside the tree.
	dst0, err := pd.Stat(name, false)
	follow, raced := false, false
	if err == nil && isSymlink(&dst0) && a.opts.KeepDirSymlink {
		// --keep-directory-symlink: a symlink to a directory is followed.
		if t, terr := pd.Stat(name, true); terr == nil && isDir(&t) {
			dst0, follow = t, true
		}
	}
	switch {
	case err == nil && !isDir(&dst0):
		r.fail(fmt.Sprintf("cannot overwrite non-directory %s with directory %s", quote(dst), quote(src)))
		return false
	case err == nil && idOf(&dst0) == idOf(&d.e.st):
		r.fail(fmt.Sprintf("cannot copy a directory, %s, into itself, %s", quote(src), quote(dst)))
		return false
	case errors.Is(err, unix.ENOENT):
		// Owner-writable while its entries are copied; the final mode
		// comes at the end (a read-only source directory stays
		// copyable).
		made, err := pd.Mkdir(name)
		if err != nil {
			r.fail(fmt.Sprintf("cannot create directory %s: %s", quote(dst), errText(err)))
			return false
		}
		if !made {
			// Made by another process since the look above: merged
			// into as one that was there, once the open below proves
			// it a directory (fsdir.Mkdir).
			raced = true
			break
		}
		d.created, d.made = true, true
		p.dirSync.Added()
		if a.opts.Verbose {
			r.out(output.Copying(src, dst))
		}
	case err != nil:
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
		return false
	}
	dd, dst1, err := pd.OpenReadable(name, follow)
	switch {
	case err != nil && raced:
		r.fail(fmt.Sprintf("cannot create directory %s: %s", quote(dst), errText(fsdir.Raced(err))))
		return false
	case err != nil:
		r.fail(fmt.Sprintf("cannot open directory %s: %s", quote(dst), errText(err)))
		return false
	case !d.made && idOf(&dst1) == idOf(&d.e.st):
		// The look above was at another entry than the one opened.
		dd.Release()
		r.fail(fmt.Sprintf("cannot copy a directory, %s, into itself, %s", quote(src), quote(dst)))
		return false
	}
	d.dstN = a.window.Child(p.dstN, name, follow, false, dd, idOf(&dst1))
	defer d.dstN.Put()
	if d.created {
		// The mark says so to a later run, should this one be
		// interrupted; and nothing can be left over in it.
		markUnfinished(dd.Fd())
		a.session.DirCreated(dd.Fd())
	} else {
		d.created = unfinished(dd.Fd())
	}
	return true
}

// finishScheduling is the walker's last word on d: every entry of d is
// scheduled. d's finish gets a record after theirs. near is the last
// directory copied in d, the way back to d should the window have closed
// it.
func (a *app) finishScheduling(d *dirCopy, near *dirCopy) {
	d.rec = a.seq.open()
	d.done(a, near)
}

// done notes that one entry of d (or the walker) is done, near a
// directory of d's if that entry was one; the last one finishes d.
func (d *dirCopy) done(a *app, near *dirCopy) {
	if d.pending.Add(-1) == 0 {
		a.finishDir(d, near)
	}
}

// finishDir gives a copied directory its final mode, owner and times, once
// everything inside it is written, makes its entries durable with --sync,
// and lets go of it.
func (a *app) finishDir(d *dirCopy, near *dirCopy) {
	r := d.rec
	var nearSrc, nearDst *fsdir.Node
	if near != nil {
		nearSrc, nearDst = near.srcN, near.dstN
	}
	dd, err := d.dstN.GetNear(nearDst)
	switch {
	case err != nil:
		r.fail(fmt.Sprintf("cannot access %s: %s", quote(d.dstN.Path()), errText(err)))
	default:
		if d.e != nil {
			if err := a.setDirAttrs(d, nearSrc, dd); err != nil {
				r.fail(err.Error())
			}
		}
		// durability decides whether the directory is fsynced (--sync).
		if dd.Err() == nil {
			if err := d.dirSync.Finished(a.opts.Sync, dd.Fd(), d.e != nil); err != nil {
				r.fail(fmt.Sprintf("fsync failed for %s: %s", quote(dd.Path()), errText(err)))
			}
			if d.made && a.created == nil {
				// Nothing more is made in it (with one SOURCE: several
				// may merge into one directory).
				a.session.DirDone(dd)
			}
		}
		d.dstN.Put()
	}
	a.seq.close(r)
	if d.parent != nil {
		d.parent.done(a, d)
	}
	// After the parent's finish, which may have come back through them.
	if d.srcN != nil && d.e != nil {
		d.srcN.Done()
	}
	d.dstN.Done()
}

// setDirAttrs sets a copied directory's attributes (DEST open as dd), and
// removes the mark of a directory being filled. The source is opened
// again, if the window closed it, when its ACL or extended attributes
// are copied (near: a directory in it still open).
func (a *app) setDirAttrs(d *dirCopy, near *fsdir.Node, dd *dir) error {
	st := &d.e.st
	srcFd := -1
	p := a.opts.Preserve
	if d.srcN != nil && (p.Mode || p.Xattr) {
		sd, err := d.srcN.GetNear(near)
		if err != nil {
			return output.Wordedf("cannot access %s: %s", quote(d.srcPath), errText(err))
		}
		defer d.srcN.Put()
		srcFd = sd.Fd()
	}
	return a.setDirAttrsFrom(d, st, srcFd, dd)
}

// setDirAttrsFrom sets the attributes of the directory dd, a copy of the
// source st (whose ACL and extended attributes are read from srcFd, or
// from d.srcPath when srcFd < 0).
func (a *app) setDirAttrsFrom(d *dirCopy, st *unix.Stat_t, srcFd int, dd *dir) error {
	t := target{fd: dd.Fd()}
	var err error
	if a.opts.Preserve.Any() {
		err = a.preserve(t, st, srcFd, d.srcPath, d.dstPath)
	}
	if err == nil && d.created && !a.opts.Preserve.Mode {
		// The directory took its parent's default ACL as its own at the
		// mkdir: its own default ACL is the one that applied.
		if e := t.chmod(newMode(a.opts, a.umask, st.Mode, true, a.createKeeps(sysx.FdPath(dd.Fd(), "")))); e != nil {
			err = output.Wordedf("setting permissions for %s: %s", quote(d.dstPath), errText(e))
		}
	}
	if d.created {
		clearUnfinished(dd.Fd())
	}
	return err
}

// A directory this run creates is 0700 until its entries are copied. The
// extended attribute unfinishedXattr says so, from the mkdir to the final
// chmod: a run that finds it on an existing directory (left by an
// interrupted run) gives the directory its final mode as if it had made
// it. Where the filesystem keeps no user xattrs there is no mark, and such
// a directory keeps the mode it has, as any existing directory does.
const unfinishedXattr = "user.fastcp.unfinished"

func markUnfinished(fd int) {
	_ = ignoringEINTR(func() error { return unix.Fsetxattr(fd, unfinishedXattr, []byte("1"), 0) })
}

func unfinished(fd int) bool {
	var b [1]byte
	_, err := unix.Fgetxattr(fd, unfinishedXattr, b[:])
	return err == nil
}

func clearUnfinished(fd int) {
	_ = ignoringEINTR(func() error { return unix.Fremovexattr(fd, unfinishedXattr) })
}

// schedule runs an entry's copy (f, on j) into j.p, on a worker with -j.
// Copies to the same DEST run in the order of the command line, each after
// the one before it is done, so -j decides nothing that -j 1 would not.
func (a *app) schedule(j *job, f func()) {
	j.r = a.seq.open()
	j.p.pending.Add(1)
	j.size, j.regular = j.e.st.Size, isRegular(&j.e.st)
	prev, claimed := a.sched.claim(j.p.dstN, j.name)
	size := j.e.st.Size
	if !isRegular(&j.e.st) {
		// A FIFO or device read as data may take any time: alone.
		size = batchAloneBytes
	}
	a.sched.run(j.p, size, func() {
		if prev != nil {
			<-prev
		}
		if j.open() {
			f()
			j.close()
		}
		j.account()
		if j.finally != nil {
			j.finally()
		}
		claimed()
		a.seq.close(j.r)
		j.p.done(a, nil)
	})
}

// finish waits for the workers and the scan.
func (a *app) finish() {
	a.sched.wait()
	a.finishParents()
	a.stopScan()
}
