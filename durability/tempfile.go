// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// The temporary file's life. A temporary file belongs to its inode, not to
// its name: another copy to the same DEST, a sweep of leftovers or a user
// may remove or replace the name at any moment, so nothing here unlinks or
// renames a name without first checking (fstatat against the identity
// taken when the file was created) that the name still is the file this
// copy made. Every call is relative to DEST's directory, opened once, so
// the directory cannot be swapped under the copy either.
//
// A temporary file is unnamed (O_TMPFILE, see the end of this file) where
// the filesystem allows it and the copy will not be resumed; otherwise it
// is named from the start. The named file's steps, in this order:
//
//	openat(dir, .fastcp-NAME.HEX, O_CREAT|O_EXCL|O_NOFOLLOW, 0600), fstat: the identity
//	flock(LOCK_EX) on a duplicate of the descriptor: "a copy is writing this"
//	fstatat: the name still is this file (else start over under a new name)
//	fsetxattr(user.fastcp.temp): "fastcp made this"
//	... copy, flush, verify ...
//	fremovexattr, close, fstatat + renameat over DEST, fsync(dir), unlock
//
// The mark comes after the lock, so a file that carries the mark and whose
// lock can be taken was made by a fastcp that is gone (killed, or the
// machine crashed): only such a file is a leftover the sweep may remove
// (leftovers.go). A file without the mark is never removed, whatever its
// name: it is the user's, or it was made by a run too old to mark it.

// MarkXattr is the extended attribute that marks a file as a temporary
// file of fastcp. Its value is markMagic, or for a copy made with --resume
// its resume record (resume.go), which starts with resumeMagic.
const MarkXattr = "user.fastcp.temp"

// markMagic is the mark's value on a temporary file without a resume
// record: the format and its version.
const markMagic = "fastcp-temp-1"

// errNotMarked is readMark's answer for a file without fastcp's mark.
var errNotMarked = errors.New("not marked as a temporary file of fastcp")

// readMark reports whether the open file fd carries fastcp's mark: nil, or
// errNotMarked, or the error of a filesystem that keeps no user extended
// attributes (isUnsupported).
func readMark(fd int) error {
	_, err := markOf(fd)
	return err
}

// markOf is readMark that also returns the mark's value (its resume
// record, for a --resume copy's file), for the check after the lock
// (lockedLeftover).
func markOf(fd int) ([]byte, error) {
	buf := make([]byte, maxRecord)
	n, err := fgetxattr(fd, MarkXattr, buf)
	switch {
	case err == unix.ENODATA, err == unix.ERANGE:
		return nil, errNotMarked // ERANGE: longer than anything fastcp writes
	case err != nil:
		return nil, err
	}
	if v := buf[:n]; bytes.HasPrefix(v, []byte(markMagic)) || bytes.HasPrefix(v, []byte(resumeMagic+" ")) {
		return v, nil
	}
	return nil, errNotMarked
}

// isUnsupported reports whether err says the filesystem or kernel does not
// offer the call: user extended attributes, or flock.
func isUnsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOLCK)
}

// openDirHandle opens dir (by the path the user gave, so a symbolic link
// among its components is followed, as cp follows it) for calls relative
// to it: O_RDONLY when it may be read (for the fsync and the listing),
// else O_PATH, which needs only search permission, as creating a file in
// it does.
func (sys *sysCalls) openDirHandle(dir string) (*fsdir.Dir, error) {
	name := "."
	if dir != "" {
		name = filepath.Clean(dir)
	}
	fd, err := sys.openDir(name)
	if err == unix.EACCES {
		fd, err = openPathDir(name)
		if err == nil {
			return fsdir.NewOPath(fd, dir), nil
		}
	}
	if err != nil {
		return nil, err
	}
	return fsdir.New(fd, dir), nil
}

