// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// rchar is the bytes this process has read so far (/proc/self/io).
func rchar(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// --verify of a sparse copy reads only the data, on both sides: a copy of
// 1 GiB with two pieces of data reads little more than their chunks, and a
// difference still shows, in a data extent and in a hole of the source
// that has data in the copy.
func TestVerifySkipsHoles(t *testing.T) {
	const size = 1 << 30
	data := randomData(64 << 10)
	spans := []int64{0, 700 << 20}
	// The cases, one after the other, only read the source: one for all.
	src, err := os.Create(filepath.Join(t.TempDir(), "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, off := range spans {
		src.WriteAt(data, off)
	}
	src.Truncate(size)
	for _, corrupt := range []int64{-1, 700<<20 + 5, 300 << 20} {
		t.Run(strconv.FormatInt(corrupt, 10), func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "dest")
			sys := testSys()
			if corrupt >= 0 {
				corruptBeforeVerify(sys, corrupt)
			}
			d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Sync: SyncData, Source: src, sys: sys})
			if err != nil {
				t.Fatal(err)
			}
			for _, off := range spans {
				if _, err := d.File.WriteAt(data, off); err != nil {
					t.Fatal(err)
				}
				d.Written(off, int64(len(data)))
			}
			unix.Ftruncate(int(d.File.Fd()), size)
			before := rchar(t)
			err = d.Commit(src)
			read := rchar(t) - before
			if corrupt < 0 {
				if err != nil {
					t.Fatal(err)
				}
				if read > 64<<20 {
					t.Errorf("--verify read %d bytes of a copy holding %d bytes of data", read, 2*len(data))
				}
				return
			}
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("Commit: %v, want a mismatch at %d", err, corrupt)
			}
			lo := corrupt &^ (verifyChunk - 1)
			if !strings.Contains(err.Error(), "in bytes "+strconv.FormatInt(lo, 10)+"-") {
				t.Errorf("%v: want the chunk at %d", err, lo)
			}
		})
	}
}
