// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Leftovers of interrupted copies. SIGKILL, a crash or a power cut between
// the creation of a temporary file and its rename leaves it behind (SIGINT,
// SIGTERM and SIGHUP remove it: Session.Interrupt). The first temporary
// name tried for a DEST is always the same (FirstTemp), so such a leftover
// stands in the way of the next copy to that DEST. When that name is taken,
// the copy goes on under a random one and then looks in DEST's directory
// (once per directory and session, and not in directories the run created)
// for leftovers of the same DEST name. A copy that finds the first name
// free lists nothing, so a small copy into a huge directory does not pay for
// reading it (docs/measurements.md).
//
// A leftover is removed only when it provably is one: the trust rule lets
// this run adopt it (trust.go: a regular file with one link, the caller's
// own, writable by nobody else, not the copy's source), it carries
// fastcp's mark (MarkXattr) and nobody holds its lock. A fastcp that is writing a file holds its lock from before the
// mark is set until after the rename or removal, whichever process,
// container or NFS client runs it, and the kernel drops the lock when the
// process dies. A file without the mark may be a user's file with a
// similar name: it is left alone, and reported (Unmarked); so is one the
// trust rule refuses (Refused). A file that cannot be judged (on a
// filesystem without user xattrs or flock) is left alone with a warning.

// Leftover is what the sweep found of one temporary-looking file that is
// not a copy in progress.
type Leftover struct {
	Path    string // the directory as the caller named it, joined with the name
	Removed bool   // dead and removed
	// Unmarked: a regular file without fastcp's mark, kept: a user's
	// file, or (rarely) one whose writer died between its create and its
	// mark, or at its rename, or whose mark a power cut lost.
	Unmarked bool
	// Refused: the trust rule (trust.go) does not let this run adopt
	// it, for this reason; it was left alone.
	Refused string
	// Why: a leftover that cannot be judged (neither removed, nor
	// unmarked, nor refused) says why, when it can.
	Why string
	// Side: the path of its side record (siderecord.go), kept with it.
	Side string
}

// leftover is what a look at one temporary-looking file found.
type leftover int

const (
	leftoverGone    leftover = iota // vanished meanwhile
	leftoverRemoved                 // dead, removed
	leftoverInUse                   // locked: a copy in progress
	leftoverForeign                 // not marked by fastcp: not ours
	leftoverUnknown                 // cannot tell
	leftoverRefused                 // refused by the trust rule (trust.go)
	leftoverLocked                  // locked, and still the file judged (lockedLeftover)
)

// candidates returns the names in dir that start with TempPrefix, listing
// the directory once per session. An unreadable directory (write and
// search permission only) has none.
func (s *Session) candidates(dir *fsdir.Dir) []string {
	var st unix.Stat_t
	if err := unix.Fstat(dir.Fd(), &st); err != nil {
		return nil
	}
	key := identityOf(&st)
	s.dirsMu.Lock()
	defer s.dirsMu.Unlock()
	if names, ok := s.dirs[key]; ok {
		return names
	}
	if s.dirs == nil {
		s.dirs = make(map[identity][]string)
	}
	var names []string
	if all, err := listNames(dir.Fd()); err == nil {
		for _, n := range all {
			if strings.HasPrefix(n, TempPrefix) {
				names = append(names, n)
			}
		}
	}
	s.dirs[key] = names
	return names
}

