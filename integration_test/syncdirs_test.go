// SPDX-License-Identifier: MIT

package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// With --sync, a recursive copy makes every new directory entry durable,
// not only those of regular files: each directory it wrote into is fsynced,
// and so is the parent of the new top directory.
func TestSyncRecursiveDirectories(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tree")
	mustMkdir(t, filepath.Join(src, "sub", "deeper"))
	writeFile(t, filepath.Join(src, "sub", "f"), randomBytes(10000, "f"), 0o644)
	if err := os.Symlink("sub/f", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(src, "sub", "deeper", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"data", "full", "none"} {
		t.Run(mode, func(t *testing.T) {
			dst := filepath.Join(dir, "copy-"+mode)
			tr := faultStrace(t, dir, []string{"-e", "trace=fsync"}, "-a", "--sync="+mode, "tree", filepath.Base(dst))
			if tr.code != 0 {
				t.Fatalf("%v", tr.result)
			}
			synced := map[string]bool{}
			for _, c := range tr.calls {
				if c.name == "fsync" && c.ret == "0" {
					// strace -y shows the descriptor's path: fsync(5</x/y>).
					if i := strings.Index(c.args, "<"); i >= 0 {
						synced[strings.TrimSuffix(c.args[i+1:], ">")] = true
					}
				}
			}
			want := []string{dir, dst, filepath.Join(dst, "sub"), filepath.Join(dst, "sub", "deeper")}
			for _, d := range want {
				if mode == "none" && synced[d] {
					t.Errorf("--sync=none fsynced %s", d)
				}
				if mode != "none" && !synced[d] {
					t.Errorf("--sync=%s did not fsync directory %s (fsynced: %v)", mode, d, synced)
				}
			}
		})
	}
}
