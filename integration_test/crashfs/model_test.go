// SPDX-License-Identifier: MIT

package crashfs

import (
	"syscall"
	"testing"
)

// TestModelPolicies checks the crash images of the model directly (no
// mount, no root): what each data policy keeps of unsynced writes, that
// directory changes are kept as a prefix, and that an fsync of a directory
// takes its changes out of the volatile log.
func TestModelPolicies(t *testing.T) {
	s := newState()
	root := s.inodes[rootIno]
	f := s.newInode(syscall.S_IFREG|0o644, 0)
	s.change("create f", s.setEntry(root, "f", f.ino))
	s.writeData(f, dataOp{off: 0, buf: []byte("aaaa")}, false)
	s.syncData(f, false)
	for i, b := range []string{"bb", "cc", "dd", "ee"} {
		s.writeData(f, dataOp{off: int64(4 + 2*i), buf: []byte(b)}, false)
	}
	g := s.newInode(syscall.S_IFREG|0o644, 0)
	s.change("create g", s.setEntry(root, "g", g.ino))
	s.change("rename g h", s.setEntry(root, "g", 0), s.setEntry(root, "h", g.ino))
	sn := &Snapshot{s: s.clone()}
	if sn.MetaOps() != 3 {
		t.Fatalf("%d volatile ops, want 3", sn.MetaOps())
	}
	for p, want := range map[DataPolicy]string{
		DataLost:  "aaaa",
		DataFirst: "aaaabb",
		DataHalf:  "aaaabbcc",
		DataAll:   "aaaabbccddee",
		DataZeros: "aaaa\x00\x00\x00\x00\x00\x00\x00\x00",
		DataOdd:   "aaaabb\x00\x00dd",
	} {
		if e, ok := sn.Image(1, p).Stat("f"); !ok || string(e.Data) != want {
			t.Errorf("%v: f = %q %v, want %q", p, e.Data, ok, want)
		}
	}
	for m, want := range []string{"", "f", "f g", "f h"} {
		got := ""
		for _, n := range sn.Image(m, DataAll).Names("") {
			got += " " + n
		}
		if got != " "+want && !(want == "" && got == "") {
			t.Errorf("%d ops kept: %q, want %q", m, got, want)
		}
	}
	s.syncDir(root)
	if len(s.meta) != 0 {
		t.Errorf("after the directory fsync, %d volatile ops", len(s.meta))
	}
	if names := (&Snapshot{s: s}).Image(0, DataLost).Names(""); len(names) != 2 {
		t.Errorf("after the directory fsync: %v", names)
	}
}
