// SPDX-License-Identifier: MIT

package integration_test

// cp-compat scenarios for the rest of GNU cp 9.11's command line: -d, -l,
// -s, backups, --parents, --remove-destination, --attributes-only,
// --no-preserve, --preserve=links,context, --update=WHEN, --copy-contents,
// --keep-directory-symlink, -x, --strip-trailing-slashes, -Z/--context,
// abbreviations and POSIXLY_CORRECT. The behaviours are those of GNU's
// tests/cp/*.sh (v9.11); where /usr/bin/cp (9.1) has them, both programs
// run and are compared, else fastcp is held to 9.11's documented
// behaviour (v911).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ccSameInodeAny is ccSameInode for entries of any type (a hard link to
// a symbolic link).
func ccSameInodeAny(t *testing.T, w, p, q string, want bool) {
	t.Helper()
	var a, b unix.Stat_t
	if err := unix.Lstat(filepath.Join(w, p), &a); err != nil {
		t.Error(err)
		return
	}
	if err := unix.Lstat(filepath.Join(w, q), &b); err != nil {
		t.Error(err)
		return
	}
	if got := a.Ino == b.Ino && a.Dev == b.Dev; got != want {
		t.Errorf("%s and %s share an inode: %v, want %v", p, q, got, want)
	}
}

// ccBackupTree: a DEST with existing backups of both kinds.
func ccBackupTree() []ccEntry {
	return []ccEntry{
		ccFile("a", "alpha\n", 0o644),
		ccFile("b", "old b\n", 0o640),
		ccFile("b~", "older b\n", 0o600),
		ccFile("c", "old c\n", 0o644),
		ccFile("c.~1~", "c one\n", 0o644),
		ccFile("c.~7~", "c seven\n", 0o644),
		ccFile("c.~x~", "not a number\n", 0o644),
		ccFile("a~", "a-tilde\n", 0o644),
		ccLink("la", "a"),
	}
}

// ccKeepSymlinkTree is keep-directory-symlink.sh's: a/d is a symlink to
// the directory a/b, and the source b has a directory d.
func ccKeepSymlinkTree() []ccEntry {
	return []ccEntry{
		ccDir("a", 0o755), ccDir("a/b", 0o755), ccLink("a/d", "b"),
		ccDir("b", 0o755), ccDir("b/d", 0o755), ccDir("b/d/e", 0o755), ccFile("b/d/f", "f\n", 0o644),
	}
}

// ccMountTree: a tree with another filesystem mounted inside it (-x),
// and a filesystem without extended attributes (ramfs) to copy into.
func ccMountTree() []ccEntry {
	return []ccEntry{
		ccFile("xa", "xattr\n", 0o644).xattr("user.x", "1"),
		ccFile("plain", "plain\n", 0o644),
		ccDir("t", 0o755),
		ccFile("t/f", "f\n", 0o644),
		ccMount("t/m", "tmpfs", 0o755),
		ccFile("t/m/inner", "inner\n", 0o644),
		ccDir("t/m/sub", 0o755),
		ccDir("t/after", 0o755),
		ccFile("t/after/g", "g\n", 0o644),
		ccMount("nx", "ramfs", 0o755),
		ccFile("nx/xa", "old\n", 0o644),
	}
}

