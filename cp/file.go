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
	"syscall"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// copyData is the copy engine; a package variable so tests can make it fail.
var copyData = copier.Copy

// existing describes DEST before anything is written.
type existing struct {
	fi     os.FileInfo // nil: DEST does not exist
	path   string      // where to write: DEST, or the file a symlink DEST points to
	backup string      // the name DEST's backup gets (-b), "" for none
	// kept: DEST is newer and -u keeps it (for --preserve=links, the
	// copy of its source inode is then DEST as it is).
	kept bool
}

// checkDest applies cp's rules to DEST before anything is opened for
// writing. through says whether a symbolic link DEST is written through
// (copying data) or replaced (copying a link or a special file). It
// returns ok=false when the entry is done (skipped or failed).
func (a *app) checkDest(r *record, src string, sfi os.FileInfo, dst string, through bool) (existing, bool) {
	return a.checkDestUpdate(r, src, sfi, dst, through, a.opts.Update)
}

// checkDestUpdate is checkDest with -u given or not: a further name of an
// inode already copied is linked whatever -u says, as with cp.
func (a *app) checkDestUpdate(r *record, src string, sfi os.FileInfo, dst string, through, update bool) (existing, bool) {
	o := a.opts
	e := existing{path: dst}
	// With --remove-destination or a backup, cp removes (or renames)
	// a symlink DEST itself.
	through = through && !o.RemoveDestination && o.Backup == flags.BackupNone
	lfi, err := os.Lstat(dst)
	switch {
	case err == nil && through && lfi.Mode()&os.ModeSymlink != 0:
		// cp writes through a symlink DEST: the file it points to is
		// replaced, the link stays.
		e.fi, err = os.Stat(dst)
		if errors.Is(err, os.ErrNotExist) && o.PosixlyCorrect {
			// POSIX: the file the dangling link names is created.
			target, lerr := os.Readlink(dst)
			if lerr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(dst), target)
				}
				// A new file, as for cp: -n and -i do not hold it back.
				e.fi, e.path = nil, target
				return e, true
			}
			err = lerr
		}
		if errors.Is(err, os.ErrNotExist) {
			r.fail(fmt.Sprintf("not writing through dangling symlink %s", quote(dst)))
			return e, false
		}
		if errors.Is(err, unix.ELOOP) && o.Force {
			// A symlink loop counts as an existing DEST that cannot be
			// opened: -f replaces the link (cp 8.30 and later).
			e.fi = nil
			return e, true
		}
		if err == nil {
			e.path, err = filepath.EvalSymlinks(dst)
		}
		if err != nil {
			r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
			return e, false
		}
	case err == nil:
		e.fi = lfi
	case errors.Is(err, os.ErrNotExist):
		if strings.HasSuffix(dst, "/") {
			r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(unix.ENOTDIR)))
			return e, false
		}
		return e, true
	default:
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
		return e, false
	}
	if ok, done := a.sameFileOK(src, sfi, dst, e.fi); !ok {
		r.fail(fmt.Sprintf("%s and %s are the same file", quote(src), quote(dst)))
		return e, false
	} else if done {
		return e, false
	}
	if e.fi.IsDir() {
		r.fail(fmt.Sprintf("cannot overwrite directory %s with non-directory", quote(dst)))
		return e, false
	}
	// cp 9.11: -n (and --update=none) skips silently;
	// --update=none-fail says so and fails; a "no" to -i fails.
	if o.NoClobber {
		return e, false
	}
	if update && !sfi.ModTime().After(e.fi.ModTime()) {
		e.kept = true
		return e, false
	}
	if o.NoneFail {
		r.fail(fmt.Sprintf("not replacing %s", quote(dst)))
		return e, false
	}
	if o.Interactive && !a.confirm(a.overwriteQuestion(e, dst)) {
		r.failQuietly()
		return e, false
	}
	if o.Backup != flags.BackupNone {
		if a.backupIsSource(sfi, dst) {
			r.fail(fmt.Sprintf("backing up %s might destroy source;  %s not copied", quote(dst), quote(src)))
			return e, false
		}
		e.backup = a.backupName(dst)
	}
	return e, true
}

