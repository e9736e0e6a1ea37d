package cp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// copyData is the copy engine; a package variable so tests can make it fail.
var copyData = copier.Copy

// copyFile copies the data of SOURCE (e in p's source directory: a
// regular file, or a FIFO or device read as data) to DEST (name in p's
// destination): through a temporary file renamed over DEST when DEST is or
// will be a regular file, in place for a device or FIFO DEST or --inplace.
// It reports whether DEST now holds the copy.
func (a *app) copyFile(r *record, p *dirCopy, e *entry, name, src, dst string) bool {
	if a.progress != nil {
		defer a.progress.FileDone()
	}
	o := a.opts
	sst := &e.st
	ex, ok := a.checkDest(r, p.dst, name, entryAt{p.src, e.name}, sst, src, dst, true)
	if !ok {
		return ex.kept
	}
	if o.Verify {
		// --verify reads both sides again after the copy: a stream cannot
		// be read twice, and a device or FIFO DEST is written in place.
		if msg := unverifiable(src, sst, "source"); msg != "" {
			r.fail(msg)
			return false
		}
		if ex.st != nil && !isRegular(ex.st) && ex.act == actInPlace {
			if msg := unverifiable(dst, ex.st, "destination"); msg != "" {
				r.fail(msg)
				return false
			}
		}
	}
	// As cp: the -v line comes before the source is opened, so a file
	// that then fails is named twice, by -v and by the error.
	if o.Verbose {
		r.out(copyingLine(src, dst, ex.backup))
	}
	if a.sourceThroughDest(src, entryAt{p.src, e.name}, sst, entryAt{p.dst, name}, ex.st, ex.backup != "" || ex.st != nil && a.unlinksFirst(sst, ex.st)) {
		r.fail(fmt.Sprintf("cannot open %s for reading: %s", quote(src), errText(unix.ENOENT)))
		return false
	}
	srcF, before, err := a.openSource(p.src, e, p.src == cwd)
	if err != nil {
		r.fail(err.Error())
		return false
	}
	defer srcF.Close()

	inPlace := ex.act == actInPlace
	pseudo := ex.st != nil && isRegular(ex.st) && p.dst.pseudo()
	special := inPlace && ex.st != nil && (!isRegular(ex.st) || pseudo)
	newFile := ex.act == actNew || ex.act == actReplaceAsNew
	if o.AttributesOnly && ex.st != nil && isRegular(ex.st) && (ex.act == actReplace || inPlace) {
		// cp --attributes-only opens DEST without truncating it: its data
		// stay, it gets the attributes asked for.
		return a.attributesOnly(r, srcF, sst, ex.path, dst)
	}
	if p.dst.err != nil {
		r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(p.dst.err)))
		return false
	}
	if ex.st != nil && isRegular(ex.st) && !inPlace && a.activeSwapFile(ex.st) {
		// The kernel refuses to rename over a swap file in use, but only
		// after the whole copy was written; writing it in place fails at
		// once with ETXTBSY, which is what cp reports.
		r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(unix.ETXTBSY)))
		return false
	}
	dopts := durability.Options{
		InPlace:  inPlace,
		Truncate: inPlace && !special,
		Perm:     os.FileMode(sst.Mode & 0o777),
		Sync:     o.Sync,
		NoCache:  o.NoCache,
		Verify:   o.Verify,
		Source:   srcF,
		Session:  a.session,
	}
	// --resume: continue the leftover of an interrupted copy, if there is
	// one that may be, else start anew and record checkpoints.
	resumable := o.Resume && !inPlace && isRegular(&before)
	dopts.Named = resumable // the record needs a name
	dopts.New = ex.absent
	dopts.FreshDir = p.made
	var reached *atomic.Int64
	var start int64
	var dest *durability.Destination
	if resumable {
		reached = new(atomic.Int64)
		var ok bool
		if dest, start, ok = a.continueCopy(r, ex, dst, &before, dopts, reached); !ok {
			return false
		}
	}
	if dest == nil {
		dest, err = createDest(ex, dopts)
	}
	if err != nil {
		if !inPlace && ex.st != nil && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
			// DEST itself is writable (checked above), its directory is
			// not: cp would write in place, the contract wants a
			// temporary file there. Say why, and the way out.
			r.fail(fmt.Sprintf("cannot create a temporary file in %s to replace %s: %s; --inplace writes into %s itself",
				quote(ex.shownDir), quote(dst), errText(err), quote(dst)))
			return false
		}
		r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(err)))
		return false
	}
	defer dest.Abort()
	a.reportLeftovers(r, dst, dest.Leftovers())
	var checkpoint func(int64) error
	if resumable {
		if !dest.Resumable() {
			if err := dest.StartRecord(durability.IDOf(&before), reached); err != nil {
				a.noCheckpoints(r, dst, err)
			}
		}
		if dest.Resumable() {
			checkpoint = dest.Checkpoint
		}
	}
	destStat := dest.Stat
	if pseudo && destStat != nil {
		// A file of /proc or /sys takes its data as a stream, in
		// write(2) calls, as cp writes it: it refuses pwrite (ESPIPE).
		st := *destStat
		st.Mode = st.Mode&^unix.S_IFMT | unix.S_IFCHR
		destStat = &st
	}
	var counter copier.Counter
	if a.progress != nil {
		counter = a.progress
		a.progress.Describe("copying " + quote(dst))
	}
	copyFn := copyData
	if o.AttributesOnly {
		copyFn = noData
	}
	res, err := copyFn(dest.File, srcF, copier.Options{
		Progress:   counter,
		Strategy:   o.Strategy,
		Reflink:    o.Reflink,
		Sparse:     o.Sparse,
		BufferSize: a.bufferSize,
		Memo:       &a.memo,
		SourceStat: &before,
		DestStat:   destStat,
		Written:    dest.Written,
		NoCache:    o.NoCache,
		Flush:      o.Sync != durability.SyncNone || o.Verify,
		SourceCached: func() (int64, error) {
			return durability.CachedBytes(srcF, before.Size)
		},
		WrittenDirect: dest.WrittenDirect,
		SyncWrites:    o.Sync == durability.SyncOSync || o.Sync == durability.SyncODSync,
		Start:         start,
		Checkpoint:    checkpoint,
		Reached:       reached,
	})
	if o.Debug {
		for _, l := range output.DebugLines(&res) {
			r.out(l)
		}
	}
	if err == nil && !o.AttributesOnly {
		err = sourceChanged(srcF, &before, res.Size)
	}
	if err == nil && !dest.InPlace() {
		err = a.setAttrs(dest, ex.path, srcF, sst, ex.st, newFile, dst)
	}
	if err == nil {
		if a.progress != nil && (o.Sync != durability.SyncNone || o.Verify) {
			// Honest: the bytes are copied, the flush is what takes time now.
			a.progress.Describe("flushing " + quote(dst))
		}
		undo, ok := a.backupStep(r, &ex, dst)
		if !ok {
			dest.Abort()
			return false
		}
		if err = dest.Commit(srcF); err != nil {
			undo()
		}
	} else {
		// A pipe whose reader left: the signal handler, which
		// brokenPipe waits for, still finds DEST being written and
		// names it as partial (a named FIFO).
		brokenPipe(err)
		dest.Abort()
	}
	if err != nil && becameDir(err, p.dst, name) {
		r.fail(fmt.Sprintf("cannot overwrite directory %s with non-directory", quote(dst)))
		return false
	}
	if err != nil {
		brokenPipe(err)
		r.fail(output.CopyError(src, dst, err, o.Reflink == copier.ReflinkAlways))
		switch {
		case dest.InPlace() && !special:
			r.fail(fmt.Sprintf("%s was written in place (--inplace) and is now incomplete", quote(dst)))
		case dest.InPlace() && !pseudo && res.Bytes > 0:
			// A device or FIFO DEST, written in place: what a failure
			// leaves in it is part of the copy, as after a signal.
			r.fail(fmt.Sprintf("%s was written in place and is now incomplete", quote(dst)))
		}
		return false
	}
	if dest.Stat != nil {
		a.noteCreated(idOf(dest.Stat))
	}
	return true
}