var ccScenarios911 = []ccScenario{
	// -d: --no-dereference --preserve=links.
	{name: "d-tree", args: ccArgs("-rd", "d", "x"),
		check: func(t *testing.T, w string) {
			ccSameInode(t, w, "x/hl1", "x/hl2", true)
			ccLinkTo(t, w, "x/link", "f1")
		}},
	{name: "d-symlink", args: ccArgs("-d", "la", "x"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "d-hard-links-on-command-line", args: ccArgs("-d", "d/hl1", "d/hl2", "D"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "D/hl1", "D/hl2", true) }},

	// -l, --link (link.sh, link-deref.sh, link-no-deref.sh).
	{name: "l-file", args: ccArgs("-l", "a", "x"), check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "x", true) }},
	{name: "l-existing-dest", args: ccArgs("-l", "a", "b"), code: 1,
		check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "b", false) }},
	{name: "lf-existing-dest", args: ccArgs("-lf", "a", "b"), check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "b", true) }},
	{name: "l-remove-destination", args: ccArgs("--link", "--remove-destination", "a", "b"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "b", true) }},
	{name: "lv-into-dir", args: ccArgs("-lv", "a", "exe", "D"), ordered: true,
		check: func(t *testing.T, w string) { ccSameInode(t, w, "exe", "D/exe", true) }},
	{name: "ln-existing", args: ccArgs("-ln", "a", "b"), check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "b", false) }},
	{name: "l-symlink-followed", args: ccArgs("-l", "la", "x"), check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "x", true) }},
	{name: "lP-symlink", args: ccArgs("-lP", "la", "x"),
		check: func(t *testing.T, w string) { ccType(t, w, "x", unix.S_IFLNK); ccSameInodeAny(t, w, "la", "x", true) }},
	{name: "lL-symlink", args: ccArgs("-lL", "la", "x"), check: func(t *testing.T, w string) { ccSameInode(t, w, "a", "x", true) }},
	{name: "rl-tree", args: ccArgs("-rl", "d/sub", "x"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "d/sub/f2", "x/f2", true) }},
	{name: "rlP-tree", args: ccArgs("-rlP", "d", "x"),
		check: func(t *testing.T, w string) {
			ccSameInode(t, w, "d/f1", "x/f1", true)
			ccSameInodeAny(t, w, "d/link", "x/link", true)
		}},
	{name: "l-directory-without-r", args: ccArgs("-l", "d", "x"), code: 1, absent: []string{"x"}},

	// -s, --symbolic-link.
	{name: "s-file", args: ccArgs("-s", "a", "x"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "s-dot-slash", args: ccArgs("-s", "a", "./x"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "s-relative-elsewhere", args: ccArgs("-s", "a", "D"), code: 1, absent: []string{"D/a"}},
	{name: "s-absolute-into-dir", args: ccArgs("-s", "@W@/a", "D"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "D/a", w+"/a") }},
	{name: "s-existing-dest", args: ccArgs("-s", "a", "b"), code: 1, check: func(t *testing.T, w string) { ccType(t, w, "b", unix.S_IFREG) }},
	{name: "sf-existing-dest", args: ccArgs("-sf", "a", "b"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "b", "a") }},
	{name: "sv-file", args: ccArgs("-sv", "a", "x"), ordered: true},
	{name: "rs-absolute-tree", args: ccArgs("-rs", "@W@/d/sub", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x/f2", w+"/d/sub/f2") }},
	{name: "rs-relative-tree", args: ccArgs("-rs", "d/sub", "x"), code: 1, exist: []string{"x"}, absent: []string{"x/f2"}},

	// -b, --backup, -S (cp-mv-backup.sh, backup-1.sh, backup-is-src.sh).
	{name: "b-existing-default-simple", args: ccArgs("-b", "a", "b"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) {
			ccContent(t, w, "b", "alpha\n")
			ccContent(t, w, "b~", "old b\n")
			ccPerm(t, w, "b~", 0o640)
		}},
	{name: "bv-output", args: ccArgs("-bv", "a", "b"), fixture: ccBackupTree(), ordered: true},
	{name: "b-existing-default-numbered", args: ccArgs("-b", "a", "c"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "c.~8~", "old c\n"); ccContent(t, w, "c", "alpha\n") }},
	{name: "backup-numbered", args: ccArgs("--backup=numbered", "a", "b"), fixture: ccBackupTree(), exist: []string{"b.~1~"},
		check: func(t *testing.T, w string) { ccContent(t, w, "b.~1~", "old b\n"); ccContent(t, w, "b~", "older b\n") }},
	{name: "backup-t", args: ccArgs("--backup=t", "a", "c"), fixture: ccBackupTree(), exist: []string{"c.~8~"}},
	{name: "backup-existing", args: ccArgs("--backup=existing", "a", "b"), fixture: ccBackupTree(), absent: []string{"b.~1~"}},
	{name: "backup-nil-numbered", args: ccArgs("--backup=nil", "a", "c"), fixture: ccBackupTree(), exist: []string{"c.~8~"}, absent: []string{"c~"}},
	{name: "backup-simple", args: ccArgs("--backup=simple", "a", "c"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "c~", "old c\n") }},
	{name: "backup-never", args: ccArgs("--backup=never", "a", "b"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "b~", "old b\n") }},
	{name: "backup-none", args: ccArgs("--backup=none", "a", "b"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "b~", "older b\n") }},
	{name: "backup-off", args: ccArgs("--backup=off", "a", "c"), fixture: ccBackupTree(), absent: []string{"c~", "c.~8~"}},
	{name: "backup-abbreviated", args: ccArgs("--backup=nu", "a", "b"), fixture: ccBackupTree(), exist: []string{"b.~1~"}},
	{name: "backup-new-dest", args: ccArgs("-b", "a", "x"), fixture: ccBackupTree(), absent: []string{"x~"}},
	{name: "S-suffix", args: ccArgs("-S", ".bak", "a", "b"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "b.bak", "old b\n"); ccContent(t, w, "b~", "older b\n") }},
	{name: "suffix-long-with-b", args: ccArgs("--suffix=.old", "-b", "a", "b"), fixture: ccBackupTree(), exist: []string{"b.old"}},
	{name: "backup-env-version-control", args: ccArgs("-b", "a", "b"), fixture: ccBackupTree(),
		env: []string{"VERSION_CONTROL=numbered"}, exist: []string{"b.~1~"}},
	{name: "backup-option-over-env", args: ccArgs("--backup=simple", "a", "c"), fixture: ccBackupTree(),
		env: []string{"VERSION_CONTROL=numbered"}, exist: []string{"c~"}, absent: []string{"c.~8~"}},
	{name: "backup-env-suffix", args: ccArgs("-b", "a", "b"), fixture: ccBackupTree(),
		env: []string{"SIMPLE_BACKUP_SUFFIX=.orig"}, exist: []string{"b.orig"}},
	{name: "backup-env-bad", args: ccArgs("-b", "a", "b"), fixture: ccBackupTree(), env: []string{"VERSION_CONTROL=sometimes"}, usage: true,
		check: func(t *testing.T, w string) { ccContent(t, w, "b", "old b\n") }},
	{name: "backup-bad-value", args: ccArgs("--backup=bogus", "a", "b"), fixture: ccBackupTree(), usage: true},
	{name: "backup-ambiguous-value", args: ccArgs("--backup=n", "a", "b"), fixture: ccBackupTree(), usage: true},
	{name: "backup-with-no-clobber", args: ccArgs("-bn", "a", "b"), fixture: ccBackupTree(), usage: true,
		stderr: "fastcp: cannot combine --backup with -n/--no-clobber or --update=none-fail\nTry 'fastcp --help' for more information.\n"},
	{name: "backup-is-source", args: ccArgs("--b=simple", "a~", "a"), fixture: ccBackupTree(), code: 1,
		check: func(t *testing.T, w string) { ccContent(t, w, "a", "alpha\n"); ccContent(t, w, "a~", "a-tilde\n") }},
	{name: "fb-same-file", args: ccArgs("-fb", "a", "a"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccContent(t, w, "a", "alpha\n"); ccContent(t, w, "a~", "alpha\n") }},
	{name: "b-symlink-over-file", args: ccArgs("-bP", "la", "b"), fixture: ccBackupTree(),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "b", "a"); ccContent(t, w, "b~", "old b\n") }},
	{name: "rb-merge-tree", args: ccArgs("-rb", "d", "R"), exist: []string{"R/d/f1~", "R/d/link~"},
		check: func(t *testing.T, w string) {
			ccContent(t, w, "R/d/f1~", "stale f1\n")
			ccLinkTo(t, w, "R/d/link~", "elsewhere")
		}},

	// --parents (cp-parents.sh).
	{name: "parents-file", args: ccArgs("--parents", "d/sub/f2", "D"), exist: []string{"D/d/sub/f2"},
		check: func(t *testing.T, w string) { ccPerm(t, w, "D/d/sub", 0o750) }},
	{name: "parents-verbose", args: ccArgs("-v", "--parents", "d/sub/f2", "d/f1", "D"), ordered: true},
	{name: "parents-archive", args: ccArgs("-a", "--parents", "d/sub", "D"), exist: []string{"D/d/sub/f2", "D/d/sub/up"},
		check: func(t *testing.T, w string) {
			ccMtimeOf(t, w, "D/d", ccStd("d"))
			ccMtimeOf(t, w, "D/d/sub", ccStd("d/sub"))
		}},
	{name: "parents-recursive-trailing-slash", args: ccArgs("-R", "--parents", "d/sub/", "D"), exist: []string{"D/d/sub/f2"}},
	{name: "parents-dest-not-dir", args: ccArgs("--parents", "d/f1", "b"), usage: true},
	{name: "parents-through-file", args: ccArgs("--parents", "a/nope", "D"), code: 1, absent: []string{"D/a"}},
	{name: "parents-no-preserve-mode", args: ccArgs("--parents", "--no-preserve=mode", "np/b/file", "npd/"),
		fixture: []ccEntry{ccDir("np", 0o700), ccDir("np/b", 0o755), ccFile("np/b/file", "x\n", 0o775), ccDir("npd", 0o755)},
		check:   func(t *testing.T, w string) { ccPerm(t, w, "npd/np", 0o755); ccPerm(t, w, "npd/np/b/file", 0o644) }},
	{name: "parents-into-existing-dirs", args: ccArgs("--parents", "E/a", "R"), exist: []string{"R/E/a"}},

	// --remove-destination.
	{name: "rd-symlink-dest-replaced", args: ccArgs("--remove-destination", "a", "lb"),
		check: func(t *testing.T, w string) {
			ccType(t, w, "lb", unix.S_IFREG)
			ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b")))
		}},
	{name: "rd-dangling-dest", args: ccArgs("--remove-destination", "a", "lnope"), absent: []string{"nope"},
		check: func(t *testing.T, w string) { ccContent(t, w, "lnope", "alpha\n") }},
	{name: "rd-verbose", args: ccArgs("-v", "--remove-destination", "a", "b"), cpRemoved: true, ordered: true},
	{name: "rd-fifo-dest", args: ccArgs("--remove-destination", "a", "s/fifo"),
		check: func(t *testing.T, w string) { ccContent(t, w, "s/fifo", "alpha\n") }},
	{name: "rd-keeps-no-mode", args: ccArgs("--remove-destination", "a", "E/a"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "E/a", 0o644); ccOwner(t, w, "E/a", 0, 0) }},

	// --attributes-only (attr-existing.sh).
	{name: "ao-new", args: ccArgs("--attributes-only", "a", "x"), check: func(t *testing.T, w string) { ccContent(t, w, "x", "") }},
	{name: "ao-existing-keeps-data", args: ccArgs("--attributes-only", "a", "b"),
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "ao-archive-existing", args: ccArgs("-a", "--attributes-only", "a", "E/a"),
		check: func(t *testing.T, w string) {
			ccContent(t, w, "E/a", "old a, longer than the new one\n")
			ccPerm(t, w, "E/a", 0o644)
			ccOwner(t, w, "E/a", 0, 0)
			ccMtimeOf(t, w, "E/a", ccStd("a"))
		}},
	{name: "ao-archive-hard-linked-dest", args: ccArgs("-a", "--attributes-only", "a", "H/x"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "H/x", "H/y", true); ccContent(t, w, "H/y", "old\n") }},
	{name: "ao-through-symlink-dest", args: ccArgs("-p", "--attributes-only", "a", "lb"),
		check: func(t *testing.T, w string) {
			ccLinkTo(t, w, "lb", "b")
			ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b")))
			ccPerm(t, w, "b", 0o644)
		}},
	{name: "ao-symlink-over-file", args: ccArgs("-a", "--attributes-only", "la", "b"), code: 1,
		check: func(t *testing.T, w string) { ccType(t, w, "b", unix.S_IFREG) }},
	{name: "ao-remove-destination-symlink", args: ccArgs("-a", "--remove-destination", "--attributes-only", "la", "b"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "b", "a") }},
	{name: "ao-tree", args: ccArgs("-r", "--attributes-only", "d", "x"),
		check: func(t *testing.T, w string) { ccContent(t, w, "x/sub/f2", ""); ccLinkTo(t, w, "x/link", "f1") }},

	// --no-preserve, --preserve=links,context.
	{name: "a-no-preserve-mode", args: ccArgs("-a", "--no-preserve=mode", "exe", "x"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "x", 0o644); ccMtimeOf(t, w, "x", ccStd("exe")) }},
	{name: "a-no-preserve-mode-tree", args: ccArgs("-a", "--no-preserve=mode", "d", "x"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "x/sub", 0o755); ccPerm(t, w, "x/own", 0o644) }},
	{name: "r-no-preserve-mode-umask", args: ccArgs("-r", "--no-preserve=mode", "d/sub", "x"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "x", 0o755); ccPerm(t, w, "x/f2", 0o644) }},
	{name: "a-no-preserve-ownership", args: ccArgs("-a", "--no-preserve=ownership", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 0, 0) }},
	{name: "a-no-preserve-timestamps", args: ccArgs("-a", "--no-preserve=timestamps", "d/sub", "x"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "x/f2", 0o600) }},
	{name: "a-no-preserve-links", args: ccArgs("-a", "--no-preserve=links", "d", "x"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "x/hl1", "x/hl2", false) }},
	{name: "a-no-preserve-xattr", args: ccArgs("-a", "--no-preserve=xattr", "xa", "x"),
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "x")); got != "" {
				t.Errorf("x has xattrs %q, want none", got)
			}
		}},
	{name: "a-no-preserve-all", args: ccArgs("-a", "--no-preserve=all", "d", "x"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "x/hl1", "x/hl2", false); ccOwner(t, w, "x/own", 0, 0) }},
	{name: "no-preserve-abbreviated", args: ccArgs("-a", "--no-pres=own,time", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 0, 0); ccPerm(t, w, "x", 0o4755) }},
	{name: "no-preserve-bad-value", args: ccArgs("--no-preserve=colour", "a", "x"), usage: true, absent: []string{"x"}},
	{name: "preserve-context", args: ccArgs("--preserve=context", "a", "x"), code: 1, absent: []string{"x"}},
	{name: "a-preserve-context", args: ccArgs("-a", "--preserve=context", "a", "x"), code: 1, absent: []string{"x"}},
	{name: "preserve-links-command-line", args: ccArgs("--preserve=links", "d/hl1", "d/hl2", "D"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "D/hl1", "D/hl2", true) }},

	// --update=WHEN and the 9.2-9.11 changes to -i, -n, --update.
	{name: "update-all", args: ccArgs("--update=all", "a", "U/newer"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/newer", "alpha\n") }},
	{name: "update-none", args: ccArgs("--update=none", "a", "b"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "update-none-new-dest", args: ccArgs("--update=none", "a", "x"), v911: &cc911{}, exist: []string{"x"}},
	{name: "update-none-fail", args: ccArgs("--update=none-fail", "a", "exe"), v911: &cc911{code: 1, stderr: "fastcp: not replacing 'exe'\n"},
		check: func(t *testing.T, w string) { ccContent(t, w, "exe", "#!/bin/sh\necho hi\n") }},
	{name: "update-none-fail-into-dir", args: ccArgs("--update=none-fail", "a", "b", "E"),
		v911:  &cc911{code: 1, stderr: "fastcp: not replacing 'E/a'\n"},
		check: func(t *testing.T, w string) { ccContent(t, w, "E/b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "update-none-fail-tree", args: ccArgs("-r", "--update=none-fail", "d", "R"),
		v911:  &cc911{code: 1, stderr: "fastcp: not replacing 'R/d/f1'\nfastcp: not replacing 'R/d/link'\n"},
		exist: []string{"R/d/sub/f2"}, check: func(t *testing.T, w string) { ccContent(t, w, "R/d/f1", "stale f1\n") }},
	// -u after --update=none-fail is the last --update (older): a DEST
	// newer than SOURCE is skipped silently, an older one replaced.
	{name: "update-none-fail-u-newer-dest", args: ccArgs("--update=none-fail", "-u", "a", "U/newer"), v911: &cc911{}},
	{name: "update-none-fail-u-older-dest", args: ccArgs("--update=none-fail", "-u", "a", "U/older"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/older", "alpha\n") }},
	// --debug names a DEST left alone, as cp 9.11 does.
	{name: "debug-update-none-skipped", args: ccArgs("--debug", "--update=none", "a", "b"), v911: &cc911{stdout: "skipped 'b'\n"}},
	{name: "debug-n-skipped", args: ccArgs("--debug", "-n", "a", "b"), v911: &cc911{stdout: "skipped 'b'\n"}},
	{name: "debug-i-no-skipped", args: ccArgs("--debug", "-i", "a", "b"), stdin: "n\n", v911: &cc911{code: 1, stdout: "skipped 'b'\n", stderr: "fastcp: overwrite 'b'? "}},
	// --update=none before -i: skipped unasked (coreutils' cp-i test).
	{name: "update-none-then-i-does-not-ask", args: ccArgs("-v", "--update=none", "-i", "a", "b"), v911: &cc911{}},
	{name: "update-older-newer-source", args: ccArgs("--update=older", "a", "U/older"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/older", "alpha\n") }},
	{name: "update-older-older-source", args: ccArgs("--update=older", "a", "U/newer"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/newer", "newer\n") }},
	{name: "update-abbreviated", args: ccArgs("--up=none-", "a", "exe"), v911: &cc911{code: 1, stderr: "fastcp: not replacing 'exe'\n"}},
	{name: "update-ambiguous", args: ccArgs("--update=non", "a", "b"),
		v911: &cc911{code: 1, stderr: "fastcp: ambiguous argument 'non' for '--update'\nValid arguments are:\n  - 'all'\n  - 'none'\n  - 'none-fail'\n  - 'older'\nTry 'fastcp --help' for more information.\n"}},
	{name: "n-over-update-all", args: ccArgs("-n", "--update=all", "a", "b"), v911: &cc911{},
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "n-skips-silently", args: ccArgs("-nv", "a", "b"), v911: &cc911{}},
	{name: "i-update-all-still-asks", args: ccArgs("-i", "--update=all", "a", "b"), stdin: "n\n",
		v911: &cc911{code: 1, stderr: "fastcp: overwrite 'b'? "}},
	{name: "i-update-older-asks", args: ccArgs("-i", "--update=older", "a", "U/older"), stdin: "y\n",
		v911:  &cc911{stderr: "fastcp: overwrite 'U/older'? "},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/older", "alpha\n") }},
	{name: "i-update-none-does-not-ask", args: ccArgs("-i", "--update=none", "a", "b"), v911: &cc911{}},
	{name: "i-no-in-tree", args: ccArgs("-ri", "d/f1", "R/d"), stdin: "n\n",
		v911: &cc911{code: 1, stderr: "fastcp: overwrite 'R/d/f1'? "}},
	{name: "i-yes-exit-0", args: ccArgs("-i", "a", "b"), stdin: "yes\n", v911: &cc911{stderr: "fastcp: overwrite 'b'? "}},

	// --copy-contents, --keep-directory-symlink, -x.
	{name: "r-copy-contents-device", args: ccArgs("-r", "--copy-contents", "cc", "x"),
		fixture: []ccEntry{ccDir("cc", 0o755), ccChar("cc/null", 1, 3, 0o666), ccFile("cc/f", "f\n", 0o644)},
		check:   func(t *testing.T, w string) { ccType(t, w, "x/null", unix.S_IFREG); ccContent(t, w, "x/null", "") }},
	{name: "copy-contents-without-r", args: ccArgs("--copy-contents", "cc/null", "x"),
		fixture: []ccEntry{ccDir("cc", 0o755), ccChar("cc/null", 1, 3, 0o666)},
		check:   func(t *testing.T, w string) { ccType(t, w, "x", unix.S_IFREG) }},
	{name: "dir-over-dir-symlink", args: ccArgs("-RT", "b", "a"), fixture: ccKeepSymlinkTree(), code: 1,
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "a/d", "b") }},
	{name: "keep-directory-symlink", args: ccArgs("-RT", "--keep-directory-symlink", "b", "a"), fixture: ccKeepSymlinkTree(),
		v911: &cc911{}, exist: []string{"a/b/e", "a/b/f"},
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "a/d", "b") }},
	{name: "x-mount-point-empty", args: ccArgs("-rx", "t", "x"), fixture: ccMountTree(),
		exist: []string{"x/m", "x/after/g", "x/f"}, absent: []string{"x/m/inner", "x/m/sub"}},
	{name: "r-crosses-mount", args: ccArgs("-r", "t", "x"), fixture: ccMountTree(), exist: []string{"x/m/inner", "x/m/sub"}},
	{name: "one-file-system-long", args: ccArgs("-a", "--one-file-system", "t", "x"), fixture: ccMountTree(),
		exist: []string{"x/m"}, absent: []string{"x/m/inner"}},

	// --strip-trailing-slashes.
	{name: "strip-trailing-slashes-symlink", args: ccArgs("-P", "--strip-trailing-slashes", "ld/", "D"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "D/ld", "d") }},
	{name: "strip-trailing-slashes-two-operands", args: ccArgs("-P", "--strip-trailing-slashes", "ld/", "x"), code: 1, absent: []string{"x"}},
	{name: "no-strip-trailing-slashes", args: ccArgs("-P", "ld/", "x"), code: 1, absent: []string{"x"}},
	{name: "strip-trailing-slashes-dir", args: ccArgs("-r", "--strip-trailing-slashes", "d//", "D"), exist: []string{"D/d/f1"}},

	// -Z, --context without SELinux.
	{name: "Z-ignored", args: ccArgs("-Z", "a", "x"), exist: []string{"x"}},
	{name: "context-bare-ignored", args: ccArgs("--context", "a", "x"), exist: []string{"x"}},
	{name: "context-value-warns", args: ccArgs("--context=system_u:object_r:tmp_t:s0", "a", "x"), exist: []string{"x"}},

	// Abbreviated long options and arguments (getopt_long, argmatch).
	{name: "abbrev-verb-recur", args: ccArgs("--verb", "--recur", "d/sub", "x"), exist: []string{"x/f2"}},
	{name: "abbrev-preserve-values", args: ccArgs("--pres=mod,own,time", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 1234, 5678); ccPerm(t, w, "x", 0o4755) }},
	{name: "abbrev-target", args: ccArgs("--targ", "D", "a"), exist: []string{"D/a"}},
	{name: "abbrev-parents", args: ccArgs("--pa", "d/f1", "D"), exist: []string{"D/d/f1"}},
	{name: "abbrev-no-deref", args: ccArgs("--no-d", "la", "x"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "abbrev-sparse-value", args: ccArgs("--sp=al", "a", "x"), exist: []string{"x"}},
	{name: "abbrev-ambiguous-re", args: ccArgs("--re", "a", "x"), usage: true, absent: []string{"x"}},
	{name: "abbrev-ambiguous-with-value", args: ccArgs("--re=x", "a", "x"), usage: true, absent: []string{"x"}},
	{name: "abbrev-ambiguous-c", args: ccArgs("--c", "a", "x"), usage: true},
	{name: "abbrev-ambiguous-v", args: ccArgs("--v", "a", "x"), usage: true},
	// cp's candidates only: a prefix is resolved among cp's options first.
	{name: "abbrev-ambiguous-no", args: ccArgs("--no-", "a", "x"), usage: true},
	{name: "abbrev-ambiguous-p", args: ccArgs("--p", "a", "x"), usage: true},
	{name: "abbrev-cp-option-first", args: ccArgs("--b=simple", "a", "b"), exist: []string{"b~"}},
	{name: "abbrev-ambiguous-de-911", args: ccArgs("--de", "a", "x"), absent: []string{"x"},
		v911: &cc911{code: 1, stderr: "fastcp: option '--de' is ambiguous; possibilities: '--debug' '--dereference'\nTry 'fastcp --help' for more information.\n"}},
	{name: "abbrev-no-argument-allowed", args: ccArgs("--verb=yes", "a", "x"), usage: true},
	{name: "abbrev-requires-argument", args: ccArgs("a", "x", "--suf"), usage: true},
	{name: "abbrev-value-ambiguous", args: ccArgs("--sparse=a", "a", "x"), usage: true},
	{name: "abbrev-option-value-not-expanded", args: ccArgs("-t", "--verb", "a"), code: 1},
	{name: "abbrev-unknown", args: ccArgs("--kx", "a", "x"), usage: true},
	{name: "abbrev-keep-911", args: ccArgs("-RT", "--k", "b", "a"), fixture: ccKeepSymlinkTree(), v911: &cc911{}, exist: []string{"a/b/e"}},

	// POSIXLY_CORRECT (thru-dangling.sh).
	{name: "posix-dangling-written-through", args: ccArgs("a", "lnope"), env: []string{"POSIXLY_CORRECT=1"},
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "lnope", "nope"); ccContent(t, w, "nope", "alpha\n") }},
	{name: "posix-dangling-n-written-through", args: ccArgs("-n", "a", "lnope"), env: []string{"POSIXLY_CORRECT=1"}, exist: []string{"nope"}},
	{name: "posix-dangling-i-yes", args: ccArgs("-i", "a", "lnope"), stdin: "y\n", env: []string{"POSIXLY_CORRECT=1"}, exist: []string{"nope"}},
	{name: "posix-dangling-i-not-asked", args: ccArgs("-i", "a", "lnope"), stdin: "n\n", env: []string{"POSIXLY_CORRECT=1"}, exist: []string{"nope"}},
	{name: "posix-dangling-force", args: ccArgs("-f", "a", "lnope"), env: []string{"POSIXLY_CORRECT="}, exist: []string{"nope"}},
	{name: "dangling-force-refused", args: ccArgs("-f", "a", "lnope"), code: 1, absent: []string{"nope"}},
	{name: "posix-options-end-at-operand", args: ccArgs("a", "x", "-v"), env: []string{"POSIXLY_CORRECT=1"}, code: 1, absent: []string{"x"}},
	{name: "posix-options-before-operands", args: ccArgs("-v", "a", "x"), env: []string{"POSIXLY_CORRECT=1"}, ordered: true, exist: []string{"x"}},
	{name: "f-replaces-symlink-loop", args: ccArgs("-f", "a", "loop"), fixture: []ccEntry{ccFile("a", "alpha\n", 0o644), ccLink("loop", "loop")},
		check: func(t *testing.T, w string) { ccType(t, w, "loop", unix.S_IFREG); ccContent(t, w, "loop", "alpha\n") }},
	{name: "symlink-loop-without-f", args: ccArgs("a", "loop"), code: 1, fixture: []ccEntry{ccFile("a", "alpha\n", 0o644), ccLink("loop", "loop")},
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "loop", "loop") }},

	// Extended attributes to a filesystem without them (cp-mv-enotsup-xattr.sh).
	// cp leaves the new DEST with its data; fastcp, whose DEST is never
	// left by a failed copy, removes its temporary file.
	{name: "a-xattr-explicit-to-ramfs", args: ccArgs("-a", "--preserve=xattr", "xa", "nx/new"), fixture: ccMountTree(), code: 1,
		cpExtra: []string{"nx/new"}},
	{name: "a-xattr-explicit-over-ramfs-file", args: ccArgs("-a", "--preserve=xattr", "xa", "nx/"), fixture: ccMountTree(),
		v911:  &cc911{code: 1, stderr: "fastcp: setting attributes for 'nx/xa': Operation not supported\n"},
		check: func(t *testing.T, w string) { ccContent(t, w, "nx/xa", "old\n") }},
	{name: "a-to-ramfs-silent", args: ccArgs("-a", "xa", "plain", "nx/"), fixture: ccMountTree(), renamed: []string{"nx"},
		check: func(t *testing.T, w string) { ccContent(t, w, "nx/xa", "xattr\n") }},
	{name: "preserve-all-to-ramfs-silent", args: ccArgs("--preserve=all", "xa", "nx/new"), fixture: ccMountTree(), exist: []string{"nx/new"}},
	{name: "preserve-all-to-ramfs-existing", args: ccArgs("--preserve=all", "xa", "nx/"), fixture: ccMountTree(), renamed: []string{"nx"},
		check: func(t *testing.T, w string) { ccContent(t, w, "nx/xa", "xattr\n") }},
}

// TestCpCompat911 runs the scenarios of cp 9.11's options.
func TestCpCompat911(t *testing.T) {
	needRoot(t) // other owners, device nodes, mounts
	t.Parallel()
	if _, err := os.Stat(ccGNUcp); err != nil {
		t.Fatalf("GNU cp is needed as the reference: %v", err)
	}
	seen := map[string]bool{}
	for _, sc := range ccScenarios {
		seen[sc.name] = true
	}
	for _, sc := range ccScenarios911 {
		if seen[sc.name] {
			t.Fatalf("duplicate scenario name %s", sc.name)
		}
		seen[sc.name] = true
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenario(t, sc, t.TempDir(), setup.Bin)
		})
	}
}

