package cp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// copyAll resolves the operands into SOURCE -> DEST pairs, as cp does.
func (a *app) copyAll() {
	o := a.opts
	ops := o.Operands
	var sources []string
	var target string
	intoDir := false
	switch {
	case o.TargetDir != "":
		target, sources, intoDir = o.TargetDir, ops, true
		fi, err := os.Stat(target)
		if err == nil && !fi.IsDir() {
			err = unix.ENOTDIR
		}
		if err != nil {
			a.seq.emit(true, fmt.Sprintf("target directory %s: %s", quote(target), errText(err)))
			return
		}
	case o.NoTargetDir:
		sources, target = ops[:1], ops[1]
	default:
		sources, target = ops[:len(ops)-1], ops[len(ops)-1]
		fi, err := os.Stat(target)
		switch {
		case err == nil && fi.IsDir():
			intoDir = true
		case len(sources) > 1 && err != nil:
			a.seq.emit(true, fmt.Sprintf("target %s: %s", quote(target), errText(err)))
			return
		case len(sources) > 1:
			a.seq.emit(true, fmt.Sprintf("target %s: %s", quote(target), errText(unix.ENOTDIR)))
			return
		}
	}
	if len(sources) == 1 && !intoDir && o.Force && o.Backup != flags.BackupNone && sources[0] == target {
		// cp --force --backup f f: the backup is a copy of f, made
		// without backups, and f stays as it is.
		if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
			target = a.backupName(target)
			noBackup := *o
			noBackup.Backup, noBackup.BackupSuffix = flags.BackupNone, ""
			a.opts, o = &noBackup, &noBackup
		}
	}
	for _, src := range sources {
		if o.StripTrailingSlashes && (intoDir || o.Parents) {
			// As cp: only the SOURCEs copied into a directory.
			if t := strings.TrimRight(src, "/"); t != "" {
				src = t
			} else {
				src = "/"
			}
		}
		dst := target
		switch {
		case o.Parents:
			var ok bool
			if dst, ok = a.parentsDest(src, target); !ok {
				continue
			}
		case intoDir:
			dst = joinPath(target, filepath.Base(src))
		}
		a.copyTop(src, dst)
	}
}

// joinPath names an entry inside a directory as cp prints it: "dir/name".
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// statSource stats a SOURCE (top: named on the command line), following
// symbolic links as -L, -P, -H and the default say: cp follows them unless
// copying recursively.
func (a *app) statSource(path string, top bool) (os.FileInfo, error) {
	follow := false
	switch a.opts.Deref {
	case flags.DerefAlways:
		follow = true
	case flags.DerefCommandLine:
		follow = top
	case flags.DerefDefault:
		// cp: -l follows them even when recursive.
		follow = !a.opts.Recursive || a.opts.Link
	}
	if follow {
		return os.Stat(path)
	}
	return os.Lstat(path)
}

func rawStat(fi os.FileInfo) *syscall.Stat_t { return fi.Sys().(*syscall.Stat_t) }

type devIno struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) devIno {
	st := rawStat(fi)
	return devIno{st.Dev, st.Ino}
}

// ancestor is a directory on the path being copied, to refuse cycles
// (symbolic link loops under -L).
type ancestor struct {
	id     devIno
	parent *ancestor
}

func (p *ancestor) has(id devIno) bool {
	for ; p != nil; p = p.parent {
		if p.id == id {
			return true
		}
	}
	return false
}

