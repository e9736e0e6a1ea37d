// SPDX-License-Identifier: MIT

package cp

import (
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"testing"

	"fastcp/durability"
	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// --parents makes each directory in the one above it as the walk holds
// it open, not in whatever directory that one's name leads to by then.
func TestParentDirFollowsTheDirectoryFd(t *testing.T) {
	top := t.TempDir()
	src := filepath.Join(top, "a")
	os.Mkdir(src, 0o755)
	dst, moved := filepath.Join(top, "dst"), filepath.Join(top, "moved")
	os.Mkdir(dst, 0o755)
	fd, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	in := fsdir.New(fd, dst)
	defer in.Release()
	if err := os.Rename(dst, moved); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(dst, 0o755)
	ap := &app{opts: &flags.Options{}, session: durability.NewSession()}
	d, ok := ap.parentDir(&record{}, src, in, "a", filepath.Join(dst, "a"))
	if !ok {
		t.Fatal("parentDir failed")
	}
	d.Release()
	if fi, err := os.Lstat(filepath.Join(moved, "a")); err != nil || !fi.IsDir() {
		t.Errorf("no directory in the held directory: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "a")); err == nil {
		t.Errorf("the directory was made in the swapped-in one")
	}
	for _, p := range ap.parentDirs {
		p.dir.Release()
		p.in.Release()
	}
}
