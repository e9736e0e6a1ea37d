// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/fsdir"
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
	// t is the destination tree: the -t DIRECTORY it is in, by its place
	// among them (0 but with several -t).
	t          int
	srcN, dstN *fsdir.Node // srcN nil: a source directory that could not be opened
	// srcShare counts the copies of the same source directory into other
	// destination trees that share srcN (nil: none); the last one
	// finished lets go of it.
	srcShare         *atomic.Int32
	e                *entry    // nil for an operand's DEST directory
	anc              *ancestor // the source directories down to this one, nil for an operand's DEST directory
	srcPath, dstPath string
	created          bool // made by this run (or left unfinished by an interrupted one)
	made             bool // made by this run: nothing can be left over in it
	parent           *dirCopy
	pending          atomic.Int32       // entries not done yet, +1 while the walker schedules
	rec              *record            // the finish's record, after those of the entries
	dirSync          durability.DirSync // makes the entries other than files in dstN, for its fsync
	keepOnce         sync.Once          // keep is looked up once, for the first new file
	keep             uint32             // createKeeps' answer for dst
}

// createKeeps returns createKeeps' answer for the directory new files go
// into (the one DEST dest is in), looked up for the first
// and kept for the others: one xattr read per directory, not per file.
func (d *dirCopy) createKeeps(a *app, dest *destInfo) uint32 {
	d.keepOnce.Do(func() { d.keep = a.createKeeps(filepath.Dir(dest.where())) })
	return d.keep
}

// copyAll copies what the plan says.
func (a *app) copyAll(p *plan) {
	if p.fail != "" {
		a.seq.emit(true, p.fail)
		return
	}
	if len(p.ops) > p.targets {
		// Two SOURCEs can have the same DEST: cp refuses to overwrite
		// what it just made.
		a.created = newCreatedSet()
		a.sched.orderDests()
	}
	for i := 0; i < len(p.ops); i += p.targets {
		a.copyTops(p.ops[i : i+p.targets])
	}
}

// copyTops copies one command-line SOURCE to its DEST in each -t
// DIRECTORY (ops: its operands, one a DIRECTORY each, in the order of the
// -t options; a single one without several -t): a tree is walked once,
// each file read once for all of them (copyEntries).
func (a *app) copyTops(ops []operand) {
	// A copy of its own: the copy of a file takes its stat anew.
	ec := *ops[0].e
	e := &ec
	src := ops[0].src
	var sides []side
	skipped := 0
	for t, op := range ops {
		if a.opts.Parents {
			if _, ok := a.parentsDest(op.src, op.target); !ok {
				skipped++
				continue
			}
		}
		if e.statErr == nil && op.refused != "" {
			a.seq.emit(true, op.refused)
			continue
		}
		// The same SOURCE named twice: said once, for the first -t.
		if e.statErr == nil && a.namedAgain(op, t == 0) {
			continue
		}
		dirPath, name := splitDest(op.dst)
		root := &dirCopy{t: t, srcN: a.cwdNode, dstN: a.window.Root(openOperandDir(dirPath), false)}
		root.dstN.Put()
		root.pending.Store(1)
		sides = append(sides, side{p: root, name: name, dst: op.dst})
	}
	if skipped == len(ops) {
		a.skipTree(a.cwdNode, e, follows(a.opts, true), nil)
	}
	if len(sides) == 0 {
		return
	}
	a.copyEntries(sides, e, src)
	for _, sd := range sides {
		a.finishScheduling(sd.p, nil)
	}
}

// side is one destination tree's part of an entry's copy: the directory
// the entry goes into, its name there, and DEST as messages name it.
type side struct {
	p    *dirCopy
	name string
	dst  string
}

