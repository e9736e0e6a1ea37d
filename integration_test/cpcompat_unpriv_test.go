// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// ccUserScratch returns a directory that ccNobody can reach, holding a
// copy of the fastcp binary it can run: the package's scratch directory
// (and the binary in it) is private to root. The directory is named like
// the package's own, with this process's id, so that a later run sweeps
// it up if this one is killed.
func ccUserScratch(t *testing.T) (dir, bin string) {
	t.Helper()
	needRoot(t)
	parent := filepath.Dir(setup.Root)
	for p := parent; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Fatalf("%s is not searchable by other users: the unprivileged runs cannot reach a scratch directory under %s", p, parent)
		}
		if p == "/" {
			break
		}
	}
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s%d-cpcompat-", tempPrefix, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	binDir := mustMkdir(t, filepath.Join(dir, "bin"))
	bin = filepath.Join(binDir, "fastcp")
	in, err := os.Open(setup.Bin)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// ccUserTree is the fixture of the unprivileged scenarios. The work
// directory belongs to ccNobody; entries without an owner belong to root.
func ccUserTree() []ccEntry {
	const n = ccNobody
	return []ccEntry{
		ccFile("a", "alpha\n", 0o644),
		ccFile("b", "bravo\n", 0o644),
		ccFile("secret", "secret\n", 0o600),
		ccDir("D", 0o755).owner(n, n),
		ccDir("ro", 0o555).owner(n, n),
		ccFile("rof", "old, read-only\n", 0o444).owner(n, n),
		ccFile("rootf", "root's\n", 0o644),
		ccDir("t", 0o755),
		ccFile("t/a", "t/a\n", 0o644),
		ccFile("t/secret", "t/secret\n", 0o600),
		ccFile("t/z", "t/z\n", 0o644),
		ccDir("t/locked", 0o700),
		ccFile("t/locked/f", "locked\n", 0o644),
		ccDir("t/noread", 0o311),
		ccFile("t/noread/f", "noread\n", 0o644),
		ccDir("t/ok", 0o755),
		ccFile("t/ok/f", "ok\n", 0o644),
	}
}

// ccUserScenarios run as ccNobody: permission errors, as cp words them.
var ccUserScenarios = []ccScenario{
	{name: "unreadable-file-among-readable", args: ccArgs("-v", "a", "secret", "b", "D"), code: 1, ordered: true,
		exist: []string{"D/a", "D/b"}, absent: []string{"D/secret"}},
	{name: "unreadable-file", args: ccArgs("secret", "x"), code: 1, absent: []string{"x"}},
	{name: "r-tree-with-unreadable-entries", args: ccArgs("-rv", "t", "x"), code: 1,
		exist: []string{"x/a", "x/z", "x/ok/f"}, absent: []string{"x/secret", "x/locked/f", "x/noread/f"}},
	{name: "r-unreadable-dir", args: ccArgs("-r", "t/locked", "x"), code: 1, absent: []string{"x/f"}},
	{name: "r-unlistable-dir", args: ccArgs("-r", "t/noread", "x"), code: 1, absent: []string{"x/f"}},
	{name: "unwritable-dir", args: ccArgs("a", "ro"), code: 1, absent: []string{"ro/a"}},
	{name: "unwritable-dir-tree", args: ccArgs("-r", "t/ok", "ro/"), code: 1, absent: []string{"ro/ok"}},
	{name: "unwritable-dest-file", args: ccArgs("a", "rof"), code: 1,
		check: func(t *testing.T, w string) { ccContent(t, w, "rof", "old, read-only\n") }},
	{name: "f-unwritable-dest-file", args: ccArgs("-f", "a", "rof"),
		check: func(t *testing.T, w string) {
			ccContent(t, w, "rof", "alpha\n")
			ccOwner(t, w, "rof", ccNobody, ccNobody)
		}},
	{name: "fv-unwritable-dest-file", args: ccArgs("-fv", "a", "rof"), ordered: true, cpRemoved: true,
		check: func(t *testing.T, w string) { ccContent(t, w, "rof", "alpha\n") }},
	{name: "other-users-dest-file", args: ccArgs("b", "rootf"), code: 1,
		check: func(t *testing.T, w string) { ccContent(t, w, "rootf", "root's\n") }},
	{name: "f-other-users-dest-file", args: ccArgs("-f", "b", "rootf"),
		check: func(t *testing.T, w string) {
			ccContent(t, w, "rootf", "bravo\n")
			ccOwner(t, w, "rootf", ccNobody, ccNobody)
		}},
	{name: "p-cannot-give-files-away", args: ccArgs("-p", "a", "x"),
		check: func(t *testing.T, w string) {
			ccOwner(t, w, "x", ccNobody, ccNobody)
			ccMtimeOf(t, w, "x", ccFile("a", "", 0))
		}},
	{name: "a-tree-as-user", args: ccArgs("-a", "t/ok", "x"), exist: []string{"x/f"}},
	{name: "i-unwritable-dest-yes", args: ccArgs("-i", "a", "rof"), stdin: "y\n", code: 1, ordered: true,
		check: func(t *testing.T, w string) { ccContent(t, w, "rof", "old, read-only\n") }},
}

// TestCpCompatUnprivileged runs permission-error scenarios through GNU cp
// and fastcp as an unprivileged user (root sets the fixture up).
func TestCpCompatUnprivileged(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	for _, sc := range ccUserScenarios {
		sc.user = true
		if sc.fixture == nil {
			sc.fixture = ccUserTree()
		}
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			base := filepath.Join(scratch, safeName(sc.name))
			ccRunScenario(t, sc, base, bin)
		})
	}
}
