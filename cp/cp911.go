package cp

// The parts of cp 9.11's command line beyond plain copying: links instead
// of copies (-l, -s), backups of the DEST about to be replaced (-b, -S),
// the source's parent directories under the target (--parents), and the
// SELinux options on a system fastcp treats as without SELinux.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// CheckUsage finds the usage errors that depend on the file system:
// --parents needs a directory to copy into.
func CheckUsage(o *flags.Options) *flags.UsageError {
	if !o.Parents || o.TargetDir != "" || o.Benchmark {
		return nil
	}
	last := o.Operands[len(o.Operands)-1]
	if fi, err := os.Stat(last); o.NoTargetDir || err != nil || !fi.IsDir() {
		return &flags.UsageError{Msg: "with --parents, the destination must be a directory"}
	}
	return nil
}

// selinuxChecks does what cp does with -Z, --context and
// --preserve=context on a system without SELinux, which is what fastcp
// is to them: it sets no security context. It reports whether the run
// must stop.
func (a *app) selinuxChecks() bool {
	o := a.opts
	if !o.PreserveContext && !o.SetContext {
		return false
	}
	if selinuxEnabled() {
		// cp would set or copy contexts here; fastcp cannot, and says so.
		if o.PreserveContext {
			a.seq.emit(true, "cannot preserve security context: fastcp does not copy SELinux contexts")
			return true
		}
		a.out.Warnf("ignoring --context: fastcp does not set SELinux contexts")
		return false
	}
	if o.PreserveContext {
		a.seq.emit(true, "cannot preserve security context without an SELinux-enabled kernel")
		return true
	}
	if o.ContextArg {
		a.out.Warnf("ignoring --context; it requires an SELinux-enabled kernel")
	}
	return false
}

// selinuxEnabled reports whether the kernel runs SELinux (selinuxfs is
// mounted, as libselinux's is_selinux_enabled looks); a variable for the
// unit tests of a system with SELinux.
var selinuxEnabled = func() bool {
	var st unix.Stat_t
	return unix.Stat("/sys/fs/selinux/enforce", &st) == nil
}

// dirOf opens the directory an entry is in, for the *at calls that make
// and replace it.
func dirOf(path string) (fd int, base string, err error) {
	path = strings.TrimRight(path, "/")
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, base, nil
}

// backupName returns the name the backup of DEST (which exists) gets, for
// an operand named by path (cp --force --backup f f); backupNameIn does the
// work in the directory it opens.
func (a *app) backupName(dst string) string {
	fd, base, err := dirOf(dst)
	if err != nil {
		d := &dir{fd: -1, err: err}
		return a.backupNameIn(d, base, dst)
	}
	d := newDir(fd, filepath.Dir(strings.TrimRight(dst, "/")))
	defer d.release()
	return a.backupNameIn(d, base, dst)
}

// backupNameIn returns the name the backup of DEST (name in d, which
// exists; dst as messages name it) gets, as gnulib's backupfile: DEST.~N~
// one past the highest existing number in d (numbered, or existing when
// DEST has numbered backups), else DEST with the suffix. The backup is in
// DEST's directory: a suffix has no slash.
func (a *app) backupNameIn(d *dir, name, dst string) string {
	o := a.opts
	dst = strings.TrimRight(dst, "/")
	simple := dst + o.BackupSuffix
	if o.Backup == flags.BackupSimple {
		return simple
	}
	base := strings.TrimRight(name, "/")
	highest := 0
	var names []string
	if d.err == nil {
		names, _ = d.names()
	}
	for _, n := range names {
		num, ok := strings.CutPrefix(n, base+".~")
		if !ok {
			continue
		}
		num, ok = strings.CutSuffix(num, "~")
		if !ok || num == "" || num[0] == '0' || strings.Trim(num, "0123456789") != "" {
			continue
		}
		if v, err := strconv.Atoi(num); err == nil && v > highest {
			highest = v
		}
	}
	if o.Backup == flags.BackupExisting && highest == 0 {
		return simple
	}
	return fmt.Sprintf("%s.~%d~", dst, highest+1)
}

// backupIsSource reports whether making the simple backup of DEST (name
// in d) would remove SOURCE (cp --backup=simple a~ a): cp refuses such a
// copy.
func (a *app) backupIsSource(sst *unix.Stat_t, d *dir, name string) bool {
	if a.opts.Backup == flags.BackupNumbered {
		return false
	}
	st, err := d.stat(strings.TrimRight(name, "/")+a.opts.BackupSuffix, false)
	return err == nil && idOf(&st) == idOf(sst)
}

