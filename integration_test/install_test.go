// SPDX-License-Identifier: MIT

package integration_test

// The distribution side: make install/uninstall, reproducible builds, the
// manual page (lint, every option, the benchmark's JSON schema) and the
// shell completions (every option, every value).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"fastcp/benchmark"
	"fastcp/checksum"
	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"
)

// distRoot is the module root: the tests run in integration_test/.
func distRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// distNeedTool returns the path of a program the test needs (needTool).
func distNeedTool(t testing.TB, name string) string {
	t.Helper()
	return needTool(t, name)
}

// distMakeEnv is the environment for a make run by a test: without the
// variables of an outer make (make test passes its command line down
// through MAKEFLAGS) or of the caller's shell that the Makefile reads, so
// that only the test's own command line decides.
func distMakeEnv(extra ...string) []string {
	drop := map[string]bool{
		"MAKEFLAGS": true, "MFLAGS": true, "MAKELEVEL": true, "MAKEOVERRIDES": true,
		"PREFIX": true, "DESTDIR": true, "BINDIR": true, "MANDIR": true,
		"BASHCOMPDIR": true, "ZSHCOMPDIR": true, "FISHCOMPDIR": true,
		"OUT": true, "VERSION": true, "SOURCE_DATE_EPOCH": true, "INSTALL": true, "GO": true,
		"GOFLAGS": true, "LDFLAGS": true, "STRIP": true,
		// git reads neither the machine's nor the user's configuration
		// (a safe.directory=* there would hide what the tests look at).
		"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true,
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_CEILING_DIRECTORIES": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return append(env, extra...)
}

// distMake runs make in dir with args and fails the test on an error.
func distMake(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(distNeedTool(t, "make"), append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The files make install puts under DESTDIR with PREFIX=/usr, and their modes.
var distInstalled = map[string]os.FileMode{
	"usr/bin/fastcp":                                  0o755,
	"usr/share/man/man1/fastcp.1":                     0o644,
	"usr/share/bash-completion/completions/fastcp":    0o644,
	"usr/share/zsh/site-functions/_fastcp":            0o644,
	"usr/share/fish/vendor_completions.d/fastcp.fish": 0o644,
}

// regularFiles lists the regular files under dir, relative to it.
func regularFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func TestInstallUninstall(t *testing.T) {
	root := distRoot(t)
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "dest")
	bin := filepath.Join(tmp, "build", "fastcp")
	// Something of someone else's in the same directories, which
	// uninstall must leave alone.
	other := filepath.Join(dest, "usr", "bin", "other")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, other, []byte("not ours\n"), 0o755)

	env := distMakeEnv()
	// OUT keeps the binary out of the source tree; SOURCE_DATE_EPOCH
	// (2023-11-14) and VERSION must reach the manual page's .TH line.
	vars := []string{"DESTDIR=" + dest, "PREFIX=/usr", "OUT=" + bin, "VERSION=9.9-test", "SOURCE_DATE_EPOCH=1700000000"}
	distMake(t, root, env, append([]string{"install"}, vars...)...)

	want := []string{"usr/bin/other"}
	for p, mode := range distInstalled {
		want = append(want, p)
		fi, err := os.Stat(filepath.Join(dest, p))
		if err != nil {
			t.Errorf("make install did not install %s: %v", p, err)
			continue
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s has mode %#o, want %#o", p, got, mode)
		}
	}
	sort.Strings(want)
	if got := regularFiles(t, dest); !slices.Equal(got, want) {
		t.Errorf("after make install DESTDIR has\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	out, err := exec.Command(filepath.Join(dest, "usr/bin/fastcp"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "fastcp 9.9-test\n") {
		t.Errorf("installed fastcp --version: %q, %v; want \"fastcp 9.9-test\"", out, err)
	}
	man := filepath.Join(dest, "usr/share/man/man1/fastcp.1")
	page, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	if th := regexp.MustCompile(`(?m)^\.TH .*$`).Find(page); string(th) != `.TH FASTCP 1 2023-11-14 "fastcp 9.9-test" "User Commands"` {
		t.Errorf("installed manual page: %q, want the date of SOURCE_DATE_EPOCH and the version", th)
	}
	for _, c := range []string{"bash-completion/completions/fastcp", "zsh/site-functions/_fastcp", "fish/vendor_completions.d/fastcp.fish"} {
		src := map[string]string{"bash-completion/completions/fastcp": "fastcp.bash",
			"zsh/site-functions/_fastcp": "_fastcp", "fish/vendor_completions.d/fastcp.fish": "fastcp.fish"}[c]
		got, _ := os.ReadFile(filepath.Join(dest, "usr/share", c))
		wantB, _ := os.ReadFile(filepath.Join(root, "completions", src))
		if !bytes.Equal(got, wantB) {
			t.Errorf("installed %s differs from completions/%s", c, src)
		}
	}
	if groff, err := exec.LookPath("groff"); err == nil {
		if out, err := exec.Command(groff, "-man", "-ww", "-z", man).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff -man -ww -z on the installed page: %v\n%s", err, out)
		}
	}

	distMake(t, root, env, append([]string{"uninstall"}, vars...)...)
	if got := regularFiles(t, dest); !slices.Equal(got, []string{"usr/bin/other"}) {
		t.Errorf("after make uninstall DESTDIR still has\n  %s\nwant only usr/bin/other", strings.Join(got, "\n  "))
	}
}

// distSnapshot copies the module's source files (tracked, or untracked and
// not ignored) from root into dir, once, so that builds compare one state
// of a working tree that other people may be editing.
func distSnapshot(t testing.TB, root, dir string) {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if out, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		// A tarball: everything but the built binary.
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() && (rel == ".git") {
				return filepath.SkipDir
			}
			if d.IsDir() && (rel == "vendor" || rel == filepath.Join("integration_test", "crashfs", "vendor")) {
				return filepath.SkipDir // distVendored's
			}
			if d.Type().IsRegular() && rel != "fastcp" {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	distCopy(t, root, dir, append(files, distVendored(t, root)...))
}

// distVendored lists the files of the vendor directories under root
// (vendor/ and integration_test/crashfs/vendor/, which git ignores): a copy
// of a vendored tree builds offline as the tree does.
func distVendored(t testing.TB, root string) []string {
	t.Helper()
	var files []string
	for _, v := range []string{"vendor", filepath.Join("integration_test", "crashfs", "vendor")} {
		err := filepath.WalkDir(filepath.Join(root, v), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return filepath.SkipDir
				}
				return err
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// distCopy copies files (relative to root) from root to dir, skipping
// those that are gone or not regular files; one already in dir fails.
func distCopy(t testing.TB, root, dir string, files []string) {
	t.Helper()
	for _, f := range files {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err == nil {
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func sha256File(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// distVersionFile is the VERSION file of the source tree at dir.
func distVersionFile(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	// X.Y.Z, or in a snapshot's tarball (make dist) git describe's
	// X.Y.Z-N-gHASH[-dirty].
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9]+-g[0-9a-f]+)?(-dirty)?$`).MatchString(v) {
		t.Fatalf("VERSION holds %q, not X.Y.Z", v)
	}
	return v
}

// distBuiltVersion returns what the binary at bin says to --version (its
// version alone) and checks that the manual page built beside it (bin.1)
// carries the same one in its footer.
func distBuiltVersion(t testing.TB, bin string) string {
	t.Helper()
	v := distBinVersion(t, bin)
	distManVersion(t, bin+".1", v)
	return v
}

// distBinVersion returns what the binary at bin says to --version: its
// version alone.
func distBinVersion(t testing.TB, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	v, ok := strings.CutPrefix(string(out), "fastcp ")
	v, nl := strings.CutSuffix(v, "\n")
	if !ok || !nl || strings.ContainsAny(v, " \n") {
		t.Fatalf("%s --version printed %q, want \"fastcp VERSION\\n\"", bin, out)
	}
	return v
}

// distManVersion checks that the manual page at path says version in its footer.
func distManVersion(t testing.TB, path, version string) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	th := regexp.MustCompile(`(?m)^\.TH FASTCP 1 [0-9-]+ "fastcp ([^"]*)" "User Commands"$`).FindSubmatch(page)
	if th == nil || string(th[1]) != version {
		t.Errorf("%s: footer %q, want the binary's version %q", path, th, version)
	}
}

// distGit runs git in dir, without the machine's or the user's
// configuration, and returns its output.
func distGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(distNeedTool(t, "git"), append([]string{"-C", dir, "-c", "user.name=fastcp test",
		"-c", "user.email=test@fastcp.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = distMakeEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// distArchive puts the source tree at root into dir as a release tarball
// would have it: git archive of the working tree's tracked files (their
// uncommitted changes included), or a copy when root is itself a tarball.
func distArchive(t testing.TB, root, dir string) {
	t.Helper()
	git := distNeedTool(t, "git")
	top, err := exec.Command(git, "-C", root, "rev-parse", "--show-toplevel").Output()
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != filepath.Clean(root) {
		distSnapshot(t, root, dir)
		return
	}
	tree := distGit(t, root, "stash", "create")
	if tree == "" {
		tree = "HEAD" // nothing changed
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command(git, "-C", root, "archive", "--format=tar", tree)
	extract := exec.Command(distNeedTool(t, "tar"), "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	extract.Stdin = pipe
	var errs bytes.Buffer
	archive.Stderr, extract.Stderr = &errs, &errs
	if err := archive.Start(); err != nil {
		t.Fatal(err)
	}
	if err := extract.Run(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, errs.String())
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive: %v\n%s", err, errs.String())
	}
	distCopy(t, root, dir, distVendored(t, root))
}

// A release tarball unpacked inside a packaging repository (git archive
// into a directory of another git work tree) is built with VERSION's
// version, not the packaging repository's commit, in the binary and in
// the manual page alike.
func TestVersionTarballInsideRepository(t *testing.T) {
	root := distRoot(t)
	tmp := t.TempDir()
	pkg := filepath.Join(tmp, "packaging")
	distGit(t, tmp, "init", "-q", pkg)
	writeFile(t, filepath.Join(pkg, "rules"), []byte("packaging\n"), 0o644)
	distGit(t, pkg, "add", "rules")
	distGit(t, pkg, "commit", "-q", "-m", "packaging")
	src := filepath.Join(pkg, "fastcp-src")
	distArchive(t, root, src)
	// Untracked in the packaging repository, as a freshly unpacked tarball is.
	if st := distGit(t, pkg, "status", "--porcelain"); st != "?? fastcp-src/" {
		t.Fatalf("the packaging repository's status: %q", st)
	}

	bin := filepath.Join(tmp, "out", "fastcp")
	distMake(t, src, distMakeEnv(), "build", "OUT="+bin)
	want := distVersionFile(t, src)
	if got := distBuiltVersion(t, bin); got != want {
		t.Errorf("a tarball build inside another repository says %q, want VERSION's %q", got, want)
	}
	// make VERSION=... still overrides.
	distMake(t, src, distMakeEnv(), "build", "OUT="+bin, "VERSION=2.0.0-pkg1")
	if got := distBuiltVersion(t, bin); got != "2.0.0-pkg1" {
		t.Errorf("make VERSION=2.0.0-pkg1: %q", got)
	}
}

// In the source tree's own git work tree the version is VERSION's, then
// git describe's -N-gHASH (N commits since VERSION last changed) and
// -dirty. A clone git refuses to read (owned by another user: root
// building someone's checkout) gets VERSION's version in the binary and
// the manual page alike; a binary built by its owner and installed by
// root keeps one version in both.
func TestVersionGitWorkTree(t *testing.T) {
	root := distRoot(t)
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	distSnapshot(t, root, repo)
	writeFile(t, filepath.Join(repo, "VERSION"), []byte("1.2.3\n"), 0o644)
	distGit(t, repo, "init", "-q")
	distGit(t, repo, "add", "-A")
	distGit(t, repo, "commit", "-q", "-m", "1.2.3")
	bin := filepath.Join(tmp, "out", "fastcp")
	build := func() string {
		t.Helper()
		distMake(t, repo, distMakeEnv(), "build", "OUT="+bin)
		return distBuiltVersion(t, bin)
	}

	if got := build(); got != "1.2.3" {
		t.Errorf("built on the commit that set VERSION: %q, want 1.2.3", got)
	}
	distGit(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	distGit(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
	head := distGit(t, repo, "rev-parse", "--short", "HEAD")
	if got, want := build(), "1.2.3-2-g"+head; got != want {
		t.Errorf("two commits after VERSION changed: %q, want %q", got, want)
	}
	readme := filepath.Join(repo, "README.md")
	f, err := os.OpenFile(readme, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("changed\n")
	f.Close()
	if got, want := build(), "1.2.3-2-g"+head+"-dirty"; got != want {
		t.Errorf("a tracked file changed: %q, want %q", got, want)
	}
	distGit(t, repo, "checkout", "-q", "README.md")

	t.Run("owned by another user", func(t *testing.T) {
		needRoot(t)
		clone := filepath.Join(tmp, "clone")
		distGit(t, tmp, "clone", "-q", repo, clone)
		// git ignores vendor/: a clone of a vendored tree (a release
		// tarball's, built offline) gets its modules as a checkout
		// would get them from the tarball.
		distCopy(t, repo, clone, distVendored(t, repo))
		// Built by its owner (root here): -N-gHASH.
		owned := filepath.Join(tmp, "owned", "fastcp")
		distMake(t, clone, distMakeEnv(), "build", "OUT="+owned)
		ownedVersion := distBuiltVersion(t, owned)
		if want := "1.2.3-2-g" + head; ownedVersion != want {
			t.Fatalf("built by the clone's owner: %q, want %q", ownedVersion, want)
		}
		if err := filepath.WalkDir(clone, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		}); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "-C", clone, "rev-parse", "--show-toplevel")
		cmd.Env = distMakeEnv()
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "safe.directory") {
			t.Fatalf("git does not refuse a clone owned by another user: %v\n%s", err, out)
		}
		// Built by root: git refuses, VERSION alone, in both.
		distMake(t, clone, distMakeEnv(), "build", "OUT="+bin)
		if got := distBuiltVersion(t, bin); got != "1.2.3" {
			t.Errorf("root building a clone owned by another user: %q, want 1.2.3", got)
		}
		// Installed by root after its owner built it: what was built, in both.
		dest := filepath.Join(tmp, "dest")
		distMake(t, clone, distMakeEnv(), "install", "OUT="+owned, "DESTDIR="+dest, "PREFIX=/usr")
		if got := distBinVersion(t, filepath.Join(dest, "usr/bin/fastcp")); got != ownedVersion {
			t.Errorf("installed by root: %q, want the build's %q", got, ownedVersion)
		}
		distManVersion(t, filepath.Join(dest, "usr/share/man/man1/fastcp.1"), ownedVersion)
	})
}

// Two builds of the same sources with the Makefile's flags, from two
// different directories, one with an empty Go build cache (everything,
// the standard library included, compiled afresh) and one with the usual
// cache, must give byte-identical binaries and manual pages. The default
// build is stripped; STRIP= keeps the symbols and DWARF for a debug
// package; LDFLAGS and STRIP from the environment (the C toolchain's in a
// packaging environment) do not reach go's linker.
func TestReproducibleBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles everything from scratch; skipped with -short")
	}
	root := distRoot(t)
	distNeedTool(t, "make")
	tmp := t.TempDir()
	srcA := filepath.Join(tmp, "a", "src")
	srcB := filepath.Join(tmp, "b", "a", "longer", "path", "to", "the", "src")
	distSnapshot(t, root, srcA)
	distSnapshot(t, srcA, srcB)
	// The snapshots have no .git: the version is VERSION's, as for a tarball.
	version := distVersionFile(t, srcA)

	binA := filepath.Join(tmp, "a", "fastcp")
	binB := filepath.Join(tmp, "b", "fastcp")
	distMake(t, srcA, distMakeEnv("GOCACHE="+filepath.Join(tmp, "gocache")), "build", "OUT="+binA)
	// A packaging environment's C flags and strip program.
	distMake(t, srcB, distMakeEnv("LDFLAGS=-Wl,-z,relro -Wl,-z,now", "STRIP=x86_64-linux-gnu-strip"), "build", "OUT="+binB)

	for _, f := range []string{"", ".1"} {
		sumA, sumB := sha256File(t, binA+f), sha256File(t, binB+f)
		t.Logf("sha256 %s  (empty build cache, %s)", sumA, binA+f)
		t.Logf("sha256 %s  (usual build cache, %s)", sumB, binB+f)
		if sumA != sumB {
			t.Errorf("two builds of the same sources differ: %s and %s", binA+f, binB+f)
		}
	}
	for _, b := range []string{binA, binB} {
		data, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(tmp)) {
			t.Errorf("%s contains the build directory %s (-trimpath missing?)", b, tmp)
		}
	}
	if got := distBuiltVersion(t, binA); got != version {
		t.Errorf("fastcp --version: %q, want VERSION's %q", got, version)
	}
	distELF(t, binA, false)

	// Unstripped, with more linker flags and a GOFLAGS.
	binC := filepath.Join(tmp, "c", "fastcp")
	distMake(t, srcA, distMakeEnv(), "build", "OUT="+binC, "STRIP=", "LDFLAGS=-X main.version=7.7.7-debug", "GOFLAGS=-buildmode=pie")
	distELF(t, binC, true)
	if out, err := exec.Command(binC, "--version").Output(); err != nil || string(out) != "fastcp 7.7.7-debug\n" {
		t.Errorf("built with LDFLAGS=-X main.version=7.7.7-debug: %q, %v", out, err)
	}
	if f, err := elf.Open(binC); err == nil {
		if f.Type != elf.ET_DYN {
			t.Errorf("built with GOFLAGS=-buildmode=pie: ELF type %v, want ET_DYN", f.Type)
		}
		f.Close()
	}
}

// distELF checks that bin has (symbols) or lacks a symbol table and DWARF,
// and is a static binary (no cgo).
func distELF(t testing.TB, bin string, symbols bool) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{".symtab", ".debug_info"} {
		if has := f.Section(name) != nil; has != symbols {
			t.Errorf("%s: section %s present %v, want %v", bin, name, has, symbols)
		}
	}
	if symbols {
		syms, err := f.Symbols()
		if err != nil || !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "main.main" }) {
			t.Errorf("%s: no main.main in its symbol table (%d symbols, %v)", bin, len(syms), err)
		}
	} else if f.Section(".interp") != nil {
		t.Errorf("%s is dynamically linked (cgo?)", bin)
	}
}

func distManPage(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(distRoot(t), "man", "fastcp.1"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// distSection returns the text of the man page's section (.SH name) or
// subsection (.SS name), up to the next one of the same level or above.
func distSection(t testing.TB, page, macro, name string) string {
	t.Helper()
	start := regexp.MustCompile(`(?m)^\` + macro + ` "?` + regexp.QuoteMeta(name) + `"?\s*$`).FindStringIndex(page)
	if start == nil {
		t.Fatalf("the manual page has no %s %s", macro, name)
	}
	rest := page[start[1]:]
	endRE := `(?m)^\.SH `
	if macro == ".SS" {
		endRE = `(?m)^\.S[HS] `
	}
	if end := regexp.MustCompile(endRE).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return rest
}

func TestManPageLint(t *testing.T) {
	groff := distNeedTool(t, "groff")
	cmd := exec.Command(groff, "-man", "-ww", "-z", filepath.Join(distRoot(t), "man", "fastcp.1"))
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww -z man/fastcp.1: %v\n%s", err, out)
	}
}

// roffOption is an option as the manual page spells it: "\-\-sync".
func roffOption(name string) string { return strings.ReplaceAll(name, "-", `\-`) }

// distMentions reports whether text has word (an option as typed, e.g.
// "--sync" or "-R") standing alone: not part of a longer option ("-p" in
// "--preserve", "--progress" in "--no-progress"). escaped says whether
// text is roff, where "-" is written "\-".
func distMentions(text, word string, escaped bool) bool {
	if escaped {
		// Not preceded by another "\-" or a letter, not followed by a
		// letter, digit, "_" or "\-".
		re := `(^|[^-A-Za-z0-9_])` + regexp.QuoteMeta(roffOption(word)) + `($|[^A-Za-z0-9_\\]|\\[^-])`
		return regexp.MustCompile(re).MatchString(text)
	}
	re := `(^|[^-A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^-A-Za-z0-9_])`
	return regexp.MustCompile(re).MatchString(text)
}

// Every option of flags/set.go is documented in OPTIONS, and every value
// of the enumerated options too.
func TestManPageHasEveryOption(t *testing.T) {
	page := distManPage(t)
	options := distSection(t, page, ".SH", "OPTIONS")
	names := flags.AllFlagNames()
	if len(names) < 40 {
		t.Fatalf("flags.AllFlagNames() lists only %d options: %v", len(names), names)
	}
	for _, name := range names {
		if !distMentions(options, name, true) {
			t.Errorf("man/fastcp.1 OPTIONS does not document %s (looked for %q)", name, roffOption(name))
		}
	}
	for _, v := range distValues() {
		if !distHasWord(options, v.value) {
			t.Errorf("man/fastcp.1 OPTIONS does not name %s value %q", v.option, v.value)
		}
	}
}

// distHasWord reports whether text has word, not as part of a longer
// word ("copy_file_range", "no-progress").
func distHasWord(text, word string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`).MatchString(text)
}

// distValue is one value an enumerated option takes.
type distValue struct{ option, value string }

func distValues() []distValue {
	var vs []distValue
	add := func(option string, values []string) {
		for _, v := range values {
			vs = append(vs, distValue{option, v})
		}
	}
	add("--strategy", copier.StrategyNames())
	add("--reflink", copier.ReflinkNames)
	add("--sparse", copier.SparseNames)
	add("--sync", durability.SyncNames)
	add("--preserve", flags.PreserveWords)
	add("--update", flags.UpdateWords)
	add("--backup", flags.BackupWords)
	add("--progress", flags.ProgressFormats)
	add("--verify", flags.VerifyWords)
	add("--checksum", checksum.Names[1:])
	return vs
}

// distJSONKeys lists the JSON keys of a struct type and of the structs it
// contains (in slices, maps and fields).
func distJSONKeys(t reflect.Type, keys map[string]bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		distJSONKeys(t.Elem(), keys)
		return
	case reflect.Struct:
	default:
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[name] = true
		distJSONKeys(f.Type, keys)
	}
}

// The JSON schema in the manual page is benchmark.Report's: every key of
// the structs is documented, and every key documented exists.
func TestManPageJSONSchema(t *testing.T) {
	page := distManPage(t)
	schema := distSection(t, page, ".SS", "JSON")
	keys := map[string]bool{}
	distJSONKeys(reflect.TypeOf(benchmark.Report{}), keys)
	for k := range keys {
		if !strings.Contains(schema, `"`+k+`":`) {
			t.Errorf("man/fastcp.1 JSON schema lacks the key %q of benchmark.Report", k)
		}
	}
	// The keys of Row.Calls: every strategy and "other".
	mapKeys := map[string]bool{"other": true}
	for _, s := range copier.Strategies() {
		mapKeys[s.String()] = true
		if !strings.Contains(schema, `"`+s.String()+`":`) {
			t.Errorf("man/fastcp.1 JSON schema lacks the calls key %q", s.String())
		}
	}
	// A row's strategy is one of them: the comment beside "strategy"
	// names them all.
	_, row, _ := strings.Cut(schema, `"strategy":`)
	row, _, _ = strings.Cut(row, `"buffer_size":`)
	for _, s := range copier.Strategies() {
		if !regexp.MustCompile(`\b` + s.String() + `\b`).MatchString(row) {
			t.Errorf("man/fastcp.1 JSON schema: a row's \"strategy\" does not list %q: %q", s, row)
		}
	}
	for _, m := range regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(schema, -1) {
		if !keys[m[1]] && !mapKeys[m[1]] {
			t.Errorf("man/fastcp.1 JSON schema documents %q, which benchmark.Report does not have", m[1])
		}
	}
}

// The manual page's PROGRESS AS JSON section documents every key of
// --progress=json's objects, and nothing else; the status test holds the
// binary to the same list.
func TestManPageProgressSchema(t *testing.T) {
	section := distSection(t, distManPage(t), ".SH", "PROGRESS AS JSON")
	keys := map[string]bool{}
	distJSONKeys(reflect.TypeOf(output.ProgressJSON{}), keys)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
	}
	for k := range keys {
		if !documented[k] {
			t.Errorf("PROGRESS AS JSON lacks the key %q", k)
		}
	}
	for k := range documented {
		if !keys[k] {
			t.Errorf("PROGRESS AS JSON documents %q, which the objects do not have", k)
		}
	}
	if want := slices.Sorted(maps.Keys(keys)); !slices.Equal(want, slices.Sorted(slices.Values(progressKeys))) {
		t.Errorf("output.ProgressJSON has %v, the status tests expect %v", want, progressKeys)
	}
}

// distCompletions are the completion files and how each spells a short
// option ("-r" in bash and zsh, "-s r" in fish).
var distCompletions = []struct {
	file  string
	short func(letter string) string
}{
	{"fastcp.bash", func(l string) string { return "-" + l }},
	{"_fastcp", func(l string) string { return "-" + l }},
	{"fastcp.fish", func(l string) string { return "-s " + l }},
}

func TestCompletionsHaveEveryOption(t *testing.T) {
	root := distRoot(t)
	for _, c := range distCompletions {
		b, err := os.ReadFile(filepath.Join(root, "completions", c.file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, name := range flags.AllFlagNames() {
			if long, ok := strings.CutPrefix(name, "--"); ok {
				if c.file == "fastcp.fish" {
					// complete -l NAME
					if !regexp.MustCompile(`-l ` + regexp.QuoteMeta(long) + `(\s|$)`).MatchString(text) {
						t.Errorf("completions/%s lacks %s", c.file, name)
					}
					continue
				}
				if !distMentions(text, name, false) {
					t.Errorf("completions/%s lacks %s", c.file, name)
				}
				continue
			}
			want := c.short(strings.TrimPrefix(name, "-"))
			if !distMentions(text, want, false) && !strings.Contains(text, want+" ") {
				t.Errorf("completions/%s lacks %s (looked for %q)", c.file, name, want)
			}
		}
		for _, v := range distValues() {
			if !distHasWord(text, v.value) {
				t.Errorf("completions/%s lacks %s value %q", c.file, v.option, v.value)
			}
		}
	}
}

// distBashComplete runs the bash completion function on words (the last
// one being completed, split as bash splits them: "--sync", "=", "d") and
// returns COMPREPLY.
func distBashComplete(t *testing.T, bash, dir string, words ...string) []string {
	t.Helper()
	script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _fastcp; printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", script, "bash", filepath.Join(distRoot(t), "completions", "fastcp.bash")}, words...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	sort.Strings(got)
	return got
}

func TestBashCompletion(t *testing.T) {
	bash := distNeedTool(t, "bash")
	dir := t.TempDir()
	mustMkdir(t, filepath.Join(dir, "sub"))
	writeFile(t, filepath.Join(dir, "file"), []byte("x"), 0o644)

	sorted := func(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }
	except := func(s []string, drop string) []string {
		return slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == drop })
	}
	prefixed := func(p string, s []string) []string {
		var out []string
		for _, x := range s {
			out = append(out, p+x)
		}
		return sorted(out)
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"fastcp", "--sync", "=", ""}, sorted(durability.SyncNames)},
		{[]string{"fastcp", "--sync", ""}, sorted(durability.SyncNames)},
		{[]string{"fastcp", "--sync=o"}, []string{"--sync=odsync", "--sync=osync"}},
		{[]string{"fastcp", "--strategy", "=", ""}, sorted(copier.StrategyNames())},
		{[]string{"fastcp", "--reflink", "=", ""}, sorted(copier.ReflinkNames)},
		{[]string{"fastcp", "--sparse", "=", ""}, sorted(copier.SparseNames)},
		{[]string{"fastcp", "--preserve", "=", ""}, sorted(flags.PreserveWords)},
		{[]string{"fastcp", "--preserve", "=", "mode,"}, prefixed("mode,", except(flags.PreserveWords, "mode"))},
		{[]string{"fastcp", "--no-preserve", "=", ""}, sorted(flags.PreserveWords)},
		{[]string{"fastcp", "--update", "=", ""}, sorted(flags.UpdateWords)},
		{[]string{"fastcp", "--update", "=", "none"}, []string{"none", "none-fail"}},
		{[]string{"fastcp", "--backup", "=", ""}, sorted(flags.BackupWords)},
		{[]string{"fastcp", "--verify", "=", ""}, sorted(flags.VerifyWords)},
		{[]string{"fastcp", "--checksum", "=", "sha5"}, []string{"sha512"}},
		{[]string{"fastcp", "--checksum", ""}, []string{"file", "sub"}}, // optional value: an operand
		{[]string{"fastcp", "--checksum-file", "=", "fi"}, []string{"file"}},
		{[]string{"fastcp", "--update", ""}, []string{"file", "sub"}}, // optional value: an operand
		{[]string{"fastcp", "--stra"}, []string{"--strategy="}},
		{[]string{"fastcp", "--str"}, []string{"--strategy=", "--strip-trailing-slashes"}},
		{[]string{"fastcp", "--no-pro"}, []string{"--no-progress"}},
		{[]string{"fastcp", "-t", ""}, []string{"sub"}},
		{[]string{"fastcp", "--benchmark", ""}, []string{"sub"}},
		{[]string{"fastcp", "--reflink", ""}, []string{"file", "sub"}}, // its value needs "=": this is an operand
		{[]string{"fastcp", "f"}, []string{"file"}},
	} {
		if got := distBashComplete(t, bash, dir, tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("bash completes %q to %q, want %q", tc.words, got, tc.want)
		}
	}
	// Every long option is offered.
	all := distBashComplete(t, bash, dir, "fastcp", "--")
	for _, name := range flags.AllFlagNames() {
		if strings.HasPrefix(name, "--") && !slices.Contains(all, name) && !slices.Contains(all, name+"=") {
			t.Errorf("bash does not offer %s for %q", name, "--")
		}
	}
}

