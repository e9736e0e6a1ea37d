// SPDX-License-Identifier: MIT

package durability

import "sync/atomic"

// When a directory is fsynced: the one rule, for every --sync mode but
// none (which fsyncs nothing).
//
//   - A regular file's directory, after the rename of the temporary file
//     over DEST (or the creation of DEST in place): Destination.Commit.
//   - A directory of a recursive copy (made by the copy or merged into),
//     once every entry in it is finished: its own entries, and the
//     attributes it got last. DirSync.Finished.
//   - Any other directory the copy wrote a new entry into that
//     durability did not sync itself (a directory, a link, a special file
//     in DEST's directory, a directory --parents made): when the caller
//     finishes that directory. DirSync.Added, then DirSync.Finished.
//
// A device's entry in /dev does not change and its directory is not
// fsynced. The caller only reports events (entries added, directories
// finished); durability decides and fsyncs.

// DirSync collects what happened in one directory the caller writes
// into, for the rule above. Its zero value is a directory nothing was
// added to. Added may be called from several goroutines.
type DirSync struct {
	added atomic.Bool
	sys   *sysCalls // nil: the real calls (sys.go); a test's own
}

// Added reports a new entry in the directory that durability did not make
// durable itself: a directory, a hard or symbolic link, a special file.
func (d *DirSync) Added() { d.added.Store(true) }

// Finished reports that the caller is done with the directory open as fd;
// copied is true for a directory that is itself a copy of a source
// directory. It fsyncs fd if the rule above asks for it in mode.
func (d *DirSync) Finished(mode SyncMode, fd int, copied bool) error {
	if mode == SyncNone || !(copied || d.added.Load()) {
		return nil
	}
	sys := d.sys
	if sys == nil {
		sys = &defaultSys
	}
	return ignoringEINTR(func() error { return sys.fsync(fd) })
}
