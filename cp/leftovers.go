package cp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"fastcp/durability"

	"golang.org/x/sys/unix"
)

// Leftovers of interrupted copies. A copy writes DEST's data into a
// temporary file DIR/.fastcp-NAME.HEX (durability.Create) and renames it
// over DEST at the end; SIGKILL, a crash or a power cut in between leaves
// that file behind (SIGINT, SIGTERM and SIGHUP remove it). To tell such a
// leftover from a copy in progress, whichever process, container or NFS
// client runs it, fastcp holds an exclusive flock(2) on its temporary file
// from right after creating it until it is renamed or removed. The kernel
// drops the lock when the process dies, so a temporary file whose lock can
// be taken belongs to nobody.
//
// The first temporary name tried for a DEST is always the same
// (durability.FirstTemp), so a leftover stands in the way of the next copy
// to that DEST. When that name is taken, the copy goes on under a random
// one and then looks in DEST's directory (once per directory and run, and
// not in directories it created itself) for leftovers of the same DEST name:
// it removes those it can prove dead (regular, one link, lock free: -v says
// "removed 'x'") and warns about those it cannot judge (not a regular file,
// more than one link, unreadable, or on a filesystem without flock). A copy
// that finds the first name free lists nothing: a 4 KiB file copied into a
// directory of 200000 entries took 210 ms when every copy listed it, and
// takes 14 ms now (cp: 6 ms).
//
// The temporary file is briefly unlocked between its creation and the
// flock. If another run removes it in that window, the flock finds no link
// left and the copy starts over with a new temporary file.

// leftoverDirs caches, per directory, the names that start with
// durability.TempPrefix, listed once before the first temporary file of
// this run is created there.
type leftoverDirs struct {
	mu    sync.Mutex
	names map[string][]string // directory -> candidate names; nil: none
}

// created notes a directory this run created: nothing is left over in it.
func (l *leftoverDirs) created(dir string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names == nil {
		l.names = make(map[string][]string)
	}
	l.names[filepath.Clean(dir)] = nil
}

// candidates returns the temporary-looking names in dir, listing it once.
// An unreadable directory (write and search permission only) has none.
func (l *leftoverDirs) candidates(dir string) []string {
	key := filepath.Clean(dir)
	l.mu.Lock()
	defer l.mu.Unlock()
	if names, ok := l.names[key]; ok {
		return names
	}
	if l.names == nil {
		l.names = make(map[string][]string)
	}
	var names []string
	if all, err := readNames(key); err == nil {
		for _, n := range all {
			if strings.HasPrefix(n, durability.TempPrefix) {
				names = append(names, n)
			}
		}
	}
	l.names[key] = names
	return names
}

// leftover is what a look at one temporary-looking file found.
type leftover int

const (
	leftoverGone    leftover = iota // vanished meanwhile
	leftoverRemoved                 // dead, removed
	leftoverInUse                   // locked: a copy in progress
	leftoverUnknown                 // cannot tell
)

// sweepLeftovers removes the dead temporary files of earlier runs for the
// DEST at path, and warns about those it cannot judge. dst is DEST as the
// user named it, for messages.
func (a *app) sweepLeftovers(r *record, path, dst string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for _, name := range a.leftovers.candidates(dir) {
		if !durability.IsTempFor(name, base) {
			continue
		}
		p := filepath.Join(dir, name)
		switch removeIfDead(p) {
		case leftoverRemoved:
			if a.opts.Verbose {
				r.out(fmt.Sprintf("removed %s", quote(p)))
			}
		case leftoverUnknown:
			r.warn(fmt.Sprintf("%s may be left over from an interrupted copy to %s; remove it if no copy to %s is running",
				quote(p), quote(dst), quote(dst)))
		}
	}
}

// removeIfDead removes the temporary file at p if nobody holds its lock.
// It never opens anything but a regular file, so a FIFO or a device under
// a temporary name is not disturbed.
func removeIfDead(p string) leftover {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		if err == unix.ENOENT {
			return leftoverGone
		}
		return leftoverUnknown
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		// A symbolic link, FIFO or device node, or a hard link, left
		// by durability.Replace: nothing locks those.
		return leftoverUnknown
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			return leftoverGone
		}
		return leftoverUnknown
	}
	defer unix.Close(fd)
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Dev != st.Dev || fst.Ino != st.Ino {
		return leftoverUnknown
	}
	switch err := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) }); err {
	case nil:
	case unix.EWOULDBLOCK:
		return leftoverInUse
	default:
		return leftoverUnknown // ENOLCK, EOPNOTSUPP: no locks here
	}
	// Locked: its writer is gone, and a new writer that created it a
	// moment ago will see it unlinked and start again. Still the same
	// file under that name?
	if err := unix.Lstat(p, &st); err != nil || st.Dev != fst.Dev || st.Ino != fst.Ino {
		return leftoverGone
	}
	if err := unix.Unlink(p); err != nil {
		if err == unix.ENOENT {
			return leftoverGone
		}
		return leftoverUnknown
	}
	return leftoverRemoved
}

// lockTemp takes the lock that marks a temporary file as being written, on
// a duplicate of its descriptor: Commit closes the file before the rename,
// and the lock must outlive that close. release drops it. ok is false when
// another run removed the file before the lock was taken: the caller starts
// over. Where flock is not supported the copy goes on unlocked.
func lockTemp(f *os.File) (release func(), ok bool) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return func() {}, true
	}
	release = func() { unix.Close(fd) }
	if err := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX) }); err != nil {
		return release, true
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && st.Nlink == 0 {
		release()
		return nil, false
	}
	return release, true
}
