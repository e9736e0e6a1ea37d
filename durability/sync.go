// SPDX-License-Identifier: MIT

package durability

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// SyncMode is how a copy is made durable (--sync).
type SyncMode int

// Sync modes.
const (
	SyncNone   SyncMode = iota // no flush: the page cache writes back when it likes
	SyncData                   // fdatasync the file, fsync its directory
	SyncFull                   // fsync the file and its directory
	SyncOSync                  // open with O_SYNC, fsync the file and its directory
	SyncODSync                 // open with O_DSYNC, fdatasync the file, fsync its directory
)

// SyncNames lists the --sync values, indexed by SyncMode.
var SyncNames = []string{"none", "data", "full", "osync", "odsync"}

func (m SyncMode) String() string {
	if m < 0 || int(m) >= len(SyncNames) {
		return fmt.Sprintf("SyncMode(%d)", int(m))
	}
	return SyncNames[m]
}

// SyncModes returns every mode, in the order of SyncNames (for the benchmark).
func SyncModes() []SyncMode { return []SyncMode{SyncNone, SyncData, SyncFull, SyncOSync, SyncODSync} }

// OpenFlags returns the open(2) flags the mode needs: O_SYNC for osync,
// O_DSYNC for odsync, 0 otherwise. They must be given to open itself:
// fcntl(F_SETFL) on Linux changes only O_APPEND, O_ASYNC, O_DIRECT,
// O_NOATIME and O_NONBLOCK and silently ignores the rest (fcntl(2), "File
// status flags"; APUE 3.14 shows the trap), so a program that tries to add
// O_SYNC later gets no error and no synchronous writes.
func (m SyncMode) OpenFlags() int {
	switch m {
	case SyncOSync:
		// O_SYNC is __O_SYNC|O_DSYNC (04010000): file integrity, every
		// write also waits for the metadata (fsync per write).
		return unix.O_SYNC
	case SyncODSync:
		// O_DSYNC (010000): data integrity, every write waits for the
		// data and the metadata needed to read it (fdatasync per write).
		return unix.O_DSYNC
	}
	return 0
}

// FlushOp names the call that makes the file's data durable at the end of
// the copy in mode m ("fdatasync" or "fsync"; "" for none). The O_SYNC and
// O_DSYNC modes still flush: reflink, copy_file_range and sendfile do not
// go through the write path that honours those flags on every filesystem,
// and a flush of a file with nothing dirty costs little.
func (m SyncMode) FlushOp() Op {
	switch m {
	case SyncData, SyncODSync:
		return OpFdatasync
	case SyncFull, SyncOSync:
		return OpFsync
	}
	return ""
}

// flush runs op ("fdatasync" or "fsync") on fd once. Its error is final:
// after a failed fsync the kernel may have marked the pages clean (or
// dropped them) and a second call returns 0 with the data lost (fsync(2),
// NOTES; the PostgreSQL "fsyncgate" of 2018), so callers never call it again.
func (sys *sysCalls) flush(fd int, op Op) error {
	call := sys.fdatasync
	if op == OpFsync {
		call = sys.fsync
	}
	return ignoringEINTR(func() error { return call(fd) })
}