// The zsh and fish files at least parse (when the shell is installed:
// .ci/run installs neither).
func TestZshFishCompletionsParse(t *testing.T) {
	root := distRoot(t)
	for _, c := range []struct{ shell, file string }{{"zsh", "_fastcp"}, {"fish", "fastcp.fish"}} {
		sh, err := exec.LookPath(c.shell)
		if err != nil {
			t.Logf("%s is not installed: completions/%s not parsed", c.shell, c.file)
			continue
		}
		if out, err := exec.Command(sh, "-n", filepath.Join(root, "completions", c.file)).CombinedOutput(); err != nil {
			t.Errorf("%s -n completions/%s: %v\n%s", c.shell, c.file, err, out)
		}
	}
}

// make test uses -race only where it can: without a C compiler it says why
// and runs the unit tests without it (as make check always does); under
// CI=true a missing race detector fails instead.
func TestMakeTestRaceChoice(t *testing.T) {
	root := distRoot(t)
	dry := func(env []string, target string) string {
		t.Helper()
		cmd := exec.Command(distNeedTool(t, "make"), "-n", "-C", root, target)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	noCC := distMakeEnv("CC=no-such-cc", "CI=")
	if out := dry(noCC, "test"); !strings.Contains(out, "why='no C compiler (no-such-cc) for cgo'") {
		t.Errorf("make test without a C compiler does not say so:\n%s", out)
	}
	if out := dry(distMakeEnv("CI="), "check"); !strings.Contains(out, "why='RACE=off'") {
		t.Errorf("make check does not leave -race out:\n%s", out)
	}
	if out := dry(distMakeEnv("CC=no-such-cc", "CI=true"), "test"); !strings.Contains(out, `elif [ "on" = on ]`) {
		t.Errorf("under CI=true make test does not insist on -race:\n%s", out)
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		if out := dry(distMakeEnv("CC=gcc", "CI="), "test"); !strings.Contains(out, "why=''") {
			t.Errorf("with gcc make test does not use -race:\n%s", out)
		}
	}
}

// Without the power-cut tests' module, make still builds (saying it could
// not fetch that module) and make check runs the rest, and its closing line
// counts the suite it did not run; under CI=true it fails instead.
func TestMakeTestCountsASuiteNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every package's tests in a copy of the tree; skipped with -short")
	}
	root := distRoot(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	distSnapshot(t, root, src)
	// go-fuse's sources taken from a directory that does not exist: the
	// module is not here.
	crashfs := filepath.Join(src, "integration_test", "crashfs")
	if err := os.RemoveAll(filepath.Join(crashfs, "vendor")); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(crashfs, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(crashfs, "go.mod"), append(gomod, "\nreplace github.com/hanwen/go-fuse/v2 => ./no-such-directory\n"...), 0o644)
	env := distMakeEnv("GOPROXY=off", "CI=")

	out := distMake(t, src, env, "build", "OUT="+filepath.Join(tmp, "fastcp"))
	if !strings.Contains(out, "the power-cut tests' module (go-fuse) was not fetched") {
		t.Errorf("make does not say it could not fetch the power-cut tests' module:\n%s", out)
	}
	out = distMake(t, src, env, "check", "RUN=^TestNoTestHasThisName$")
	if !strings.Contains(out, "suites not run:\n  the power-cut tests (integration_test/crashfs): their module go-fuse is not here") {
		t.Errorf("make check does not name the suite it did not run:\n%s", out)
	}
	if !strings.Contains(out, "\n0 passed, 0 failed, 0 skipped, 1 suite skipped\n") {
		t.Errorf("make check's closing line does not count the suite it did not run:\n%s", out)
	}

	cmd := exec.Command(distNeedTool(t, "make"), "-C", src, "check", "RUN=^TestNoTestHasThisName$")
	cmd.Env = distMakeEnv("GOPROXY=off", "CI=true")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "CI=true: every suite must run") {
		t.Errorf("under CI=true make check without the power-cut tests' module: %v\n%s", err, b)
	}
}

