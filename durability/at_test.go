// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEntryPointsAtDirectoryFd: Create, Replace and a relative name
// with a directory work relative to the descriptor the caller holds, not to
// the directory's name: after the directory is renamed away and its name
// taken by another directory, the new entries land in the directory held,
// and the names in Path, TempPath and Entry.Path are the ones the caller
// gave.
func TestEntryPointsAtDirectoryFd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	held := filepath.Join(root, "d")
	if err := os.MkdirAll(filepath.Join(held, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(held, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	held0 := fsdir.New(fd, "shown")
	defer held0.Release()
	moved := filepath.Join(root, "moved")
	if err := os.Rename(held, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(held, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"f", "sub/g"} {
		for _, inPlace := range []bool{false, true} {
			data := []byte(name + " data")
			srcPath := filepath.Join(root, "src")
			if err := os.WriteFile(srcPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := os.Open(srcPath)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			d, err := Create(held0, name, Options{InPlace: inPlace, Named: true, Sync: SyncData, Verify: true})
			if err != nil {
				t.Fatalf("Create(fsdir.Cwd, %q, inplace=%v): %v", name, inPlace, err)
			}
			if want := filepath.Join("shown", name); d.Path != want {
				t.Errorf("Path %q, want %q", d.Path, want)
			}
			if !inPlace && filepath.Dir(d.TempPath()) != filepath.Dir(filepath.Join("shown", name)) {
				t.Errorf("TempPath %q is not in the shown directory of %q", d.TempPath(), name)
			}
			if _, err := d.File.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := d.Commit(src); err != nil {
				t.Fatalf("Commit(%q, inplace=%v): %v", name, inPlace, err)
			}
			got, err := os.ReadFile(filepath.Join(moved, name))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s in the held directory: %q, %v; want %q", name, got, err, data)
			}
			if _, err := os.Lstat(filepath.Join(held, name)); !os.IsNotExist(err) {
				t.Errorf("%s was made under the directory's old name: %v", name, err)
			}
			os.Remove(filepath.Join(moved, name))
		}
	}

	var path string
	if _, err := replace(nil, held0, "link", func(e Entry) error {
		path = e.Path
		return unix.Symlinkat("target", e.Dir, e.Name)
	}, nil); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != "shown" {
		t.Errorf("Entry.Path %q, want it in shown", path)
	}
	if got, err := os.Readlink(filepath.Join(moved, "link")); err != nil || got != "target" {
		t.Errorf("link in the held directory: %q, %v", got, err)
	}
	if _, err := os.Lstat(filepath.Join(held, "link")); !os.IsNotExist(err) {
		t.Errorf("link was made under the directory's old name: %v", err)
	}
	assertNoTemps(t, moved)
	assertNoTemps(t, filepath.Join(moved, "sub"))

	// An empty name is no entry: nothing is made.
	if _, err := Create(held0, "", Options{}); !os.IsNotExist(err) {
		t.Errorf("Create with an empty name: %v, want ENOENT", err)
	}
	assertNoTemps(t, moved)
}
