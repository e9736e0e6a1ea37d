// SPDX-License-Identifier: MIT

package fsdir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// chain opens root/a/b/c/... (depth levels, made first) as nodes of w,
// each unpinned once opened, and returns them, the root's first.
func chain(t *testing.T, w *Window, root string, depth int) []*Node {
	t.Helper()
	p := root
	for i := 0; i < depth; i++ {
		p = filepath.Join(p, string(rune('a'+i)))
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*Node{w.Root(d, true)}
	nodes[0].Put()
	for i := 0; i < depth; i++ {
		parent := nodes[len(nodes)-1]
		pd, err := parent.Get()
		if err != nil {
			t.Fatal(err)
		}
		sub, st, err := pd.OpenReadable(string(rune('a'+i)), false)
		parent.Put()
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, w.Child(parent, string(rune('a'+i)), false, true, sub, IDOf(&st)))
		nodes[len(nodes)-1].Put()
	}
	return nodes
}

// openCount is the number of the nodes that are open.
func openCount(w *Window, nodes []*Node) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, x := range nodes {
		if x.d != nil {
			n++
		}
	}
	return n
}

// A window keeps at most its limit of idle directories open, and a node
// it closed is opened again, in its parent (opened again first), as the
// directory it was: the same inode, named as before.
func TestWindowReopens(t *testing.T) {
	root := t.TempDir()
	w := NewWindow(3)
	nodes := chain(t, w, root, 8)
	if n := openCount(w, nodes); n != 3 {
		t.Fatalf("%d directories open in a window of 3", n)
	}
	// The root and the first levels were closed, least recently used
	// first: the deepest are open.
	if openCount(w, nodes[:6]) != 0 {
		t.Fatalf("the window kept the least recently used")
	}
	d, err := nodes[2].Get()
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(d.Fd(), &st); err != nil || IDOf(&st) != nodes[2].ID() {
		t.Fatalf("opened again as %v (%v), want %v", IDOf(&st), err, nodes[2].ID())
	}
	if want := filepath.Join(root, "a", "b"); d.Path() != want || nodes[2].Path() != want {
		t.Errorf("named %q and %q, want %q", d.Path(), nodes[2].Path(), want)
	}
	nodes[2].Put()
	if n := openCount(w, nodes); n > 3 {
		t.Fatalf("%d directories open in a window of 3", n)
	}
}

// A pinned node is never closed: the window goes over its limit by the
// pinned ones, and back to it as they are unpinned.
func TestWindowPinned(t *testing.T) {
	w := NewWindow(2)
	nodes := chain(t, w, t.TempDir(), 5)
	for _, n := range nodes {
		if _, err := n.Get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := openCount(w, nodes); n != len(nodes) {
		t.Fatalf("%d of %d pinned directories open", n, len(nodes))
	}
	for _, n := range nodes {
		n.Put()
	}
	if n := openCount(w, nodes); n != 2 {
		t.Fatalf("%d directories open once unpinned, in a window of 2", n)
	}
}

// A directory replaced meanwhile (renamed away, another one made under its
// name) is not opened again: ErrReplaced.
func TestWindowRefusesAReplacedDirectory(t *testing.T) {
	root := t.TempDir()
	w := NewWindow(2)
	nodes := chain(t, w, root, 6)
	if openCount(w, nodes[:2]) != 0 {
		t.Fatal("level a is still open")
	}
	a := filepath.Join(root, "a")
	if err := os.Rename(a, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(a, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	// No child of a is open: a is looked for in the root, by its name.
	if _, err := nodes[1].Get(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("a replaced directory opened again: %v", err)
	}
	if _, err := nodes[2].Get(); !errors.Is(err, ErrReplaced) {
		t.Fatalf("below a replaced directory: %v", err)
	}
}

// A directory whose child is open is opened again as the child's "..":
// here the level above it was renamed, so that by name from the root it
// is found no more, and it is still reached, the directory it was.
func TestWindowReopensThroughAChild(t *testing.T) {
	root := t.TempDir()
	w := NewWindow(2)
	nodes := chain(t, w, root, 5) // r a b c d e: d and e open
	if openCount(w, nodes[4:]) != 2 || openCount(w, nodes[:4]) != 0 {
		t.Fatal("not the deepest two open")
	}
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "a2")); err != nil {
		t.Fatal(err)
	}
	cd, err := nodes[3].Get()
	if err != nil {
		t.Fatalf("c not opened again through its open child: %v", err)
	}
	defer nodes[3].Put()
	var st unix.Stat_t
	if err := unix.Fstat(cd.Fd(), &st); err != nil || IDOf(&st) != nodes[3].ID() {
		t.Fatal("not c")
	}
	// a has no child open: it is looked for by name in the root, where
	// it is no more.
	if _, err := nodes[1].Get(); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("a, whose way by name is gone: %v", err)
	}
}

// Done nodes are the first closed when the window needs room, so that
// what is still to come back to stays open.
func TestWindowClosesDoneFirst(t *testing.T) {
	w := NewWindow(4)
	nodes := chain(t, w, t.TempDir(), 4) // a b c d open, root closed
	nodes[4].Done()
	nodes[3].Done()
	// Opening the root again needs room: d and c go, a and b stay.
	if _, err := nodes[0].Get(); err != nil {
		t.Fatal(err)
	}
	nodes[0].Put()
	w.mu.Lock()
	var open []string
	for i, n := range nodes {
		if n.d != nil {
			open = append(open, string("rabcd"[i]))
		}
	}
	w.mu.Unlock()
	slices.Sort(open)
	if got := strings.Join(open, ""); got != "abcr" {
		t.Fatalf("open after the root came back: %q", got)
	}
}

// ReadNames lists every entry, "." and ".." left out, from the start
// however far the descriptor was read before.
func TestReadNames(t *testing.T) {
	root := t.TempDir()
	var want []string
	for i := 0; i < 2000; i++ {
		n := strings.Repeat("x", i%50) + string(rune('A'+i%26)) + string(rune('0'+i%10)) + "-" + filepath.Base(t.Name()) + string(rune(0x4e00+i))
		want = append(want, n)
		if err := os.WriteFile(filepath.Join(root, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for range 2 {
		got, err := d.ReadNames()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%d names listed, want %d", len(got), len(want))
		}
	}
}