// ccSameFileTree is same-file.sh's: a file, a symlink to it, a hard link
// to it, and a symlink to the symlink.
func ccSameFileTree() []ccEntry {
	return []ccEntry{
		ccFile("foo", "foo\n", 0o644),
		ccLink("sym", "foo"),
		ccHard("hard", "foo"),
		ccLink("sym2", "sym"),
		ccFile("other", "other\n", 0o644),
		ccLink("sl2", "foo"),
		ccHard("hlsl", "sl2"), // a second name of the symlink sl2
	}
}

// ccSameFileKept: cp --remove-destination removes DEST, then finds that
// SOURCE led through it and fails, DEST gone; fastcp fails before
// touching anything (DEST is never left changed by a failed copy).
var ccSameFileKept = map[string]string{"--rem_sym_sym": "sym", "--rem_sym2_sym": "sym"}

// TestCpCompatSameFile runs same-file.sh's combinations of options and of
// SOURCE and DEST naming one file (through a symlink, a hard link), and
// compares with cp: which succeed, what they leave, what they say.
func TestCpCompatSameFile(t *testing.T) {
	needRoot(t)
	t.Parallel()
	pairs := [][2]string{{"foo", "foo"}, {"foo", "sym"}, {"sym", "foo"}, {"foo", "hard"}, {"sym", "sym2"}, {"sym2", "sym"}, {"sym", "sym"}, {"hlsl", "sl2"}}
	opts := [][]string{nil, {"-d"}, {"-f"}, {"-df"}, {"-b"}, {"-bf"}, {"-bdf"}, {"-l"}, {"-dl"}, {"-fl"}, {"-bl"}, {"-bfl"}, {"-s"}, {"-sf"}, {"--rem"}, {"-b", "--rem"}}
	for _, o := range opts {
		for _, p := range pairs {
			args := append(append([]string(nil), o...), p[0], p[1])
			name := strings.Join(args, "_")
			sc := ccScenario{name: name, args: args, fixture: ccSameFileTree(), renamed: []string{"."}}
			if keep, ok := ccSameFileKept[name]; ok {
				sc.cpLost = []string{keep}
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ccRunScenarioAnyCode(t, sc, t.TempDir(), setup.Bin)
			})
		}
	}
}