// continueCopy finds the leftover of an interrupted copy to DEST that
// --resume may continue: dest is nil when there is none (the copy starts
// anew), ok false when the entry failed.
func (a *app) continueCopy(r *record, ex destInfo, dst string, before *unix.Stat_t, dopts durability.Options, reached *atomic.Int64) (dest *durability.Destination, start int64, ok bool) {
	var err error
	if ex.in != nil && ex.in != cwd {
		dest, start, err = durability.ContinueAt(ex.in.fd, ex.in.path, ex.name, durability.IDOf(before), dopts, reached)
	} else {
		dest, start, err = durability.Continue(ex.path, durability.IDOf(before), dopts, reached)
	}
	var live *durability.LiveError
	var fresh *durability.FreshStart
	switch {
	case errors.As(err, &live):
		r.fail(fmt.Sprintf("cannot resume the copy to %s: another copy to it is running (%s is locked)", quote(dst), quote(live.Temp)))
		return nil, 0, false
	case errors.As(err, &fresh):
		r.warn(fmt.Sprintf("copying %s from the start: %s (%s)", quote(dst), fresh.Why, fresh.Detail))
	}
	switch {
	case dest != nil && a.opts.Debug:
		r.out(fmt.Sprintf("resume: %s from offset %d of %d", quote(dest.TempPath()), start, before.Size))
	case dest != nil && a.opts.Verbose && start > 0:
		r.out(fmt.Sprintf("resumed %s at %s of %s", quote(dst), output.Size(start), output.Size(before.Size)))
	}
	return dest, start, true
}

