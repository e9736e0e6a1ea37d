// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// The plan: the operands resolved into SOURCE -> DEST pairs, as cp does,
// and each SOURCE's tree walked once, with the entries as the walk saw them
// and the bytes they hold. The copy then follows the plan, opening each
// entry again relative to its directory and checking that it still is the
// file the walk saw; the progress bar's total is the plan's.

// entry is one SOURCE entry as the walk saw it.
type entry struct {
	name    string      // in its directory; for an operand, the operand as given
	st      unix.Stat_t // lstat, or stat where a link is followed
	statErr error       // the entry could not be looked at
	kids    []*entry    // a directory's entries, in name order
	listErr error       // a directory that could not be opened or listed
	cyclic  bool        // a directory reached again through a link (-L, -H) or a bind mount
}

// operand is one SOURCE -> DEST pair of the command line.
type operand struct {
	src, dst string // as messages name them
	target   string // the operand DEST is named after (--parents makes the directories between)
	e        *entry
	refused  string // why the pair is not copied at all, or ""
}

type plan struct {
	ops   []operand
	fail  string // why nothing is copied (a bad target), or ""
	total int64  // bytes of data to copy; -1 when a source's size cannot be known
}

// makePlan resolves the operands and walks the sources.
func (a *app) makePlan() *plan {
	o := a.opts
	ops := o.Operands
	p := &plan{}
	var sources []string
	var target string
	intoDir := false
	switch {
	case o.HasTargetDir():
		target, sources, intoDir = o.TargetDirs[0], ops, true
		for _, t := range o.TargetDirs {
			fi, err := os.Stat(t)
			if err == nil && !fi.IsDir() {
				err = unix.ENOTDIR
			}
			if err != nil {
				p.fail = fmt.Sprintf("target directory %s: %s", quote(t), errText(err))
				return p
			}
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
			p.fail = fmt.Sprintf("target %s: %s", quote(target), errText(err))
			return p
		case len(sources) > 1:
			p.fail = fmt.Sprintf("target %s: %s", quote(target), errText(unix.ENOTDIR))
			return p
		}
	}
	if len(sources) == 1 && !intoDir && o.Force && o.Backup != flags.BackupNone && sources[0] == target {
		// cp --force --backup f f: the backup is a copy of f, made
		// without backups, and f stays as it is.
		if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
			target = backupName(o, target)
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
		targets := []string{target}
		if len(o.TargetDirs) > 1 {
			targets = o.TargetDirs
		}
		before := p.total
		e := a.walk(cwd, src, true, nil, &p.total)
		bytes := p.total - before
		for i, target := range targets {
			dst := target
			switch {
			case o.Parents:
				dst = joinPath(target, strings.TrimLeft(src, "/"))
			case intoDir:
				dst = joinPath(target, filepath.Base(src))
			}
			op := operand{src: src, dst: dst, target: target, e: e}
			if op.e.statErr == nil && isDir(&op.e.st) && o.Recursive {
				op.refused = intoItself(src, &op.e.st, dst)
			}
			if i > 0 && before >= 0 && p.total >= 0 {
				// Each -t DIRECTORY gets the bytes.
				p.total += bytes
			}
			p.ops = append(p.ops, op)
		}
	}
	return p
}

// follows says whether symbolic links are followed, for an operand (top)
// or an entry below one, as -L, -P, -H and the default say: cp follows
// them unless copying recursively.
func follows(o *flags.Options, top bool) bool {
	switch o.Deref {
	case flags.DerefAlways:
		return true
	case flags.DerefCommandLine:
		return top
	case flags.DerefDefault:
		// cp: -l follows them even when recursive.
		return !o.Recursive || o.Link == flags.LinkHard
	}
	return false
}

// ancestor is a directory on the path being walked, to refuse cycles.
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

// errChanged is a directory that was not the one looked at a moment before.
var errChanged = errors.New("replaced while being read")

// walk looks at name in d and, for a directory to copy, at everything
// below it, adding the bytes to copy to total.
func (a *app) walk(d *dir, name string, top bool, anc *ancestor, total *int64) *entry {
	e := &entry{name: name}
	follow := follows(a.opts, top)
	e.st, e.statErr = d.Stat(name, follow)
	if e.statErr != nil {
		return e
	}
	st := &e.st
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if !a.opts.Recursive {
			return e
		}
		if anc.has(idOf(st)) {
			e.cyclic = true
			return e
		}
		if a.opts.OneFileSystem && anc != nil && anc.id.Dev != st.Dev {
			return e // -x: a mount point is copied, not what is mounted on it
		}
		sub, sst, err := d.OpenReadable(name, follow)
		if err == nil && idOf(&sst) != idOf(st) {
			sub.Release()
			err = errChanged
		}
		if err != nil {
			e.listErr = err
			return e
		}
		defer sub.Release()
		names, err := sub.Names()
		e.listErr = err
		sort.Strings(names)
		here := &ancestor{id: idOf(st), parent: anc}
		for _, n := range names {
			e.kids = append(e.kids, a.walk(sub, n, false, here, total))
		}
	case unix.S_IFREG:
		a.files++
		if *total >= 0 {
			*total += st.Size
		}
	case unix.S_IFIFO, unix.S_IFCHR, unix.S_IFBLK:
		if !a.opts.Recursive {
			*total = -1 // read as data, of no known size
		}
	}
	return e
}

// intoItself refuses to copy a directory into itself or a descendant: it
// walks up from DEST's nearest existing ancestor comparing device and inode
// numbers with SOURCE's, so symbolic links and bind mounts cannot hide it.
func intoItself(src string, sst *unix.Stat_t, dst string) string {
	id := idOf(sst)
	p := filepath.Clean(dst)
	for {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			for {
				if idOf(&st) == id {
					return fmt.Sprintf("cannot copy a directory, %s, into itself, %s", quote(src), quote(dst))
				}
				var parent unix.Stat_t
				if unix.Stat(p+"/..", &parent) != nil || idOf(&parent) == idOf(&st) {
					return ""
				}
				p, st = p+"/..", parent
			}
		}
		next := filepath.Dir(p)
		if next == p {
			return ""
		}
		p = next
	}
}

// joinPath names an entry inside a directory as cp prints it: "dir/name".
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// splitDest splits an operand DEST into its directory and its name in it:
// "a/b" is b in a, "b" is b in ".", and "" is no name at all (ENOENT, as
// cp says). A trailing slash stays with the name ("a/b/" is "b/" in a), so
// that the kernel requires a directory there, as it does for cp.
func splitDest(dst string) (dirPath, name string) {
	t := strings.TrimRight(dst, "/")
	slash := ""
	if t != dst {
		slash = "/"
	}
	if t == "" {
		if dst == "" {
			return ".", ""
		}
		return "/", "."
	}
	i := strings.LastIndexByte(t, '/')
	switch {
	case i < 0:
		return ".", t + slash
	case i == 0:
		return "/", t[1:] + slash
	}
	return t[:i], t[i+1:] + slash
}
