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
	// digest is the source's digest (--checksum), once copied.
	digest []byte
}

// top reports whether the entry is a command-line operand (looked at in
// the current directory, by the name the user gave).
func (j *job) top() bool { return j.p.src == cwd }