// make dist writes fastcp-VERSION.tar.gz, named with make's version and
// holding it in VERSION, with the modules of the product and of the
// power-cut tests vendored; reproducibly: two runs give the same bytes,
// every entry owned by 0 with the last commit's time, each directory's
// entries in sorted order. It fetches nothing (GOPROXY=off): the modules
// come from the module cache.
func TestDist(t *testing.T) {
	root := distRoot(t)
	git := distNeedTool(t, "git")
	if top, err := exec.Command(git, "-C", root, "rev-parse", "--show-toplevel").Output(); err != nil ||
		filepath.Clean(strings.TrimSpace(string(top))) != filepath.Clean(root) {
		skipUnless(t, "make dist needs the git work tree (this is a tarball)")
	}
	for _, dir := range []string{root, filepath.Join(root, "integration_test", "crashfs")} {
		cmd := exec.Command("go", "-C", dir, "mod", "download")
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			skipUnless(t, fmt.Sprintf("make dist vendors the modules of %s, which are not in the module cache: %s", dir, bytes.TrimSpace(out)))
		}
	}
	out, err := exec.Command("sh", filepath.Join(root, "scripts", "version")).Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(out))
	tmp := t.TempDir()
	var sums []string
	for _, d := range []string{"a", "b"} {
		distMake(t, root, distMakeEnv("GOPROXY=off"), "dist", "DISTDIR="+filepath.Join(tmp, d))
		sums = append(sums, sha256File(t, filepath.Join(tmp, d, "fastcp-"+version+".tar.gz")))
	}
	if sums[0] != sums[1] {
		t.Errorf("two make dist runs: sha256 %s and %s", sums[0], sums[1])
	}
	distCheckTarball(t, filepath.Join(tmp, "a", "fastcp-"+version+".tar.gz"), "fastcp-"+version, version)
}