// makeBackup gives the existing DEST (name in d) its backup name (backup,
// as messages name it, in the same directory) just before the new DEST
// replaces it: a hard link, so that DEST never disappears (cp renames
// DEST away and creates a new one); where the filesystem has no hard
// links, a rename. undo takes the backup back if the new DEST then fails.
func (a *app) makeBackup(r *record, d *dir, name, backup string) (undo func(), err error) {
	if d.err != nil {
		return nil, d.err
	}
	d.hold()
	dfd, base := d.fd, strings.TrimRight(name, "/")
	bbase := filepath.Base(strings.TrimRight(backup, "/"))
	err = unix.Linkat(dfd, base, dfd, bbase, 0)
	if errors.Is(err, unix.EEXIST) {
		// An older backup of that name is replaced, as cp's rename does:
		// a link under a temporary name renamed over it.
		err = a.replaceEntry(r, dfd, filepath.Dir(strings.TrimRight(backup, "/")), bbase, backup, func(e durability.Entry) error {
			return unix.Linkat(dfd, base, e.Dir, e.Name, 0)
		}, nil)
		err = unwrapPath(err)
	}
	switch {
	case err == nil:
		return func() { unix.Unlinkat(dfd, bbase, 0); d.release() }, nil
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EMLINK), errors.Is(err, unix.EOPNOTSUPP):
		if err = unix.Renameat(dfd, base, dfd, bbase); err == nil {
			return func() { unix.Renameat(dfd, bbase, dfd, base); d.release() }, nil
		}
	}
	d.release()
	return nil, err
}

// backupStep makes DEST's backup if one is due (ex.backup != ""),
// failing the entry as cp words it.
func (a *app) backupStep(r *record, ex *destInfo, dst string) (undo func(), ok bool) {
	if ex.backup == "" {
		return func() {}, true
	}
	undo, err := a.makeBackup(r, ex.entryDir, ex.entryName, ex.backup)
	if err != nil {
		r.fail(fmt.Sprintf("cannot backup %s: %s", quote(dst), errText(err)))
		return nil, false
	}
	return undo, true
}

// copyingLine is -v's line, naming the backup when one is made.
func copyingLine(src, dst, backup string) string {
	if backup == "" {
		return output.Copying(src, dst)
	}
	return fmt.Sprintf("%s (backup: %s)", output.Copying(src, dst), quote(backup))
}

// quotef is gnulib's quotef: the name as it is when it needs no quoting
// for a shell, else quoted.
func quotef(name string) string {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("%+,-./:=@_^", c)) {
			return quote(name)
		}
	}
	if name == "" {
		return quote(name)
	}
	return name
}

// linkEntry makes DEST (name in p) a hard link (-l) or a symbolic link
// (-s) to SOURCE (e) instead of a copy. follow says whether a symbolic
// link SOURCE is followed for a hard link.
func (a *app) linkEntry(r *record, p *dirCopy, e *entry, name, src, dst string, follow bool) {
	o := a.opts
	ex, ok := a.checkDest(r, p.dst, name, entryAt{p.src, e.name}, &e.st, src, dst, false)
	if !ok {
		return
	}
	what := "cannot create hard link"
	if o.Symlink {
		what = "cannot create symbolic link"
		if !filepath.IsAbs(src) && !inCurrentDir(dst) {
			r.fail(fmt.Sprintf("%s: can make relative symbolic links only in current directory", quotef(dst)))
			return
		}
	}
	// A link replaces DEST by a rename (gnulib's force_linkat), so only a
	// backup moves DEST away first.
	if !o.Symlink && a.sourceThroughDest(src, entryAt{p.src, e.name}, &e.st, entryAt{p.dst, name}, ex.st, ex.backup != "") {
		r.fail(fmt.Sprintf("%s %s to %s: %s", what, quote(dst), quote(src), errText(unix.ENOENT)))
		return
	}
	if o.Verbose {
		r.out(copyingLine(src, dst, ex.backup))
	}
	linkFlags := 0
	if follow {
		linkFlags = unix.AT_SYMLINK_FOLLOW
	}
	makeLink := func(dfd int, name string) error {
		if o.Symlink {
			return unix.Symlinkat(src, dfd, name)
		}
		return unix.Linkat(p.src.fd, e.name, dfd, name, linkFlags)
	}
	fail := func(err error) {
		r.fail(fmt.Sprintf("%s %s to %s: %s", what, quote(dst), quote(src), errText(err)))
	}
	if p.dst.err != nil {
		fail(unwrapPath(p.dst.err))
		return
	}
	dfd, base := p.dst.fd, strings.TrimRight(name, "/")
	if ex.st == nil || !(a.unlinksFirst(&e.st, ex.st) || ex.backup != "") {
		// A DEST that exists is an error (EEXIST), as with cp.
		if err := makeLink(dfd, base); err != nil {
			fail(err)
			return
		}
		p.dirSync.Added()
		return
	}
	undo, ok := a.backupStep(r, &ex, dst)
	if !ok {
		return
	}
	// The link is made under a temporary name and renamed over DEST.
	err := a.replaceEntry(r, p.dst.fd, p.dst.path, base, dst, func(ent durability.Entry) error {
		if o.Symlink {
			return unix.Symlinkat(src, ent.Dir, ent.Name)
		}
		return unix.Linkat(p.src.fd, e.name, ent.Dir, ent.Name, linkFlags)
	}, nil)
	if err != nil {
		undo()
		fail(unwrapPath(err))
		return
	}
	p.dirSync.Added()
}