// ccRunScenarioAnyCode is ccRunScenario for a generated scenario whose
// exit status is whatever cp's is.
func ccRunScenarioAnyCode(t *testing.T, sc ccScenario, base, bin string) {
	t.Helper()
	sc.anyCode = true
	ccRunScenario(t, sc, base, bin)
}

// ccLinkDerefTree is link-deref.sh's: symbolic links to a directory, to
// a file, and to nothing.
func ccLinkDerefTree() []ccEntry {
	return []ccEntry{
		ccDir("dir", 0o755), ccFile("dir/in", "in\n", 0o644), ccFile("file", "", 0o644),
		ccLink("dirlink", "dir"), ccLink("filelink", "file"), ccLink("danglink", "nowhere"),
	}
}

// ccLinkPreserveTree is link-preserve.sh's: a file with a hard link and
// a symlink to it, and a directory holding a file and a symlink to it.
func ccLinkPreserveTree() []ccEntry {
	return []ccEntry{
		ccFile("a", "", 0o644), ccHard("h", "a"), ccLink("s", "a"), ccFile("p", "", 0o644), ccLink("q", "p"),
		ccLink("s2", "a"), ccLink("n1", "no-such-file"), ccLink("n2", "no-such-file"), ccFIFO("fifo", 0o644), ccFIFO("e2", 0o644),
		ccDir("d", 0o755), ccFile("d/a", "", 0o644), ccLink("d/b", "a"),
		ccDir("e", 0o755), ccFile("e/a", "", 0o644), ccHard("e/b", "e/a"),
		ccFile("m", "m\n", 0o731),
		ccDir("c", 0o755), ccDir("x", 0o755), ccDir("y", 0o755), ccDir("y/x", 0o755),
	}
}

