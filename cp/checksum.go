// SPDX-License-Identifier: MIT

package cp

// --checksum and --checksum-file: each regular file's digest, made by the
// copier in the same pass as the copy, goes with the entry's record; the
// records are printed in order, and the manifest takes their lines in
// that order (with -j too), then is written to a temporary file beside
// FILE and renamed over it once the last copy is done.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"fastcp/checksum"
	"fastcp/durability"
	"fastcp/internal/fsdir"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// manifest is --checksum-file's FILE being made.
type manifest struct {
	alg    checksum.Algorithm
	shown  string                  // FILE as given, for messages
	stdout bool                    // FILE is "-"
	dest   *durability.Destination // its temporary file; nil for stdout
	mode   uint32                  // the mode FILE gets
	chmod  bool                    // the temporary file needs mode first
	// Names: a DEST name that starts with strip has it replaced with
	// prefix (relative: the manifest is in DEST's directory or in DEST);
	// others stay as given.
	relative      bool
	strip, prefix string
	self          string // FILE's own name in the manifest, left out of it
	// The lines go out as they come (into the temporary file, or to
	// stdout), pending at most manifestFlushBytes: a tree of millions of
	// files does not hold its manifest in memory. (A FILE created at the
	// end, later, holds all of them until then.)
	pending []byte
	werr    error // the first write error, reported at the end
	// inPlace: FILE is a FIFO, a device or a socket (/dev/null, a
	// pipe's /dev/stdout), written into as a shell's redirection would,
	// never replaced by a regular file.
	inPlace bool
	out     func(string)
	// later: FILE goes into DEST, which the copy makes: laterName in
	// laterDir is created at the end.
	later               bool
	laterDir, laterName string
}

// name is DEST's name in the manifest (dst as messages name it).
func (m *manifest) name(dst string) string {
	if !m.relative || !strings.HasPrefix(dst, m.strip) {
		return tidy(dst)
	}
	rest := strings.TrimLeft(dst[len(m.strip):], "/")
	switch {
	case m.prefix == "":
		return tidy(rest)
	case rest == "":
		return m.prefix
	}
	return tidy(m.prefix + "/" + rest)
}

// tidy drops the "." components and repeated slashes of a name ("dst/./a"
// is "dst/a", as a tree named SOURCE/. is copied), and nothing else: a
// ".." stays, since a symbolic link before it would lead elsewhere.
func tidy(name string) string {
	if tidied(name) {
		return name
	}
	return tidySplit(name)
}

