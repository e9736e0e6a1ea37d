// SPDX-License-Identifier: MIT

package cp

// cp's rules for a SOURCE and a DEST that may be one file: same_file_ok,
// when an existing DEST is removed first, and a SOURCE that leads through
// DEST. They compare entries as cp does, by the names and the directories
// the walk holds.

import (
	"os"
	"path/filepath"
	"strings"

	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// entryAt is an entry by its name in a directory the walk holds open:
// for an operand, the operand as given in cwd.
type entryAt struct {
	d    *dir
	name string
}

// look is fstatat(2) of the entry, following a final symbolic link or not.
func (e entryAt) look(follow bool) (*unix.Stat_t, error) {
	st, err := e.d.Stat(strings.TrimRight(e.name, "/"), follow)
	return &st, err
}

// parent is the identity of the directory the entry is in: the open
// directory itself, or for a name with directories (an operand), the one
// they lead to from it.
func (e entryAt) parent() (devIno, bool) {
	name := strings.TrimRight(e.name, "/")
	if e.d.Err() != nil {
		return devIno{}, false
	}
	if e.d != cwd && !strings.Contains(name, "/") {
		return e.d.ID(), e.d.ID() != devIno{}
	}
	st, err := e.d.Stat(filepath.Dir(name), true)
	if err != nil {
		return devIno{}, false
	}
	return idOf(&st), true
}

// sameName reports whether two entries are one directory entry: the same
// last component in the same directory.
func sameName(a, b entryAt) bool {
	if filepath.Base(strings.TrimRight(a.name, "/")) != filepath.Base(strings.TrimRight(b.name, "/")) {
		return false
	}
	da, ok1 := a.parent()
	db, ok2 := b.parent()
	return ok1 && ok2 && da == db
}

// derefNever is cp's x->dereference == DEREF_NEVER: symbolic links in
// SOURCE are never followed (-P, -d, -a, and -r without -L, -H or -l).
func derefNever(o *flags.Options) bool {
	return o.Deref == flags.DerefNever || o.Deref == flags.DerefDefault && o.Recursive && o.Link != flags.LinkHard
}

func isLink(st *unix.Stat_t) bool { return isSymlink(st) }

// sameFile is one question to sameFileOK: SOURCE src (ssb, as the walk
// stat'ed it) and an existing DEST dst (dsb), and what the rules found out
// on the way.
type sameFile struct {
	o        *flags.Options
	backup   bool // DEST is renamed to its backup name (-b), not replaced
	src, dst entryAt
	ssb, dsb *unix.Stat_t
	// srcLink and dstLink: the entries themselves, not followed;
	// sameLink: they are one inode.
	srcLink, dstLink *unix.Stat_t
	sameLink         bool
}

// sameFileOK is cp's same_file_ok: whether copying src (ssb, as the walk
// stat'ed it) over an existing dst (dsb, stat'ed as cp does: not
// following a symlink DEST unless it is written through) may go on
// although both may be one file, and whether the entry is then done
// already (done: cp -l f f, nothing to do). backup: the run backs DEST
// up (app.backups).
func sameFileOK(o *flags.Options, backup bool, src entryAt, ssb *unix.Stat_t, dst entryAt, dsb *unix.Stat_t) (ok, done bool) {
	f := &sameFile{o: o, backup: backup, src: src, dst: dst, ssb: ssb, dsb: dsb}
	same := idOf(ssb) == idOf(dsb)
	if same && o.Link == flags.LinkHard {
		return true, true
	}
	if decided, ok, done := f.entries(same); decided {
		return ok, done
	}
	if backup {
		return f.withBackup(), false
	}
	return f.unlinked()
}

// entries finds the two entries as cp compares them (srcLink, dstLink),
// and decides the cases of two symbolic links.
func (f *sameFile) entries(same bool) (decided, ok, done bool) {
	o := f.o
	if derefNever(o) {
		f.sameLink = same
		// Two symlinks are usually fine when they are distinct entries.
		if isLink(f.ssb) && isLink(f.dsb) {
			sn := sameName(f.src, f.dst)
			if !sn {
				if f.backup {
					return true, true, false
				}
				if f.sameLink {
					return true, true, true // hard links of one symlink
				}
			}
			return true, !sn, false
		}
		f.srcLink, f.dstLink = f.ssb, f.dsb
		return false, false, false
	}
	if !same {
		return true, true, false
	}
	dl, err1 := f.dst.look(false)
	sl, err2 := f.src.look(false)
	if err1 != nil || err2 != nil {
		return true, true, false
	}
	f.srcLink, f.dstLink = sl, dl
	f.sameLink = idOf(sl) == idOf(dl)
	// Two symlinks to one file: fine when DEST is removed first.
	if isLink(sl) && isLink(dl) && o.RemoveDestination {
		return true, true, false
	}
	return false, false, false
}

// withBackup: the backup keeps a copy, unless SOURCE and DEST are one
// entry.
func (f *sameFile) withBackup() bool {
	if !f.sameLink {
		// Backing up DEST would leave a SOURCE symlink dangling.
		return derefNever(f.o) || !isLink(f.srcLink) || isLink(f.dstLink)
	}
	return !sameName(f.src, f.dst)
}

// unlinked decides the rest: whether DEST can be removed or made anew
// without losing SOURCE.
func (f *sameFile) unlinked() (ok, done bool) {
	o, srcLink, dstLink := f.o, f.srcLink, f.dstLink
	if !isLink(srcLink) && !isLink(dstLink) {
		if idOf(srcLink) != idOf(dstLink) {
			return true, false
		}
		if o.Link == flags.LinkHard {
			return true, true
		}
		// Two names of one file: removing DEST first leaves SOURCE.
		if o.RemoveDestination && o.Link != flags.LinkSymbolic && !sameName(f.src, f.dst) {
			return true, false
		}
	}
	// A DEST symlink can be made anew, or removed first.
	if isLink(dstLink) && (o.Link == flags.LinkSymbolic || o.RemoveDestination) {
		return true, false
	}
	if !derefNever(o) {
		return false, false
	}
	ts, td := srcLink, dstLink
	var err error
	if isLink(srcLink) {
		if ts, err = f.src.look(true); err != nil {
			return true, false
		}
	}
	if isLink(dstLink) {
		if td, err = f.dst.look(true); err != nil {
			return true, false
		}
	}
	if idOf(ts) != idOf(td) {
		return true, false
	}
	if o.Link == flags.LinkHard {
		return true, !isLink(dstLink)
	}
	return false, false
}

// unlinksFirst is cp's rule for removing an existing DEST before making
// the new one (rather than writing into it, or failing on it): with
// --remove-destination, and when copying data, for a DEST with several
// links under --preserve=links, and for a SOURCE that is not a regular
// file when symbolic links are not followed.
func unlinksFirst(o *flags.Options, ssb, dsb *unix.Stat_t) bool {
	if o.RemoveDestination {
		return true
	}
	if o.AttributesOnly || isDir(dsb) {
		return false
	}
	return o.HardLinks && dsb.Nlink > 1 || derefNever(o) && !isRegular(ssb)
}

// sourceThroughDest reports whether SOURCE (src, the entry from, as the
// walk saw it: sst), followed as a symbolic link, leads through the entry
// DEST is (to, which exists: dst0 not nil), when DEST is moved away first
// (removes): cp -b sym sym, cp --remove-destination sym2 sym with sym2 ->
// sym, through DEST's entry, not merely the same symlink inode under
// another name. cp renames or removes DEST and then finds no SOURCE (and puts a
// renamed DEST back); fastcp fails the same way before touching anything.
//
// SOURCE and DEST are looked at in the directories the walk holds; the
// links SOURCE leads to after that are followed by name, as the kernel
// would.
func sourceThroughDest(src string, from entryAt, sst *unix.Stat_t, to entryAt, dst0 *unix.Stat_t, removes bool) bool {
	if dst0 == nil || isLink(sst) || !removes {
		return false
	}
	dl, err := to.look(false)
	if err != nil || !isLink(dl) {
		return false
	}
	p := src
	for i := range 40 {
		var pl *unix.Stat_t
		var t string
		if i == 0 {
			pl, err = from.look(false)
		} else {
			pl, err = statPath(p, false)
		}
		if err != nil || !isLink(pl) {
			return false
		}
		// The link must be DEST's very entry: another hard link of the
		// same symlink (ln sym hl; cp -b hl sym) survives DEST's removal.
		here := from
		if i > 0 {
			here = entryAt{cwd, p}
		}
		if idOf(pl) == idOf(dl) && sameName(here, to) {
			return true
		}
		if i == 0 {
			t, err = readlinkat(from.d.Fd(), strings.TrimRight(from.name, "/"))
		} else {
			t, err = os.Readlink(p)
		}
		if err != nil {
			return false
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return false
}

// statPath is stat(2), or lstat(2) when !follow, of a name as the user gave
// it: for cp's same-file rules, which compare names as cp does.
func statPath(path string, follow bool) (*unix.Stat_t, error) {
	var st unix.Stat_t
	var err error
	if follow {
		err = unix.Stat(path, &st)
	} else {
		err = unix.Lstat(path, &st)
	}
	return &st, err
}
