// SPDX-License-Identifier: MIT

package cp

import (
	"fastcp/flags"
	"fastcp/internal/fsdir"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// checkTargets refuses, with several -t, what cannot be several
// destinations: one directory named twice, by another name, a symbolic
// link or a bind mount (the same device and inode), and a last operand
// that is a directory when there is no -r (a DEST given the way a single
// copy takes it, where every operand is a SOURCE: without -r it would only
// be omitted). A -t that names no directory is the plan's error, as with
// one -t.
func checkTargets(o *flags.Options) *flags.UsageError {
	if len(o.TargetDirs) < 2 {
		return nil
	}
	seen := make(map[fsdir.ID]string, len(o.TargetDirs))
	for _, t := range o.TargetDirs {
		var st unix.Stat_t
		if unix.Stat(t, &st) != nil || !isDir(&st) {
			continue
		}
		id := fsdir.IDOf(&st)
		if prev, ok := seen[id]; ok {
			return flags.SameTargetError(prev, t)
		}
		seen[id] = t
	}
	if n := len(o.Operands); n > 1 && !o.Recursive {
		last := o.Operands[n-1]
		var st unix.Stat_t
		if unix.Stat(last, &st) == nil && isDir(&st) {
			msg, hint := output.LastOperandIsDirectory(last)
			return &flags.UsageError{Msg: msg, Hint: hint}
		}
	}
	return nil
}
