// SPDX-License-Identifier: MIT

// Package fsdir is an open directory for calls relative to it: the one
// directory type of cp's tree walk and of durability's temporary files.
// Every call on an entry is relative to the directory's descriptor (openat,
// fstatat, mkdirat, ...), so a directory renamed or replaced meanwhile
// changes nothing: the calls land in the directory that was opened.
//
// A Dir counts its references: New and the Open functions return it with
// one, Hold adds one, Release drops one and closes the descriptor with the
// last. Like os.Root's, a misuse is a bug, not an error: Hold or Release
// of a directory already closed panics.
package fsdir

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// Dir is an open directory.
type Dir struct {
	fd    int
	path  string // as messages name it ("src/sub"; "" for the current directory)
	err   error  // the directory could not be opened: every call fails with err
	opath bool   // opened O_PATH (no read permission): it cannot be listed or fsynced as it is
	refs  atomic.Int32

	idOnce sync.Once
	ident  ID

	pseudoOnce sync.Once
	isPseudo   bool
}

// ID is a file's device and inode numbers.
type ID struct{ Dev, Ino uint64 }

// IDOf is the identity st describes.
func IDOf(st *unix.Stat_t) ID { return ID{st.Dev, st.Ino} }

// Cwd is the current directory (AT_FDCWD), for names as the user gave
// them. It is never closed: Hold and Release do nothing.
var Cwd = &Dir{fd: unix.AT_FDCWD}

// New makes a Dir of the open directory fd, named path in messages, with
// one reference: the Dir owns fd from here on.
func New(fd int, path string) *Dir {
	d := &Dir{fd: fd, path: path}
	d.refs.Store(1)
	return d
}

// Failed is a directory that could not be opened (err): every call on it
// fails with err. Hold and Release do nothing.
func Failed(path string, err error) *Dir { return &Dir{fd: -1, path: path, err: err} }

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOCTTY

// Open opens the directory path (following symbolic links, as the names
// the user gives are followed) for calls relative to it: O_RDONLY when it
// may be read (for a listing and an fsync), else O_PATH, which needs only
// search permission, as creating an entry in it does.
func Open(path string) (*Dir, error) {
	name := path
	if name == "" {
		name = "."
	}
	return Cwd.open(name, path, true)
}

// OpenDir opens the directory name in d, named d.Join(name) in messages,
// O_NOFOLLOW unless follow, O_PATH when it cannot be read (see Open).
func (d *Dir) OpenDir(name string, follow bool) (*Dir, error) {
	if d.err != nil {
		return nil, d.err
	}
	return d.open(name, d.Join(name), follow)
}