// distCheckTarball reads the tarball at path: every entry under top/,
// owned by 0:0, with one mtime (the last commit's), each directory's
// entries sorted; VERSION holding version, and the vendored modules there.
func distCheckTarball(t *testing.T, path, top, version string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	last := map[string]string{} // directory -> its last entry so far
	seen := map[string]bool{}
	var mtime time.Time
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		seen[name] = true
		if name != top && !strings.HasPrefix(name, top+"/") {
			t.Errorf("%s: outside %s/", h.Name, top)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Mode&0o022 != 0 {
			t.Errorf("%s: owner %d:%d, mode %o", h.Name, h.Uid, h.Gid, h.Mode)
		}
		if mtime.IsZero() {
			mtime = h.ModTime
		} else if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: mtime %v, the first entry's %v", h.Name, h.ModTime, mtime)
		}
		dir, base := filepath.Split(name)
		if prev := last[dir]; prev != "" && base < prev {
			t.Errorf("%s comes after %s%s: not sorted", h.Name, dir, prev)
		}
		last[dir] = base
		if name == top+"/VERSION" {
			b, _ := io.ReadAll(tr)
			if string(b) != version+"\n" {
				t.Errorf("VERSION in the tarball holds %q, want %q", b, version+"\n")
			}
		}
	}
	for _, want := range []string{"vendor/modules.txt", "vendor/golang.org/x/sys", "vendor/github.com/spf13/pflag",
		"integration_test/crashfs/vendor/modules.txt", "integration_test/crashfs/vendor/github.com/hanwen/go-fuse/v2", "LICENSE", "Makefile"} {
		if !seen[top+"/"+want] {
			t.Errorf("the tarball has no %s/%s", top, want)
		}
	}
}