// unwrapPath is the errno inside a *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inCurrentDir reports whether dst's directory is the current one (cp -s
// makes relative links only there).
func inCurrentDir(dst string) bool {
	dir := filepath.Dir(strings.TrimRight(dst, "/"))
	if dir == "." {
		return true
	}
	d, err1 := os.Stat(dir)
	dot, err2 := os.Stat(".")
	return err1 == nil && err2 == nil && os.SameFile(d, dot)
}

// parentsDest makes the directories --parents puts above SOURCE under
// target (target/a and target/a/b for a/b/f), and returns DEST. Each one
// is looked at and made in the one above it, which the walk holds open.
func (a *app) parentsDest(src, target string) (string, bool) {
	rel := strings.TrimLeft(src, "/")
	dst := joinPath(target, rel)
	comps := strings.Split(strings.TrimRight(rel, "/"), "/")
	srcDir, dstDir := "", strings.TrimRight(target, "/")
	if strings.HasPrefix(src, "/") {
		srcDir = "/"
	}
	top := dstDir
	if top == "" {
		top = "/"
	}
	cur := openOperandDir(top)
	defer func() { cur.release() }()
	for _, c := range comps[:len(comps)-1] {
		if c == "" {
			continue
		}
		if srcDir == "" || srcDir == "/" {
			srcDir += c
		} else {
			srcDir += "/" + c
		}
		dstDir += "/" + c
		r := a.seq.open()
		next, ok := a.parentDir(r, srcDir, cur, c, dstDir)
		a.seq.close(r)
		if !ok {
			return "", false
		}
		cur.release()
		cur = next
	}
	return dst, true
}

// openDirIn opens the directory name in d (following a symbolic link only
// when follow), O_PATH when it cannot be read, as for an operand's DEST
// directory.
func openDirIn(d *dir, name, shown string, follow bool) (*dir, error) {
	flags := unix.O_DIRECTORY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOCTTY|flags, 0)
	if err == unix.EACCES {
		fd, err = openat(d.fd, name, unix.O_PATH|flags, 0)
	}
	if err != nil {
		return nil, err
	}
	return newDir(fd, shown), nil
}