func (d *Dir) open(name, shown string, follow bool) (*Dir, error) {
	flags := dirFlags
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := sysx.Openat(d.fd, name, flags, 0)
	if err == unix.EACCES {
		fd, err = sysx.Openat(d.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|flags&unix.O_NOFOLLOW, 0)
		if err == nil {
			sub := New(fd, shown)
			sub.opath = true
			return sub, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return New(fd, shown), nil
}

// OpenReadable opens the directory name in d for reading (O_NOFOLLOW unless
// follow), and returns its fstat: a source directory, which is listed.
func (d *Dir) OpenReadable(name string, follow bool) (*Dir, unix.Stat_t, error) {
	if d.err != nil {
		return nil, unix.Stat_t{}, d.err
	}
	return d.openReadable(name, d.Join(name), follow)
}

// openReadable is OpenReadable, the directory named shown in messages.
func (d *Dir) openReadable(name, shown string, follow bool) (*Dir, unix.Stat_t, error) {
	var st unix.Stat_t
	flags := dirFlags
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := sysx.Openat(d.fd, name, flags, 0)
	if err != nil {
		return nil, st, err
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, st, err
	}
	sub := New(fd, shown)
	sub.idOnce.Do(func() { sub.ident = IDOf(&st) })
	return sub, st, nil
}

// Fd is the directory's descriptor (AT_FDCWD for Cwd, -1 for a Failed one).
func (d *Dir) Fd() int { return d.fd }

// Path is the directory as messages name it.
func (d *Dir) Path() string { return d.path }

// Err is why the directory could not be opened, or nil.
func (d *Dir) Err() error { return d.err }

// Hold keeps d open until the matching Release.
func (d *Dir) Hold() {
	if d.fixed() {
		return
	}
	if d.refs.Add(1) <= 1 {
		panic("fsdir: Hold of a closed directory " + d.path)
	}
}

// Release drops a reference, and closes d with the last one.
func (d *Dir) Release() {
	if d.fixed() {
		return
	}
	switch n := d.refs.Add(-1); {
	case n == 0:
		unix.Close(d.fd)
	case n < 0:
		panic("fsdir: Release of a closed directory " + d.path)
	}
}

// fixed: Cwd or a Failed directory, which have no descriptor to close.
func (d *Dir) fixed() bool { return d == Cwd || d.err != nil || d.fd < 0 }

// Join names an entry of d for messages, as cp prints it: "dir/name",
// or name alone in the current directory.
func (d *Dir) Join(name string) string {
	if d == Cwd || d.path == "" {
		return name
	}
	if d.path[len(d.path)-1] == '/' {
		return d.path + name
	}
	return d.path + "/" + name
}

// At names name in d for a call that takes a path, pinned to d through
// its descriptor (sysx.FdPath); "" names d itself.
func (d *Dir) At(name string) string {
	if d == Cwd {
		if name == "" {
			return "."
		}
		return name
	}
	return sysx.FdPath(d.fd, name)
}

// Stat is fstatat(2) on name in d, following a final symbolic link or not.
func (d *Dir) Stat(name string, follow bool) (unix.Stat_t, error) {
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
	err := sysx.IgnoringEINTR(func() error { return unix.Fstatat(d.fd, name, &st, flags) })
	return st, err
}

// Mkdir creates the directory name in d, mode 0700, and reports whether
// it made it. made is false, with no error, when name exists (EEXIST):
// another process made it after the caller looked, as parallel copies into
// one tree do, and taking it is what the caller was asked for. The caller
// then takes it as a directory that was there, but only through an open
// that proves it one: relative to d with O_NOFOLLOW|O_DIRECTORY (OpenDir or
// OpenReadable, follow false), never a look at the name first. Raced words
// that open's failure.
func (d *Dir) Mkdir(name string) (made bool, err error) {
	if d.err != nil {
		return false, d.err
	}
	err = sysx.IgnoringEINTR(func() error { return unix.Mkdirat(d.fd, name, 0o700) })
	if err == unix.EEXIST {
		return false, nil
	}
	return err == nil, err
}

// Raced is the error of the open of a name that Mkdir found taken: a
// symbolic link or any other non-directory there (the open's ELOOP or
// ENOTDIR; planted by another user in a shared directory, say) is refused
// as the EEXIST of the mkdir, nothing opened or written through it. Other
// errors are the open's.
func Raced(openErr error) error {
	if openErr == unix.ENOTDIR || openErr == unix.ELOOP {
		return unix.EEXIST
	}
	return openErr
}

// Names lists d's entries, in no particular order.
func (d *Dir) Names() ([]string, error) {
	if d.err != nil {
		return nil, d.err
	}
	fd, err := sysx.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// Sync fsyncs the directory. An O_PATH directory (fsync answers EBADF) is
// opened again for it, which fails as it did the first time: fsync needs a
// descriptor opened for reading.
func (d *Dir) Sync() error {
	if d.err != nil {
		return d.err
	}
	if !d.opath {
		err := sysx.IgnoringEINTR(func() error { return unix.Fsync(d.fd) })
		if err != unix.EBADF {
			return err
		}
	}
	fd, err := sysx.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return sysx.IgnoringEINTR(func() error { return unix.Fsync(fd) })
}

// ID is the directory's device and inode numbers (zero if its fstat
// failed).
func (d *Dir) ID() ID {
	d.idOnce.Do(func() {
		var st unix.Stat_t
		if d.err == nil && unix.Fstat(d.fd, &st) == nil {
			d.ident = IDOf(&st)
		}
	})
	return d.ident
}

// Pseudo reports whether d is on a filesystem like /proc or /sys, whose
// files say nothing by their size and where no temporary file can be made.
func (d *Dir) Pseudo() bool {
	d.pseudoOnce.Do(func() {
		var fs unix.Statfs_t
		d.isPseudo = d.err == nil && unix.Fstatfs(d.fd, &fs) == nil && PseudoFS(int64(fs.Type))
	})
	return d.isPseudo
}

// RemoteFS reports whether the filesystem of magic number fsType is a
// FUSE or network filesystem, whose calls go to a daemon or a server that
// may not do what a local filesystem does (sshfs's server follows a
// symbolic link given an owner or times; a directory's fsync may not reach
// the server's disk).
func RemoteFS(fsType int64) bool {
	switch fsType {
	case unix.FUSE_SUPER_MAGIC, unix.NFS_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC,
		unix.CIFS_SUPER_MAGIC, unix.V9FS_MAGIC, unix.CEPH_SUPER_MAGIC, unix.AFS_SUPER_MAGIC,
		unix.AFS_FS_MAGIC, unix.CODA_SUPER_MAGIC:
		return true
	}
	return false
}

// DirSyncUntrusted names the kind of filesystem of magic number fsType
// whose directory fsync may return without the directory's entries on a
// server's stable storage, or is "" for one whose directory fsync can be
// trusted: a FUSE daemon may answer it without passing it on (sshfs does),
// and SMB and 9P have no directory flush a client could send. (NFS
// servers commit a create or rename before they answer it, unless an
// export is "async".)
func DirSyncUntrusted(fsType int64) string {
	switch fsType {
	case unix.FUSE_SUPER_MAGIC:
		return "FUSE"
	case unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC:
		return "SMB"
	case unix.V9FS_MAGIC:
		return "9P"
	}
	return ""
}

// PseudoFS reports whether the filesystem of magic number fsType has files
// whose sizes and times say nothing about their contents. (A switch, not a
// map: nothing to build at every start.)
func PseudoFS(fsType int64) bool {
	switch fsType {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC,
		unix.TRACEFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC,
		unix.SECURITYFS_MAGIC, unix.BPF_FS_MAGIC, unix.EFIVARFS_MAGIC:
		return true
	}
	return false
}

// Split opens the directory that holds name, a path relative to d (an
// entry, or the target of a symbolic link, whose directories are followed
// as a path's are), and returns it with name's last component. The
// directory returned holds a reference the caller releases. Its errors
// are *os.PathError.
func (d *Dir) Split(name string) (*Dir, string, error) {
	sub, base := filepath.Split(name)
	if base == "" {
		// "" (or "dir/") names no entry.
		return nil, "", &os.PathError{Op: "open", Path: d.Join(name), Err: unix.ENOENT}
	}
	if d.err != nil {
		return nil, "", &os.PathError{Op: "open", Path: d.path, Err: d.err}
	}
	if sub == "" {
		d.Hold()
		return d, base, nil
	}
	in, err := d.open(sub, filepath.Join(d.path, sub), true)
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: filepath.Join(d.path, sub), Err: err}
	}
	return in, base, nil
}

// NewOPath is New for a directory opened O_PATH.
func NewOPath(fd int, path string) *Dir {
	d := New(fd, path)
	d.opath = true
	return d
}

// OPath reports whether d was opened O_PATH: it can take *at calls, but
// must be opened again to be listed or fsynced.
func (d *Dir) OPath() bool { return d.opath }
