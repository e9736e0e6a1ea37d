package cp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fastcp/durability"
	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// destInfo is DEST as found before anything is written.
type destInfo struct {
	st   *unix.Stat_t // nil: DEST does not exist; else DEST, or the file a symlink DEST points to
	path string       // where to write: DEST, or that file; a path pinned to DEST's directory
	// in and name: path is name (an entry, or a relative link target) in
	// the open directory in, which durability then works relative to; in
	// is nil when path is an absolute or resolved link target.
	in   *dir
	name string
	// shownDir is the directory the temporary file goes into, as
	// messages name it.
	shownDir string
	act      action
	writeErr error  // why an existing regular DEST cannot be written, or nil
	backup   string // the name DEST's backup gets (-b), "" for none
	// entryDir and entryName: DEST's own entry, which a backup renames
	// or links (a symbolic link DEST itself, not the file it points to).
	entryDir  *dir
	entryName string
	// kept: DEST is newer and -u keeps it (for --preserve=links, the
	// copy of its source inode is then DEST as it is).
	kept bool
	// absent: DEST did not exist (the copy makes it anew, with O_EXCL's
	// rule should one appear meanwhile).
	absent bool
}

// checkDest looks at DEST (name in d) and applies cp's rules (decide) before
// anything is opened for writing. data says whether the copy writes data
// (a symbolic link DEST is then written through) or makes an entry (a link
// or a special file, renamed over DEST). It returns ok=false when the entry
// is done (skipped or failed).
func (a *app) checkDest(r *record, d *dir, name string, from entryAt, sst *unix.Stat_t, src, dst string, data bool) (destInfo, bool) {
	return a.checkDestUpdate(r, d, name, from, sst, src, dst, data, a.opts.Update)
}

// checkDestUpdate is checkDest with -u given or not: a further name of an
// inode already copied is linked whatever -u says, as with cp.
func (a *app) checkDestUpdate(r *record, d *dir, name string, from entryAt, sst *unix.Stat_t, src, dst string, data, update bool) (destInfo, bool) {
	o := a.opts
	ex := destInfo{shownDir: filepath.Dir(dst), entryDir: d, entryName: name}
	if d.err == nil {
		ex.path, ex.in, ex.name = d.at(name), d, name
	}
	lst, err := d.stat(name, false)
	facts := destFacts{}
	if err == nil {
		facts.justCreated = a.wasCreated(idOf(&lst))
	}
	// With --remove-destination or a backup, cp removes (or renames) a
	// symlink DEST itself.
	through := data && isSymlink(&lst) && !o.RemoveDestination && o.Backup == flags.BackupNone
	switch {
	case err == nil && through && facts.justCreated:
		// Not followed at all: it is this run's own link.
		ex.st = &lst
		facts.throughLink = true
	case err == nil && through:
		// cp writes through a symlink DEST: the file it points to is
		// replaced, the link stays.
		st, err := d.stat(name, true)
		if errors.Is(err, unix.ENOENT) && o.PosixlyCorrect {
			// POSIX: the file the dangling link names is created.
			target, lerr := readlinkat(d.fd, name)
			if lerr == nil {
				ex.path, ex.in = target, nil
				if !filepath.IsAbs(target) {
					ex.path, ex.in, ex.name = d.at(target), d, target
					target = filepath.Join(filepath.Dir(dst), target)
				}
				// A new file, as for cp: -n and -i do not hold it back.
				ex.shownDir, ex.act = filepath.Dir(target), actNew
				return ex, true
			}
			err = lerr
		}
		if errors.Is(err, unix.ENOENT) {
			r.fail(fmt.Sprintf("not writing through dangling symlink %s", quote(dst)))
			return ex, false
		}
		if errors.Is(err, unix.ELOOP) && o.Force {
			// A symlink loop counts as an existing DEST that cannot be
			// opened: -f replaces the link (cp 8.30 and later).
			ex.act = actNew
			return ex, true
		}
		if err == nil && !inPlaceNode(&st) {
			ex.path, err = filepath.EvalSymlinks(ex.path)
			ex.in = nil
			ex.shownDir = filepath.Dir(ex.path)
		}
		if err != nil {
			r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
			return ex, false
		}
		ex.st = &st
		facts.throughLink = true
	case err == nil:
		ex.st = &lst
	case errors.Is(err, unix.ENOENT):
		if strings.HasSuffix(dst, "/") {
			r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(unix.ENOTDIR)))
			return ex, false
		}
		ex.act, ex.absent = actNew, true
		return ex, true
	default:
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
		return ex, false
	}
	if ok, done := a.sameFileOK(from, sst, entryAt{d, name}, ex.st); !ok {
		r.fail(fmt.Sprintf("%s and %s are the same file", quote(src), quote(dst)))
		return ex, false
	} else if done {
		return ex, false
	}
	facts.kind = durability.KindOf(ex.st, d.pseudo())
	facts.notNewer = !timeAfter(sst.Mtim, ex.st.Mtim)
	if facts.kind == durability.KindRegular && data && !o.InPlace && !o.RemoveDestination && o.Backup == flags.BackupNone && !o.AttributesOnly {
		// cp opens an existing DEST for writing: without write
		// permission it fails, unless -f lets it remove DEST and start
		// anew. An immutable DEST (EPERM) can be neither.
		if ex.in != nil {
			ex.writeErr = writable(ex.in.fd, ex.name)
		} else {
			ex.writeErr = writable(unix.AT_FDCWD, ex.path)
		}
		facts.unwritable = ex.writeErr != nil
		facts.immutable = errors.Is(ex.writeErr, unix.EPERM)
	}
	resumeTree := o.Resume && o.Recursive
	facts.complete = resumeTree && data && completeCopy(sst, ex.st, o.Preserve.Timestamps)
	dec := decide(facts, decideOpts{
		noClobber: o.NoClobber, update: update, interactive: o.Interactive, force: o.Force,
		inPlace: o.InPlace, removeDestination: o.RemoveDestination, data: data,
		noneFail: o.NoneFail, backup: o.Backup != flags.BackupNone, resumeTree: resumeTree,
	})
	if dec.ask && !a.confirm(a.overwriteQuestion(ex, facts, dst)) {
		r.failQuietly() // cp 9.11: a "no" fails the entry
		a.debugSkipped(r, dst)
		return ex, false
	}
	ex.act = dec.act
	switch dec.act {
	case actSkip:
		ex.kept = update && facts.notNewer && !o.NoClobber
		a.debugSkipped(r, dst)
		return ex, false
	case actSkipComplete:
		if o.Debug {
			r.out(fmt.Sprintf("skipped %s: already a complete copy (--resume)", quote(dst)))
		}
		if a.progress != nil {
			a.progress.Add(sst.Size)
		}
		ex.kept = true
		return ex, false
	case actFailIsDir:
		r.fail(fmt.Sprintf("cannot overwrite directory %s with non-directory", quote(dst)))
	case actFailUnwritable:
		r.fail(fmt.Sprintf("cannot create regular file %s: %s", quote(dst), errText(ex.writeErr)))
	case actFailImmutable:
		r.fail(fmt.Sprintf("cannot remove %s: %s", quote(dst), errText(ex.writeErr)))
	case actFailJustCreated:
		r.fail(fmt.Sprintf("will not overwrite just-created %s with %s", quote(dst), quote(src)))
	case actFailThroughLink:
		r.fail(fmt.Sprintf("will not copy %s through just-created symlink %s", quote(src), quote(dst)))
	case actFailNoneFail:
		r.fail(fmt.Sprintf("not replacing %s", quote(dst)))
	default:
		if o.Backup == flags.BackupNone {
			return ex, true
		}
		if a.backupIsSource(sst, d, name) {
			r.fail(fmt.Sprintf("backing up %s might destroy source;  %s not copied", quote(dst), quote(src)))
			return ex, false
		}
		ex.backup = a.backupNameIn(d, name, dst)
		return ex, true
	}
	return ex, false
}