// overwriteQuestion is cp's -i prompt: plain for a writable DEST, naming
// the mode of one the user cannot write.
func (a *app) overwriteQuestion(e existing, dst string) string {
	if e.fi.Mode().IsRegular() && writable(e.path) != nil {
		mode := rawStat(e.fi).Mode & 0o7777
		perms := e.fi.Mode().Perm().String()[1:]
		if a.opts.Force {
			return fmt.Sprintf("replace %s, overriding mode %04o (%s)? ", quote(dst), mode, perms)
		}
		return fmt.Sprintf("unwritable %s (mode %04o, %s); try anyway? ", quote(dst), mode, perms)
	}
	return fmt.Sprintf("overwrite %s? ", quote(dst))
}

// copyFile copies the data of src (a regular file, or a FIFO or device read
// as data) to dst: through a temporary file renamed over dst when dst is or
// will be a regular file, in place for a device or FIFO dst or --inplace.
// It reports whether dst now holds the copy.
func (a *app) copyFile(r *record, src string, sfi os.FileInfo, dst string) bool {
	o := a.opts
	ex, ok := a.checkDest(r, src, sfi, dst, true)
	if !ok {
		return ex.kept
	}
	if o.Resume && o.Recursive && completeCopy(sfi, ex.fi, o.Preserve.Timestamps) {
		// Copied by the interrupted run that --resume continues.
		if o.Debug {
			r.out(fmt.Sprintf("skipped %s: already a complete copy (--resume)", quote(dst)))
		}
		if a.progress != nil {
			a.progress.Add(sfi.Size())
		}
		return true
	}
	if o.Verify {
		// --verify reads both sides again after the copy: a stream cannot
		// be read twice, and a device or FIFO DEST is written in place.
		if msg := unverifiable(src, sfi, "source"); msg != "" {
			r.fail(msg)
			return false
		}
		if ex.fi != nil && !ex.fi.Mode().IsRegular() {
			if msg := unverifiable(dst, ex.fi, "destination"); msg != "" {
				r.fail(msg)
				return false
			}
		}
	}
	// As cp: the -v line comes before the source is opened, so a file
	// that then fails is named twice, by -v and by the error.
	if o.Verbose || o.Debug {
		r.out(copyingLine(src, dst, ex.backup))
	}
	if a.sourceThroughDest(src, sfi, dst, ex.fi, ex.backup != "" || ex.fi != nil && a.unlinksFirst(sfi, ex.fi)) {
		r.fail(fmt.Sprintf("cannot open %s for reading: %s", quote(src), errText(unix.ENOENT)))
		return false
	}
	srcF, err := openSource(src)
	if err != nil {
		r.fail(fmt.Sprintf("cannot open %s for reading: %s", quote(src), errText(err)))
		return false
	}
	defer srcF.Close()
	var before unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(int(srcF.Fd()), &before) }); err != nil {
		r.fail(fmt.Sprintf("cannot fstat %s: %s", quote(src), errText(err)))
		return false
	}
	if before.Dev != rawStat(sfi).Dev || before.Ino != rawStat(sfi).Ino {
		r.fail(fmt.Sprintf("skipping file %s, as it was replaced while being copied", quote(src)))
		return false
	}

	// A device or FIFO DEST is written in place, and so is any DEST with
	// --inplace (keeping its inode, hard links, mode and owner); otherwise a
	// temporary file replaces DEST and takes its mode and owner.
	dfi := ex.fi
	// --remove-destination and a backup replace DEST whatever it is
	// (cp removes or renames it first), and so does a copy over a
	// symlink DEST that is not written through: the result is a new file.
	replaced := dfi != nil && (o.RemoveDestination || ex.backup != "" || !dfi.Mode().IsRegular())
	special := dfi != nil && !o.RemoveDestination && ex.backup == "" &&
		dfi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe|os.ModeSocket) != 0
	newFile := dfi == nil || (replaced && !special)
	inPlace := special || o.InPlace
	if o.AttributesOnly && dfi != nil && dfi.Mode().IsRegular() && !replaced {
		// cp --attributes-only opens DEST without truncating it: its data
		// stay, it gets the attributes asked for.
		return a.attributesOnly(r, srcF, sfi, ex.path, dst)
	}
	if dfi != nil && dfi.Mode().IsRegular() && !inPlace && !replaced {
		// cp opens an existing DEST for writing: without write permission
		// it fails, unless -f lets it remove DEST and start anew. An
		// immutable DEST (EPERM) can be neither written nor removed.
		if err := writable(ex.path); err != nil {
			switch {
			case o.Force && errors.Is(err, unix.EPERM):
				r.fail(fmt.Sprintf("cannot remove %s: %s", quote(dst), errText(err)))
				return false
			case !o.Force:
				r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(err)))
				return false
			}
			newFile = true
		}
		// The kernel refuses to rename over a swap file in use, but only
		// after the whole copy was written; writing it in place fails at
		// once with ETXTBSY, which is what cp reports.
		if a.activeSwapFile(dfi) {
			r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(unix.ETXTBSY)))
			return false
		}
	}
	dopts := durability.Options{
		InPlace:  inPlace,
		Truncate: inPlace && !special,
		Perm:     os.FileMode(rawStat(sfi).Mode & 0o777),
		Sync:     o.Sync,
		NoCache:  o.NoCache,
		Verify:   o.Verify,
		Source:   srcF,
		Session:  a.session,
	}
	// --resume: continue the leftover of an interrupted copy, if there is
	// one that may be, else start anew and record checkpoints.
	resumable := o.Resume && !inPlace && before.Mode&unix.S_IFMT == unix.S_IFREG
	var reached *atomic.Int64
	var start int64
	var dest *durability.Destination
	if resumable {
		reached = new(atomic.Int64)
		var lerr error
		dest, start, lerr = durability.Continue(ex.path, durability.IDOf(&before), dopts, reached)
		var live *durability.LiveError
		var fresh *durability.FreshStart
		switch {
		case errors.As(lerr, &live):
			r.fail(fmt.Sprintf("cannot resume the copy to %s: another copy to it is running (%s is locked)", quote(dst), quote(live.Temp)))
			return false
		case errors.As(lerr, &fresh):
			r.warn(fmt.Sprintf("copying %s from the start: %s (%s)", quote(dst), fresh.Why, fresh.Detail))
		}
		if dest != nil && o.Debug {
			r.out(fmt.Sprintf("resume: %s from offset %d of %d", quote(dest.TempPath()), start, before.Size))
		}
	}
	if dest == nil {
		dest, err = durability.Create(ex.path, dopts)
	}
	if err != nil {
		if !inPlace && dfi != nil && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
			// DEST itself is writable (checked above), its directory is
			// not: cp would write in place, the contract wants a
			// temporary file there. Say why, and the way out.
			r.fail(fmt.Sprintf("cannot create a temporary file in %s to replace %s: %s; --inplace writes into %s itself",
				quote(filepath.Dir(ex.path)), quote(dst), errText(err), quote(dst)))
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
		BufferSize: o.BufferSize,
		Memo:       &a.memo,
		SourceStat: &before,
		DestStat:   dest.Stat,
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
		err = a.setAttrs(dest, srcF, sfi, dfi, newFile, dst)
	}
	if err == nil {
		if a.progress != nil && (o.Sync != durability.SyncNone || o.Verify) {
			// Honest: the bytes are copied, the flush is what takes time now.
			a.progress.Describe("flushing " + quote(dst))
		}
		undo, ok := a.backupStep(r, dst, ex.backup)
		if !ok {
			dest.Abort()
			return false
		}
		if err = dest.Commit(srcF); err != nil {
			undo()
		}
	} else {
		dest.Abort()
	}
	if err != nil {
		r.fail(output.CopyError(src, dst, err, o.Reflink == copier.ReflinkAlways))
		if dest.InPlace() && !special {
			r.fail(fmt.Sprintf("%s was written in place (--inplace) and is now incomplete", quote(dst)))
		}
		return false
	}
	return true
}