// entryIn finds the directory that holds name in dir (an entry of dir,
// or a relative path from it: the target of a symbolic link, whose
// directories are followed as a path's are; in fsdir.Cwd, any path) and
// returns it, with a reference the caller releases, and name's last
// component in it, and the path that names the entry in messages. Its
// errors are *os.PathError.
func entryIn(sys *sysCalls, dir *fsdir.Dir, name string) (in *fsdir.Dir, base, path string, err error) {
	sub, base := filepath.Split(name)
	if dir == fsdir.Cwd {
		if base == "" {
			return nil, "", "", &os.PathError{Op: "open", Path: name, Err: unix.ENOENT}
		}
		in, err := sys.openDirHandle(sub)
		if err != nil {
			return nil, "", "", &os.PathError{Op: "open", Path: sub, Err: err}
		}
		return in, base, name, nil
	}
	path = filepath.Join(dir.Path(), name)
	if base == "" {
		// "" (or "dir/") names no entry to create.
		return nil, "", "", &os.PathError{Op: "open", Path: path, Err: unix.ENOENT}
	}
	if dir.Err() != nil {
		return nil, "", "", &os.PathError{Op: "open", Path: dir.Path(), Err: dir.Err()}
	}
	if sub == "" {
		dir.Hold()
		return dir, base, path, nil
	}
	shown := filepath.Join(dir.Path(), sub)
	fd, err := sysx.Openat(dir.Fd(), sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.EACCES {
		if fd, err = sysx.Openat(dir.Fd(), sub, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			return fsdir.NewOPath(fd, shown), base, path, nil
		}
	}
	if err != nil {
		return nil, "", "", &os.PathError{Op: "open", Path: shown, Err: err}
	}
	return fsdir.New(fd, shown), base, path, nil
}

// shownIn names the entry name of dir in messages.
func shownIn(dir *fsdir.Dir, name string) string { return filepath.Join(dir.Path(), name) }

// syncDir fsyncs the directory. An O_PATH directory (fsync answers EBADF)
// is opened again for it, which fails as it did the first time: fsync
// needs a descriptor opened for reading.
func (sys *sysCalls) syncDir(dir *fsdir.Dir) error {
	if !dir.OPath() {
		err := ignoringEINTR(func() error { return sys.fsync(dir.Fd()) })
		if err != unix.EBADF {
			return err
		}
	}
	fd, err := openDirAt(dir.Fd(), ".")
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return ignoringEINTR(func() error { return sys.fsync(fd) })
}

// identity is a file's device and inode numbers.
type identity struct{ dev, ino uint64 }

func identityOf(st *unix.Stat_t) identity { return identity{dev: st.Dev, ino: st.Ino} }

// entryIs reports whether name in dir is (still) the file with identity
// id, without following a symbolic link.
func entryIs(dirfd int, name string, id identity) bool {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return false
	}
	return identityOf(&st) == id
}

// tempEntry is a directory entry this run made under a temporary name: a
// temporary file, or the new entry of Replace. The session keeps it until
// it is renamed into place or removed, so that a fatal signal removes it.
type tempEntry struct {
	sys    *sysCalls // its destination's
	dir    *fsdir.Dir
	name   string
	id     identity
	keeper *keeper     // --resume: recorded, and kept on a fatal signal
	side   *sideRecord // its side record (siderecord.go), or nil
}

// path names the entry for messages.
func (e *tempEntry) path() string { return shownIn(e.dir, e.name) }

// removeIfOurs unlinks the entry if its name still is the file this run
// made; a name that another run or a user reused is left alone.
func (e *tempEntry) removeIfOurs() {
	if entryIs(e.dir.Fd(), e.name, e.id) {
		unlinkat(e.dir.Fd(), e.name, 0)
	}
	if e.side != nil {
		e.side.remove(e.dir.Fd())
		e.side = nil
	}
}

// errReplaced is Commit's error when the temporary name no longer is the
// file the copy wrote: it is not renamed over DEST.
var errReplaced = errors.New("the temporary file was removed or replaced by another process")