// parentDir makes one directory of --parents, base in the directory in
// (dstDir as messages name it), as a copy of srcDir whose attributes are
// set at the end, like the directories of -r. It returns the directory,
// open.
func (a *app) parentDir(r *record, srcDir string, in *dir, base, dstDir string) (*dir, bool) {
	var sst unix.Stat_t
	err := unix.Stat(srcDir, &sst)
	if err == nil && !isDir(&sst) {
		err = unix.ENOTDIR
	}
	if err != nil {
		r.fail(fmt.Sprintf("failed to get attributes of %s: %s", quote(srcDir), errText(unwrapPath(err))))
		return nil, false
	}
	// fstatat following, as cp's stat: a symlink to a directory in DEST
	// will do.
	st, err := in.stat(base, true)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		d, err := openDirIn(in, base, dstDir, true)
		if err != nil {
			r.fail(fmt.Sprintf("cannot open directory %s: %s", quote(dstDir), errText(err)))
			return nil, false
		}
		if a.opts.Preserve.Any() {
			d.hold()
			in.hold()
			a.parentDirs = append(a.parentDirs, parentDone{src: srcDir, dst: dstDir, st: sst, dir: d, in: in})
		}
		return d, true
	case err == nil:
		r.fail(fmt.Sprintf("%s exists but is not a directory", quote(dstDir)))
		return nil, false
	case err != unix.ENOENT:
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dstDir), errText(err)))
		return nil, false
	}
	if err := in.mkdir(base); err != nil {
		r.fail(fmt.Sprintf("cannot make directory %s: %s", quote(dstDir), errText(err)))
		return nil, false
	}
	d, err := openDirIn(in, base, dstDir, false)
	if err != nil {
		r.fail(fmt.Sprintf("cannot open directory %s: %s", quote(dstDir), errText(err)))
		return nil, false
	}
	a.session.DirCreated(d.fd)
	d.hold()
	in.hold()
	a.parentDirs = append(a.parentDirs, parentDone{src: srcDir, dst: dstDir, st: sst, created: true, dir: d, in: in})
	if a.opts.Verbose {
		r.out(fmt.Sprintf("%s -> %s", srcDir, dstDir))
	}
	return d, true
}

// derefNever is cp's x->dereference == DEREF_NEVER: symbolic links in
// SOURCE are never followed (-P, -d, -a, and -r without -L, -H or -l).
func (a *app) derefNever() bool {
	o := a.opts
	return o.Deref == flags.DerefNever || o.Deref == flags.DerefDefault && o.Recursive && !o.Link
}

func isLink(st *unix.Stat_t) bool { return isSymlink(st) }

// entryAt is an entry by its name in a directory the walk holds open:
// for an operand, the operand as given in cwd.
type entryAt struct {
	d    *dir
	name string
}

// stat is fstatat(2) of the entry, following a final symbolic link or not.
func (e entryAt) stat(follow bool) (*unix.Stat_t, error) {
	st, err := e.d.stat(strings.TrimRight(e.name, "/"), follow)
	return &st, err
}