// debugSkipped is --debug's line for an existing DEST left alone (-n,
// --update, a "no" to -i), as cp prints it.
func (a *app) debugSkipped(r *record, dst string) {
	if a.opts.Debug {
		r.out(fmt.Sprintf("skipped %s", quote(dst)))
	}
}

// inPlaceNode reports whether st, reached through a symbolic link DEST,
// is a node a copy writes into (a pipe, a terminal, a device, a socket):
// the link is then opened as it is, never resolved by name. /dev/stdout,
// /dev/fd/N and /proc/self/fd/N are magic links whose target of a pipe
// reads "pipe:[N]", which names no file.
func inPlaceNode(st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		return false
	}
	return true
}

func timeAfter(a, b unix.Timespec) bool {
	return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec
}

// overwriteQuestion is cp's -i prompt: plain for a writable DEST, naming
// the mode of one the user cannot write.
func (a *app) overwriteQuestion(ex destInfo, f destFacts, dst string) string {
	if f.unwritable {
		mode := ex.st.Mode & 0o7777
		perms := os.FileMode(mode).Perm().String()[1:]
		if a.opts.Force {
			return fmt.Sprintf("replace %s, overriding mode %04o (%s)? ", quote(dst), mode, perms)
		}
		return fmt.Sprintf("unwritable %s (mode %04o, %s); try anyway? ", quote(dst), mode, perms)
	}
	return fmt.Sprintf("overwrite %s? ", quote(dst))
}

// writable reports whether the effective user may write name in dirfd, as the
// kernel decides: nil, or EACCES, EROFS, ETXTBSY, or EPERM for an immutable
// file. x/sys/unix's Faccessat with AT_EACCESS takes an EPERM from
// faccessat2(2) for a seccomp filter that does not know the call and
// emulates the check, and its emulation lets root write anything, immutable
// files included; so an EPERM is asked again of plain faccessat(2), which
// every filter allows, when it checks the same IDs.
func writable(dirfd int, name string) error {
	err := ignoringEINTR(func() error { return unix.Faccessat2(dirfd, name, unix.W_OK, unix.AT_EACCESS) })
	switch {
	case err == unix.ENOSYS:
		// Before Linux 5.8: x/sys's emulation is all there is.
		return unix.Faccessat(dirfd, name, unix.W_OK, unix.AT_EACCESS)
	case err == unix.EPERM && os.Getuid() == os.Geteuid() && os.Getgid() == os.Getegid():
		return ignoringEINTR(func() error { return unix.Faccessat(dirfd, name, unix.W_OK, 0) })
	}
	return err
}

// confirm asks on stderr and reads the answer from stdin (-i).
func (a *app) confirm(question string) bool {
	a.out.Prompt(question)
	line, _ := a.stdin.ReadString('\n')
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "y") || strings.HasPrefix(line, "Y")
}