// renameOver renames the entry over target in the same directory, provided
// the name still is this run's file.
func (e *tempEntry) renameOver(target string) error {
	if !entryIs(e.dir.Fd(), e.name, e.id) {
		return errReplaced
	}
	return e.sys.renameat(e.dir.Fd(), e.name, e.dir.Fd(), target)
}

// createTempFile makes a new temporary file beside base in dir, as the
// package comment above says: created under the first free name
// (FirstTemp's first), locked, checked and marked. It reports whether the
// first name was taken, which means a leftover may be there. The entry is
// registered with s before the create returns, under s's lock, so a signal
// cannot leave it behind. st is the new file's fstat, made right after the
// create (for its identity), which the Destination keeps as its Stat.
// markErr is why the file could not be marked (nil: it is).
func createTempFile(sys *sysCalls, s *Session, dir *fsdir.Dir, base string, flags int) (f *sysx.File, e *tempEntry, lockFd int, firstTaken bool, st *unix.Stat_t, markErr, err error) {
	value := []byte(markMagic)
	for i := 0; ; i++ {
		name := filepath.Base(tempName(base, i == 0))
		var fd int
		st = new(unix.Stat_t)
		e, err = s.create(sys, dir, name, func() (identity, error) {
			var err error
			fd, err = openat(dir.Fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0o600)
			if err != nil {
				return identity{}, err
			}
			if err := unix.Fstat(fd, st); err != nil {
				unix.Close(fd)
				// Created a moment ago under O_EXCL: nobody else could
				// have had the name in between.
				unlinkat(dir.Fd(), name, 0)
				return identity{}, err
			}
			return identityOf(st), nil
		})
		if err == unix.EEXIST {
			firstTaken = true
			continue
		}
		if err != nil {
			return nil, nil, -1, firstTaken, nil, nil, &os.PathError{Op: "open", Path: shownIn(dir, name), Err: err}
		}
		lockFd = sys.lockTempFd(fd)
		if !entryIs(dir.Fd(), name, e.id) {
			// Removed (or replaced) before the lock was taken, by
			// something that is not fastcp (a sweep never removes an
			// unmarked file): start over under a new name.
			s.forget(e)
			unix.Close(fd)
			if lockFd >= 0 {
				unix.Close(lockFd)
			}
			continue
		}
		// Where the filesystem keeps no user xattrs, the file stays
		// unmarked; Create may give it a side record (siderecord.go).
		markErr = ignoringEINTR(func() error { return fsetxattr(fd, MarkXattr, value, 0) })
		return sysx.NewFile(fd, shownIn(dir, name)), e, lockFd, firstTaken, st, markErr, nil
	}
}

// lockTempFd takes the lock that marks a temporary file as being written,
// on a duplicate of fd: Commit closes the file before the rename, and the
// lock must outlive that close. It returns the duplicate (-1 if none could
// be made); where flock is not supported the duplicate holds no lock, the
// copy goes on unlocked, and a sweep can never judge its file dead.
func (sys *sysCalls) lockTempFd(fd int) int {
	dup, err := sys.dupFd(fd)
	if err != nil {
		return -1
	}
	_ = ignoringEINTR(func() error { return flock(dup, unix.LOCK_EX) })
	return dup
}

