// SPDX-License-Identifier: MIT

package cp

import (
	"fastcp/internal/fsdir"

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
type dir = fsdir.Dir

// cwd is the current directory, for the operands named on the command line.
var cwd = fsdir.Cwd

// openat is openat(2), again after EINTR (a FIFO's open waiting for a
// writer).
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	return sysx.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
}

// procPath names name in the directory fd (or fd itself, for "") for the
// calls that have no *at form (sysx.FdPath).
var procPath = sysx.FdPath

// devIno is a file's device and inode numbers.
type devIno = fsdir.ID

func idOf(st *unix.Stat_t) devIno { return fsdir.IDOf(st) }

// ignoringEINTR retries a call that a signal cut short (sysx.Retry). A
// function, not a variable: a call through a variable makes every
// closure and pointer passed to it escape to the heap.
func ignoringEINTR(f func() error) error { return sysx.IgnoringEINTR(f) }

func isDir(st *unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }
func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
func isSymlink(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }
