package cp

import (
	"os"
	"sync"
	"sync/atomic"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// The trees are walked by directory descriptor. Each source and destination
// directory is opened once, relative to its parent's descriptor, with
// O_DIRECTORY and (below the operands, unless -L follows links) O_NOFOLLOW;
// every call on an entry inside it is relative to that descriptor and does
// not follow a symbolic link it did not mean to follow. A user who owns a
// directory inside DEST can rename or replace it at any time: the copy
// holds the directory it opened, so at most a call fails; nothing is
// written, chmodded or linked outside DEST.

// dir is an open directory of a source or destination tree.
type dir struct {
	fd   int
	path string // as messages name it ("src/sub")
	err  error  // the directory could not be opened: every call fails with err
	refs atomic.Int32

	idOnce sync.Once
	ident  devIno

	pseudoOnce sync.Once
	isPseudo   bool
}

// pseudo reports whether d is on a filesystem like /proc or /sys, whose
// files say nothing by their size and where no temporary file can be made.
func (d *dir) pseudo() bool {
	d.pseudoOnce.Do(func() {
		var fs unix.Statfs_t
		d.isPseudo = d.err == nil && unix.Fstatfs(d.fd, &fs) == nil && pseudoFS(int64(fs.Type))
	})
	return d.isPseudo
}

// cwd is the current directory, for the operands named on the command line.
var cwd = &dir{fd: unix.AT_FDCWD}

func newDir(fd int, path string) *dir {
	d := &dir{fd: fd, path: path}
	d.refs.Store(1)
	return d
}

// id is the directory's device and inode numbers.
func (d *dir) id() devIno {
	d.idOnce.Do(func() {
		var st unix.Stat_t
		if unix.Fstat(d.fd, &st) == nil {
			d.ident = idOf(&st)
		}
	})
	return d.ident
}

// hold keeps d open until the matching release.
func (d *dir) hold() { d.refs.Add(1) }

// release closes d when nothing holds it any more.
func (d *dir) release() {
	if d != cwd && d.err == nil && d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// join names an entry of d for messages, as cp prints it.
func (d *dir) join(name string) string {
	if d == cwd {
		return name
	}
	return joinPath(d.path, name)
}

// stat is fstatat(2) on name in d, following a final symbolic link or not.
func (d *dir) stat(name string, follow bool) (unix.Stat_t, error) {
	var st unix.Stat_t
	if d.err != nil {
		return st, d.err
	}
	if name == "" {
		return st, unix.ENOENT
	}
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	err := ignoringEINTR(func() error { return unix.Fstatat(d.fd, name, &st, flags) })
	return st, err
}

// openDir opens the directory name in d: O_NOFOLLOW unless follow.
func (d *dir) openDir(name string, follow bool) (*dir, unix.Stat_t, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOCTTY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	var st unix.Stat_t
	if d.err != nil {
		return nil, st, d.err
	}
	fd, err := openat(d.fd, name, flags, 0)
	if err != nil {
		return nil, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, st, err
	}
	return newDir(fd, d.join(name)), st, nil
}

// mkdir creates the directory name in d, mode 0700.
func (d *dir) mkdir(name string) error {
	if d.err != nil {
		return d.err
	}
	return ignoringEINTR(func() error { return unix.Mkdirat(d.fd, name, 0o700) })
}

// at names name in d for a call that takes a path: pinned to d (procPath);
// "" names d itself.
func (d *dir) at(name string) string {
	if d == cwd {
		if name == "" {
			return "."
		}
		return name
	}
	return procPath(d.fd, name)
}

// openat is openat(2), again after EINTR (a FIFO's open waiting for a
// writer).
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	return sysx.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
}

// names lists d's entries, in no particular order.
func (d *dir) names() ([]string, error) {
	fd, err := openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// procPath names name in the directory fd (or fd itself, for "") for the
// calls that have no *at form (sysx.FdPath).
var procPath = sysx.FdPath

type devIno struct{ dev, ino uint64 }

func idOf(st *unix.Stat_t) devIno { return devIno{st.Dev, st.Ino} }

// ignoringEINTR retries a call that a signal cut short (sysx.Retry).
var ignoringEINTR = sysx.IgnoringEINTR

func isDir(st *unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
func isSymlink(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }
