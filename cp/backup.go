// SPDX-License-Identifier: MIT

package cp

// Backups of the DEST about to be replaced (-b, -S, --backup=CONTROL).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// dirOf opens the directory an entry is in, for the *at calls that make
// and replace it.
func dirOf(path string) (fd int, base string, err error) {
	path = strings.TrimRight(path, "/")
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	fd, err = sysx.Openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, base, nil
}

// backupName returns the name the backup of DEST (which exists) gets, for
// an operand named by path (cp --force --backup f f); backupNameIn does the
// work in the directory it opens.
func backupName(o *flags.Options, dst string) string {
	fd, base, err := dirOf(dst)
	if err != nil {
		d := fsdir.Failed("", err)
		return backupNameIn(o, d, base, dst)
	}
	d := fsdir.New(fd, filepath.Dir(strings.TrimRight(dst, "/")))
	defer d.Release()
	return backupNameIn(o, d, base, dst)
}

// backupNameIn returns the name the backup of DEST (name in d, which
// exists; dst as messages name it) gets, as gnulib's backupfile: DEST.~N~
// one past the highest existing number in d (numbered, or existing when
// DEST has numbered backups), else DEST with the suffix. The backup is in
// DEST's directory: a suffix has no slash.
func backupNameIn(o *flags.Options, d *dir, name, dst string) string {
	dst = strings.TrimRight(dst, "/")
	simple := dst + o.BackupSuffix
	if o.Backup == flags.BackupSimple {
		return simple
	}
	highest := highestBackup(d, strings.TrimRight(name, "/"))
	if o.Backup == flags.BackupExisting && highest == 0 {
		return simple
	}
	return fmt.Sprintf("%s.~%d~", dst, highest+1)
}

// highestBackup is the highest N of the numbered backups base.~N~ in d, or 0.
func highestBackup(d *dir, base string) int {
	highest := 0
	var names []string
	if d.Err() == nil {
		names, _ = d.Names()
	}
	for _, n := range names {
		num, ok := strings.CutPrefix(n, base+".~")
		if !ok {
			continue
		}
		num, ok = strings.CutSuffix(num, "~")
		if !ok || num == "" || num[0] == '0' || strings.Trim(num, "0123456789") != "" {
			continue
		}
		if v, err := strconv.Atoi(num); err == nil && v > highest {
			highest = v
		}
	}
	return highest
}

// backupIsSource reports whether making the simple backup of DEST (name
// in d) would remove SOURCE (cp --backup=simple a~ a): cp refuses such a
// copy.
func backupIsSource(o *flags.Options, sst *unix.Stat_t, d *dir, name string) bool {
	if o.Backup == flags.BackupNumbered {
		return false
	}
	st, err := d.Stat(strings.TrimRight(name, "/")+o.BackupSuffix, false)
	return err == nil && idOf(&st) == idOf(sst)
}

// makeBackup gives the existing DEST (name in d) its backup name (backup,
// as messages name it, in the same directory) just before the new DEST
// replaces it: a hard link, so that DEST never disappears (cp renames
// DEST away and creates a new one); where the filesystem has no hard
// links, a rename. undo takes the backup back if the new DEST then fails,
// provided the backup's name still is the file it made (another process
// may have put a file of its own there meanwhile, which is left alone).
func (j *job) makeBackup(d *dir, name, backup string) (undo func(), err error) {
	if d.Err() != nil {
		return nil, d.Err()
	}
	d.Hold()
	dfd, base := d.Fd(), strings.TrimRight(name, "/")
	bbase := filepath.Base(strings.TrimRight(backup, "/"))
	err = unix.Linkat(dfd, base, dfd, bbase, 0)
	if errors.Is(err, unix.EEXIST) {
		// An older backup of that name is replaced, as cp's rename does:
		// a link under a temporary name renamed over it. Not recorded
		// for --sync (a nil DirSync): the new DEST is, and that makes
		// the backup durable too (durability/dir.go).
		var unrecorded *durability.DirSync
		left, rerr := unrecorded.Replace(j.a.session, d, bbase, func(e durability.Entry) error {
			return unix.Linkat(dfd, base, e.Dir, e.Name, 0)
		}, nil)
		j.reportLeftovers(backup, left)
		err = unwrapPath(rerr)
	}
	// made is the backup's identity, right after it was made.
	made := func() func() bool {
		st, err := d.Stat(bbase, false)
		return func() bool {
			now, nerr := d.Stat(bbase, false)
			return err == nil && nerr == nil && idOf(&now) == idOf(&st)
		}
	}
	switch {
	case err == nil:
		ours := made()
		return func() {
			if ours() {
				unix.Unlinkat(dfd, bbase, 0)
			}
			d.Release()
		}, nil
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EMLINK), errors.Is(err, unix.EOPNOTSUPP):
		if err = unix.Renameat(dfd, base, dfd, bbase); err == nil {
			ours := made()
			return func() {
				if ours() {
					unix.Renameat(dfd, bbase, dfd, base)
				}
				d.Release()
			}, nil
		}
	}
	d.Release()
	return nil, err
}

// backupStep makes DEST's backup if one is due (ex.backup != ""),
// failing the entry as cp words it.
func (j *job) backupStep(ex *destInfo) (undo func(), ok bool) {
	if ex.backup == "" {
		return func() {}, true
	}
	undo, err := j.makeBackup(ex.entryDir, ex.entryName, ex.backup)
	if err != nil {
		j.r.fail(output.CannotBackup(j.dst, err))
		return nil, false
	}
	return undo, true
}

// copyingLine is -v's line, naming the backup when one is made.
func copyingLine(src, dst, backup string) string {
	if backup == "" {
		return output.Copying(src, dst)
	}
	return output.CopyingWithBackup(src, dst, backup)
}