// completeCopy reports whether dfi, an existing DEST, counts as a complete
// copy of the source sfi for -r --resume: a regular file of the source's
// size, and when timestamps are preserved (-a, -p), of its mtime to the
// nanosecond. (A DEST of that size with other bytes counts too: --resume
// trusts what an earlier run of the same copy left.)
func completeCopy(sfi, dfi os.FileInfo, mtime bool) bool {
	if dfi == nil || !dfi.Mode().IsRegular() || !sfi.Mode().IsRegular() || dfi.Size() != sfi.Size() {
		return false
	}
	return !mtime || dfi.ModTime().Equal(sfi.ModTime())
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
// existing DEST keeps its own mode and owner.
func (a *app) setAttrs(dest *durability.Destination, srcF *os.File, sfi, dfi os.FileInfo, newFile bool, name string) error {
	t := target{fd: int(dest.File.Fd()), path: dest.TempPath()}
	sst := rawStat(sfi)
	if !a.opts.Preserve.Mode {
		if newFile {
			if err := t.chmod(a.newMode(sst.Mode, false)); err != nil {
				return output.Wordedf("setting permissions for %s: %s", quote(name), errText(err))
			}
		} else {
			ds := rawStat(dfi)
			if !a.opts.Preserve.Ownership && (ds.Uid != uint32(os.Geteuid()) || ds.Gid != uint32(os.Getegid())) {
				// Before the chmod: chown clears set-user-ID bits.
				if err := t.chown(int(ds.Uid), int(ds.Gid)); err != nil {
					a.out.Warnf("%s now belongs to uid %d, gid %d (was %d, %d): %s; --inplace keeps the owner",
						quote(name), os.Geteuid(), os.Getegid(), ds.Uid, ds.Gid, errText(err))
				}
			}
			// After the chown, which would drop security.capability, and
			// before the chmod, which then adjusts an ACL's mask as it
			// would have on DEST itself.
			a.keepDestXattrs(t, dest.Path, dfi, name)
			// The set-ID bits only where a write into DEST would keep
			// them (issue 12, finding 8).
			if err := t.chmod(setIDAfterWrite(ds.Mode&0o7777, ds.Gid)); err != nil {
				return output.Wordedf("setting permissions for %s: %s", quote(name), errText(err))
			}
		}
	} else if !newFile {
		a.keepDestXattrs(t, dest.Path, dfi, name)
	}
	if a.opts.Preserve.Any() {
		return a.preserve(t, sst, int(srcF.Fd()), "", name)
	}
	return nil
}

// copySymlink copies a symbolic link as a link (-P, -r, -a): a new link
// with the same target, put in place over DEST in one rename.
func (a *app) copySymlink(r *record, src string, sfi os.FileInfo, dst string) {
	ex, ok := a.checkDest(r, src, sfi, dst, false)
	if !ok {
		return
	}
	if a.opts.AttributesOnly && ex.fi != nil && !a.opts.RemoveDestination && ex.backup == "" {
		// cp --attributes-only does not replace a DEST by a link.
		r.fail(fmt.Sprintf("cannot create symbolic link %s: %s", quote(dst), errText(unix.EEXIST)))
		return
	}
	link, err := os.Readlink(src)
	if err != nil {
		r.fail(fmt.Sprintf("cannot read symbolic link %s: %s", quote(src), errText(err)))
		return
	}
	if a.opts.Verbose || a.opts.Debug {
		r.out(copyingLine(src, dst, ex.backup))
	}
	undo, ok := a.backupStep(r, dst, ex.backup)
	if !ok {
		return
	}
	err = a.replaceEntry(r, strings.TrimRight(dst, "/"), func(e durability.Entry) error {
		return unix.Symlinkat(link, e.Dir, e.Name)
	}, a.preserveEntry(rawStat(sfi), src, dst, true))
	if err != nil {
		undo()
		r.fail(output.EntryError("cannot create symbolic link", dst, err))
		return
	}
	a.madeEntry(dst)
}

// preserveEntry is Replace's finish for a new symbolic link or special
// file: the attributes -p/--preserve ask for, or nothing.
func (a *app) preserveEntry(st *syscall.Stat_t, src, dst string, link bool) func(durability.Entry) error {
	if !a.opts.Preserve.Any() {
		return nil
	}
	return func(e durability.Entry) error {
		return a.preserve(target{fd: -1, path: e.Path, link: link}, st, -1, src, dst)
	}
}

// copySpecial recreates a FIFO, device node or socket (-r, -a).
func (a *app) copySpecial(r *record, src string, sfi os.FileInfo, dst string) {
	ex, ok := a.checkDest(r, src, sfi, dst, false)
	if !ok {
		return
	}
	st := rawStat(sfi)
	if a.opts.Verbose || a.opts.Debug {
		r.out(copyingLine(src, dst, ex.backup))
	}
	undo, ok := a.backupStep(r, dst, ex.backup)
	if !ok {
		return
	}
	mode := st.Mode & (unix.S_IFMT | 0o777)
	if a.opts.NoPreserveMode {
		mode = st.Mode&unix.S_IFMT | 0o666
	}
	err := a.replaceEntry(r, strings.TrimRight(dst, "/"), func(e durability.Entry) error {
		// mknod applies the umask, as creating a file does.
		return unix.Mknodat(e.Dir, e.Name, mode, int(st.Rdev))
	}, a.preserveEntry(st, src, dst, false))
	if err != nil {
		undo()
		kind := "fifo"
		if sfi.Mode()&os.ModeDevice != 0 {
			kind = "special file"
		}
		r.fail(output.EntryError("cannot create "+kind, dst, err))
		return
	}
	a.madeEntry(dst)
}

// makeHardLink links dst to the copy already made of the same source inode.
func (a *app) makeHardLink(r *record, src, first, dst string) {
	sfi, err := os.Lstat(first)
	if err != nil {
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(first), errText(err)))
		return
	}
	if dfi, err := os.Lstat(dst); err == nil && os.SameFile(dfi, sfi) {
		return // DEST already is that link (cp -a a a, or a linked tree)
	}
	ex, ok := a.checkDestUpdate(r, first, sfi, dst, false, false)
	if !ok {
		return
	}
	if a.opts.Verbose || a.opts.Debug {
		r.out(copyingLine(src, dst, ex.backup))
	}
	undo, ok := a.backupStep(r, dst, ex.backup)
	if !ok {
		return
	}
	err = a.replaceEntry(r, dst, func(e durability.Entry) error {
		return unix.Linkat(unix.AT_FDCWD, first, e.Dir, e.Name, 0)
	}, nil)
	if err != nil {
		undo()
		r.fail(output.EntryError("cannot create hard link", dst, err))
		return
	}
	a.madeEntry(dst)
}

