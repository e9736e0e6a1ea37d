// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// destInfo is DEST as found before anything is written.
type destInfo struct {
	st *unix.Stat_t // nil: DEST does not exist; else DEST, or the file a symlink DEST points to
	// Where to write: DEST, or the file a symbolic link DEST points to.
	// in and name: name (an entry, or a relative link target) in the
	// open directory in, which durability then works relative to, and
	// path is "" (where makes the path pinned to in); in is nil when
	// path is an absolute or resolved link target.
	path string
	in   *dir
	name string
	// shownDir is the directory the temporary file goes into, as
	// messages name it.
	shownDir string
	act      action
	// why: why an existing regular DEST cannot be written, or why a
	// symbolic link DEST cannot be followed; nil for neither.
	why    error
	backup string // the name DEST's backup gets (-b), "" for none
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

// where is the path of the file to write: ex.path, or name in the open
// directory in as a path pinned to it (made when asked for: most copies
// work relative to in and never need it).
func (ex *destInfo) where() string {
	if ex.in != nil {
		return ex.in.At(ex.name)
	}
	return ex.path
}

// checkDest looks at DEST and applies cp's rules (decide) before anything
// is opened for writing. data says whether the copy writes data (a
// symbolic link DEST is then written through) or makes an entry (a link or
// a special file, renamed over DEST). It returns ok=false when the entry
// is done (skipped or failed).
func (j *job) checkDest(data bool) (destInfo, bool) {
	return j.checkDestUpdate(data, j.a.opts.Update == flags.UpdateOlder, false)
}

// checkDestUpdate is checkDest with -u given or not: a further name of an
// inode already copied is linked whatever -u says, as with cp. newLink:
// the copy makes a symbolic link.
func (j *job) checkDestUpdate(data, update, newLink bool) (destInfo, bool) {
	o := j.a.opts
	do := decideOpts{
		noClobber: o.Update == flags.UpdateNone, update: update, interactive: o.Interactive, force: o.Force,
		inPlace: o.InPlace, removeDestination: o.RemoveDestination, data: data,
		noneFail: o.Update == flags.UpdateNoneFail, backup: j.a.backups(),
		resumeTree: o.Resume && o.Recursive, posixlyCorrect: o.PosixlyCorrect, attributesOnly: o.AttributesOnly,
	}
	ex, facts, ok := j.lookAtDest(data)
	if !ok {
		return ex, false
	}
	if ex.st == nil {
		// No DEST, or a symbolic link DEST that cannot be followed:
		// nothing to compare, nothing to ask.
		return j.settle(ex, facts, do)
	}
	if ok, done := sameFileOK(j.a.opts, j.a.backups(), entryAt{j.sd, j.e.name}, &j.e.st, entryAt{j.dd, j.name}, ex.st); !ok {
		j.r.fail(output.SameFile(j.src, j.dst))
		return ex, false
	} else if done {
		return ex, false
	}
	j.learnDest(&ex, &facts, data)
	facts.newLink = newLink
	dec := decide(facts, do)
	if dec.ask && !j.a.confirm(overwriteQuestion(j.a.opts, ex, facts, j.dst)) {
		j.r.failQuietly() // cp 9.11: a "no" fails the entry
		debugSkipped(j.a.opts, j.r, j.dst)
		return ex, false
	}
	ex.act = dec.act
	return j.carryOut(ex, facts, update)
}

// settle applies the rule to DEST absent, or to a symbolic link DEST that
// names no file or loops: a new file (the one a dangling link names, under
// POSIXLY_CORRECT) or the entry fails, before any lookup of DEST's own.
func (j *job) settle(ex destInfo, facts destFacts, o decideOpts) (destInfo, bool) {
	act := decide(facts, o).act
	if j.failDest(ex, act) {
		return ex, false
	}
	ex.act = act
	if facts.dangling && !j.throughDangling(&ex) {
		return ex, false
	}
	return ex, true
}

// lookAtDest finds out what DEST is: absent (ex.st nil), a file or the
// file a link written through points to (ex.st), a link that cannot be
// followed (facts.dangling, facts.loop), or an error (not ok, reported).
func (j *job) lookAtDest(data bool) (ex destInfo, facts destFacts, ok bool) {
	o, d, name := j.a.opts, j.dd, j.name
	ex = destInfo{shownDir: filepath.Dir(j.dst), entryDir: d, entryName: name}
	if d.Err() == nil {
		ex.in, ex.name = d, name
	}
	if j.p.made && j.a.created == nil && d.Err() == nil {
		// A directory this run made is its owner's alone (0700 until
		// its entries are copied), and with one SOURCE no entry of it
		// has this name yet: DEST is absent, without a lookup, as cp
		// takes it for a directory it made. Should a process of the
		// same user have made one meanwhile, the link that makes DEST
		// fails (EEXIST), as for any DEST that appears during a copy.
		ex.absent = true
		return ex, facts, true
	}
	lst, err := d.Stat(name, false)
	if err == nil {
		facts.justCreated = j.a.created.has(idOf(&lst))
	}
	// With --remove-destination or a backup, cp removes (or renames) a
	// symlink DEST itself.
	through := data && isSymlink(&lst) && !o.RemoveDestination && !j.a.backups()
	switch {
	case err == nil && through && facts.justCreated:
		// Not followed at all: it is this run's own link.
		ex.st = &lst
		facts.throughLink = true
	case err == nil && through:
		facts.throughLink = true
		if !j.throughLink(&ex, &facts) {
			return ex, facts, false
		}
	case err == nil:
		ex.st = &lst
	case errors.Is(err, unix.ENOENT):
		if strings.HasSuffix(j.dst, "/") {
			j.r.fail(output.CannotCreateRegularFile(j.dst, unix.ENOTDIR))
			return ex, facts, false
		}
		ex.absent = true
	default:
		j.r.fail(output.CannotStat(j.dst, err))
		return ex, facts, false
	}
	return ex, facts, true
}

// throughLink looks at the file a symlink DEST points to: cp writes
// through it (the file it points to is replaced, the link stays). A link
// that names no file (facts.dangling) or that loops (facts.loop) is left
// to the rule; ok=false: DEST cannot be looked at (reported).
func (j *job) throughLink(ex *destInfo, facts *destFacts) (ok bool) {
	d, name, dst := j.dd, j.name, j.dst
	st, err := d.Stat(name, true)
	switch {
	case errors.Is(err, unix.ENOENT):
		facts.dangling = true
		return true
	case errors.Is(err, unix.ELOOP):
		facts.loop, ex.why = true, err
		return true
	case err == nil && !inPlaceNode(&st):
		ex.path, err = filepath.EvalSymlinks(ex.where())
		ex.in = nil
		ex.shownDir = filepath.Dir(ex.path)
	}
	if err != nil {
		j.r.fail(output.CannotStat(dst, err))
		return false
	}
	ex.st = &st
	return true
}

// throughDangling points ex at the file a dangling symlink DEST names, so
// that the copy creates it (POSIX); ok=false: the link cannot be read
// (reported).
func (j *job) throughDangling(ex *destInfo) (ok bool) {
	d, name, dst := j.dd, j.name, j.dst
	target, err := readlinkat(d.Fd(), name)
	switch {
	case errors.Is(err, unix.ENOENT):
		j.r.fail(output.NotWritingThroughDanglingSymlink(dst))
		return false
	case err != nil:
		j.r.fail(output.CannotStat(dst, err))
		return false
	}
	ex.path, ex.in = target, nil
	if !filepath.IsAbs(target) {
		ex.path, ex.in, ex.name = "", d, target
		target = filepath.Join(filepath.Dir(dst), target)
	}
	ex.shownDir = filepath.Dir(target)
	return true
}

// learnDest gathers the rest of the facts the rule reads about an existing
// DEST: its kind, its age, whether it may be written, whether it is a
// complete copy already.
func (j *job) learnDest(ex *destInfo, facts *destFacts, data bool) {
	o, sst := j.a.opts, &j.e.st
	facts.kind = durability.KindOf(ex.st, j.dd.Pseudo())
	facts.notNewer = !timeAfter(sst.Mtim, ex.st.Mtim)
	if facts.kind == durability.KindRegular && data && !o.InPlace && !o.RemoveDestination && !j.a.backups() && !o.AttributesOnly {
		// cp opens an existing DEST for writing: without write
		// permission it fails, unless -f lets it remove DEST and start
		// anew. An immutable DEST (EPERM) can be neither.
		if ex.in != nil {
			ex.why = writable(ex.in.Fd(), ex.name)
		} else {
			ex.why = writable(unix.AT_FDCWD, ex.where())
		}
		facts.unwritable = ex.why != nil
		facts.immutable = errors.Is(ex.why, unix.EPERM)
	}
	facts.complete = o.Resume && o.Recursive && data && completeCopy(sst, ex.st, o.Preserve.Timestamps)
}

// destFailure is the message of an action that fails the entry, and
// false for one that does not.
func destFailure(act action, src, dst string, why error) (string, bool) {
	switch act {
	case actFailIsDir:
		return output.CannotOverwriteDirectory(dst), true
	case actFailUnwritable:
		return output.CannotCreateRegularFile(dst, why), true
	case actFailImmutable:
		return output.CannotRemove(dst, why), true
	case actFailJustCreated:
		return output.WillNotOverwriteJustCreated(dst, src), true
	case actFailThroughLink:
		return output.WillNotCopyThroughJustCreatedSymlink(src, dst), true
	case actFailNoneFail:
		return output.NotReplacing(dst), true
	case actFailDangling:
		return output.NotWritingThroughDanglingSymlink(dst), true
	case actFailLoop:
		return output.CannotStat(dst, why), true
	case actFailLinkExists:
		return output.EntryError(output.CreateSymbolicLink, dst, unix.EEXIST), true
	case actFailNotDir:
		return output.CannotOverwriteNonDirectory(dst, src), true
	}
	return "", false
}

// failDest fails the entry, with its message, if act is a failure.
func (j *job) failDest(ex destInfo, act action) bool {
	msg, failed := destFailure(act, j.src, j.dst, ex.why)
	if failed {
		j.r.fail(msg)
	}
	return failed
}

// carryOut does what the rule said (ex.act) before the copy: it skips or
// fails the entry, or names DEST's backup; ok says the copy goes on.
func (j *job) carryOut(ex destInfo, facts destFacts, update bool) (destInfo, bool) {
	o := j.a.opts
	if j.failDest(ex, ex.act) {
		return ex, false
	}
	switch ex.act {
	case actSkip:
		ex.kept = update && facts.notNewer && o.Update != flags.UpdateNone
		debugSkipped(j.a.opts, j.r, j.dst)
		return ex, false
	case actSkipComplete:
		if o.Debug {
			j.r.out(output.SkippedComplete(j.dst))
		}
		if j.a.sums != nil {
			j.sumComplete()
		}
		ex.kept = true
		return ex, false
	}
	if !j.a.backups() {
		return ex, true
	}
	if backupIsSource(o, &j.e.st, j.dd, j.name) {
		j.r.fail(output.BackingUpMightDestroySource(j.dst, j.src))
		return ex, false
	}
	ex.backup = backupNameIn(o, j.dd, j.name, j.dst)
	return ex, true
}

// debugSkipped is --debug's line for an existing DEST left alone (-n,
// --update, a "no" to -i), as cp prints it.
func debugSkipped(o *flags.Options, r *record, dst string) {
	if o.Debug {
		r.out(output.Skipped(dst))
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
func overwriteQuestion(o *flags.Options, ex destInfo, f destFacts, dst string) string {
	if f.unwritable {
		mode := ex.st.Mode & 0o7777
		perms := os.FileMode(mode).Perm().String()[1:]
		if o.Force {
			return output.ReplaceOverridingMode(dst, mode, perms)
		}
		return output.UnwritableTryAnyway(dst, mode, perms)
	}
	return output.Overwrite(dst)
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
