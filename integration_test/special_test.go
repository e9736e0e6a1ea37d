// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// kernelRefuses tries strategy (sendfile or splice) on the source src
// opened from path (a /proc file, or the read end of a pipe holding data)
// and returns the errno the kernel refuses it with, or 0 if it works. A
// forced strategy must succeed exactly when the kernel does it.
func kernelRefuses(t testing.TB, strategy string, src *os.File) unix.Errno {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	switch strategy {
	case "sendfile":
		_, err = unix.Sendfile(int(out.Fd()), int(src.Fd()), nil, 1<<16)
	case "splice":
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		_, err = unix.Splice(int(src.Fd()), nil, p[1], nil, 1<<16, 0)
	default:
		return 0
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// wantForcedRefusal checks exit 1 and one line naming the strategy and errno.
func wantForcedRefusal(t testing.TB, r result, strategy, src, dst string, errno unix.Errno) {
	t.Helper()
	wantFailure(t, r, 1, "")
	prefix := fmt.Sprintf("fastcp: cannot copy %s to %s with --strategy=%s: ", q(src), q(dst), strategy)
	ls := lines(r.stderr)
	if len(ls) != 1 || !strings.HasPrefix(ls[0], prefix) || !strings.Contains(ls[0], unix.ErrnoName(errno)) {
		t.Errorf("want one line starting %q and naming %s, got stderr %q", prefix, unix.ErrnoName(errno), r.stderr)
	}
}

// statusFields returns the field names of a /proc/PID/status text.
func statusFields(b []byte) []string {
	var names []string
	for _, l := range lines(string(b)) {
		name, _, ok := strings.Cut(l, ":")
		if ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestProcFiles copies /proc files, whose st_size is 0 although they hold
// data, and a sysfs file, whose st_size is 4096 whatever it holds: the
// copy must hold exactly what a read gives. /proc/version and the sysfs
// file must match what cat reads; /proc/self/status (fastcp's own) must be
// complete: non-empty, end with a newline and have the fields a fresh read
// has.
func TestProcFiles(t *testing.T) {
	t.Parallel()
	// A sysfs file says st_size 4096 whatever it holds: the copy must hold
	// what a read gives, not 4096 bytes.
	const sysFile = "/sys/devices/system/cpu/possible"
	for _, file := range []string{"/proc/version", "/proc/self/status", sysFile} {
		for _, s := range []string{"auto", "rw", "sendfile", "splice"} {
			t.Run(strings.ReplaceAll(file[1:], "/", "_")+"-"+s, func(t *testing.T) {
				t.Parallel()
				if _, err := os.Stat(file); err != nil {
					t.Skipf("this kernel has no %s", file)
				}
				dir := t.TempDir()
				dst := join(dir, "copy")
				var refused unix.Errno
				if s == "sendfile" || s == "splice" {
					f, err := os.Open(file)
					if err != nil {
						t.Fatal(err)
					}
					refused = kernelRefuses(t, s, f)
					f.Close()
				}
				r := fastcp(t, dir, "--strategy="+s, file, dst)
				assertNoTemps(t, dir)
				if refused != 0 {
					// This kernel cannot do it from this file: a forced
					// strategy must fail, not fall back or copy nothing.
					wantForcedRefusal(t, r, s, file, dst, refused)
					assertNotExist(t, dst)
					return
				}
				wantSuccess(t, r)
				got, err := os.ReadFile(dst)
				if err != nil {
					t.Fatal(err)
				}
				fresh, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if file != "/proc/self/status" {
					if !bytes.Equal(got, fresh) {
						t.Fatalf("copy of %s:\n got %q\nwant %q", file, got, fresh)
					}
					return
				}
				if len(got) == 0 || got[len(got)-1] != '\n' {
					t.Fatalf("copy of %s is empty or cut short: %q", file, got)
				}
				if g, w := statusFields(got), statusFields(fresh); !slices.Equal(g, w) {
					t.Fatalf("copy of %s has fields %v, a fresh read %v", file, g, w)
				}
			})
		}
	}
}

// mkfifo makes a FIFO at path.
func mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pipeProbe returns the read end of a pipe that holds some data, to ask
// the kernel what it does with a FIFO source.
func pipeProbe(t testing.TB) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	w.Write([]byte("probe"))
	w.Close()
	return r
}

// TestFIFOSource copies what a writer puts into a FIFO, 3 MiB, into a
// regular file, reading until the writer closes it.
func TestFIFOSource(t *testing.T) {
	t.Parallel()
	data := randomBytes(3<<20, "fifo")
	for _, s := range []string{"auto", "splice", "rw", "sendfile", "copy_file_range"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo, dst := join(dir, "fifo"), join(dir, "copy")
			mkfifo(t, fifo)
			var refused unix.Errno
			switch s {
			case "sendfile", "splice":
				refused = kernelRefuses(t, s, pipeProbe(t))
			case "copy_file_range":
				refused = unix.EINVAL // copy_file_range(2): "fd_in or fd_out is not a regular file"
			}
			wrote := fifoWriter(fifo, data, nil)
			r := fastcp(t, dir, "--strategy="+s, fifo, dst)
			werr := waitFIFOPeer(t, fifo, wrote)
			assertNoTemps(t, dir)
			if refused != 0 {
				wantForcedRefusal(t, r, s, fifo, dst, refused)
				assertNotExist(t, dst)
				return
			}
			wantSuccess(t, r)
			if werr != nil {
				t.Errorf("the writer: %v", werr)
			}
			assertFileBytes(t, dst, data)
		})
	}
}

// TestFIFODest writes into a FIFO in place: a reader gets every byte, and
// the FIFO is still a FIFO afterwards (not replaced by a regular file).
func TestFIFODest(t *testing.T) {
	t.Parallel()
	data := randomBytes(3<<20+17, "fifo-dest")
	for _, s := range []string{"auto", "sendfile", "splice", "rw"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, fifo := join(dir, "src"), join(dir, "fifo")
			writeFile(t, src, data, 0o644)
			mkfifo(t, fifo)
			_, wait := fifoReader(t, fifo)
			r := fastcp(t, dir, "--strategy="+s, src, fifo)
			got := wait()
			wantSuccess(t, r)
			if got.err != nil {
				t.Fatalf("the reader: %v", got.err)
			}
			if !bytes.Equal(got.data, data) {
				t.Errorf("the reader got %d bytes that differ from the %d sent (first difference at %d)", len(got.data), len(data), firstDiff(got.data, data))
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
				t.Errorf("the FIFO is no longer a FIFO: %v %v", fi.Mode(), err)
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestDevNullDest copies into /dev/null: exit 0, and the device stays the
// device. As root a private node of the same device (1:3) is tried first,
// so that a fastcp that replaces its DEST cannot break the machine's
// /dev/null.
func TestDevNullDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := join(dir, "src")
	writeFile(t, src, randomBytes(1<<20+3, "null"), 0o644)
	type null struct{ name, path string }
	nulls := []null{{"dev-null", "/dev/null"}}
	if os.Geteuid() == 0 {
		own := join(dir, "null")
		if err := unix.Mknod(own, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		nulls = []null{{"own-node", own}, {"dev-null", "/dev/null"}}
	}
	for _, n := range nulls {
		null := n.path
		for _, s := range []string{"auto", "sendfile", "splice", "rw"} {
			ok := t.Run(n.name+"-"+s, func(t *testing.T) {
				wantSuccess(t, fastcp(t, dir, "--strategy="+s, src, null))
				st := statT(t, null)
				if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
					t.Fatalf("%s is no longer the null device: mode %#o rdev %#x", null, st.Mode, st.Rdev)
				}
				assertNoTemps(t, dir, "/dev")
			})
			if !ok {
				t.Fatalf("not trying /dev/null after %s failed", null)
			}
		}
	}
}

// TestDeviceSources copies finite devices: /dev/null gives an empty regular
// file; a block device (st_size 0, root only: a loop device over a 4 MiB
// image) gives a regular file with all of the device's bytes. A forced
// strategy the kernel cannot do from the device is refused, not replaced.
func TestDeviceSources(t *testing.T) {
	t.Parallel()
	t.Run("dev-null", func(t *testing.T) {
		t.Parallel()
		for _, s := range []string{"auto", "rw", "sendfile", "splice"} {
			t.Run(s, func(t *testing.T) {
				dir := t.TempDir()
				dst := join(dir, "copy")
				var refused unix.Errno
				if s == "sendfile" || s == "splice" {
					f, err := os.Open("/dev/null")
					if err != nil {
						t.Fatal(err)
					}
					refused = kernelRefuses(t, s, f)
					f.Close()
				}
				r := fastcp(t, dir, "--strategy="+s, "/dev/null", dst)
				assertNoTemps(t, dir)
				if refused != 0 {
					wantForcedRefusal(t, r, s, "/dev/null", dst, refused)
					assertNotExist(t, dst)
					return
				}
				wantSuccess(t, r)
				assertFileBytes(t, dst, nil)
			})
		}
	})
	t.Run("block-device", func(t *testing.T) {
		t.Parallel()
		needLoop(t)
		dir := t.TempDir()
		img := join(dir, "img")
		data := randomBytes(4<<20, "blockdev")
		writeFile(t, img, data, 0o644)
		out, err := exec.Command("losetup", "--find", "--show", img).Output()
		if err != nil {
			t.Fatalf("losetup: %v", err)
		}
		dev := strings.TrimSpace(string(out))
		t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
		for _, s := range []string{"auto", "rw", "sendfile", "splice", "copy_file_range"} {
			t.Run(s, func(t *testing.T) {
				dst := join(dir, "copy-"+s)
				r := fastcp(t, dir, "--strategy="+s, dev, dst)
				assertNoTemps(t, dir)
				if s == "copy_file_range" {
					// copy_file_range(2): EINVAL when fd_in is not a regular file.
					wantForcedRefusal(t, r, s, dev, dst, unix.EINVAL)
					assertNotExist(t, dst)
					return
				}
				wantSuccess(t, r)
				assertFileBytes(t, dst, data)
			})
		}
	})
}
