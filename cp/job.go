// SPDX-License-Identifier: MIT

package cp

import (
	"sync/atomic"

	"fastcp/output"
)

// job is the copy of one entry: SOURCE (e, in p's source directory) to
// DEST (name in p's destination directory), src and dst as messages name
// them, and the record that everything said about the entry goes into, in
// order. Nothing else writes to the terminal while entries are copied.
type job struct {
	a    *app
	r    *record
	p    *dirCopy
	e    *entry
	name string
	src  string
	dst  string
	// digest is the source's digest (--checksum), once copied.
	digest []byte

	// sd and dd are p's source and destination directories, open while
	// the copy runs (open to close).
	sd, dd *dir
	// sub is a directory's copy, once made (copyDir).
	sub *dirCopy
	// finally runs when the entry is done, whatever became of it.
	finally func()

	// For the progress bar: the entry's size and whether it is a
	// regular file, as looked at when it was scheduled, and the bytes
	// the copier counted for it.
	size    int64
	regular bool
	counted atomic.Int64
}

// top reports whether the entry is a command-line operand (looked at in
// the current directory, by the name the user gave).
func (j *job) top() bool { return j.p.e == nil }

// open pins the directories the copy works in, opening them again where
// the window closed them; false, with the entry failed, when one is no
// longer there or no longer the same.
func (j *job) open() bool {
	p := j.p
	sd, err := p.srcN.Get()
	if err != nil {
		j.r.fail(output.CannotAccess(p.srcN.Path(), err))
		return false
	}
	dd, err := p.dstN.Get()
	if err != nil {
		p.srcN.Put()
		j.r.fail(output.CannotAccess(p.dstN.Path(), err))
		return false
	}
	j.sd, j.dd = sd, dd
	return true
}

// close unpins what open pinned.
func (j *job) close() {
	j.p.srcN.Put()
	j.p.dstN.Put()
	j.sd, j.dd = nil, nil
}

// Add is the copier's progress counter for this entry's copy.
func (j *job) Add(n int64) {
	j.counted.Add(n)
	j.a.progress.Add(n)
}

// accountGroup counts the copies of one regular file to several DESTs
// (js) as one done on the progress bar: the file was read once, and the
// copier counted its bytes once.
func accountGroup(js []*job) {
	lead := js[0]
	if lead.a.progress == nil || !lead.regular {
		return
	}
	var counted int64
	for _, j := range js {
		counted += j.counted.Load()
	}
	lead.a.progress.EntryDone(lead.size, counted)
}

// account counts a regular file as done on the progress bar, however it
// ended (copied, skipped, linked, failed): its bytes are its size as it
// was looked at, whatever the copier counted, so that the bar ends at its
// total.
func (j *job) account() {
	if j.a.progress == nil || !j.regular {
		return
	}
	j.a.progress.EntryDone(j.size, j.counted.Load())
}
