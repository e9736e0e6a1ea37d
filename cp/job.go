// SPDX-License-Identifier: MIT

package cp

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
}

// top reports whether the entry is a command-line operand (looked at in
// the current directory, by the name the user gave).
func (j *job) top() bool { return j.p.src == cwd }

// from is SOURCE as an entry of the directory the walk holds.
func (j *job) from() entryAt { return entryAt{j.p.src, j.e.name} }

// to is DEST as an entry of the directory the walk holds.
func (j *job) to() entryAt { return entryAt{j.p.dst, j.name} }

// fail adds an error message to the entry's record.
func (j *job) fail(msg string) { j.r.fail(msg) }