// TestCpCompatLinkDeref runs link-deref.sh's matrix: cp --link of a
// symlink to a directory, to a file and to nothing, with -L, -H, -P or
// none, recursive or not, compared with cp.
func TestCpCompatLinkDeref(t *testing.T) {
	needRoot(t)
	t.Parallel()
	for _, src := range []string{"dirlink", "filelink", "danglink"} {
		for _, o := range []string{"", "-L", "-H", "-P"} {
			for _, r := range []string{"", "-R"} {
				args := []string{"--link"}
				for _, a := range []string{o, r} {
					if a != "" {
						args = append(args, a)
					}
				}
				args = append(args, src, "dst")
				sc := ccScenario{name: strings.Join(args, "_"), args: args, fixture: ccLinkDerefTree()}
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					ccRunScenarioAnyCode(t, sc, t.TempDir(), setup.Bin)
				})
			}
		}
	}
}

// TestCpCompatLinkPreserve: link-preserve.sh, backup-dir.sh and
// dir-rm-dest.sh.
func TestCpCompatLinkPreserve(t *testing.T) {
	needRoot(t)
	t.Parallel()
	same := func(p, q string, want bool) func(t *testing.T, w string) {
		return func(t *testing.T, w string) { ccSameInode(t, w, p, q, want) }
	}
	for _, sc := range []ccScenario{
		{name: "d-hard-links-into-dir", args: ccArgs("-d", "a", "h", "c"), check: same("c/a", "c/h", true)},
		{name: "preserve-links-RH-symlink-arg", args: ccArgs("--preserve=links", "-R", "-H", "a", "s", "c"), check: same("c/a", "c/s", true)},
		{name: "preserve-links-RH-one-link", args: ccArgs("--preserve=links", "-R", "-H", "p", "q", "c"), check: same("c/p", "c/q", true)},
		{name: "preserve-links-R-symlink-not-followed", args: ccArgs("--preserve=links", "-R", "p", "q", "c"),
			check: func(t *testing.T, w string) { ccLinkTo(t, w, "c/q", "p") }},
		{name: "preserve-links-L-one-link", args: ccArgs("--preserve=links", "-L", "p", "q", "c"), check: same("c/p", "c/q", true)},
		{name: "preserve-links-RL-symlink-in-tree", args: ccArgs("--preserve=links", "-R", "-L", "d", "c"), check: same("c/d/a", "c/d/b", true)},
		{name: "preserve-links-RL-hard-links", args: ccArgs("--preserve=links", "-R", "-L", "e", "c"), check: same("c/e/a", "c/e/b", true)},
		{name: "dR-no-preserve-links", args: ccArgs("-dR", "--no-preserve=links", "e", "c"), check: same("c/e/a", "c/e/b", false)},
		{name: "a-no-preserve-mode-umask-077", args: ccArgs("-a", "--no-preserve=mode", "m", "m2"), umask: "077",
			check: func(t *testing.T, w string) { ccPerm(t, w, "m2", 0o600) }},
		{name: "ab-directory-not-backed-up", args: ccArgs("-ab", "x", "y"), exist: []string{"y/x"}, absent: []string{"y/x~"}},
		{name: "R-remove-destination-new", args: ccArgs("-R", "--remove-destination", "d", "x"), exist: []string{"x/d/a"}},
		{name: "R-remove-destination-existing", args: ccArgs("-R", "--remove-destination", "e", "d"), exist: []string{"d/e/b"}},
		// slink-2-slink.sh, preserve-2.sh, src-base-dot.sh, special-f.sh.
		{name: "update-P-two-symlinks-one-file", args: ccArgs("--update", "--no-dereference", "s", "s2")},
		{name: "update-P-two-dangling-symlinks", args: ccArgs("--update", "--no-dereference", "n1", "n2")},
		{name: "preserve-mode-links", args: ccArgs("--preserve=mode,links", "a", "g"), exist: []string{"g"}},
		{name: "ab-dir-dot-into-dir", args: ccArgs("--verbose", "-ab", "x/.", "y")},
		{name: "Rf-fifo-twice", args: ccArgs("-Rf", "fifo", "e2"), exist: []string{"e2"}},
		{name: "R-remove-destination-merge", args: ccArgs("-RT", "--remove-destination", "e", "d"), exist: []string{"d/b", "d/a"}},
	} {
		sc.fixture = ccLinkPreserveTree()
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenario(t, sc, t.TempDir(), setup.Bin)
		})
	}
}

