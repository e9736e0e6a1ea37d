// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FIEMAP (linux/fiemap.h), which golang.org/x/sys/unix does not wrap.
const (
	fsIocFiemap        = 0xc020660b // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync     = 0x1        // flush the file before mapping it
	fiemapExtentLast   = 0x1
	fiemapExtentShared = 0x2000
	fiemapBatch        = 64
)

// fiemapExtent is struct fiemap_extent.
type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

// fiemapReq is struct fiemap followed by room for fiemapBatch extents.
type fiemapReq struct {
	Start, Length                               uint64
	Flags, MappedExtents, ExtentCount, Reserved uint32
	Extents                                     [fiemapBatch]fiemapExtent
}

// fiemap returns the extents of the file at path.
func fiemap(path string) ([]fiemapExtent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var all []fiemapExtent
	for start := uint64(0); ; {
		req := fiemapReq{Start: start, Length: ^uint64(0) - start, Flags: fiemapFlagSync, ExtentCount: fiemapBatch}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); errno != 0 {
			return nil, &os.PathError{Op: "ioctl(FS_IOC_FIEMAP)", Path: path, Err: errno}
		}
		n := int(req.MappedExtents)
		all = append(all, req.Extents[:n]...)
		if n == 0 || n < fiemapBatch || req.Extents[n-1].Flags&fiemapExtentLast != 0 {
			return all, nil
		}
		last := req.Extents[n-1]
		start = last.Logical + last.Length
	}
}

// freeBytes returns the space available on dir's filesystem once the
// filesystem has written back everything pending.
func freeBytes(t testing.TB, dir string) int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(d.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// assertShared fails the test unless every extent of path is shared with
// another file and the extents cover size bytes.
func assertShared(t testing.TB, path string, size int64) {
	t.Helper()
	exts, err := fiemap(path)
	if err != nil {
		t.Fatal(err)
	}
	var covered uint64
	for _, e := range exts {
		if e.Flags&fiemapExtentShared == 0 {
			t.Errorf("%s: extent at %d (%d bytes, flags %#x) is not shared", path, e.Logical, e.Length, e.Flags)
		}
		covered += e.Length
	}
	if covered < uint64(size) {
		t.Errorf("%s: extents cover %d bytes of %d", path, covered, size)
	}
}

// TestReflinkSharesExtents checks that a clone on xfs and btrfs shares the
// source's extents (FIEMAP says FIEMAP_EXTENT_SHARED) and costs no space,
// with --strategy=reflink, with auto, and with copy_file_range (which the
// kernel turns into a clone on these filesystems).
//
// It does not call t.Parallel: it measures free space, and no other test
// may write to the same filesystems meanwhile. Its two subtests use
// different filesystems and run in parallel with each other.
func TestReflinkSharesExtents(t *testing.T) {
	const size = 64 << 20
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := fsDir(t, kind)
			src := join(dir, "src")
			writeFile(t, src, randomBytes(size, kind), 0o644)
			for _, s := range []string{"reflink", "auto", "copy_file_range"} {
				t.Run(s, func(t *testing.T) {
					dst := join(dir, "clone-"+s)
					defer os.Remove(dst)
					before := freeBytes(t, dir)
					wantSuccess(t, fastcp(t, dir, "--strategy="+s, src, dst))
					after := freeBytes(t, dir)
					assertSameContent(t, src, dst)
					assertNoTemps(t, dir)
					assertShared(t, dst, size)
					assertShared(t, src, size)
					if used := before - after; used > size/4 {
						t.Errorf("free space dropped by %d bytes (%s) for a clone of %d bytes", used, mib(used), size)
					}
				})
			}
		})
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestReflinkAlways checks cp's --reflink=always: a clone or an error in
// cp's words ("failed to clone DST from SRC"), also for a file that has no
// data extents at all (cp asks for the clone before looking at holes).
func TestReflinkAlways(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pair   fsPair
		file   string // "dense" or "allholes"
		reason string // the error text; "" when the clone works
	}{
		{fsPair{"ext4", "ext4"}, "dense", "Operation not supported"},
		{fsPair{"ext4", "ext4"}, "allholes", "Operation not supported"},
		{fsPair{"tmpfs", "tmpfs"}, "allholes", "Operation not supported"},
		{fsPair{"ext4", "tmpfs"}, "dense", "Invalid cross-device link"},
		{fsPair{"xfs", "btrfs"}, "allholes", "Invalid cross-device link"},
		{fsPair{"xfs", "xfs"}, "dense", ""},
		{fsPair{"btrfs", "btrfs"}, "allholes", ""},
	} {
		t.Run(c.pair.String()+"-"+c.file, func(t *testing.T) {
			t.Parallel()
			srcDir, dstDir := fsDir(t, c.pair.src), fsDir(t, c.pair.dst)
			src, dst := join(srcDir, "src"), join(dstDir, "dst")
			if c.file == "dense" {
				writeFile(t, src, randomBytes(1<<20, "dense"), 0o644)
			} else {
				writeSparse(t, src, 16<<20, nil)
			}
			r := fastcp(t, dstDir, "--reflink=always", src, dst)
			if c.reason != "" {
				wantFailure(t, r, 1, "fastcp: failed to clone "+q(dst)+" from "+q(src)+": "+c.reason+"\n")
				assertNotExist(t, dst)
				assertNoTemps(t, dstDir)
				return
			}
			wantSuccess(t, r)
			assertSameContent(t, src, dst)
			assertNoTemps(t, dstDir)
			if c.file == "dense" {
				assertShared(t, dst, 1<<20)
			}
		})
	}
}
