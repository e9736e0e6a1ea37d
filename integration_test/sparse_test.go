// SPDX-License-Identifier: MIT

package integration_test

import (
	"os"
	"testing"
)

// TestSparseNever checks that --sparse=never writes every hole as zeros:
// the copy of a 64 MiB sparse file on ext4 is fully allocated, whatever
// the strategy.
func TestSparseNever(t *testing.T) {
	t.Parallel()
	dir := fsDir(t, "ext4")
	const size = 64 << 20
	src := join(dir, "src")
	writeSparse(t, src, size, []span{{off: 32 << 20, data: randomBytes(64<<10, "never")}})
	if b := blocks(t, src); b*512 >= size {
		t.Fatalf("the source is not sparse: %d blocks", b)
	}
	for _, s := range []string{"auto", "copy_file_range", "sendfile", "splice", "rw"} {
		t.Run(s, func(t *testing.T) {
			dst := join(dir, "copy-"+s)
			defer os.Remove(dst)
			wantSuccess(t, fastcp(t, dir, "--sparse=never", "--strategy="+s, src, dst))
			assertSameContent(t, src, dst)
			assertNoTemps(t, dir)
			if b := blocks(t, dst); b*512 < size {
				t.Errorf("--sparse=never: the copy takes %d bytes of disk for %d bytes of data and holes, want it fully allocated", b*512, size)
			}
		})
	}
}

// TestSparseAlways checks that --sparse=always turns written zero blocks
// of a fully allocated file into holes, with the rw loop forced or chosen
// by auto (on filesystems that cannot clone, where auto does not share
// extents instead).
func TestSparseAlways(t *testing.T) {
	t.Parallel()
	const data = 1 << 20
	content := append(append(randomBytes(data, "head"), make([]byte, 4<<20)...), randomBytes(data, "tail")...)
	for _, c := range []struct{ fs, strategy string }{
		{"ext4", "auto"}, {"tmpfs", "auto"},
		{"ext4", "rw"}, {"tmpfs", "rw"}, {"xfs", "rw"}, {"btrfs", "rw"},
	} {
		t.Run(c.fs+"-"+c.strategy, func(t *testing.T) {
			t.Parallel()
			dir := fsDir(t, c.fs)
			src := join(dir, "src")
			writeFile(t, src, content, 0o644)
			if b := blocks(t, src); b*512 < int64(len(content)) {
				t.Fatalf("the source should be fully allocated, it takes %d blocks", b)
			}
			dst := join(dir, "copy")
			wantSuccess(t, fastcp(t, dir, "--sparse=always", "--strategy="+c.strategy, src, dst))
			assertSameContent(t, src, dst)
			assertNoTemps(t, dir)
			if b := blocks(t, dst); b > 2*data/512+defaultHoleSlack {
				t.Errorf("--sparse=always: the copy takes %d bytes of disk, want about %d (4 MiB of zeros made holes)", b*512, 2*data)
			}

			dbg := join(dir, "copy-debug")
			r := fastcp(t, dir, "--debug", "--sparse=always", "--strategy="+c.strategy, src, dbg)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("--debug run: want exit 0 and no stderr, got %v", r)
			}
			assertSameContent(t, src, dbg)
			if d := parseDebug(t, r.stdout, src, dbg); d.sparse != "zeros" {
				t.Errorf("want 'sparse detection: zeros' for a non-sparse source with --sparse=always:\n%s", r.stdout)
			}
		})
	}
}