// ccParentPermTree is parent-perm.sh's after its first cp -p --parents,
// with the permissions of the copied parents changed since.
func ccParentPermTree() []ccEntry {
	return []ccEntry{
		ccDir("a", 0o755), ccDir("a/b", 0o750), ccDir("a/b/c", 0o755), ccDir("a/b/d", 0o700),
		ccFile("a/b/c/foo", "", 0o644), ccFile("a/b/d/foo", "", 0o644),
		ccDir("e", 0o755), ccDir("e/a", 0o705), ccDir("e/a/b", 0o705), ccDir("e/a/b/c", 0o755), ccFile("e/a/b/c/foo", "", 0o644),
	}
}

// ccPreserveLinkTree is preserve-link.sh's: five names of one inode in
// s, and in t/s one of them (first), a second name linked to it, an
// older and a newer separate file.
func ccPreserveLinkTree(first string) []ccEntry {
	return []ccEntry{
		ccDir("s", 0o755), ccFile("s/f", "", 0o644), ccHard("s/linkm", "s/f"), ccHard("s/linke", "s/f"),
		ccHard("s/fileo", "s/f"), ccHard("s/fileu", "s/f"),
		ccDir("t", 0o755), ccDir("t/s", 0o755), ccFile("t/s/"+first, "", 0o644), ccHard("t/s/linke", "t/s/"+first),
		ccFile("t/s/fileo", "", 0o644).at(1_000_000_000, 0), ccFile("t/s/fileu", "", 0o644).at(4_000_000_000, 0),
	}
}