// openSource opens SOURCE (e in d) for reading and checks that it is the
// file the walk saw. Where the walk saw a regular file, the open does not
// follow a symbolic link it did not mean to follow (O_NOFOLLOW: ELOOP, as
// cp says) and does not wait (O_NONBLOCK, which changes nothing for a
// regular file): an entry swapped for a FIFO or a device fails, it neither
// hangs nor opens the device. A FIFO or device read as data is opened as
// cp opens it, waiting for a FIFO's writer. os.Open would register the
// file with the runtime poller (an epoll_ctl that fails for regular files
// and four fcntl calls); the copier makes raw calls on the descriptor
// anyway, so a plain openat(2) wrapped with os.NewFile costs one fcntl.
func (a *app) openSource(d *dir, e *entry, top bool) (*os.File, unix.Stat_t, error) {
	src := d.join(e.name)
	var st unix.Stat_t
	flags := unix.O_RDONLY | unix.O_NOCTTY
	if !a.follows(top) {
		flags |= unix.O_NOFOLLOW
	}
	if isRegular(&e.st) {
		flags |= unix.O_NONBLOCK
	}
	fd, err := openat(d.fd, e.name, flags, 0)
	if err != nil {
		return nil, st, fmt.Errorf("cannot open %s for reading: %s", quote(src), errText(err))
	}
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		unix.Close(fd)
		return nil, st, fmt.Errorf("cannot fstat %s: %s", quote(src), errText(err))
	}
	if idOf(&st) != idOf(&e.st) {
		unix.Close(fd)
		return nil, st, fmt.Errorf("skipping file %s, as it was replaced while being copied", quote(src))
	}
	if flags&unix.O_NONBLOCK != 0 {
		// The file the walk saw: blocking again, so that os.NewFile does
		// not hand it to the runtime poller (an epoll_ctl that fails for
		// a regular file, and the poller's setup for the first one).
		// O_NONBLOCK is the only flag F_SETFL changes that the open set,
		// so F_SETFL 0 clears it in one call.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
			unix.Close(fd)
			return nil, st, fmt.Errorf("cannot open %s for reading: %s", quote(src), errText(err))
		}
	}
	f := os.NewFile(uintptr(fd), src)
	return f, st, nil
}

