// SPDX-License-Identifier: MIT

package cp

import (
	"os"
	"path/filepath"
	"strings"

	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// The plan: the operands resolved into SOURCE -> DEST pairs, as cp does,
// each SOURCE looked at once. A tree is not walked here: each directory is
// listed when the copy reaches it and each entry looked at when it is
// copied (tree.go), so memory follows the depth of a tree and its widest
// directory, not its number of entries. The progress bar's total comes
// from a scan running ahead of the copy (scan.go).

// entry is one SOURCE entry, looked at when its copy was scheduled.
type entry struct {
	name    string      // in its directory; for an operand, the operand as given
	st      unix.Stat_t // lstat, or stat where a link is followed
	statErr error       // the entry could not be looked at
}

// operand is one SOURCE -> DEST pair of the command line.
type operand struct {
	src, dst string // as messages name them
	target   string // the operand DEST is named after (--parents makes the directories between)
	e        *entry
	refused  string // why the pair is not copied at all, or ""
	again    bool   // named before for the same DEST: copied once (namedAgain)
}

type plan struct {
	// ops are the operands, each SOURCE's in a run of targets (one a -t
	// DIRECTORY each, in order; 1 but with several -t).
	ops     []operand
	targets int
	fail    string // why nothing is copied (a bad target), or ""
	total   int64  // bytes of the operands that are not trees; -1 when a source's size cannot be known
	files   int    // regular files among them
	trees   bool   // an operand is a tree to copy (its total is the scan's)
}

// makePlan resolves the operands and walks the sources.
func (a *app) makePlan() *plan {
	o := a.opts
	ops := o.Operands
	p := &plan{targets: max(len(o.TargetDirs), 1)}
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
				p.fail = output.TargetDirectory(t, err)
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
			p.fail = output.Target(target, err)
			return p
		case len(sources) > 1:
			p.fail = output.Target(target, unix.ENOTDIR)
			return p
		}
	}
	regular := func() bool {
		fi, err := os.Stat(target)
		return err == nil && fi.Mode().IsRegular()
	}
	if intoOwnBackup(o.Force, o.Backup != flags.BackupNone, len(sources) == 1 && !intoDir && sources[0] == target, regular) {
		target = backupName(o, target)
		a.ownBackup = true
	}
	named := make(map[topCopy]bool)
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
		e := a.look(cwd, src, true)
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
			op.again = op.refused == "" && op.e.statErr == nil && namedBefore(named, o, &op)
			if !op.again {
				if i == 0 {
					// SOURCE is read once for every -t DIRECTORY:
					// the bar counts its bytes once.
					p.count(o, &op.e.st, op.e.statErr)
				}
				p.trees = p.trees || op.e.statErr == nil && isDir(&op.e.st) && o.Recursive && op.refused == ""
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

// look looks at name in d, following a symbolic link as the options say
// for an operand (top) or an entry below one.
func (a *app) look(d *dir, name string, top bool) *entry {
	e := &entry{name: name}
	e.st, e.statErr = d.Stat(name, follows(a.opts, top))
	return e
}

// namedBefore is namedAgain's rule, for the plan's counts: whether the
// operand's SOURCE was named before for the same DEST (named: those seen).
func namedBefore(named map[topCopy]bool, o *flags.Options, op *operand) bool {
	key := topCopy{idOf(&op.e.st), filepath.Clean(op.dst)}
	if !named[key] {
		named[key] = true
		return false
	}
	return !isDir(&op.e.st) || o.Recursive
}

// count adds an operand that is not a tree to the plan's total.
func (p *plan) count(o *flags.Options, st *unix.Stat_t, err error) {
	if err != nil {
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		p.files++
		if p.total >= 0 {
			p.total += st.Size
		}
	case unix.S_IFIFO, unix.S_IFCHR, unix.S_IFBLK:
		if !o.Recursive {
			p.total = -1 // read as data, of no known size
		}
	}
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
					return output.CannotCopyDirectoryIntoItself(src, dst)
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