// TestCpCompatParents911: parent-perm.sh, preserve-link.sh,
// link-symlink.sh and duplicate-sources.sh.
func TestCpCompatParents911(t *testing.T) {
	needRoot(t)
	t.Parallel()
	sameAll := func(t *testing.T, w string) {
		for _, n := range []string{"linkm", "linke", "fileo", "fileu"} {
			ccSameInode(t, w, "t/s/f", "t/s/"+n, true)
		}
	}
	for _, sc := range []ccScenario{
		{name: "p-parents-existing-parents-get-modes", args: ccArgs("-p", "--parent", "a/b/d/foo", "e"), fixture: ccParentPermTree(),
			check: func(t *testing.T, w string) {
				ccPerm(t, w, "e/a", 0o755)
				ccPerm(t, w, "e/a/b", 0o750)
				ccPerm(t, w, "e/a/b/d", 0o700)
			}},
		{name: "parents-existing-parents-kept", args: ccArgs("--parents", "a/b/d/foo", "e"), fixture: ccParentPermTree(),
			check: func(t *testing.T, w string) { ccPerm(t, w, "e/a", 0o705); ccPerm(t, w, "e/a/b/d", 0o700) }},
		{name: "au-hard-links-first-f", args: ccArgs("-au", "s", "t"), fixture: ccPreserveLinkTree("f"), check: sameAll},
		{name: "au-hard-links-first-linkm", args: ccArgs("-au", "s", "t"), fixture: ccPreserveLinkTree("linkm"), check: sameAll},
		{name: "al-symlink-keeps-time", args: ccArgs("-al", "la", "la.cp"),
			check: func(t *testing.T, w string) { ccMtimeOf(t, w, "la.cp", ccStd("la")) }},
		{name: "duplicate-sources", args: ccArgs("-a", "d", "d", "a", "a", "D")},
		{name: "duplicate-sources-other-names", args: ccArgs("-aH", "d", "ld", "a", "la", "D")},
		{name: "duplicate-sources-plain-verbose", args: ccArgs("-v", "a", "b", "a", "D"), ordered: true},
		{name: "duplicate-sources-r", args: ccArgs("-r", "d/sub", "d/sub", "D"), exist: []string{"D/sub/f2"}},
		{name: "duplicate-dir-without-r", args: ccArgs("d", "d", "D"), code: 1},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenario(t, sc, t.TempDir(), setup.Bin)
		})
	}
}