// replaceEntry puts a link, FIFO or device node at dst with
// durability.Replace and, when the first temporary name was taken, sweeps
// the leftovers for dst as a file copy does: a power cut between Replace's
// create and its rename leaves the entry under that name, and nothing else
// would ever name or remove it (found by the crash-simulating filesystem,
// integration_test/crashfs).
// reportLeftovers says what the sweep found when the first temporary name
// for dst was taken: by a leftover of an interrupted copy, by a copy to
// the same DEST still running, or by a file of someone else's.
func (a *app) reportLeftovers(r *record, dst string, left []durability.Leftover) {
	for _, l := range left {
		switch {
		case l.Removed:
			if a.opts.Verbose || a.opts.Debug {
				r.out(fmt.Sprintf("removed %s", quote(l.Path)))
			}
		case l.Unmarked:
			r.warn(fmt.Sprintf("%s has the name of a temporary file of fastcp but not its mark: left alone", quote(l.Path)))
		default:
			r.warn(fmt.Sprintf("%s may be left over from an interrupted copy to %s; remove it if no copy to %s is running",
				quote(l.Path), quote(dst), quote(dst)))
		}
	}
}

func (a *app) replaceEntry(r *record, dst string, create, finish func(durability.Entry) error) error {
	left, err := durability.Replace(a.session, dst, create, finish)
	a.reportLeftovers(r, dst, left)
	return err
}

