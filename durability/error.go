// SPDX-License-Identifier: MIT

package durability

import "errors"

// Op names the call a durability step failed in.
type Op string

// The calls an Error can name.
const (
	OpCreate         Op = "create"
	OpClose          Op = "close"
	OpRename         Op = "rename"
	OpFcntl          Op = "fcntl"
	OpFdatasync      Op = "fdatasync"
	OpFsync          Op = "fsync"
	OpFsyncDir       Op = "fsync directory"
	OpSyncFileRange  Op = "sync_file_range"
	OpSetxattrResume Op = "setxattr " + MarkXattr
	OpVerify         Op = "verify"
)

// Error is a failure of the durability steps, naming the step.
type Error struct {
	Op  Op
	Err error
}

func (e *Error) Error() string { return string(e.Op) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Committed reports whether err came once DEST already was the new copy:
// the fsync of its directory after the rename (or link) failed, so its
// name may not survive a power cut. Nothing is undone then: the old DEST
// is gone, and the new one is complete.
func Committed(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Op == OpFsyncDir
}