// completeCopy reports whether dst, an existing DEST, counts as a complete
// copy of the source src for -r --resume: a regular file of the source's
// size, and when timestamps are preserved (-a, -p), of its mtime to the
// nanosecond. (A DEST of that size with other bytes counts too: --resume
// trusts what an earlier run of the same copy left.)
func completeCopy(src, dst *unix.Stat_t, mtime bool) bool {
	if dst == nil || !isRegular(dst) || !isRegular(src) || dst.Size != src.Size {
		return false
	}
	return !mtime || dst.Mtim == src.Mtim
}

// noCheckpoints warns, once per run, that a copy with --resume records no
// checkpoints: an interrupted one will start over.
func (a *app) noCheckpoints(r *record, dst string, err error) {
	a.noCkptOnce.Do(func() {
		why := err.Error()
		if errors.Is(err, durability.ErrNoXattrs) {
			why = "its filesystem takes no user extended attributes"
		}
		r.warn(fmt.Sprintf("--resume records no checkpoints for %s: %s; an interrupted copy will start over", quote(dst), why))
	})
}

// sourceChanged checks that the source still is what was copied: the same
// size as the bytes read and the same modification time as before. A file
// that grew, shrank or was rewritten meanwhile would leave a mix of old and
// new data, so the copy is not put in place. Files in /proc and /sys have
// no meaningful size or time and are not checked.
func sourceChanged(f *os.File, before *unix.Stat_t, copied int64) error {
	if before.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	var after unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(int(f.Fd()), &after) }); err != nil {
		return nil
	}
	if after.Size == copied && before.Size == copied && after.Mtim == before.Mtim {
		return nil
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &fs) == nil && pseudoFS(int64(fs.Type)) {
		return nil
	}
	switch {
	case after.Size != before.Size || copied != before.Size:
		return &output.SourceChanged{What: fmt.Sprintf("changed size while being copied (%d bytes before, %d copied, %d now)", before.Size, copied, after.Size)}
	default:
		return &output.SourceChanged{What: "was modified while being copied"}
	}
}

// pseudoFS reports whether the filesystem of magic number fsType has files
// whose sizes and times say nothing about their contents. (A switch, not a
// map: nothing to build at every start.)
func pseudoFS(fsType int64) bool {
	switch fsType {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC,
		unix.TRACEFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC,
		unix.SECURITYFS_MAGIC, unix.BPF_FS_MAGIC, unix.EFIVARFS_MAGIC:
		return true
	}
	return false
}

// setAttrs gives the temporary file the attributes the result must have
// before it is renamed into place: with -p/--preserve the source's; else a
// new file gets the source's permissions minus the umask (as cp), and an
// existing DEST (dst, at destPath) keeps its own mode and owner.
func (a *app) setAttrs(dest *durability.Destination, destPath string, srcF *os.File, sst, dst *unix.Stat_t, newFile bool, name string) error {
	t := target{fd: int(dest.File.Fd())}
	if !a.opts.Preserve.Mode {
		if newFile {
			if err := t.chmod(a.newMode(sst.Mode, false, a.createKeeps(filepath.Dir(destPath)))); err != nil {
				return output.Wordedf("setting permissions for %s: %s", quote(name), errText(err))
			}
		} else {
			if !a.opts.Preserve.Ownership && (dst.Uid != uint32(os.Geteuid()) || dst.Gid != uint32(os.Getegid())) {
				// Before the chmod: chown clears set-user-ID bits.
				if err := t.chown(int(dst.Uid), int(dst.Gid)); err != nil {
					a.out.Warnf("%s now belongs to uid %d, gid %d (was %d, %d): %s; --inplace keeps the owner",
						quote(name), os.Geteuid(), os.Getegid(), dst.Uid, dst.Gid, errText(err))
				}
			}
			// After the chown, which would drop security.capability, and
			// before the chmod, which then adjusts an ACL's mask as it
			// would have on DEST itself.
			a.keepDestXattrs(t, destPath, dst, name)
			// The set-ID bits only where a write into DEST would keep
			// them.
			if err := t.chmod(setIDAfterWrite(dst.Mode&0o7777, dst.Gid)); err != nil {
				return output.Wordedf("setting permissions for %s: %s", quote(name), errText(err))
			}
		}
	} else if !newFile {
		a.keepDestXattrs(t, destPath, dst, name)
	}
	if a.opts.Preserve.Any() {
		return a.preserve(t, sst, int(srcF.Fd()), "", name)
	}
	return nil
}

