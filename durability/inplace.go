// SPDX-License-Identifier: MIT

package durability

import "golang.org/x/sys/unix"

// The in-place rule: whether a copy's data goes into DEST itself or into a
// temporary file renamed over DEST. It is decided here alone; cp's
// replacement rule (cp/decide.go) asks it once the options that replace
// DEST by a new entry (--remove-destination, a backup) are ruled out.

// Kind is what an existing DEST is. A symbolic link DEST that the copy
// writes through is the kind of the file it points to.
type Kind int

const (
	KindNone    Kind = iota // no DEST
	KindRegular             // a regular file
	KindDir                 // a directory
	KindSymlink             // a symbolic link (replaced, not followed)
	KindDevice              // a block or character device
	KindFIFO                // a FIFO or a socket
	KindPseudo              // a regular file of /proc, /sys and the like
)

// KindOf classifies an existing DEST from its stat; pseudo says that its
// directory is on a pseudo filesystem (/proc, /sys, ...).
func KindOf(st *unix.Stat_t, pseudo bool) Kind {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if pseudo {
			return KindPseudo
		}
		return KindRegular
	case unix.S_IFDIR:
		return KindDir
	case unix.S_IFLNK:
		return KindSymlink
	case unix.S_IFCHR, unix.S_IFBLK:
		return KindDevice
	}
	return KindFIFO
}

// WritesInPlace reports whether a copy of data onto an existing DEST of
// kind k writes into DEST itself. A device, a FIFO or a socket, and a file
// of a pseudo filesystem always are: what a reader holds is DEST itself, a
// renamed file would replace the node instead of feeding it, and no
// temporary file can be made beside a /proc or /sys file. A regular file
// is written in place only with --inplace (inplace), which keeps its inode,
// owner, hard links and extended attributes and gives up all-or-nothing.
// Nothing else is: no DEST (a new file), a directory (refused) and a
// symbolic link that is not written through (replaced by a new file).
func WritesInPlace(k Kind, inplace bool) bool {
	switch k {
	case KindDevice, KindFIFO, KindPseudo:
		return true
	case KindRegular:
		return inplace
	}
	return false
}
