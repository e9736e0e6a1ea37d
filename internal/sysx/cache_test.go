// SPDX-License-Identifier: MIT

package sysx

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEvictAndResident: a file just written is all resident (mincore), and
// none of it after Evict, except on tmpfs, whose pages are the file.
func TestEvictAndResident(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	const size = 1<<20 + 100
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	if n, err := ResidentBytes(int(f.Fd())); err != nil || n != (size+page-1)/page*page {
		t.Fatalf("ResidentBytes of a file just written = %d, %v; want %d", n, err, (size+page-1)/page*page)
	}
	if err := Evict(f); err != nil {
		t.Fatal(err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("tmpfs pages cannot be evicted")
	}
	if n, err := ResidentBytes(int(f.Fd())); err != nil || n != 0 {
		t.Errorf("ResidentBytes after Evict = %d, %v; want 0", n, err)
	}
}