// copyTop copies one command-line SOURCE to DEST.
func (a *app) copyTop(src, dst string) {
	fi, err := a.statSource(src, true)
	if err != nil {
		a.seq.emit(true, fmt.Sprintf("cannot stat %s: %s", quote(src), errText(err)))
		return
	}
	if fi.IsDir() && a.opts.Recursive {
		if msg := intoItself(src, fi, dst); msg != "" {
			a.seq.emit(true, msg)
			return
		}
	}
	// cp: a SOURCE named twice for one DEST is copied once, with a warning.
	key := topCopy{idOf(fi), filepath.Clean(dst)}
	if a.tops[key] {
		what := "file"
		if fi.IsDir() {
			if !a.opts.Recursive {
				a.copyEntry(src, fi, dst, nil) // omitting directory, again
				return
			}
			what = "directory"
		}
		r := a.seq.open()
		r.warn(fmt.Sprintf("source %s %s specified more than once", what, quote(src)))
		a.seq.close(r)
		return
	}
	if a.tops == nil {
		a.tops = make(map[topCopy]bool)
	}
	a.tops[key] = true
	a.copyEntry(src, fi, dst, nil)
}

// topCopy is a command-line SOURCE (by inode) and the DEST it goes to.
type topCopy struct {
	src devIno
	dst string
}

// intoItself refuses to copy a directory into itself or a descendant: it
// walks up from DEST's nearest existing ancestor comparing device and inode
// numbers with SOURCE's, so symbolic links and bind mounts cannot hide it.
func intoItself(src string, sfi os.FileInfo, dst string) string {
	id := idOf(sfi)
	p := filepath.Clean(dst)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			for {
				if idOf(fi) == id {
					return fmt.Sprintf("cannot copy a directory, %s, into itself, %s", quote(src), quote(dst))
				}
				parent, err := os.Stat(p + "/..")
				if err != nil || idOf(parent) == idOf(fi) {
					return ""
				}
				p, fi = p+"/..", parent
			}
		}
		next := filepath.Dir(p)
		if next == p {
			return ""
		}
		p = next
	}
}

// copyEntry copies one entry of any type.
func (a *app) copyEntry(src string, fi os.FileInfo, dst string, anc *ancestor) {
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		if !a.opts.Recursive {
			a.seq.emit(true, fmt.Sprintf("-r not specified; omitting directory %s", quote(src)))
			return
		}
		a.copyDir(src, fi, dst, anc)
	case a.opts.Link || a.opts.Symlink:
		// -l, -s: a link instead of a copy, whatever the type. A hard
		// link to a symbolic link follows it when the walk did.
		follow := mode&os.ModeSymlink == 0
		a.schedule(func(r *record) { a.linkEntry(r, src, fi, dst, follow) })
	case mode&os.ModeSymlink != 0:
		a.schedule(func(r *record) { a.copySymlink(r, src, fi, dst) })
	case mode.IsRegular():
		a.scheduleFile(src, fi, dst, anc == nil)
	case a.opts.Recursive && !a.opts.CopyContents:
		// cp -R recreates FIFOs, devices and sockets rather than reading
		// them (--copy-contents reads them).
		a.schedule(func(r *record) { a.copySpecial(r, src, fi, dst) })
	default:
		// Without -r a FIFO or device SOURCE is read as data.
		a.schedule(func(r *record) { a.copyFile(r, src, fi, dst) })
	}
}

// linkFirst is the first copy of a source inode with several links (-a).
type linkFirst struct {
	dst  string
	ok   bool
	done chan struct{}
}

// scheduleFile copies a regular file, or with -a makes a further link to
// the copy of an inode already copied in this run, as cp -a does.
func (a *app) scheduleFile(src string, fi os.FileInfo, dst string, top bool) {
	// The first copy of an inode counts as made when -u kept the DEST
	// that is already there: the later names are linked to it, as cp
	// does (replacing whatever they were, newer or not).
	// Besides files with several links, a file reached through symbolic
	// links that are followed (-L; -H on the command line) may be met
	// twice, as cp remembers.
	o := a.opts
	followed := o.Deref == flags.DerefAlways || o.Deref == flags.DerefCommandLine && top
	if !o.HardLinks || rawStat(fi).Nlink < 2 && !followed {
		a.schedule(func(r *record) { a.copyFile(r, src, fi, dst) })
		return
	}
	id := idOf(fi)
	a.linksMu.Lock()
	first, seen := a.links[id]
	if !seen {
		first = &linkFirst{dst: dst, done: make(chan struct{})}
		a.links[id] = first
	}
	a.linksMu.Unlock()
	if !seen {
		a.schedule(func(r *record) {
			defer close(first.done)
			first.ok = a.copyFile(r, src, fi, dst)
		})
		return
	}
	a.schedule(func(r *record) {
		// The first copy was queued earlier, so it is running or done.
		<-first.done
		if first.ok {
			a.makeHardLink(r, src, first.dst, dst)
		} else {
			a.copyFile(r, src, fi, dst)
		}
	})
}