// copySymlink copies a symbolic link as a link (-P, -r, -a): a new link
// with the same target, put in place over DEST in one rename.
func (a *app) copySymlink(r *record, p *dirCopy, e *entry, name, src, dst string) {
	link, err := readlinkat(p.src.fd, e.name)
	if err != nil {
		if _, ok := a.checkDest(r, p.dst, name, entryAt{p.src, e.name}, &e.st, src, dst, false); ok {
			r.fail(fmt.Sprintf("cannot read symbolic link %s: %s", quote(src), errText(err)))
		}
		return
	}
	a.makeEntry(r, p, e, name, src, dst, "cannot create symbolic link", func(ent durability.Entry) error {
		return unix.Symlinkat(link, ent.Dir, ent.Name)
	}, a.preserveEntry(&e.st, p.src.at(e.name), dst, true))
}

// copySpecial recreates a FIFO, device node or socket (-r, -a).
func (a *app) copySpecial(r *record, p *dirCopy, e *entry, name, src, dst string) {
	st := &e.st
	kind := "cannot create fifo"
	if m := st.Mode & unix.S_IFMT; m == unix.S_IFCHR || m == unix.S_IFBLK {
		kind = "cannot create special file"
	}
	mode := st.Mode & (unix.S_IFMT | 0o777)
	if a.opts.NoPreserveMode {
		mode = st.Mode&unix.S_IFMT | 0o666
	}
	a.makeEntry(r, p, e, name, src, dst, kind, func(ent durability.Entry) error {
		// mknod applies the umask, as creating a file does.
		return unix.Mknodat(ent.Dir, ent.Name, mode, int(st.Rdev))
	}, a.preserveEntry(st, p.src.at(e.name), dst, false))
}

// makeHardLink links DEST to the copy already made of the same source inode.
func (a *app) makeHardLink(r *record, first *linkFirst, p *dirCopy, e *entry, name, src, dst string) {
	fst, err := first.dir.stat(first.name, false)
	if err != nil {
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(first.dir.join(first.name)), errText(err)))
		return
	}
	if dst0, err := p.dst.stat(name, false); err == nil && idOf(&dst0) == idOf(&fst) {
		return // DEST already is that link (cp -a a a, or a linked tree)
	}
	linked := *e
	linked.st = fst // DEST the first copy itself is "the same file"
	a.makeEntryUpdate(r, p, &linked, name, src, dst, "cannot create hard link", false, func(ent durability.Entry) error {
		return unix.Linkat(first.dir.fd, first.name, ent.Dir, ent.Name, 0)
	}, nil)
}

// makeEntry puts a new entry made by create (under a temporary name, in
// DEST's directory) over DEST, once cp's rules allow it.
func (a *app) makeEntry(r *record, p *dirCopy, e *entry, name, src, dst, what string, create, finish func(durability.Entry) error) {
	a.makeEntryUpdate(r, p, e, name, src, dst, what, a.opts.Update, create, finish)
}

