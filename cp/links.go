// SPDX-License-Identifier: MIT

package cp

// Links instead of copies: -l (hard links) and -s (symbolic links).

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

// linkEntry makes DEST a hard link (-l) or a symbolic link (-s) to SOURCE
// instead of a copy. follow says whether a symbolic link SOURCE is
// followed for a hard link.
func (j *job) linkEntry(follow bool) {
	o, p, e, src, dst := j.a.opts, j.p, j.e, j.src, j.dst
	ex, ok := j.checkDest(false)
	if !ok {
		return
	}
	what := output.CreateHardLink
	if o.Link == flags.LinkSymbolic {
		what = output.CreateSymbolicLink
		if !filepath.IsAbs(src) && !inCurrentDir(dst) {
			j.r.fail(output.RelativeSymlinkOnlyInCurrentDirectory(dst))
			return
		}
	}
	fail := func(err error) {
		j.r.fail(output.CannotCreateLinkTo(what, dst, src, err))
	}
	// A link replaces DEST by a rename (gnulib's force_linkat), so only a
	// backup moves DEST away first.
	if o.Link != flags.LinkSymbolic && sourceThroughDest(src, entryAt{j.sd, j.e.name}, &e.st, entryAt{j.dd, j.name}, ex.st, ex.backup != "") {
		fail(unix.ENOENT)
		return
	}
	if o.Verbose {
		j.r.out(copyingLine(src, dst, ex.backup))
	}
	linkFlags := 0
	if follow {
		linkFlags = unix.AT_SYMLINK_FOLLOW
	}
	makeLink := func(ent durability.Entry) error {
		if o.Link == flags.LinkSymbolic {
			return unix.Symlinkat(src, ent.Dir, ent.Name)
		}
		return unix.Linkat(j.sd.Fd(), e.name, ent.Dir, ent.Name, linkFlags)
	}
	if j.dd.Err() != nil {
		fail(unwrapPath(j.dd.Err()))
		return
	}
	base := strings.TrimRight(j.name, "/")
	if ex.st == nil || !(unlinksFirst(o, &e.st, ex.st) || ex.backup != "") {
		// A DEST that exists is an error (EEXIST), as with cp.
		if err := p.dirSync.Link(j.dd, base, makeLink); err != nil {
			fail(err)
		}
		return
	}
	undo, ok := j.backupStep(&ex)
	if !ok {
		return
	}
	// The link is made under a temporary name and renamed over DEST.
	if err := j.replaceEntry(base, makeLink, nil); err != nil {
		undo()
		fail(unwrapPath(err))
	}
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
