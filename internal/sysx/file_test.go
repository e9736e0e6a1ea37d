// SPDX-License-Identifier: MIT

package sysx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFile writes through a File, at its position and at offsets, closes
// it, and finds a second Close refused (os.ErrClosed) without closing the
// descriptor number again, which by then may be another file's.
func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFile(fd, path)
	if int(f.Fd()) != fd || f.Name() != path {
		t.Fatalf("Fd %d, Name %q; want %d, %q", f.Fd(), f.Name(), fd, path)
	}
	if n, err := f.Write([]byte("hello, ")); n != 7 || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if n, err := f.WriteAt([]byte("world"), 7); n != 5 || err != nil {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "hello, world" {
		t.Errorf("the file holds %q", got)
	}
	// The number is reused by the next open: a second Close must not
	// close that one.
	other, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Close: %v, want os.ErrClosed", err)
	}
	if _, err := unix.FcntlInt(uintptr(other), unix.F_GETFD, 0); err != nil {
		t.Errorf("the descriptor opened after the Close: %v", err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, unix.EBADF) {
		t.Errorf("Write after Close: %v, want EBADF", err)
	}
}
