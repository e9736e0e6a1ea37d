// SPDX-License-Identifier: MIT

package cp

// Entries that are made rather than written: symbolic links, FIFOs, device
// nodes and sockets, and -a's further hard links to a copied inode. Each
// is made under a temporary name in DEST's directory and renamed over DEST.

import (
	"errors"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/fsdir"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// copySymlink copies a symbolic link as a link (-P, -r, -a): a new link
// with the same target, put in place over DEST in one rename.
func (j *job) copySymlink() {
	e := j.e
	link, err := readlinkat(j.sd.Fd(), e.name)
	if err != nil {
		if _, ok := j.checkDest(false); ok {
			j.r.fail(output.CannotReadSymbolicLink(j.src, err))
		}
		return
	}
	n := newEntry{what: output.CreateSymbolicLink, update: j.a.opts.Update == flags.UpdateOlder,
		create: func(ent durability.Entry) error {
			return unix.Symlinkat(link, ent.Dir, ent.Name)
		}}
	if o := j.a.opts.Preserve; o.Any() {
		// The link stays whatever its attributes do (preserveLink).
		ownTimes := true
		n.create = func(ent durability.Entry) error {
			if o.Ownership || o.Timestamps {
				var err error
				if ownTimes, err = j.ownTimesOfLinks(ent); err != nil {
					return err
				}
			}
			return unix.Symlinkat(link, ent.Dir, ent.Name)
		}
		n.finish = func(ent durability.Entry) error {
			j.preserveLink(ent, j.sd.At(e.name), ownTimes)
			return nil
		}
	}
	j.makeEntry(n)
}

// copySpecial recreates a FIFO, device node or socket (-r, -a).
func (j *job) copySpecial() {
	st := &j.e.st
	what := output.CreateFifo
	if m := st.Mode & unix.S_IFMT; m == unix.S_IFCHR || m == unix.S_IFBLK {
		what = output.CreateSpecialFile
	}
	mode := st.Mode & (unix.S_IFMT | 0o777)
	if j.a.opts.NoPreserveMode {
		mode = st.Mode&unix.S_IFMT | 0o666
	}
	j.makeEntry(newEntry{what: what, update: j.a.opts.Update == flags.UpdateOlder,
		create: func(ent durability.Entry) error {
			// mknod applies the umask, as creating a file does.
			return unix.Mknodat(ent.Dir, ent.Name, mode, int(st.Rdev))
		},
		finish: j.preserveEntry(j.sd.At(j.e.name))})
}

// makeHardLink links DEST to the copy already made of the same source
// inode. The first copy's directory is opened again if the window closed
// it, checked as every directory is; the first copy must still be the file
// made (its inode), and so must the new link before it takes DEST's name:
// a name swapped meanwhile by someone who can write that directory is
// refused, not linked into the copy.
func (j *job) makeHardLink(first *linkFirst) {
	fd, err := first.dir.Get()
	if err != nil {
		j.r.fail(output.CannotStat(joinPath(first.dir.Path(), first.name), err))
		return
	}
	defer first.dir.Put()
	fst, err := fd.Stat(first.name, false)
	if err == nil && idOf(&fst) != first.id {
		err = fsdir.ErrReplaced
	}
	if err != nil {
		j.r.fail(output.CannotStat(fd.Join(first.name), err))
		return
	}
	if dst0, err := j.dd.Stat(j.name, false); err == nil && idOf(&dst0) == idOf(&fst) {
		j.noteSum(first.digest)
		return // DEST already is that link (cp -a a a, or a linked tree)
	}
	linked := *j.e
	linked.st = fst // DEST the first copy itself is "the same file"
	e := j.e
	j.e = &linked
	defer func() { j.e = e }()
	// A further name of an inode already copied is linked whatever -u
	// says, as with cp.
	if j.makeEntry(newEntry{what: output.CreateHardLink,
		create: func(ent durability.Entry) error {
			return unix.Linkat(fd.Fd(), first.name, ent.Dir, ent.Name, 0)
		},
		finish: func(ent durability.Entry) error {
			var st unix.Stat_t
			if err := unix.Fstatat(ent.Dir, ent.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
			if idOf(&st) != first.id {
				return fsdir.ErrReplaced
			}
			return nil
		}}) {
		j.noteSum(first.digest)
	}
}

// newEntry is how makeEntry makes an entry: create makes it under a
// temporary name, finish (if not nil) gives it its attributes; what names
// the failure as cp does ("cannot create symbolic link"); update is -u.
type newEntry struct {
	what           string
	update         bool
	create, finish func(durability.Entry) error
}

// makeEntry puts a new entry (n) over DEST, once cp's rules allow it. It
// reports whether DEST is now that entry.
func (j *job) makeEntry(n newEntry) bool {
	o, dd, dst := j.a.opts, j.dd, j.dst
	ex, ok := j.checkDestUpdate(false, n.update, isSymlink(&j.e.st))
	if !ok {
		return false
	}
	if o.Verbose {
		j.r.out(copyingLine(j.src, dst, ex.backup))
	}
	if dd.Err() != nil {
		j.r.fail(output.EntryError(n.what, dst, dd.Err()))
		return false
	}
	undo, ok := j.backupStep(&ex)
	if !ok {
		return false
	}
	if err := j.replaceEntry(j.name, n.create, n.finish); err != nil {
		undo()
		if becameDir(err, dd, j.name) {
			j.r.fail(output.CannotOverwriteDirectory(dst))
		} else {
			j.r.fail(output.EntryError(n.what, dst, err))
		}
		return false
	}
	if j.a.created != nil {
		if st, err := dd.Stat(j.name, false); err == nil {
			j.a.created.note(idOf(&st))
		}
	}
	return true
}

// preserveEntry is Replace's finish for a new special
// file: the attributes -p/--preserve ask for (from the source at srcPath),
// or nothing.
func (j *job) preserveEntry(srcPath string) func(durability.Entry) error {
	if !j.a.opts.Preserve.Any() {
		return nil
	}
	st, dst := &j.e.st, j.dst
	return func(e durability.Entry) error {
		return j.a.preserve(target{fd: -1, path: procPath(e.Dir, e.Name)}, st, -1, srcPath, dst)
	}
}

// reportLeftovers says what the sweep found when the first temporary name
// for dst was taken: by a leftover of an interrupted copy, by a copy to
// the same DEST still running, or by a file of someone else's.
func (j *job) reportLeftovers(dst string, left []durability.Leftover) {
	for _, l := range left {
		shown := l.Path
		switch {
		case l.Removed:
			if j.a.opts.Verbose {
				j.r.out(output.Removed(shown))
			}
		case l.Refused != "":
			j.r.warn(output.LeavingAlone(shown, l.Refused))
		case l.Unmarked:
			j.r.warn(output.UnmarkedTemporary(shown))
		default:
			j.r.warn(output.MayBeLeftOver(shown, dst, l.Why, output.RemoveHint(dst, l.Path, l.Side)))
		}
	}
}

// replaceEntry puts a link, FIFO or device node at name in DEST's
// directory through that directory's DirSync, which records it for
// --sync, and reports the leftovers a taken first temporary name made it
// sweep.
func (j *job) replaceEntry(name string, create, finish func(durability.Entry) error) error {
	left, err := j.p.dirSync.Replace(j.a.session, j.dd, name, create, finish)
	j.reportLeftovers(j.dst, left)
	return err
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
	st, serr := d.Stat(name, false)
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