// ccPreserveModeTree is preserve-mode.sh's.
func ccPreserveModeTree() []ccEntry {
	return []ccEntry{
		ccFile("a", "", 0o644), ccFile("b", "", 0o600), ccFile("c", "", 0o600), ccFile("a6", "", 0o600), ccFile("a660", "", 0o660),
		ccDir("d2", 0o705), ccFIFO("fifo", 0o644),
		ccDir("nd", 0o755), ccLink("nd/a", "../a"),
	}
}

// TestCpCompatPreserveMode: preserve-mode.sh, no-deref-link2.sh and
// no-deref-link3.sh.
func TestCpCompatPreserveMode(t *testing.T) {
	needRoot(t)
	t.Parallel()
	perm := func(p string, want uint32) func(t *testing.T, w string) {
		return func(t *testing.T, w string) { ccPerm(t, w, p, want) }
	}
	for _, sc := range []ccScenario{
		{name: "no-preserve-mode-new-file", args: ccArgs("--no-preserve=mode", "b", "x"), check: perm("x", 0o644)},
		{name: "no-preserve-mode-existing-dest", args: ccArgs("--no-preserve=mode", "a", "c"), check: perm("c", 0o600)},
		{name: "no-preserve-mode-dir", args: ccArgs("--no-preserve=mode", "-r", "d2", "d3"), check: perm("d3", 0o755)},
		{name: "no-preserve-mode-then-preserve-all", args: ccArgs("--no-preserve=mode", "--preserve=all", "a6", "x"), check: perm("x", 0o600)},
		{name: "a-no-preserve-mode-fifo", args: ccArgs("-a", "--no-preserve=mode", "fifo", "fifo_copy"), check: perm("fifo_copy", 0o644)},
		{name: "preserve-ownership-keeps-default-mode", args: ccArgs("--preserve=ownership", "a660", "x"), check: perm("x", 0o640)},
		{name: "d-onto-symlink-to-source-in-dir", args: ccArgs("-d", "a", "nd"), code: 1,
			check: func(t *testing.T, w string) { ccLinkTo(t, w, "nd/a", "../a") }},
		{name: "d-onto-symlink-to-source", args: ccArgs("-d", "a", "nd/a"), code: 1},
	} {
		sc.fixture = ccPreserveModeTree()
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenario(t, sc, t.TempDir(), setup.Bin)
		})
	}
}

// TestCpCompatJobs911: cp 9.11's options with -j 4 over the -j tree
// (150 files, an existing destination with conflicts) give what cp gives.
func TestCpCompatJobs911(t *testing.T) {
	needRoot(t)
	t.Parallel()
	for _, args := range [][]string{
		{"-rl", "j", "out"},
		{"-rbv", "j", "out"},
		{"-rv", "--backup=numbered", "j", "out"},
		{"-rv", "--remove-destination", "j", "out"},
		{"-rd", "j", "out"},
		{"-r", "--attributes-only", "j", "out"},
		{"-a", "--no-preserve=mode,links", "j", "out"},
		{"-rsv", "@W@/j", "out"},
	} {
		sc := ccScenario{name: strings.Join(args, "_"), args: args, fastcpOnly: ccArgs("-j", "4"), fixture: ccJobsTree()}
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenarioAnyCode(t, sc, t.TempDir(), setup.Bin)
		})
	}
}

// TestCpCompatUnprivileged911: cp 9.11's options on DESTs the user cannot
// write, run as ccNobody through both programs.
func TestCpCompatUnprivileged911(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	for _, sc := range []ccScenario{
		{name: "rd-unwritable-dest", args: ccArgs("--remove-destination", "a", "rof"),
			check: func(t *testing.T, w string) { ccContent(t, w, "rof", "alpha\n"); ccPerm(t, w, "rof", 0o644) }},
		{name: "rdv-unwritable-dest", args: ccArgs("-v", "--remove-destination", "a", "rof"), cpRemoved: true, ordered: true},
		{name: "rd-other-users-dest", args: ccArgs("--remove-destination", "b", "rootf"),
			check: func(t *testing.T, w string) { ccOwner(t, w, "rootf", ccNobody, ccNobody) }},
		{name: "b-unwritable-dest", args: ccArgs("-b", "a", "rof"),
			check: func(t *testing.T, w string) {
				ccContent(t, w, "rof~", "old, read-only\n")
				ccContent(t, w, "rof", "alpha\n")
			}},
		// protected_hardlinks: no link to another user's file.
		{name: "lf-other-users-file", args: ccArgs("-lf", "a", "rof"), code: 1,
			check: func(t *testing.T, w string) { ccContent(t, w, "rof", "old, read-only\n") }},
		{name: "sf-unwritable-dest", args: ccArgs("-sf", "a", "rof"), check: func(t *testing.T, w string) { ccLinkTo(t, w, "rof", "a") }},
		{name: "l-into-unwritable-dir", args: ccArgs("-l", "a", "ro"), code: 1, absent: []string{"ro/a"}},
		{name: "s-into-unwritable-dir", args: ccArgs("-s", "@W@/a", "ro"), code: 1, absent: []string{"ro/a"}},
		{name: "parents-into-unwritable-dir", args: ccArgs("--parents", "t/a", "ro"), code: 1, absent: []string{"ro/t"}},
		{name: "b-in-unwritable-dir", args: ccArgs("-b", "a", "ro/x"), code: 1},
		{name: "attributes-only-unwritable-dest", args: ccArgs("--attributes-only", "a", "rof"), code: 1,
			check: func(t *testing.T, w string) { ccContent(t, w, "rof", "old, read-only\n") }},
	} {
		sc.user = true
		sc.fixture = ccUserTree()
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ccRunScenario(t, sc, filepath.Join(scratch, safeName(sc.name)), bin)
		})
	}
}
