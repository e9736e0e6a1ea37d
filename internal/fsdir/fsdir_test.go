// SPDX-License-Identifier: MIT

package fsdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("%s did not panic", what)
		}
		if !strings.Contains(r.(string), "closed directory") {
			t.Fatalf("%s panicked with %v", what, r)
		}
	}()
	f()
}

// The last Release closes the descriptor; a Release or Hold after it
// panics, as os.Root's misuse does.
func TestReferenceCount(t *testing.T) {
	d, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fd := d.Fd()
	d.Hold()
	d.Release()
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		t.Fatalf("closed while held: %v", err)
	}
	d.Release()
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Fatalf("the last Release left the descriptor open: %v", err)
	}
	mustPanic(t, "Release after the last", d.Release)
	mustPanic(t, "Hold after the last Release", d.Hold)
	// Cwd and a failed directory have nothing to close.
	Cwd.Hold()
	Cwd.Release()
	Cwd.Release()
	f := Failed("x", unix.ENOENT)
	f.Release()
	if _, err := f.Stat("a", false); err != unix.ENOENT {
		t.Errorf("Stat in a failed directory: %v", err)
	}
}

// Calls land in the directory opened, whatever its name names later.
func TestCallsFollowTheDescriptor(t *testing.T) {
	root := t.TempDir()
	held, moved := filepath.Join(root, "d"), filepath.Join(root, "moved")
	os.Mkdir(held, 0o755)
	d, err := Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	os.Rename(held, moved)
	os.Mkdir(held, 0o755)
	if made, err := d.Mkdir("sub"); err != nil || !made {
		t.Fatal(made, err)
	}
	if fi, err := os.Stat(filepath.Join(moved, "sub")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700&^umask() {
		t.Fatalf("sub in the held directory: %v %v", fi, err)
	}
	names, err := d.Names()
	if err != nil || !slices.Equal(names, []string{"sub"}) {
		t.Errorf("Names: %q, %v", names, err)
	}
	sub, st, err := d.OpenReadable("sub", false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Release()
	if IDOf(&st) != sub.ID() || sub.Path() != held+"/sub" || sub.Join("f") != held+"/sub/f" {
		t.Errorf("sub: %v %q %q", sub.ID(), sub.Path(), sub.Join("f"))
	}
	if got := d.At("sub"); got != "/proc/self/fd/"+strconv.Itoa(d.Fd())+"/sub" {
		t.Errorf("At: %q", got)
	}
	if err := d.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	if d.Pseudo() {
		t.Error("a temporary directory on /proc's filesystem?")
	}
	os.Symlink("sub", filepath.Join(moved, "link"))
	if _, err := d.OpenDir("link", false); err != unix.ELOOP && err != unix.ENOTDIR {
		t.Errorf("OpenDir followed a link: %v", err)
	}
	in, base, err := d.Split("link/f")
	if err != nil || base != "f" || in.ID() != sub.ID() {
		t.Errorf("Split: %v %q %v", in, base, err)
	}
	in.Release()
}

// A directory without read permission is opened O_PATH: entries can be
// made in it, and Sync opens it again (and fails as the kernel says).
func TestOPath(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root reads every directory: the case is an unprivileged user's,
		// so root runs it again as uid 65534.
		runAsNobody(t, "TestOPath")
		return
	}
	parent, err := os.MkdirTemp("", "fsdir-opath-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, "wx")
	if err := os.Mkdir(dir, 0o300); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if !d.OPath() {
		t.Fatal("not O_PATH")
	}
	if _, err := d.Mkdir("x"); err != nil {
		t.Errorf("Mkdir in an O_PATH directory: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "x")); err != nil || !st.IsDir() {
		t.Errorf("Mkdir made no directory: %v", err)
	}
}

// runAsNobody runs the test named again in a copy of this test binary
// as uid and gid 65534 (the binary's own directory is root's alone), and
// fails unless it ran and passed there.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fsdir-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	copyPath := filepath.Join(dir, "fsdir.test")
	if err := os.WriteFile(copyPath, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyPath, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as uid 65534: %v\n%s", name, err, out)
	}
}

func umask() os.FileMode {
	return os.FileMode(sysx.Umask())
}

// Mkdir of a name that exists reports made false without an error; the
// open that takes it (no symlink followed) fails on a symbolic link and a
// file, and Raced words that failure as the mkdir's EEXIST.
func TestMkdirOfANameTaken(t *testing.T) {
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	os.Mkdir(filepath.Join(root, "dir"), 0o755)
	os.Symlink("dir", filepath.Join(root, "link"))
	os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
	for _, tc := range []struct {
		name string
		want error
	}{{"dir", nil}, {"link", unix.EEXIST}, {"file", unix.EEXIST}} {
		made, err := d.Mkdir(tc.name)
		if made || err != nil {
			t.Errorf("Mkdir(%s): %v, %v; want it taken, not made", tc.name, made, err)
		}
		sub, err := d.OpenDir(tc.name, false)
		if err == nil {
			sub.Release()
		}
		if got := Raced(err); got != tc.want {
			t.Errorf("%s: the open of the name taken: %v, want %v", tc.name, got, tc.want)
		}
	}
	if made, err := d.Mkdir("new"); !made || err != nil {
		t.Errorf("Mkdir(new): %v, %v", made, err)
	}
	if made, err := d.Mkdir("none/new"); made || err != unix.ENOENT {
		t.Errorf("Mkdir(none/new): %v, %v; want ENOENT", made, err)
	}
}