// listNames lists the directory dirfd, sorted.
func listNames(dirfd int) ([]string, error) {
	fd, err := openDirAt(dirfd, ".")
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// sweep removes the dead temporary files of earlier runs for DEST base in
// dir and returns what it removed and what it could not judge. skip is this
// copy's own temporary file, source the identity of the file being copied
// (zero when none), which is never touched. A name Continue already
// reported is not looked at again.
func (s *Session) sweep(dir *fsdir.Dir, base, skip string, source identity) []Leftover {
	var found []Leftover
	names := s.candidates(dir)
	for _, name := range names {
		if t, ok := strings.CutSuffix(name, SideSuffix); ok && t != skip && IsTempFor(t, base) &&
			removeOrphanSide(dir, t, false) == leftoverRemoved {
			// The side record of a temporary file that is gone.
			found = append(found, Leftover{Path: shownIn(dir, name), Removed: true})
			continue
		}
		if name == skip || !IsTempFor(name, base) || s.wasReported(dir, name) {
			continue
		}
		what, why := removeIfDead(dir, name, source)
		switch what {
		case leftoverRemoved:
			found = append(found, Leftover{Path: shownIn(dir, name), Removed: true})
		case leftoverForeign:
			found = append(found, Leftover{Path: shownIn(dir, name), Unmarked: true})
		case leftoverRefused:
			found = append(found, Leftover{Path: shownIn(dir, name), Refused: why})
		case leftoverUnknown:
			l := Leftover{Path: shownIn(dir, name), Why: why}
			if slices.Contains(names, sideName(name)) {
				l.Side = shownIn(dir, sideName(name))
			}
			found = append(found, l)
		}
	}
	return found
}

// reportedName is a leftover Continue judged and reported: its directory
// and name.
type reportedName struct {
	dir  identity
	name string
}

// reported notes that Continue reported the leftover name in dir, so that
// the sweep of the same copy does not name it a second time.
func (s *Session) reported(dir *fsdir.Dir, name string) {
	var st unix.Stat_t
	if unix.Fstat(dir.Fd(), &st) != nil {
		return
	}
	s.dirsMu.Lock()
	defer s.dirsMu.Unlock()
	if s.seen == nil {
		s.seen = make(map[reportedName]struct{})
	}
	s.seen[reportedName{identityOf(&st), name}] = struct{}{}
}

func (s *Session) wasReported(dir *fsdir.Dir, name string) bool {
	var st unix.Stat_t
	if unix.Fstat(dir.Fd(), &st) != nil {
		return false
	}
	s.dirsMu.Lock()
	defer s.dirsMu.Unlock()
	_, ok := s.seen[reportedName{identityOf(&st), name}]
	return ok
}

// removeIfDead removes the temporary file name in dirfd if the trust rule
// lets this run adopt it (trust.go), it carries fastcp's mark and nobody
// holds its lock. It unlinks the name only once it holds the lock and has
// checked that the name still is the file it locked, with the mark it
// read (lockedLeftover). why says what the trust rule refused.
func removeIfDead(dir *fsdir.Dir, name string, source identity) (found leftover, why string) {
	fd, fst, err := openLeftover(dir.Fd(), name, shownIn(dir, name), unix.O_RDONLY, source)
	var refused *Distrusted
	switch {
	case err == unix.ENOENT:
		return leftoverGone, ""
	case errors.As(err, &refused):
		return leftoverRefused, refused.Why
	case err != nil:
		return leftoverUnknown, ""
	}
	defer unix.Close(fd)
	mark, err := markOf(fd)
	var side *sideRecord // where the filesystem keeps no user xattrs
	var wr writer
	if err != nil && !errors.Is(err, errNotMarked) && noXattrs(err) {
		// The mark may be in a side record.
		sr, w, value, serr := openSide(dir, name, source)
		switch {
		case serr == unix.ENOENT:
			return leftoverUnknown, "it cannot be marked on this filesystem, and has no side record"
		case errors.As(serr, &refused):
			return leftoverRefused, "its side record: " + refused.Why
		case serr != nil:
			return leftoverUnknown, "its side record: " + serr.Error()
		}
		defer sr.close()
		side, wr, mark, err = sr, w, value, nil
		if !bytes.HasPrefix(mark, []byte(markMagic)) && !bytes.HasPrefix(mark, []byte(resumeMagic+" ")) {
			err = errNotMarked
		}
	}
	if err != nil {
		if errors.Is(err, errNotMarked) {
			return leftoverForeign, ""
		}
		return leftoverUnknown, "" // no user xattrs here: cannot tell
	}
	switch err := ignoringEINTR(func() error { return flock(fd, unix.LOCK_EX|unix.LOCK_NB) }); err {
	case nil:
	case unix.EWOULDBLOCK:
		return leftoverInUse, ""
	default:
		return leftoverUnknown, "" // ENOLCK, EOPNOTSUPP: no locks here
	}
	// Marked and unlocked: its writer is gone, or has just finished.
	switch _, what, why := lockedLeftover(dir.Fd(), name, fd, identityOf(fst), mark, source, side); what {
	case leftoverGone, leftoverRefused:
		return what, why
	case leftoverForeign:
		// Its mark went before the lock was taken: a copy that was
		// killed at its rename, whose file is complete; not provably
		// fastcp's any more.
		return leftoverForeign, ""
	}
	if side != nil {
		// The lock may be this machine's alone: the side record says
		// whose copy wrote the file, and whether it still runs.
		switch s, why := wr.state(); s {
		case writerRunning:
			return leftoverInUse, ""
		case writerUnknown:
			return leftoverUnknown, why
		}
	}
	if err := unlinkat(dir.Fd(), name, 0); err != nil {
		if err == unix.ENOENT {
			return leftoverGone, ""
		}
		return leftoverUnknown, ""
	}
	if side != nil {
		side.remove(dir.Fd())
	}
	return leftoverRemoved, ""
}

// lockedLeftover is the check between taking a leftover's lock and acting
// on it (cutting it back, writing, removing it). A leftover is judged (its
// mark or resume record read) before its lock is taken, and the lock may
// be free only because the copy that held it has just ended: one that
// finished removed the mark and renamed the file over its DEST, one that
// was interrupted recorded a last checkpoint. So once fd, opened on the
// name in dirfd as the file id, holds the lock, the leftover is acted on
// only if the name still is fd's file, the file still passes the trust
// rule, and its mark is still the value mark judged. Otherwise it is not
// the file judged: gone (the name is another file's, or nobody's), or
// changed (Foreign: its mark is not what was read; Refused: the trust
// rule, why), and it is left alone. Between this check and the act, only
// a process that is not fastcp can change the name: every fastcp takes the
// lock before it acts on a temporary file, and makes new ones only under
// names that are free (O_EXCL). st is fd's fstat, made under the lock.
// A leftover whose mark is in a side record (side, not nil: mark is the
// record's value) has the record checked the same way instead of the
// xattr: still its name's file, trusted, holding what was read.
func lockedLeftover(dirfd int, name string, fd int, id identity, mark []byte, source identity, side *sideRecord) (st unix.Stat_t, what leftover, why string) {
	if err := unix.Fstat(fd, &st); err != nil || identityOf(&st) != id || !entryIs(dirfd, name, id) {
		return st, leftoverGone, "it was renamed or replaced while it was being locked"
	}
	if why := judge(&st, source); why != "" {
		return st, leftoverRefused, why
	}
	if side != nil {
		what, why := side.unchanged(dirfd, source)
		return st, what, why
	}
	buf := make([]byte, maxRecord)
	n, err := fgetxattr(fd, MarkXattr, buf)
	if err != nil || !bytes.Equal(buf[:n], mark) {
		return st, leftoverForeign, "its record changed while it was being locked"
	}
	return st, leftoverLocked, ""
}