// makeEntryUpdate is makeEntry with -u given or not (checkDestUpdate).
func (a *app) makeEntryUpdate(r *record, p *dirCopy, e *entry, name, src, dst, what string, update bool, create, finish func(durability.Entry) error) {
	ex, ok := a.checkDestUpdate(r, p.dst, name, entryAt{p.src, e.name}, &e.st, src, dst, false, update)
	if !ok {
		return
	}
	if a.opts.AttributesOnly && isSymlink(&e.st) && ex.st != nil && !a.opts.RemoveDestination && ex.backup == "" {
		// cp --attributes-only does not replace a DEST by a link.
		r.fail(fmt.Sprintf("%s %s: %s", what, quote(dst), errText(unix.EEXIST)))
		return
	}
	if a.opts.Verbose {
		r.out(copyingLine(src, dst, ex.backup))
	}
	if p.dst.err != nil {
		r.fail(output.EntryError(what, dst, p.dst.err))
		return
	}
	undo, ok := a.backupStep(r, &ex, dst)
	if !ok {
		return
	}
	if err := a.replaceEntry(r, p.dst.fd, p.dst.path, name, dst, create, finish); err != nil {
		undo()
		if becameDir(err, p.dst, name) {
			r.fail(fmt.Sprintf("cannot overwrite directory %s with non-directory", quote(dst)))
		} else {
			r.fail(output.EntryError(what, dst, err))
		}
		return
	}
	p.dirSync.Added()
	if a.created != nil {
		if st, err := p.dst.stat(name, false); err == nil {
			a.noteCreated(idOf(&st))
		}
	}
}

// preserveEntry is Replace's finish for a new symbolic link or special
// file: the attributes -p/--preserve ask for (from the source at srcPath),
// or nothing.
func (a *app) preserveEntry(st *unix.Stat_t, srcPath, dst string, link bool) func(durability.Entry) error {
	if !a.opts.Preserve.Any() {
		return nil
	}
	return func(e durability.Entry) error {
		return a.preserve(target{fd: -1, path: procPath(e.Dir, e.Name), link: link}, st, -1, srcPath, dst)
	}
}

// reportLeftovers says what the sweep found when the first temporary name
// for dst was taken: by a leftover of an interrupted copy, by a copy to
// the same DEST still running, or by a file of someone else's.
func (a *app) reportLeftovers(r *record, dst string, left []durability.Leftover) {
	for _, l := range left {
		shown := l.Path
		switch {
		case l.Removed:
			if a.opts.Verbose {
				r.out(fmt.Sprintf("removed %s", quote(shown)))
			}
		case l.Refused != "":
			r.warn(fmt.Sprintf("leaving %s alone: %s", quote(shown), l.Refused))
		case l.Unmarked:
			r.warn(fmt.Sprintf("%s has the name of a temporary file of fastcp but not its mark: left alone", quote(shown)))
		default:
			r.warn(fmt.Sprintf("%s may be left over from an interrupted copy to %s; remove it if no copy to %s is running",
				quote(shown), quote(dst), quote(dst)))
		}
	}
}

// replaceEntry puts a link, FIFO or device node at name in the directory
// dirfd (named shownDir in messages) with durability.ReplaceAt, and reports
// the leftovers a taken first temporary name made it sweep. In the current
// directory (AT_FDCWD) name may be a path, and durability.Replace opens its
// directory.
func (a *app) replaceEntry(r *record, dirfd int, shownDir, name, dst string, create, finish func(durability.Entry) error) error {
	var left []durability.Leftover
	var err error
	if dirfd == unix.AT_FDCWD {
		left, err = durability.Replace(a.session, name, create, finish)
	} else {
		left, err = durability.ReplaceAt(a.session, dirfd, shownDir, name, create, finish)
	}
	a.reportLeftovers(r, dst, left)
	return err
}

// createDest opens DEST (ex) for writing with durability: relative to the
// directory the walk holds, or by ex.path for an operand in the current
// directory or a symbolic link's target.
func createDest(ex destInfo, o durability.Options) (*durability.Destination, error) {
	if ex.in != nil && ex.in != cwd {
		return durability.CreateAt(ex.in.fd, ex.in.path, ex.name, o)
	}
	return durability.Create(ex.path, o)
}

// becameDir reports whether err is a rename that failed because DEST
// (name in d) became a directory after it was looked at: the kernel says
// EISDIR, or EEXIST or ENOTEMPTY for a directory with entries.
func becameDir(err error, d *dir, name string) bool {
	var de *durability.Error
	if !errors.As(err, &de) || de.Op != durability.OpRename && de.Op != durability.OpCreate ||
		!(errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY)) {
		return false
	}
	st, serr := d.stat(name, false)
	return serr == nil && isDir(&st)
}