// parent is the identity of the directory the entry is in: the open
// directory itself, or for a name with directories (an operand), the one
// they lead to from it.
func (e entryAt) parent() (devIno, bool) {
	name := strings.TrimRight(e.name, "/")
	if e.d.err != nil {
		return devIno{}, false
	}
	if e.d != cwd && !strings.Contains(name, "/") {
		var st unix.Stat_t
		if err := unix.Fstat(e.d.fd, &st); err != nil {
			return devIno{}, false
		}
		return idOf(&st), true
	}
	st, err := e.d.stat(filepath.Dir(name), true)
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

// sameFileOK is cp's same_file_ok: whether copying src (ssb, as the walk
// stat'ed it) over an existing dst (dsb, stat'ed as cp does: not
// following a symlink DEST unless it is written through) may go on
// although both may be one file, and whether the entry is then done
// already (done: cp -l f f, nothing to do).
func (a *app) sameFileOK(src entryAt, ssb *unix.Stat_t, dst entryAt, dsb *unix.Stat_t) (ok, done bool) {
	o := a.opts
	backup := o.Backup != flags.BackupNone
	same := idOf(ssb) == idOf(dsb)
	if same && o.Link {
		return true, true
	}
	var srcLink, dstLink *unix.Stat_t
	var sameLink bool
	if a.derefNever() {
		sameLink = same
		// Two symlinks are usually fine when they are distinct entries.
		if isLink(ssb) && isLink(dsb) {
			sn := sameName(src, dst)
			if !sn {
				if backup {
					return true, false
				}
				if sameLink {
					return true, true // hard links of one symlink
				}
			}
			return !sn, false
		}
		srcLink, dstLink = ssb, dsb
	} else {
		if !same {
			return true, false
		}
		dl, err1 := dst.stat(false)
		sl, err2 := src.stat(false)
		if err1 != nil || err2 != nil {
			return true, false
		}
		srcLink, dstLink = sl, dl
		sameLink = idOf(sl) == idOf(dl)
		// Two symlinks to one file: fine when DEST is removed first.
		if isLink(sl) && isLink(dl) && o.RemoveDestination {
			return true, false
		}
	}
	if backup {
		// The backup keeps a copy, unless SOURCE and DEST are one entry.
		if !sameLink {
			// Backing up DEST would leave a SOURCE symlink dangling.
			if !a.derefNever() && isLink(srcLink) && !isLink(dstLink) {
				return false, false
			}
			return true, false
		}
		return !sameName(src, dst), false
	}
	if !isLink(srcLink) && !isLink(dstLink) {
		if idOf(srcLink) != idOf(dstLink) {
			return true, false
		}
		if o.Link {
			return true, true
		}
		// Two names of one file: removing DEST first leaves SOURCE.
		if o.RemoveDestination && !o.Symlink && !sameName(src, dst) {
			return true, false
		}
	}
	// A DEST symlink can be made anew, or removed first.
	if isLink(dstLink) && (o.Symlink || o.RemoveDestination) {
		return true, false
	}
	if a.derefNever() {
		ts, td := srcLink, dstLink
		var err error
		if isLink(srcLink) {
			if ts, err = src.stat(true); err != nil {
				return true, false
			}
		}
		if isLink(dstLink) {
			if td, err = dst.stat(true); err != nil {
				return true, false
			}
		}
		if idOf(ts) != idOf(td) {
			return true, false
		}
		if o.Link {
			return true, !isLink(dstLink)
		}
	}
	return false, false
}

// unlinksFirst is cp's rule for removing an existing DEST before making
// the new one (rather than writing into it, or failing on it): with
// --remove-destination, and when copying data, for a DEST with several
// links under --preserve=links, and for a SOURCE that is not a regular
// file when symbolic links are not followed.
func (a *app) unlinksFirst(ssb, dsb *unix.Stat_t) bool {
	o := a.opts
	if o.RemoveDestination {
		return true
	}
	if o.AttributesOnly || isDir(dsb) {
		return false
	}
	return o.HardLinks && dsb.Nlink > 1 || a.derefNever() && !isRegular(ssb)
}

// sourceThroughDest reports whether SOURCE, followed as a symbolic link,
// leads through the entry DEST is (cp -b sym sym, cp --remove-destination
// sym2 sym with sym2 -> sym): through DEST's entry, not merely the same
// symlink inode under another name, when DEST is moved away first (removes):
// cp renames or removes DEST and then finds no SOURCE (and puts a renamed
// DEST back); fastcp fails the same way before touching anything.
//
// SOURCE and DEST are looked at in the directories the walk holds; the
// links SOURCE leads to after that are followed by name, as the kernel
// would.
func (a *app) sourceThroughDest(src string, from entryAt, sst *unix.Stat_t, to entryAt, dst0 *unix.Stat_t, removes bool) bool {
	if dst0 == nil || isLink(sst) || !removes {
		return false
	}
	dl, err := to.stat(false)
	if err != nil || !isLink(dl) {
		return false
	}
	p := src
	for i := range 40 {
		var pl *unix.Stat_t
		var t string
		if i == 0 {
			pl, err = from.stat(false)
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
			t, err = readlinkat(from.d.fd, strings.TrimRight(from.name, "/"))
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

// parentDone is a directory --parents made or went through, whose
// attributes are set once everything is copied: dir, held open, in the
// directory in.
type parentDone struct {
	src, dst string
	st       unix.Stat_t
	created  bool
	dir, in  *dir
}

// finishParents gives the directories of --parents their attributes,
// deepest first, and reports a new one to durability (--sync).
func (a *app) finishParents() {
	for i := len(a.parentDirs) - 1; i >= 0; i-- {
		d := a.parentDirs[i]
		r := a.seq.open()
		dc := &dirCopy{src: cwd, dst: d.dir, e: &entry{st: d.st}, srcPath: d.src, dstPath: d.dst, created: d.created}
		if err := a.setDirAttrs(dc); err != nil {
			r.fail(err.Error())
		}
		var in durability.DirSync
		if d.created {
			in.Added()
		}
		if err := in.Finished(a.opts.Sync, d.in.fd, false); err != nil {
			r.fail(fmt.Sprintf("fsync failed for %s: %s", quote(filepath.Dir(d.dst)), errText(err)))
		}
		d.dir.release()
		d.in.release()
		a.seq.close(r)
	}
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
