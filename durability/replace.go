// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Entry is a new directory entry, for the callbacks of DirSync's Replace
// (under a temporary name) and Link: Name in the directory Dir (a
// descriptor, for the *at calls), and Path, the same entry as the caller
// named its directory.
type Entry struct {
	Dir  int
	Name string
	Path string
}

// replace puts a new directory entry at DEST (name in dir, as for Create)
// atomically, for DirSync.Replace: create makes it under a temporary name
// in DEST's directory (a symbolic link, a FIFO, a device node, a hard
// link: it must fail with an error that is os.ErrExist when the name is
// taken), finish (if not nil) gives it its attributes, and then it is
// renamed over DEST, so an existing entry is replaced in one step and never
// missing. On failure nothing is left behind. The entry is registered with
// s (nil: with no session) while it has its temporary name, and removed or
// renamed only while that name still is the entry made. When the first
// temporary name was taken, the leftovers for DEST are swept as Create
// sweeps them, and returned.
func replace(s *Session, dir *fsdir.Dir, name string, create, finish func(Entry) error) ([]Leftover, error) {
	in, base, _, err := entryIn(&defaultSys, dir, name)
	if err != nil {
		return nil, err
	}
	return replaceIn(s, in, base, create, finish)
}

// replaceIn is replace for base in dir; it closes dir.
func replaceIn(s *Session, dir *fsdir.Dir, base string, create, finish func(Entry) error) ([]Leftover, error) {
	if s == nil {
		s = NewSession()
	}
	defer dir.Release()
	var swept []Leftover
	for i := 0; ; i++ {
		ent := Entry{Dir: dir.Fd(), Name: filepath.Base(tempName(base, i == 0))}
		ent.Path = shownIn(dir, ent.Name)
		e, err := s.create(&defaultSys, dir, ent.Name, func() (identity, error) {
			if err := create(ent); err != nil {
				return identity{}, err
			}
			var st unix.Stat_t
			if err := unix.Fstatat(dir.Fd(), ent.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return identity{}, err
			}
			return identityOf(&st), nil
		})
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if i > 0 {
			// A power cut between an earlier run's create and rename
			// leaves its entry under the first name.
			swept = s.sweep(dir, base, ent.Name, identity{})
		}
		if err != nil {
			return swept, err
		}
		if finish != nil {
			if err := finish(ent); err != nil {
				s.remove(e)
				return swept, err
			}
		}
		if err := s.commit(e, base); err != nil {
			return swept, &Error{Op: OpRename, Err: err}
		}
		return swept, nil
	}
}