// tidySplit is tidy without its shortcut: every name split and joined.
func tidySplit(name string) string {
	parts := strings.Split(name, "/")
	kept := parts[:0]
	for i, p := range parts {
		if p == "." || p == "" && i > 0 {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 || len(kept) == 1 && kept[0] == "" {
		return name
	}
	return strings.Join(kept, "/")
}

// tidied says whether tidy would leave name as it is: no "." component,
// no empty one but a leading slash's (most names: no allocation then).
func tidied(name string) bool {
	for i, rest := 0, name; ; i++ {
		part, more, found := strings.Cut(rest, "/")
		if part == "." || part == "" && i > 0 {
			return false
		}
		if !found {
			return true
		}
		rest = more
	}
}

// noteSum gives the entry's record the manifest's line for DEST with
// digest (nothing when there is no manifest).
func (j *job) noteSum(digest []byte) {
	m := j.a.sums
	if m == nil || digest == nil {
		return
	}
	j.r.sumName = m.name(j.dst)
	j.r.sum = checksum.Line(digest, j.r.sumName)
}

// add appends a line; the sequencer calls it, in the records' order. The
// manifest's own name is left out: the copy wrote it, the manifest then
// replaced it.
func (m *manifest) add(line, name string) {
	if name == m.self && m.self != "" {
		return
	}
	m.pending = append(m.pending, line...)
	if len(m.pending) >= manifestFlushBytes {
		m.flush()
	}
}

// manifestFlushBytes is how much of the manifest is kept before it is
// written out.
const manifestFlushBytes = 64 << 10

// flush writes the pending lines out: to stdout, or into the temporary
// file (none yet: they wait).
func (m *manifest) flush() {
	switch {
	case len(m.pending) == 0:
		return
	case m.stdout:
		m.out(string(m.pending))
	case m.dest == nil:
		return
	case m.werr == nil:
		// In order, from the file's offset: the temporary file's
		// start, or where a FIFO or a device takes it.
		_, m.werr = m.dest.File.Write(m.pending)
	}
	m.pending = m.pending[:0]
}

// openManifest checks --checksum-file's FILE and creates its temporary
// file, before anything is copied: a FILE that cannot be written fails
// the run at once, and so does one inside a SOURCE tree (it would be
// copied half-made, or be the source). FILE inside DEST, a directory the
// copy of a tree makes, is created once the copy made it (its parent
// must be writable now). It reports whether the run goes on.
func (a *app) openManifest() bool {
	o := a.opts
	if o.ChecksumFile == "" {
		return true
	}
	m := &manifest{alg: o.Checksum, shown: o.ChecksumFile, mode: 0o666 &^ a.umask}
	if o.ChecksumFile == "-" {
		m.stdout, m.out = true, a.out.WriteStdout
		a.sums = m
		return true
	}
	fail := func(msg string) bool {
		a.seq.emit(true, msg)
		return false
	}
	file := o.ChecksumFile
	target := a.manifestTarget()
	dirPath, name := splitDest(file)
	if name == "" || strings.HasSuffix(name, "/") || name == "." || name == ".." {
		return fail(output.CannotCreateRegularFile(file, unix.EISDIR))
	}
	dir, err := fsdir.Open(dirPath)
	if err != nil {
		err = unwrapPath(err)
		if err == unix.ENOENT && o.Recursive && target != "" && filepath.Clean(dirPath) == filepath.Clean(target) {
			// DEST, which the copy of a tree makes: FILE is created
			// there once it exists.
			parent := filepath.Dir(filepath.Clean(target))
			if err := unix.Faccessat(unix.AT_FDCWD, parent, unix.W_OK|unix.X_OK, unix.AT_EACCESS); err != nil {
				return fail(output.CannotCreateRegularFile(file, err))
			}
			m.later, m.laterDir, m.laterName = true, dirPath, name
			m.relative, m.strip = true, target
			m.self = m.name(file)
			a.sums = m
			return true
		}
		return fail(output.CannotCreateRegularFile(file, err))
	}
	defer dir.Release()
	if msg := a.createManifest(m, dir, name); msg != "" {
		return fail(msg)
	}
	if target != "" {
		a.relativeNames(m, dir, target)
	}
	m.self = m.name(file)
	a.sums = m
	return true
}

// createManifest creates FILE's temporary file, name in dir, after the
// checks that FILE can be one: not a directory, not a SOURCE, not inside
// a SOURCE tree. A FILE that is a FIFO, a device or a socket is opened to
// be written into instead (m.inPlace); a symbolic link to a regular file
// has that file replaced, and stays a link. It returns why not, or "".
func (a *app) createManifest(m *manifest, dir *fsdir.Dir, name string) string {
	file := m.shown
	var st unix.Stat_t
	exists := false
	switch err := unix.Fstatat(dir.Fd(), name, &st, 0); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return output.CannotCreateRegularFile(file, unix.EISDIR)
	case err == nil:
		exists = true
	case err != unix.ENOENT:
		return output.CannotCreateRegularFile(file, err)
	}
	m.inPlace = exists && st.Mode&unix.S_IFMT != unix.S_IFREG
	if exists && !m.inPlace {
		var lst unix.Stat_t
		if err := unix.Fstatat(dir.Fd(), name, &lst, unix.AT_SYMLINK_NOFOLLOW); err == nil && lst.Mode&unix.S_IFMT == unix.S_IFLNK {
			// The rename goes over the file the link leads to (as a
			// copy's DEST through a link), not over the link: a
			// /dev/stdout redirected to a file stays /dev/stdout.
			resolved, err := filepath.EvalSymlinks(dir.At(name))
			if err != nil {
				return output.CannotCreateRegularFile(file, unwrapPath(err))
			}
			rdir, err := fsdir.Open(filepath.Dir(resolved))
			if err != nil {
				return output.CannotCreateRegularFile(file, unwrapPath(err))
			}
			defer rdir.Release()
			dir, name = rdir, filepath.Base(resolved)
			if err := unix.Fstatat(dir.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				return output.CannotCreateRegularFile(file, unix.ELOOP)
			}
		}
	}
	if src, inside := a.manifestInSource(dir.Fd(), exists, &st); src != "" {
		if inside {
			return output.ChecksumFileInsideSource(file, src)
		}
		return output.ChecksumFileOverSource(file, src)
	}
	do := durability.Options{Sync: a.opts.Sync, Session: a.session, InPlace: m.inPlace}
	if !m.inPlace {
		do.New, do.UnnamedPerm = !exists, os.FileMode(0o666)
		if exists {
			m.mode = st.Mode & 0o7777
		}
	}
	d, err := durability.Create(dir, name, do)
	if err != nil {
		return output.CannotCreateRegularFile(file, unwrapPath(err))
	}
	m.dest = d
	m.chmod = !m.inPlace && (exists || !d.Unnamed())
	return ""
}

// manifestTarget is the DEST operand every DEST name starts with ("" for
// none), as the plan takes it: -t's DIRECTORY, else the last operand.
// With several -t there is none: the manifest names each DEST as the -v
// lines do, from the directory fastcp runs in.
func (a *app) manifestTarget() string {
	o := a.opts
	switch {
	case len(o.TargetDirs) > 1:
		return ""
	case o.HasTargetDir():
		return o.TargetDirs[0]
	case len(o.Operands) > 1:
		return o.Operands[len(o.Operands)-1]
	}
	return ""
}

// relativeNames makes the manifest's names relative to its directory when
// that is DEST (a directory the copies go into) or DEST's directory: as
// sha256sum -c, run there, opens them. Otherwise they stay as DEST names
// were given, to be checked from the directory fastcp ran in.
func (a *app) relativeNames(m *manifest, dir *fsdir.Dir, target string) {
	id := dir.ID()
	var st unix.Stat_t
	if unix.Stat(target, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && fsdir.IDOf(&st) == id {
		m.relative, m.strip = true, target
		return
	}
	clean := filepath.Clean(target)
	if unix.Stat(filepath.Dir(clean), &st) == nil && fsdir.IDOf(&st) == id {
		m.relative, m.strip, m.prefix = true, target, filepath.Base(clean)
	}
}

// manifestInSource says whether FILE (in the directory dirfd; st, when
// it exists) is a SOURCE operand itself, or lies inside a SOURCE
// directory that -r copies: src names that SOURCE, inside says which. The
// directories are compared by identity, from FILE's directory up to the
// root.
func (a *app) manifestInSource(dirfd int, exists bool, st *unix.Stat_t) (src string, inside bool) {
	o := a.opts
	sources := o.Operands
	if !o.HasTargetDir() && len(sources) > 0 {
		sources = sources[:len(sources)-1]
	}
	trees := map[fsdir.ID]string{}
	for _, s := range sources {
		var sst unix.Stat_t
		if stat(s, follows(o, true), &sst) != nil {
			continue
		}
		if exists && fsdir.IDOf(&sst) == fsdir.IDOf(st) {
			return s, false
		}
		if o.Recursive && sst.Mode&unix.S_IFMT == unix.S_IFDIR {
			trees[fsdir.IDOf(&sst)] = s
		}
	}
	if len(trees) == 0 {
		return "", false
	}
	fd, err := unix.Openat(dirfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	for {
		var dst unix.Stat_t
		if unix.Fstat(fd, &dst) != nil {
			break
		}
		if s, ok := trees[fsdir.IDOf(&dst)]; ok {
			unix.Close(fd)
			return s, true
		}
		up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return "", false
		}
		fd = up
		var ust unix.Stat_t
		if unix.Fstat(fd, &ust) != nil || fsdir.IDOf(&ust) == fsdir.IDOf(&dst) {
			break // the root
		}
	}
	unix.Close(fd)
	return "", false
}

// stat is stat(2) (follow) or lstat(2) of a name given on the command line.
func stat(name string, follow bool, st *unix.Stat_t) error {
	if follow {
		return unix.Stat(name, st)
	}
	return unix.Lstat(name, st)
}

// finishManifest writes the manifest once every copy is done: to stdout,
// or into its temporary file, renamed over FILE (flushed first and its
// directory synced, with --sync).
func (a *app) finishManifest() {
	m := a.sums
	if m == nil {
		return
	}
	if m.stdout {
		m.flush()
		return
	}
	if m.later {
		msg := ""
		if dir, err := fsdir.Open(m.laterDir); err != nil {
			msg = output.CannotCreateRegularFile(m.shown, unwrapPath(err))
		} else {
			msg = a.createManifest(m, dir, m.laterName)
			dir.Release()
		}
		if msg != "" {
			a.seq.emit(true, msg)
			return
		}
	}
	d := m.dest
	defer d.Abort()
	m.flush()
	err := m.werr
	if err == nil && m.chmod {
		err = ignoringEINTR(func() error { return unix.Fchmod(int(d.File.Fd()), m.mode) })
	}
	if err == nil {
		err = d.Commit(nil)
	}
	if err != nil {
		a.seq.emit(true, output.CannotWriteChecksumFile(m.shown, manifestErrText(err)))
	}
}

// manifestErrText words a failure to write the manifest.
func manifestErrText(err error) string {
	if de, ok := err.(*durability.Error); ok {
		return output.StepFailed(string(de.Op), de.Err)
	}
	return errText(unwrapPath(err))
}

// sumComplete hashes the SOURCE of a DEST that -r --resume skips as a
// complete copy, for the manifest: SOURCE is read, since nothing copied
// it now, and the line says what SOURCE holds, which sha256sum -c then
// checks DEST against.
func (j *job) sumComplete() {
	srcF, before, err := j.openSource()
	if err != nil {
		j.r.fail(err.Error())
		return
	}
	defer srcF.Close()
	h := j.a.opts.Checksum.New()
	err = checksum.ReadRange(h, int(srcF.Fd()), 0, before.Size, nil)
	if err == nil || errors.Is(err, checksum.ErrShort) {
		if cerr := sourceChanged(srcF, &before, before.Size); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		var sc *output.SourceChanged
		if errors.As(err, &sc) {
			j.r.fail(output.ChangedNotInChecksumFile(j.src, sc.What))
		} else {
			j.r.fail(output.ErrorReading(j.src, err))
		}
		return
	}
	j.digest = h.Sum(nil)
	j.noteSum(j.digest)
}
