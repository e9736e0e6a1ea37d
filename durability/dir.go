// SPDX-License-Identifier: MIT

package durability

import (
	"sync/atomic"

	"fastcp/internal/fsdir"
)

// When a directory is fsynced: the one rule, for every --sync mode but
// none (which fsyncs nothing).
//
//   - A regular file's directory, after the rename of the temporary file
//     over DEST (or the creation of DEST in place): Destination.Commit.
//   - A directory of a recursive copy (made by the copy or merged into),
//     once every entry in it is finished: its own entries, and the
//     attributes it got last. DirSync.Finished.
//   - Any other directory the copy made a new entry in (a directory, a
//     link, a special file in DEST's directory, a directory --parents
//     made): when the caller finishes that directory. DirSync.Finished.
//
// Every new entry but a regular file is made through the DirSync of the
// directory it goes into (Mkdir, Link, Replace), which records that the
// directory changed: the caller never says so itself. A backup of DEST is
// the one entry made without a record (a nil DirSync): the new DEST that
// follows it is recorded or committed, and that fsync makes both durable;
// should the new DEST fail, the backup is taken back. A device's entry in
// /dev does not change and its directory is not fsynced. The caller makes
// entries and reports directories finished; durability records, decides
// and fsyncs.

// DirSync makes new entries in one directory the caller writes into, and
// records that it did, for the rule above. Its zero value is a directory
// nothing was added to; a nil *DirSync makes entries without recording
// them, and finishes a directory nothing was added to. Its methods may be
// called from several goroutines.
type DirSync struct {
	added atomic.Bool
	sys   *sysCalls // nil: the real calls (sys.go); a test's own
}

// Mkdir creates the directory name in dir as fsdir.Dir.Mkdir does (mode
// 0700; made false, with no error, when the name is taken) and records a
// directory it made.
func (d *DirSync) Mkdir(dir *fsdir.Dir, name string) (made bool, err error) {
	made, err = dir.Mkdir(name)
	if made {
		d.record()
	}
	return made, err
}

// Link makes the new entry name in dir with link, a hard or symbolic link
// made in place (linkat, symlinkat: it fails when the name is taken), and
// records it.
func (d *DirSync) Link(dir *fsdir.Dir, name string, link func(Entry) error) error {
	if err := dir.Err(); err != nil {
		return err
	}
	if err := link(Entry{Dir: dir.Fd(), Name: name, Path: shownIn(dir, name)}); err != nil {
		return err
	}
	d.record()
	return nil
}

// Replace puts a new entry at name in dir as replace does (made under a
// temporary name and renamed over DEST) and records it.
func (d *DirSync) Replace(s *Session, dir *fsdir.Dir, name string, create, finish func(Entry) error) ([]Leftover, error) {
	left, err := replace(s, dir, name, create, finish)
	if err == nil {
		d.record()
	}
	return left, err
}

// record notes a new entry made through d.
func (d *DirSync) record() {
	if d != nil {
		d.added.Store(true)
	}
}

// Finished reports that the caller is done with the directory open as fd;
// copied is true for a directory that is itself a copy of a source
// directory. It fsyncs fd if the rule above asks for it in mode.
func (d *DirSync) Finished(mode SyncMode, fd int, copied bool) error {
	added := d != nil && d.added.Load()
	if mode == SyncNone || !(copied || added) {
		return nil
	}
	sys := &defaultSys
	if d != nil && d.sys != nil {
		sys = d.sys
	}
	return ignoringEINTR(func() error { return sys.fsync(fd) })
}
