// SPDX-License-Identifier: MIT

package cp

// --parents: the source's parent directories made under the target.

import (
	"os"
	"path/filepath"
	"strings"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/fsdir"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// CheckUsage finds the usage errors that depend on the file system:
// --parents needs a directory to copy into; several -t need as many
// directories (checkTargets).
func CheckUsage(o *flags.Options) *flags.UsageError {
	if o.Benchmark {
		return nil
	}
	if ue := checkTargets(o); ue != nil {
		return ue
	}
	if !o.Parents || o.HasTargetDir() {
		return nil
	}
	last := o.Operands[len(o.Operands)-1]
	if fi, err := os.Stat(last); o.NoTargetDir || err != nil || !fi.IsDir() {
		return &flags.UsageError{Msg: "with --parents, the destination must be a directory"}
	}
	return nil
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
	defer func() { cur.Release() }()
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
		cur.Release()
		cur = next
	}
	return dst, true
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
		r.fail(output.FailedToGetAttributes(srcDir, unwrapPath(err)))
		return nil, false
	}
	// fstatat following, as cp's stat: a symlink to a directory in DEST
	// will do.
	st, err := in.Stat(base, true)
	switch {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return a.parentThere(r, srcDir, in, base, dstDir, sst, true)
	case err == nil:
		r.fail(output.ExistsButNotDirectory(dstDir))
		return nil, false
	case err != unix.ENOENT:
		r.fail(output.CannotStat(dstDir, err))
		return nil, false
	}
	inSync := new(durability.DirSync)
	made, err := inSync.Mkdir(in, base)
	if err != nil {
		r.fail(output.CannotMakeDirectory(dstDir, err))
		return nil, false
	}
	if !made {
		// Made by another process since the look above (parallel
		// copies with --parents): taken as one that was there, opened
		// without following (fsdir.Mkdir).
		return a.parentThere(r, srcDir, in, base, dstDir, sst, false)
	}
	d, err := in.OpenDir(base, false)
	if err != nil {
		r.fail(output.CannotOpenDirectory(dstDir, err))
		return nil, false
	}
	a.session.DirCreated(d.Fd())
	d.Hold()
	in.Hold()
	a.parentDirs = append(a.parentDirs, parentDone{src: srcDir, dst: dstDir, st: sst, dir: d, in: in, inSync: inSync})
	if a.opts.Verbose {
		r.out(output.CopyingParent(srcDir, dstDir))
	}
	return d, true
}

// parentThere opens a directory of --parents that exists, base in the
// directory in, following a symbolic link to one when follow (as cp's
// stat does); without follow it is one another process made meanwhile,
// and a symbolic link or a file there is refused as mkdir's EEXIST.
func (a *app) parentThere(r *record, srcDir string, in *dir, base, dstDir string, sst unix.Stat_t, follow bool) (*dir, bool) {
	d, err := in.OpenDir(base, follow)
	switch {
	case err != nil && !follow:
		r.fail(output.CannotMakeDirectory(dstDir, fsdir.Raced(err)))
		return nil, false
	case err != nil:
		r.fail(output.CannotOpenDirectory(dstDir, err))
		return nil, false
	}
	if a.opts.Preserve.Any() {
		d.Hold()
		in.Hold()
		a.parentDirs = append(a.parentDirs, parentDone{src: srcDir, dst: dstDir, st: sst, dir: d, in: in})
	}
	return d, true
}

// parentDone is a directory --parents made or went through, whose
// attributes are set once everything is copied: dir, held open, in the
// directory in; inSync made it in in (nil: it was there, and the run
// did not create it).
type parentDone struct {
	src, dst string
	st       unix.Stat_t
	dir, in  *dir
	inSync   *durability.DirSync
}

// finishParents gives the directories of --parents their attributes,
// deepest first, and finishes the directory each is in for durability
// (--sync).
func (a *app) finishParents() {
	for i := len(a.parentDirs) - 1; i >= 0; i-- {
		d := a.parentDirs[i]
		r := a.seq.open()
		dc := &dirCopy{e: &entry{st: d.st}, srcPath: d.src, dstPath: d.dst, created: d.inSync != nil}
		if err := a.setDirAttrsFrom(dc, &d.st, -1, d.dir); err != nil {
			r.fail(err.Error())
		}
		if err := d.inSync.Finished(a.opts.Sync, d.in.Fd(), false); err != nil {
			r.fail(output.FsyncFailed(filepath.Dir(d.dst), err))
		}
		d.dir.Release()
		d.in.Release()
		a.seq.close(r)
	}
}
