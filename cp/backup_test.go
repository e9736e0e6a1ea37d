// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"testing"

	"fastcp/durability"

	"fastcp/flags"

	"golang.org/x/sys/unix"
)

func TestBackupName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"f", "f.~1~", "f.~12~", "f.~x~", "f.~03~", "f.~~", "g", "ff.~40~", "f.~7~.bak"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		mode      flags.BackupMode
		dst, want string
	}{
		{flags.BackupNumbered, "f", "f.~13~"},
		{flags.BackupExisting, "f", "f.~13~"},
		{flags.BackupSimple, "f", "f.orig"},
		{flags.BackupExisting, "g", "g.orig"},
		{flags.BackupNumbered, "g", "g.~1~"},
		{flags.BackupNumbered, "g/", "g.~1~"},
	} {
		o := &flags.Options{Backup: tt.mode, BackupSuffix: ".orig"}
		if got := backupName(o, filepath.Join(dir, tt.dst)); got != filepath.Join(dir, tt.want) {
			t.Errorf("backup of %s (%v) = %s, want %s", tt.dst, tt.mode, got, tt.want)
		}
	}
}

// A backup is a hard link to the old DEST, so DEST is there until the new
// one replaces it; an older backup of that name is replaced; undo removes
// the backup.
func TestMakeBackup(t *testing.T) {
	dir := t.TempDir()
	dst, bak := filepath.Join(dir, "d"), filepath.Join(dir, "d~")
	os.WriteFile(dst, []byte("old"), 0o640)
	os.WriteFile(bak, []byte("older"), 0o600)
	ap := &app{opts: &flags.Options{}, session: durability.NewSession()}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := fsdir.New(fd, dir)
	defer d.Release()
	undo, err := (&job{a: ap, r: &record{}}).makeBackup(d, "d", bak)
	if err != nil {
		t.Fatal(err)
	}
	var a, b unix.Stat_t
	unix.Lstat(dst, &a)
	unix.Lstat(bak, &b)
	if a.Ino != b.Ino {
		t.Errorf("the backup is not the old DEST's inode")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".fastcp*")); len(m) != 0 {
		t.Errorf("temporary backup names left: %v", m)
	}
	undo()
	if _, err := os.Lstat(bak); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("undo left the backup: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "old" {
		t.Errorf("DEST holds %q after undo", b)
	}
}

// The backup's name taken over by another process's file before the new
// DEST fails: undo leaves that file alone.
func TestMakeBackupUndoLeavesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	dst, bak := filepath.Join(dir, "d"), filepath.Join(dir, "d~")
	os.WriteFile(dst, []byte("old"), 0o640)
	ap := &app{opts: &flags.Options{}, session: durability.NewSession()}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := fsdir.New(fd, dir)
	defer d.Release()
	undo, err := (&job{a: ap, r: &record{}}).makeBackup(d, "d", bak)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "theirs"), []byte("theirs"), 0o600)
	if err := os.Rename(filepath.Join(dir, "theirs"), bak); err != nil {
		t.Fatal(err)
	}
	undo()
	if b, err := os.ReadFile(bak); err != nil || string(b) != "theirs" {
		t.Errorf("the other file under the backup's name: %q, %v", b, err)
	}
}

// The backup is made in the directory the walk holds open, not in
// whatever directory DEST's name leads to by then.
func TestMakeBackupFollowsTheDirectoryFd(t *testing.T) {
	top := t.TempDir()
	dir, moved := filepath.Join(top, "dir"), filepath.Join(top, "moved")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "d"), []byte("old"), 0o640)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := fsdir.New(fd, dir)
	defer d.Release()
	// The directory is swapped for another one holding another d.
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "d"), []byte("other"), 0o640)
	ap := &app{opts: &flags.Options{Backup: flags.BackupSimple, BackupSuffix: "~"}, session: durability.NewSession()}
	if got := backupNameIn(ap.opts, d, "d", filepath.Join(dir, "d")); got != filepath.Join(dir, "d~") {
		t.Fatalf("backup name %s", got)
	}
	if _, err := (&job{a: ap, r: &record{}}).makeBackup(d, "d", filepath.Join(dir, "d~")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(moved, "d~")); err != nil || string(b) != "old" {
		t.Errorf("backup in the held directory: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d~")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a backup was made in the swapped-in directory: %v", err)
	}
}

func TestQuotef(t *testing.T) {
	for in, want := range map[string]string{"D/a": "D/a", "a b": "'a b'", "x'y": `"x'y"`, "": "''", "-x_1.2,3+4=5@6%7^8:9": "-x_1.2,3+4=5@6%7^8:9"} {
		if got := quotef(in); got != want {
			t.Errorf("quotef(%q) = %s, want %s", in, got, want)
		}
	}
}

// --preserve=context fails before anything is copied; --context=CTX warns.
func TestSELinuxOptions(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(src, []byte("a"), 0o644)
	code, _, stderr := runFastcp(t, "--preserve=context", src, dst)
	if code != 1 || stderr != "fastcp: cannot preserve security context without an SELinux-enabled kernel\n" {
		t.Errorf("--preserve=context: %d, %q", code, stderr)
	}
	if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DEST made: %v", err)
	}
	code, _, stderr = runFastcp(t, "--context=u:r:t:s0", src, dst)
	if code != 0 || stderr != "fastcp: warning: ignoring --context; it requires an SELinux-enabled kernel\n" {
		t.Errorf("--context=CTX: %d, %q", code, stderr)
	}
}

// On a system with SELinux, fastcp does not pretend: -Z warns that no
// context is set, --preserve=context fails saying why.
func TestSELinuxEnabled(t *testing.T) {
	saved := selinuxEnabled
	selinuxEnabled = func() bool { return true }
	defer func() { selinuxEnabled = saved }()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(src, []byte("a"), 0o644)
	code, _, stderr := runFastcp(t, "--preserve=context", src, dst)
	if code != 1 || stderr != "fastcp: cannot preserve security context: fastcp does not copy SELinux contexts\n" {
		t.Errorf("--preserve=context: %d, %q", code, stderr)
	}
	code, _, stderr = runFastcp(t, "-Z", src, dst)
	if code != 0 || stderr != "fastcp: warning: ignoring --context: fastcp does not set SELinux contexts\n" {
		t.Errorf("-Z: %d, %q", code, stderr)
	}
}
