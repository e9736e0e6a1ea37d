// SPDX-License-Identifier: MIT

package durability

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWritesInPlace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		k             Kind
		plain, option bool // without and with --inplace
	}{
		{KindNone, false, false},
		{KindRegular, false, true},
		{KindDir, false, false},
		{KindSymlink, false, false},
		{KindDevice, true, true},
		{KindFIFO, true, true},
		{KindPseudo, true, true},
	} {
		if got := WritesInPlace(c.k, false); got != c.plain {
			t.Errorf("kind %d without --inplace: in place %v, want %v", c.k, got, c.plain)
		}
		if got := WritesInPlace(c.k, true); got != c.option {
			t.Errorf("kind %d with --inplace: in place %v, want %v", c.k, got, c.option)
		}
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "f")
	fifo := filepath.Join(dir, "p")
	link := filepath.Join(dir, "l")
	if err := os.WriteFile(reg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		pseudo bool
		want   Kind
	}{
		{reg, false, KindRegular},
		{reg, true, KindPseudo},
		{dir, false, KindDir},
		{link, false, KindSymlink},
		{"/dev/null", false, KindDevice},
		{fifo, false, KindFIFO},
		{sock, false, KindFIFO},
		{"/proc/self/status", true, KindPseudo},
	} {
		var st unix.Stat_t
		if err := unix.Lstat(c.path, &st); err != nil {
			t.Fatal(err)
		}
		if got := KindOf(&st, c.pseudo); got != c.want {
			t.Errorf("%s (pseudo %v): kind %d, want %d", c.path, c.pseudo, got, c.want)
		}
	}
}