// dirDone is a copied directory whose mode and times are set at the end.
type dirDone struct {
	src, dst string
	fi       os.FileInfo
	created  bool
}

// copyDir creates DEST (or merges into an existing directory) and copies
// SOURCE's entries into it in name order.
func (a *app) copyDir(src string, fi os.FileInfo, dst string, anc *ancestor) {
	r := a.seq.open()
	if anc.has(idOf(fi)) {
		// A symbolic link (-L, -H) or a bind mount leading back up.
		r.fail(fmt.Sprintf("cannot copy cyclic symbolic link %s", quote(src)))
		a.seq.close(r)
		return
	}
	created := false
	// Not followed, as cp: a symbolic link in DEST's tree, even to a
	// directory, is not a directory to merge into, and following it would
	// write outside the tree.
	dfi, err := os.Lstat(dst)
	if err == nil && dfi.Mode()&os.ModeSymlink != 0 && a.opts.KeepDirSymlink {
		// --keep-directory-symlink: a symlink to a directory is followed.
		if t, terr := os.Stat(dst); terr == nil && t.IsDir() {
			dfi = t
		}
	}
	switch {
	case err == nil && !dfi.IsDir():
		r.fail(fmt.Sprintf("cannot overwrite non-directory %s with directory %s", quote(dst), quote(src)))
		a.seq.close(r)
		return
	case err == nil && os.SameFile(dfi, fi):
		r.fail(fmt.Sprintf("cannot copy a directory, %s, into itself, %s", quote(src), quote(dst)))
		a.seq.close(r)
		return
	case errors.Is(err, os.ErrNotExist):
		// Owner-writable while its entries are copied; the final mode
		// comes at the end (a read-only source directory stays copyable).
		if err := os.Mkdir(strings.TrimRight(dst, "/"), 0o700); err != nil {
			r.fail(fmt.Sprintf("cannot create directory %s: %s", quote(dst), errText(err)))
			a.seq.close(r)
			return
		}
		created = true
		a.session.DirCreated(dst)
		if a.opts.Verbose || a.opts.Debug {
			r.out(output.Copying(src, dst))
		}
	case err != nil:
		r.fail(fmt.Sprintf("cannot stat %s: %s", quote(dst), errText(err)))
		a.seq.close(r)
		return
	}
	a.dirs = append(a.dirs, dirDone{src: src, dst: dst, fi: fi, created: created})
	if created {
		a.madeEntry(dst)
	}
	var names []string
	if a.opts.OneFileSystem && anc != nil && anc.id.dev != idOf(fi).dev {
		// -x: a mount point is copied, not what is mounted on it.
	} else if names, err = readNames(src); err != nil {
		r.fail(fmt.Sprintf("cannot access %s: %s", quote(src), errText(err)))
	}
	a.seq.close(r)
	here := &ancestor{id: idOf(fi), parent: anc}
	for _, name := range names {
		child := joinPath(src, name)
		cfi, err := a.statSource(child, false)
		if err != nil {
			a.seq.emit(true, fmt.Sprintf("cannot stat %s: %s", quote(child), errText(err)))
			continue
		}
		a.copyEntry(child, cfi, joinPath(dst, name), here)
	}
}

