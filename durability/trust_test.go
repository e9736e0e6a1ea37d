// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The trust rule's checks that need no second user: the caller's own
// file, 0600, one link, is adopted; group write, a second link, a FIFO and
// the copy's own source are refused, and the refused file is untouched.
func TestOpenLeftoverTrustRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("ok", 0o600)
	mk("groupw", 0o620)
	mk("otherw", 0o602)
	mk("linked", 0o600)
	if err := os.Link(filepath.Join(dir, "linked"), filepath.Join(dir, "link2")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	var src unix.Stat_t
	unix.Stat(mk("src", 0o600), &src)
	for _, tc := range []struct{ name, why string }{
		{"ok", ""},
		{"groupw", "writable by group or others"},
		{"otherw", "writable by group or others"},
		{"linked", "2 links"},
		{"fifo", "not a regular file"},
		{"src", "the source of this copy"},
	} {
		fd, st, err := openLeftover(dfd, tc.name, tc.name, unix.O_RDWR, identityOf(&src))
		var d *Distrusted
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: %v, want it adopted", tc.name, err)
		case tc.why == "" && st.Nlink != 1:
			t.Errorf("%s: fstat %+v", tc.name, st)
		case tc.why != "" && (!errors.As(err, &d) || !strings.Contains(d.Why, tc.why)):
			t.Errorf("%s: %v, want refused: %s", tc.name, err, tc.why)
		}
		if fd >= 0 {
			if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
				t.Errorf("%s: the adopted descriptor is still O_NONBLOCK", tc.name)
			}
			unix.Close(fd)
		}
	}
	if _, _, err := openLeftover(dfd, "gone", "gone", unix.O_RDWR, identity{}); err != unix.ENOENT {
		t.Errorf("a missing name: %v, want ENOENT", err)
	}
}

// A file bind-mounted over a leftover's name is not adopted (root only).
func TestOpenLeftoverRefusesAMountPoint(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root, and CI=true forbids skipping")
		}
		t.Skip("needs root")
	}
	dir := t.TempDir()
	over, other := filepath.Join(dir, "over"), filepath.Join(dir, "other")
	for _, p := range []string{over, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(other, over, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	defer unix.Unmount(over, unix.MNT_DETACH)
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	var d *Distrusted
	if _, _, err := openLeftover(dfd, "over", "over", unix.O_RDWR, identity{}); !errors.As(err, &d) || d.Why != "it is a mount point" {
		t.Errorf("a bind-mounted file: %v, want refused as a mount point", err)
	}
}

// A leftover owned by another uid is never adopted, whoever runs: judged
// from a stat that says so (any user), and as root on a real file chowned
// to nobody, which openLeftover refuses without opening it for writing.
func TestTrustRuleRefusesAnotherUid(t *testing.T) {
	t.Parallel()
	other := uint32(os.Geteuid()) + 1
	st := unix.Stat_t{Mode: unix.S_IFREG | 0o600, Nlink: 1, Uid: other}
	if why := judge(&st, identity{}); !strings.Contains(why, fmt.Sprintf("owned by uid %d", other)) {
		t.Errorf("judge of a file of uid %d: %q, want it refused", other, why)
	}
	st.Uid = uint32(os.Geteuid())
	if why := judge(&st, identity{}); why != "" {
		t.Errorf("judge of the caller's own file: %q, want it adopted", why)
	}
	if os.Geteuid() != 0 {
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "theirs")
	if err := os.WriteFile(p, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	var d *Distrusted
	if fd, _, err := openLeftover(dfd, "theirs", "theirs", unix.O_RDWR, identity{}); !errors.As(err, &d) || !strings.Contains(d.Why, "owned by uid 65534") {
		if fd >= 0 {
			unix.Close(fd)
		}
		t.Errorf("a file of uid 65534: %v, want refused", err)
	}
}