// namedAgain reports whether SOURCE was named before for the same DEST:
// cp copies it once and warns (when warn; or, without -r, omits a
// directory again).
func (a *app) namedAgain(op operand, warn bool) bool {
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
	if warn {
		r := a.seq.open()
		r.warn(output.SpecifiedMoreThanOnce(what, op.src))
		a.seq.close(r)
	}
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

// copyEntries copies one entry of any type (e; src as messages name it)
// to each side, one per destination tree: a directory is made in each and
// walked once, a file read once for all of them, a link or special file
// made in each. It returns, side by side, the directory copied where the
// entry is one (nil where it was not made).
func (a *app) copyEntries(sides []side, e *entry, src string) []*dirCopy {
	if e.statErr != nil {
		a.seq.emit(true, output.CannotStat(src, e.statErr))
		return nil
	}
	st := &e.st
	js := make([]*job, len(sides))
	for i, sd := range sides {
		js[i] = &job{a: a, p: sd.p, e: e, name: sd.name, src: src, dst: sd.dst}
	}
	if isDir(st) {
		if !a.opts.Recursive {
			a.seq.emit(true, output.OmittingDirectory(src))
			return nil
		}
		return a.copyDirs(js)
	}
	switch {
	case a.opts.Link != flags.LinkNone:
		// -l, -s: a link instead of a copy, whatever the type. A hard
		// link to a symbolic link follows it when the walk did.
		follow := !isSymlink(st)
		for _, j := range js {
			a.schedule(j, func() { j.linkEntry(follow) })
		}
	case isSymlink(st):
		for _, j := range js {
			a.schedule(j, j.copySymlink)
		}
	case isRegular(st):
		a.scheduleFiles(js)
	case a.opts.Recursive && !a.opts.CopyContents:
		// cp -R recreates FIFOs, devices and sockets rather than reading
		// them (--copy-contents reads them).
		for _, j := range js {
			a.schedule(j, j.copySpecial)
		}
	default:
		// Without -r a FIFO or device SOURCE is read as data: once.
		a.scheduleGroup(js, func(live []*job) { copyFiles(live) })
	}
	return nil
}

// scheduleFiles copies a regular file to the DEST of each job of js, read
// once, or with -a makes a further link to the copy of an inode already
// copied in this run, as cp -a does, in each destination tree that has
// that copy.
func (a *app) scheduleFiles(js []*job) {
	// The first copy of an inode counts as made when -u kept the DEST
	// that is already there: the later names are linked to it, as cp
	// does (replacing whatever they were, newer or not).
	// Besides files with several links, a file reached through symbolic
	// links that are followed (-L; -H on the command line) may be met
	// twice, as cp remembers.
	o := a.opts
	lead := js[0]
	followed := o.Deref == flags.DerefAlways || o.Deref == flags.DerefCommandLine && lead.top()
	if !o.HardLinks || lead.e.st.Nlink < 2 && !followed {
		a.scheduleGroup(js, func(live []*job) { copyFiles(live) })
		return
	}
	firsts := make(map[*job]*linkFirst, len(js))
	further := make(map[*job]bool, len(js))
	for _, j := range js {
		first, seen := a.links.first(idOf(&j.e.st), j.p.t)
		firsts[j], further[j] = first, seen
		if !seen {
			// Whatever becomes of the copy, the further names wait no
			// more.
			j.finally = func() { a.links.settle(first) }
		}
	}
	a.scheduleGroup(js, func(live []*job) {
		var copies, links []*job
		for _, j := range live {
			if further[j] {
				links = append(links, j)
			} else {
				copies = append(copies, j)
			}
		}
		if len(copies) > 0 {
			for i, ok := range copyFiles(copies) {
				if j := copies[i]; ok {
					a.links.made(firsts[j], j.p.dstN, j.dd, j.name, j.digest)
				}
			}
		}
		var again []*job
		for _, j := range links {
			// The first copy was queued earlier, so it is running or
			// done.
			if a.links.wait(firsts[j]) {
				j.makeHardLink(firsts[j])
			} else {
				again = append(again, j)
			}
		}
		if len(again) > 0 {
			copyFiles(again)
		}
	})
}

// copyDirs creates DEST for each job of js (or merges into an existing
// directory), then lists SOURCE once and copies its entries into each in
// name order, each looked at once when its turn comes. It returns, job by
// job, the directory copy (nil where DEST could not be made).
func (a *app) copyDirs(js []*job) []*dirCopy {
	for _, j := range js {
		j.r = a.seq.open()
	}
	ds, names := a.openDirCopies(js)
	var lead *dirCopy
	for i, d := range ds {
		if d == nil {
			continue
		}
		js[i].p.pending.Add(1)
		d.pending.Store(1)
		if lead == nil {
			lead = d
		}
	}
	for _, j := range js {
		a.seq.close(j.r)
	}
	if lead == nil {
		return ds
	}
	last := make([]*dirCopy, len(ds)) // the last directory copied in each: the way back to it
	near := func() *dirCopy {
		for _, l := range last {
			if l != nil {
				return l
			}
		}
		return nil
	}
	sides := make([]side, 0, len(ds))
	at := make([]int, 0, len(ds))
	for k, name := range names {
		names[k] = "" // copied: let go of it
		kid, err := a.lookAt(lead, name, near())
		if err != nil {
			a.seq.emit(true, output.CannotAccess(lead.srcPath, err))
			break
		}
		sides, at = sides[:0], at[:0]
		for i, d := range ds {
			if d != nil {
				sides = append(sides, side{p: d, name: name, dst: joinPath(js[i].dst, name)})
				at = append(at, i)
			}
		}
		subs := a.copyEntries(sides, kid, joinPath(lead.srcPath, name))
		for m, sub := range subs {
			if sub != nil {
				last[at[m]] = sub
			}
		}
	}
	for i, d := range ds {
		if d != nil {
			a.finishScheduling(d, last[i])
		}
	}
	return ds
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

// openDirCopies opens SOURCE's directory (checking that it still is the
// one looked at), lists it and creates or opens DEST's for each job of js.
// It returns the directory copies, job by job (nil where DEST could not be
// made), which share SOURCE's node, and the names to copy, sorted.
func (a *app) openDirCopies(js []*job) ([]*dirCopy, []string) {
	lead := js[0]
	r, p, e, src := lead.r, lead.p, lead.e, lead.src
	st := &e.st
	ds := make([]*dirCopy, len(js))
	quiet := func() {
		// SOURCE's failure, said once, in the first record.
		for _, j := range js[1:] {
			j.r.failQuietly()
		}
	}
	if p.anc.has(idOf(st)) {
		// A symbolic link (-L, -H) or a bind mount leading back up.
		r.fail(output.CannotCopyCyclicSymbolicLink(src))
		quiet()
		return ds, nil
	}
	anc := &ancestor{id: idOf(st), parent: p.anc}
	var first *dirCopy
	for i, j := range js {
		if j.p.madeAbove(idOf(st)) {
			// A link in SOURCE leading into DEST, to a directory this
			// run made and is filling: it was not there when the run
			// began, and its copy would go on for ever.
			continue
		}
		ds[i] = &dirCopy{t: j.p.t, e: e, srcPath: src, dstPath: j.dst, parent: j.p, anc: anc}
		j.sub = ds[i]
		if first == nil {
			first = ds[i]
		}
	}
	if first == nil {
		return ds, nil
	}
	// -x: a mount point is copied, not what is mounted on it.
	list := !a.opts.OneFileSystem || p.anc == nil || p.anc.id.Dev == st.Dev
	names, listErr := lead.openSourceDir(first, list)
	if listErr == errSkip {
		quiet()
		clear(ds)
		return ds, nil
	}
	made := 0
	for i, j := range js {
		d := ds[i]
		if d == nil {
			continue
		}
		d.srcN = first.srcN
		if !j.openDestDir(d) {
			ds[i], j.sub = nil, nil
			continue
		}
		made++
	}
	if made == 0 {
		if first.srcN != nil {
			first.srcN.Done()
		}
		if list {
			// Not copied: its entries count as done for the bar.
			a.skipTree(p.srcN, e, follows(a.opts, lead.top()), p.anc)
		}
		return ds, nil
	}
	if made > 1 {
		share := new(atomic.Int32)
		share.Store(int32(made))
		for _, d := range ds {
			if d != nil {
				d.srcShare = share
			}
		}
	}
	if listErr != nil {
		r.fail(output.CannotAccess(src, listErr))
		quiet()
	}
	slices.Sort(names)
	return ds, names
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
		j.r.fail(output.SkippingReplacedDirectory(j.src))
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
		r.fail(output.CannotAccess(p.dstN.Path(), err))
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
	var facts destFacts
	if err == nil {
		facts.kind = durability.KindOf(&dst0, false)
	}
	act := decideDir(facts)
	switch {
	case err != nil && !errors.Is(err, unix.ENOENT):
		r.fail(output.CannotStat(dst, err))
		return false
	case act == actFailNotDir:
		msg, _ := destFailure(act, src, dst, nil)
		r.fail(msg)
		return false
	case act == actMerge && idOf(&dst0) == idOf(&d.e.st):
		r.fail(output.CannotCopyDirectoryIntoItself(src, dst))
		return false
	case act == actNew:
		// Owner-writable while its entries are copied; the final mode
		// comes at the end (a read-only source directory stays
		// copyable).
		made, err := p.dirSync.Mkdir(pd, name)
		if err != nil {
			r.fail(output.CannotCreateDirectory(dst, err))
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
		if a.opts.Verbose {
			r.out(output.Copying(src, dst))
		}
	}
	dd, dst1, err := pd.OpenReadable(name, follow)
	switch {
	case err != nil && raced:
		r.fail(output.CannotCreateDirectory(dst, fsdir.Raced(err)))
		return false
	case err != nil:
		r.fail(output.CannotOpenDirectory(dst, err))
		return false
	case !d.made && idOf(&dst1) == idOf(&d.e.st):
		// The look above was at another entry than the one opened.
		dd.Release()
		r.fail(output.CannotCopyDirectoryIntoItself(src, dst))
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
		r.fail(output.CannotAccess(d.dstN.Path(), err))
	default:
		if d.e != nil {
			if err := a.setDirAttrs(d, nearSrc, dd); err != nil {
				r.fail(err.Error())
			}
		}
		// durability decides whether the directory is fsynced (--sync).
		if dd.Err() == nil {
			if err := d.dirSync.Finished(a.opts.Sync, dd.Fd(), d.e != nil); err != nil {
				r.fail(output.FsyncFailed(dd.Path(), err))
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
	if d.srcN != nil && d.e != nil && (d.srcShare == nil || d.srcShare.Add(-1) == 0) {
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
			return output.Wordedf("%s", output.CannotAccess(d.srcPath, err))
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
			err = output.SettingPermissions(d.dstPath, e)
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

// scheduleGroup runs the copy of one entry to the DEST of each job of js
// (f, given the jobs whose directories could be opened), on a worker with
// -j, as schedule runs one job's: each DEST after the copies to it named
// before; the entry counted once on the bar.
func (a *app) scheduleGroup(js []*job, f func(live []*job)) {
	if len(js) == 1 {
		a.schedule(js[0], func() { f(js) })
		return
	}
	type claim struct {
		prev <-chan struct{}
		done func()
	}
	claims := make([]claim, len(js))
	for i, j := range js {
		j.r = a.seq.open()
		j.p.pending.Add(1)
		j.size, j.regular = j.e.st.Size, isRegular(&j.e.st)
		claims[i].prev, claims[i].done = a.sched.claim(j.p.dstN, j.name)
	}
	size := js[0].e.st.Size
	if !isRegular(&js[0].e.st) {
		// A FIFO or device read as data may take any time: alone.
		size = batchAloneBytes
	}
	a.sched.run(js[0].p, size, func() {
		for _, c := range claims {
			if c.prev != nil {
				<-c.prev
			}
		}
		live := make([]*job, 0, len(js))
		for _, j := range js {
			if j.open() {
				live = append(live, j)
			}
		}
		if len(live) > 0 {
			f(live)
		}
		for _, j := range live {
			j.close()
		}
		accountGroup(js)
		for i, j := range js {
			if j.finally != nil {
				j.finally()
			}
			claims[i].done()
			a.seq.close(j.r)
			j.p.done(a, nil)
		}
	})
}

// finish waits for the workers and the scan.
func (a *app) finish() {
	a.sched.wait()
	a.finishParents()
	a.stopScan()
}
