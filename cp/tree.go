// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"fastcp/internal/fsdir"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// dirCopy is a directory being copied, or the directory an operand's DEST
// goes into: its source and destination are open until the last entry
// copied into it is done; then it is finished (mode, owner, times, --sync)
// and lets go of its parent. Directories are thus finished deepest first,
// each once everything inside it is written, whichever -j worker wrote it.
type dirCopy struct {
	src, dst         *dir
	e                *entry // nil for an operand's DEST directory
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
	e := op.e
	if a.opts.Parents {
		if _, ok := a.parentsDest(op.src, op.target); !ok {
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
	root := &dirCopy{src: cwd, dst: openOperandDir(dirPath)}
	root.pending.Store(1)
	a.copyEntry(root, e, name, op.src, op.dst)
	a.finishScheduling(root)
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
	first, seen := a.links.first(idOf(&j.e.st), j.p.dst, j.name)
	if !seen {
		a.schedule(j, func() {
			defer close(first.done)
			first.ok = j.copyFile()
			first.digest = j.digest
		})
		return
	}
	a.schedule(j, func() {
		// The first copy was queued earlier, so it is running or done.
		<-first.done
		if first.ok {
			j.makeHardLink(first)
		} else {
			j.copyFile()
		}
	})
}

// copyDir creates DEST (or merges into an existing directory) and copies
// SOURCE's entries into it in name order.
func (a *app) copyDir(j *job) {
	j.r = a.seq.open()
	d, ok := j.openDirCopy()
	if !ok {
		a.seq.close(j.r)
		return
	}
	j.p.pending.Add(1)
	d.pending.Store(1)
	a.seq.close(j.r)
	if d.src != nil {
		for _, kid := range j.e.kids {
			a.copyEntry(d, kid, kid.name, joinPath(j.src, kid.name), joinPath(j.dst, kid.name))
		}
	}
	a.finishScheduling(d)
}

// openDirCopy opens SOURCE's directory again (checking that it still is
// the one the walk listed) and creates or opens DEST's.
func (j *job) openDirCopy() (*dirCopy, bool) {
	r, p, e, src, dst := j.r, j.p, j.e, j.src, j.dst
	if e.cyclic {
		// A symbolic link (-L, -H) or a bind mount leading back up.
		r.fail(fmt.Sprintf("cannot copy cyclic symbolic link %s", quote(src)))
		return nil, false
	}
	d := &dirCopy{e: e, srcPath: src, dstPath: dst, parent: p}
	if e.listErr == nil {
		sd, sst, err := p.src.OpenReadable(e.name, follows(j.a.opts, j.top()))
		if err == nil && idOf(&sst) != idOf(&e.st) {
			sd.Release()
			r.fail(fmt.Sprintf("skipping directory %s, as it was replaced while being copied", quote(src)))
			return nil, false
		}
		if err != nil {
			e.listErr = err
		}
		d.src = sd
	}
	ok := j.openDestDir(d)
	if ok && e.listErr != nil {
		r.fail(fmt.Sprintf("cannot access %s: %s", quote(src), errText(e.listErr)))
	}
	if !ok && d.src != nil {
		d.src.Release()
	}
	return d, ok
}

// openDestDir creates DEST's directory, or opens an existing one to merge
// into.
func (j *job) openDestDir(d *dirCopy) bool {
	a, r, p, name, src, dst := j.a, j.r, j.p, j.name, j.src, j.dst
	// Not followed, as cp: a symbolic link in DEST's tree, even to a
	// directory, is not a directory to merge into, and following it would
	// write outside the tree.
	dst0, err := p.dst.Stat(name, false)
	follow, raced := false, false
	if err == nil && isSymlink(&dst0) && a.opts.KeepDirSymlink {
		// --keep-directory-symlink: a symlink to a directory is followed.
		if t, terr := p.dst.Stat(name, true); terr == nil && isDir(&t) {
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
		made, err := p.dst.Mkdir(name)
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
	dd, dst1, err := p.dst.OpenReadable(name, follow)
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
	d.dst = dd
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
// scheduled. d's finish gets a record after theirs.
func (a *app) finishScheduling(d *dirCopy) {
	d.rec = a.seq.open()
	d.done(a)
}

// done notes that one entry of d (or the walker) is done; the last one
// finishes d.
func (d *dirCopy) done(a *app) {
	if d.pending.Add(-1) == 0 {
		a.finishDir(d)
	}
}

// finishDir gives a copied directory its final mode, owner and times, once
// everything inside it is written, makes its entries durable with --sync,
// and closes it.
func (a *app) finishDir(d *dirCopy) {
	r := d.rec
	if d.e != nil {
		if err := a.setDirAttrs(d); err != nil {
			r.fail(err.Error())
		}
	}
	// durability decides whether the directory is fsynced (--sync).
	if d.dst.Err() == nil {
		if err := d.dirSync.Finished(a.opts.Sync, d.dst.Fd(), d.e != nil); err != nil {
			r.fail(fmt.Sprintf("fsync failed for %s: %s", quote(d.dst.Path()), errText(err)))
		}
	}
	if d.src != nil {
		d.src.Release()
	}
	d.dst.Release()
	a.seq.close(r)
	if d.parent != nil {
		d.parent.done(a)
	}
}

// setDirAttrs sets a copied directory's attributes, and removes the mark
// of a directory being filled.
func (a *app) setDirAttrs(d *dirCopy) error {
	st := &d.e.st
	t := target{fd: d.dst.Fd()}
	srcFd := -1
	if d.src != nil && d.src != cwd {
		srcFd = d.src.Fd()
	}
	var err error
	if a.opts.Preserve.Any() {
		err = a.preserve(t, st, srcFd, d.srcPath, d.dstPath)
	}
	if err == nil && d.created && !a.opts.Preserve.Mode {
		// The directory took its parent's default ACL as its own at the
		// mkdir: its own default ACL is the one that applied.
		if e := t.chmod(newMode(a.opts, a.umask, st.Mode, true, a.createKeeps(sysx.FdPath(d.dst.Fd(), "")))); e != nil {
			err = output.Wordedf("setting permissions for %s: %s", quote(d.dstPath), errText(e))
		}
	}
	if d.created {
		clearUnfinished(d.dst.Fd())
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
	prev, claimed := a.sched.claim(j.p.dst, j.name)
	size := j.e.st.Size
	if !isRegular(&j.e.st) {
		// A FIFO or device read as data may take any time: alone.
		size = batchAloneBytes
	}
	a.sched.run(j.p, size, func() {
		if prev != nil {
			<-prev
		}
		f()
		claimed()
		a.seq.close(j.r)
		j.p.done(a)
	})
}

// finish waits for the workers, then lets go of what -a's links held.
func (a *app) finish() {
	a.sched.wait()
	a.links.releaseAll()
	a.finishParents()
}
