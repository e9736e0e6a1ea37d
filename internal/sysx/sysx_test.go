// SPDX-License-Identifier: MIT

package sysx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRetryRepeatsOnlyEINTR(t *testing.T) {
	calls := 0
	v, err := Retry(func() (int, error) {
		calls++
		if calls < 3 {
			return 0, unix.EINTR
		}
		return 7, unix.EIO
	})
	if v != 7 || err != unix.EIO || calls != 3 {
		t.Errorf("Retry = %d, %v after %d calls, want 7, EIO after 3", v, err, calls)
	}
	calls = 0
	if err := IgnoringEINTR(func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Errorf("IgnoringEINTR = %v after %d calls, want nil after 1", err, calls)
	}
}

func TestOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f, err := Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Errorf("F_GETFD = %#x, %v: want FD_CLOEXEC", fl, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640&^umask() {
		t.Errorf("created %v, %v", fi.Mode(), err)
	}
	var pe *os.PathError
	if _, err := Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o640); !errors.As(err, &pe) || pe.Err != unix.EEXIST || pe.Path != p {
		t.Errorf("second O_EXCL open: %v, want an *os.PathError with EEXIST", err)
	}
}

func umask() os.FileMode {
	return os.FileMode(Umask())
}