// unverifiable explains why --verify cannot check a file of fi's type, or
// returns "" when it can (regular files and block devices).
func unverifiable(name string, fi os.FileInfo, side string) string {
	m := fi.Mode()
	kind := ""
	switch {
	case m.IsRegular(), m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0:
		return ""
	case m&os.ModeNamedPipe != 0:
		kind = "a fifo"
	case m&os.ModeCharDevice != 0:
		kind = "a character special file"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	default:
		kind = "not a regular file"
	}
	return fmt.Sprintf("cannot verify %s: the %s is %s, which cannot be read again; copy it without --verify", quote(name), side, kind)
}

// openSource opens a SOURCE for reading. os.Open would register the file
// with the runtime poller (an epoll_ctl that fails for regular files and
// four fcntl calls); the copier makes raw calls on the descriptor anyway, so
// a plain open(2) wrapped with os.NewFile costs one fcntl instead.
func openSource(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == unix.EINTR {
			continue // a signal while waiting for a FIFO's writer
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// writable reports whether the effective user may write path, as the
// kernel decides: nil, or EACCES, EROFS, ETXTBSY, or EPERM for an immutable
// file. x/sys/unix's Faccessat with AT_EACCESS takes an EPERM from
// faccessat2(2) for a seccomp filter that does not know the call and
// emulates the check, and its emulation lets root write anything, immutable
// files included; so an EPERM is asked again of plain faccessat(2), which
// every filter allows, when it checks the same IDs.
func writable(path string) error {
	err := ignoringEINTR(func() error { return unix.Faccessat2(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) })
	switch {
	case err == unix.ENOSYS:
		// Before Linux 5.8: x/sys's emulation is all there is.
		return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
	case err == unix.EPERM && os.Getuid() == os.Geteuid() && os.Getgid() == os.Getegid():
		return ignoringEINTR(func() error { return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, 0) })
	}
	return err
}

// activeSwapFile reports whether fi is a swap file in use (/proc/swaps,
// read once per run, and only when an existing regular DEST is replaced).
func (a *app) activeSwapFile(fi os.FileInfo) bool {
	a.swapOnce.Do(func() { a.swapFiles = readSwapFiles() })
	return a.swapFiles[idOf(fi)]
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
		fi, err := os.Stat(unescapeOctal(f[0]))
		if err != nil {
			continue
		}
		if m == nil {
			m = make(map[devIno]bool)
		}
		m[idOf(fi)] = true
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

// openNoPoller opens path read-only (with flags added) by open(2) and wraps
// the blocking descriptor with os.NewFile, which reads it directly. os.Open
// would register a directory or a /proc file with the runtime poller, and
// the first such file of a run sets the poller up (epoll_create1, an
// eventfd, epoll_ctl) for nothing.
func openNoPoller(path string, flags int) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|flags, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
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

// ignoringEINTR calls f until it fails with something other than EINTR: on
// FUSE and NFS a signal can cut a call short, and such a call did nothing.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// confirm asks on stderr and reads the answer from stdin (-i).
func (a *app) confirm(question string) bool {
	a.out.Prompt(question)
	line, _ := a.stdin.ReadString('\n')
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "y") || strings.HasPrefix(line, "Y")
}

// newMode is the permission bits of a new file (or directory) without
// --preserve=mode: SOURCE's minus the umask, as cp; with
// --no-preserve=mode, the default ones (0666, directories 0777) minus the
// umask.
func (a *app) newMode(srcMode uint32, dir bool) uint32 {
	if a.opts.NoPreserveMode {
		if dir {
			return 0o777 &^ a.umask
		}
		return 0o666 &^ a.umask
	}
	return srcMode & 0o777 &^ a.umask
}

// noData is the copy engine of --attributes-only: it copies nothing.
func noData(dst, src *os.File, o copier.Options) (copier.Result, error) {
	return copier.Result{}, nil
}

// attributesOnly gives an existing regular DEST the attributes asked for
// and leaves its data (--attributes-only): cp opens it without O_TRUNC and
// writes nothing.
func (a *app) attributesOnly(r *record, srcF *os.File, sfi os.FileInfo, path, dst string) bool {
	// path is DEST, or the file a symlink DEST leads to: opened in its
	// directory without following a link that replaced it since.
	dfd, base, err := dirOf(path)
	if err == nil {
		defer unix.Close(dfd)
		var fd int
		fd, err = unix.Openat(dfd, base, unix.O_WRONLY|unix.O_NOCTTY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			defer unix.Close(fd)
			return a.attributesOnlyFd(r, srcF, sfi, fd, dst)
		}
	}
	r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(unwrapPath(err))))
	return false
}

func (a *app) attributesOnlyFd(r *record, srcF *os.File, sfi os.FileInfo, fd int, dst string) bool {
	if a.opts.Preserve.Any() {
		if err := a.preserve(target{fd: fd, path: dst}, rawStat(sfi), int(srcF.Fd()), "", dst); err != nil {
			r.fail(err.Error())
			return false
		}
	}
	return true
}