// The unnamed temporary file. Where the filesystem has O_TMPFILE (ext4,
// xfs, btrfs, tmpfs, and others), a copy that need not be resumed writes
// into a file that has no name at all until it is complete:
//
//	openat(dir, ".", O_TMPFILE|O_WRONLY, 0600), fstat: the identity
//	... copy, flush, verify ...
//	linkat(fd, "", dir, .fastcp-NAME.HEX, AT_EMPTY_PATH) (or from /proc/self/fd/N)
//	close, fstatat + renameat over DEST, fsync(dir)
//
// A copy killed (or a machine that crashed) before the linkat leaves
// nothing behind: the kernel frees an inode with no name and no open
// descriptor, and a journaling filesystem frees it at the next mount. The
// file needs neither the mark nor the lock: no sweep can find it. Only the
// microseconds between the linkat and the rename leave a complete,
// unmarked file under the temporary name, as the named file's last
// microseconds do (Commit). linkat by /proc/self/fd is open(2)'s own
// recipe for an O_TMPFILE file and needs no privilege (AT_EMPTY_PATH, tried
// first, needs none since Linux 6.10 for a file the caller opened), so the
// unnamed file is used only where /proc is mounted; elsewhere, and where the filesystem
// refuses O_TMPFILE (EOPNOTSUPP; EISDIR from a kernel before 3.11), the
// named file above is made instead.

// procFd reports whether /proc/self/fd names this process's descriptors,
// which linking an unnamed file into place needs.
var procFd = sync.OnceValue(func() bool {
	var st unix.Stat_t
	return unix.Stat("/proc/self/fd", &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
})

// createUnnamed opens an unnamed temporary file in dir, mode perm (0600
// when 0), as f, and fstats it into st (for its identity). It returns false
// where none can be made, or none is wanted (named: a --resume copy's);
// the caller then makes a named one, which reports a real error (EACCES,
// ENOSPC, ...) under a name.
func createUnnamed(dir *fsdir.Dir, flags int, named bool, perm os.FileMode, f *sysx.File, st *unix.Stat_t) bool {
	if named || !procFd() {
		return false
	}
	if perm == 0 {
		perm = 0o600
	}
	fd, err := openat(dir.Fd(), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC|flags, uint32(perm.Perm()))
	if err != nil {
		return false
	}
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return false
	}
	*f = *sysx.NewFile(fd, shownIn(dir, "."))
	return true
}

// nameTemp links the unnamed temporary file fd (identity id) into dir
// under the first free temporary name for base, registered with s as the
// named files are (so a fatal signal from here on removes it). linkat never
// replaces a name: the entry it makes is this file.
func nameTemp(sys *sysCalls, s *Session, dir *fsdir.Dir, base string, fd int, id identity) (*tempEntry, error) {
	for i := 0; ; i++ {
		name := filepath.Base(tempName(base, i == 0))
		e, err := s.create(sys, dir, name, func() (identity, error) {
			return id, linkFd(fd, dir.Fd(), name)
		})
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "link", Path: shownIn(dir, name), Err: err}
		}
		return e, nil
	}
}

// emptyPathRefused says that linkat(fd, "", ..., AT_EMPTY_PATH) was
// refused once (ENOENT: before Linux 6.10 it takes CAP_DAC_READ_SEARCH);
// linkFd then goes through /proc/self/fd at once.
var emptyPathRefused atomic.Bool

// linkFd gives the open file fd the name name in dirfd: linkat with
// AT_EMPTY_PATH, which needs no path lookup, or else through
// /proc/self/fd/N, which needs no privilege.
func linkFd(fd, dirfd int, name string) error {
	if !emptyPathRefused.Load() {
		err := ignoringEINTR(func() error { return unix.Linkat(fd, "", dirfd, name, unix.AT_EMPTY_PATH) })
		if err != unix.ENOENT {
			return err
		}
	}
	err := ignoringEINTR(func() error {
		return unix.Linkat(unix.AT_FDCWD, sysx.FdPath(fd, ""), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	})
	if err == nil {
		emptyPathRefused.Store(true)
	}
	return err
}

// firstTempTaken reports whether DEST's first temporary name exists in
// dir: by a leftover of an interrupted copy, or a copy to the same DEST
// still running, which the sweep then looks at.
func firstTempTaken(dir *fsdir.Dir, base string) bool {
	var st unix.Stat_t
	err := ignoringEINTR(func() error {
		return unix.Fstatat(dir.Fd(), filepath.Base(FirstTemp(base)), &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	return err != unix.ENOENT
}