// readlinkat reads the symbolic link name in dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// unverifiable explains why --verify cannot check a file of st's type, or
// returns "" when it can (regular files and block devices).
func unverifiable(name string, st *unix.Stat_t, side string) string {
	kind := ""
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
		return ""
	case unix.S_IFIFO:
		kind = "a fifo"
	case unix.S_IFCHR:
		kind = "a character special file"
	case unix.S_IFSOCK:
		kind = "a socket"
	default:
		kind = "not a regular file"
	}
	return fmt.Sprintf("cannot verify %s: the %s is %s, which cannot be read again; copy it without --verify", quote(name), side, kind)
}

// activeSwapFile reports whether st is a swap file in use (/proc/swaps,
// read once per run, and only when an existing regular DEST is replaced).
func (a *app) activeSwapFile(st *unix.Stat_t) bool {
	a.swapOnce.Do(func() { a.swapFiles = readSwapFiles() })
	return a.swapFiles[idOf(st)]
}

// readSwapFiles returns the device and inode numbers of the swap files in
// use. /proc/swaps names one per line after a header, with blanks and
// backslashes in the name escaped as octal (\040).
func readSwapFiles() map[devIno]bool {
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
		if unix.Stat(unescapeOctal(f[0]), &st) != nil {
			continue
		}
		if m == nil {
			m = make(map[devIno]bool)
		}
		m[idOf(&st)] = true
	}
	return m
}

// readFileRaw is os.ReadFile without the runtime poller (openNoPoller).
func readFileRaw(path string) ([]byte, error) {
	f, err := openNoPoller(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// openNoPoller opens path read-only (with flags added) without the runtime
// poller (sysx.Open): os.Open would register a directory or a /proc file
// with it, and set it up for nothing.
func openNoPoller(path string, flags int) (*os.File, error) {
	return sysx.Open(path, unix.O_RDONLY|flags, 0)
}

// unescapeOctal undoes the \NNN escapes of /proc files.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newMode is the permission bits of a new file (or directory) without
// --preserve=mode: SOURCE's as its creation by cp would leave them (minus
// the umask, or in a directory with a default ACL, masked by that ACL:
// keep is createKeeps' answer for the directory); with --no-preserve=mode,
// the default ones (0666, directories 0777) minus the umask, as cp sets
// them.
func (a *app) newMode(srcMode uint32, dir bool, keep uint32) uint32 {
	if a.opts.NoPreserveMode {
		if dir {
			return 0o777 &^ a.umask
		}
		return 0o666 &^ a.umask
	}
	return srcMode & 0o777 & keep
}

// createKeeps returns the permission bits that creating a file in the
// directory at path (a /proc/self/fd path for an open one) keeps of the
// mode asked for: those of its default ACL where it has one (acl(5): the
// umask then does not apply), else those the umask leaves. cp gets this
// from the kernel by creating DEST with SOURCE's mode; fastcp creates its
// temporary file 0600 and sets the mode afterwards, so it works it out.
func (a *app) createKeeps(path string) uint32 {
	if perms, ok := defaultACLPerms(path); ok {
		return perms
	}
	return 0o777 &^ a.umask
}

// noData is the copy engine of --attributes-only: it copies nothing.
func noData(dst, src *os.File, o copier.Options) (copier.Result, error) {
	return copier.Result{}, nil
}

// attributesOnly gives an existing regular DEST (at path) the attributes
// asked for and leaves its data (--attributes-only): cp opens it without
// O_TRUNC and writes nothing.
func (a *app) attributesOnly(r *record, srcF *os.File, sst *unix.Stat_t, path, dst string) bool {
	// path is DEST, or the file a symlink DEST leads to, in its directory
	// (dir.at): not a link that replaced it since.
	fd, err := openat(unix.AT_FDCWD, path, unix.O_WRONLY|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	if err != nil {
		r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(err)))
		return false
	}
	defer unix.Close(fd)
	if a.opts.Preserve.Any() {
		if err := a.preserve(target{fd: fd}, sst, int(srcF.Fd()), "", dst); err != nil {
			r.fail(err.Error())
			return false
		}
	}
	return true
}