// readNames lists a directory's entries in name order.
func readNames(dir string) ([]string, error) {
	f, err := openNoPoller(dir, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// finishDirs gives the copied directories their final mode, owner and
// times, deepest first, once everything inside them is written.
func (a *app) finishDirs() {
	for i := len(a.dirs) - 1; i >= 0; i-- {
		d := a.dirs[i]
		st := rawStat(d.fi)
		t := target{fd: -1, path: strings.TrimRight(d.dst, "/")}
		var err error
		if a.opts.Preserve.Any() {
			err = a.preserve(t, st, -1, d.src, d.dst)
		}
		if err == nil && d.created && !a.opts.Preserve.Mode {
			if e := t.chmod(a.newMode(st.Mode, true)); e != nil {
				err = output.Wordedf("setting permissions for %s: %s", quote(d.dst), errText(e))
			}
		}
		if err != nil {
			a.seq.emit(true, err.Error())
		}
	}
}

// madeEntry notes, for --sync, that dst's directory got a new entry that
// durability does not sync by itself (a directory, a link, a special file):
// regular files have their directory synced as they are renamed into place.
func (a *app) madeEntry(dst string) {
	if a.opts.Sync == durability.SyncNone {
		return
	}
	a.entryMu.Lock()
	defer a.entryMu.Unlock()
	if a.entryDirs == nil {
		a.entryDirs = make(map[string]bool)
	}
	a.entryDirs[filepath.Dir(filepath.Clean(dst))] = true
}

// syncDirs makes the entries of the copied directories durable (--sync):
// every directory the copy wrote into and every parent of a new entry.
func (a *app) syncDirs() {
	if a.opts.Sync == durability.SyncNone {
		return
	}
	dirs := a.entryDirs
	if dirs == nil {
		dirs = make(map[string]bool)
	}
	for _, d := range a.dirs {
		dirs[filepath.Clean(d.dst)] = true
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if err := durability.SyncDir(d); err != nil {
			a.seq.emit(true, fmt.Sprintf("fsync failed for %s: %s", quote(d), errText(err)))
		}
	}
}

// startWorkers starts -j workers (none for -j 1, or when prompting).
func (a *app) startWorkers() {
	n := a.opts.Jobs
	if n <= 1 || a.opts.Interactive {
		return
	}
	a.work = make(chan func(), 4*n)
	for i := 0; i < n; i++ {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for f := range a.work {
				f()
			}
		}()
	}
}

// schedule runs an entry's copy, on a worker with -j.
func (a *app) schedule(f func(r *record)) {
	r := a.seq.open()
	if a.work == nil {
		f(r)
		a.seq.close(r)
		return
	}
	a.work <- func() {
		f(r)
		a.seq.close(r)
	}
}

// finish waits for the workers, then finishes the directories.
func (a *app) finish() {
	if a.work != nil {
		close(a.work)
		a.wg.Wait()
	}
	a.finishDirs()
	a.syncDirs()
}

// totalBytes adds up the sizes of everything the run will copy, walking
// the trees as the copy will; -1 when a source's size cannot be known.
func (a *app) totalBytes() int64 {
	var total int64
	var walk func(path string, top bool)
	walk = func(path string, top bool) {
		fi, err := a.statSource(path, top)
		if err != nil || total < 0 {
			return
		}
		switch {
		case fi.IsDir() && a.opts.Recursive:
			names, _ := readNames(path)
			for _, n := range names {
				walk(joinPath(path, n), false)
			}
		case fi.Mode().IsRegular():
			total += fi.Size()
		case fi.Mode()&(os.ModeNamedPipe|os.ModeDevice|os.ModeCharDevice) != 0 && !a.opts.Recursive:
			total = -1
		}
	}
	ops := a.opts.Operands
	if a.opts.TargetDir == "" && len(ops) > 0 {
		ops = ops[:len(ops)-1]
	}
	for _, op := range ops {
		walk(op, true)
	}
	return total
}
