// SPDX-License-Identifier: MIT

package cp

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What -r --resume counts as a complete copy, and so skips.
func TestCompleteCopy(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, size int, mtime time.Time) *unix.Stat_t {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return &st
	}
	lstat := func(p string) *unix.Stat_t {
		var st unix.Stat_t
		unix.Lstat(p, &st)
		return &st
	}
	t0 := time.Unix(1700000000, 123456789)
	src := mk("src", 100, t0)
	same := mk("same", 100, t0)
	older := mk("older", 100, t0.Add(-time.Nanosecond))
	short := mk("short", 99, t0)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	dirFI := lstat(filepath.Join(dir, "d"))
	os.Symlink("src", filepath.Join(dir, "link"))
	linkFI := lstat(filepath.Join(dir, "link"))
	tests := []struct {
		name  string
		dfi   *unix.Stat_t
		mtime bool
		want  bool
	}{
		{"missing", nil, false, false},
		{"same size and mtime", same, true, true},
		{"same size, mtime not preserved", older, false, true},
		{"same size, another mtime, -p", older, true, false},
		{"shorter", short, false, false},
		{"a directory", dirFI, false, false},
		{"a symlink", linkFI, false, false},
	}
	for _, tt := range tests {
		if got := completeCopy(src, tt.dfi, tt.mtime); got != tt.want {
			t.Errorf("%s: completeCopy = %v, want %v", tt.name, got, tt.want)
		}
	}
}
