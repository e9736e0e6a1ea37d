// SPDX-License-Identifier: MIT

package integration_test

// --checksum and --checksum-file: the manifest of a file, of a tree (hard
// links, sparse and empty files, odd names) and of a -j 4 tree passes
// sha256sum -c and sha512sum -c; every strategy gives the same line; a
// source changed during the copy gets no line; --verify --checksum catches
// a corrupted DEST; a copy killed and resumed gets the whole file's line;
// bad input fails before anything is copied.

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fileDigest is the hex digest of path's bytes.
func fileDigest(t testing.TB, h hash.Hash, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// sumsCheck runs tool -c --strict on the manifest in dir and fails the
// test unless every line is OK.
func sumsCheck(t testing.TB, tool, dir, manifest string) {
	t.Helper()
	cmd := exec.Command(needTool(t, tool), "--strict", "-c", manifest)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s -c %s in %s: %v\n%s", tool, manifest, dir, err, out)
	}
}

// toolLine is the line tool writes for name, run in dir: the manifest's
// line must be byte for byte the same.
func toolLine(t testing.TB, tool, dir, name string) string {
	t.Helper()
	cmd := exec.Command(needTool(t, tool), "--", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v", tool, name, err)
	}
	return string(out)
}

// oddNames are names sha256sum must escape, or that a careless manifest
// would break: spaces, a newline, a backslash, a carriage return, a
// leading space, a star.
var oddNames = []string{"with space", "new\nline", `back\slash`, "carriage\rreturn", " leading", "*star", "tab\tname"}

// makeChecksumTree fills dir with the tree the manifests are tested on:
// files of several sizes, empty files, a sparse file, hard links, odd
// names, a subdirectory.
func makeChecksumTree(t *testing.T, dir string) {
	t.Helper()
	mustMkdir(t, join(dir, "sub"))
	mustMkdir(t, join(dir, "sub", "deeper"))
	writeFile(t, join(dir, "big"), randomBytes(5<<20+3, "big"), 0o644)
	writeFile(t, join(dir, "empty"), nil, 0o644)
	writeFile(t, join(dir, "sub", "empty too"), nil, 0o600)
	writeFile(t, join(dir, "sub", "deeper", "small"), []byte("small\n"), 0o644)
	writeSparse(t, join(dir, "sparse"), 64<<20, []span{{off: 1 << 20, data: randomBytes(70000, "sp")}, {off: 60 << 20, data: []byte("end")}})
	for i, n := range oddNames {
		writeFile(t, join(dir, "sub", n), randomBytes(1000+i, n), 0o644)
	}
	if err := os.Link(join(dir, "big"), join(dir, "sub", "big link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(join(dir, "sub", "with space"), join(dir, "link\nto odd")); err != nil {
		t.Fatal(err)
	}
}

// regularUnder lists the regular files under dir (relative, sorted).
func regularUnder(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// manifestNames returns the names the manifest lists, unescaped.
func manifestNames(t *testing.T, path string, digestLen int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		escaped := strings.HasPrefix(l, `\`)
		if escaped {
			l = l[1:]
		}
		if len(l) < digestLen+2 || l[digestLen:digestLen+2] != "  " {
			t.Fatalf("a line that is not DIGEST  NAME: %q", l)
		}
		n := l[digestLen+2:]
		if escaped {
			n = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r").Replace(n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// A tree copied with -a (and -j 4) into DEST, its manifest in DEST: every
// regular file of the copy has one line, names relative to DEST, and
// sha256sum -c (sha512sum -c) passes; the manifest's own name is left out.
func TestChecksumTreeManifest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		tool string
		size int
	}{
		{"sha256", nil, "sha256sum", 64},
		{"sha512", []string{"--checksum=sha512"}, "sha512sum", 128},
		{"sha256 -j 4", []string{"-j", "4"}, "sha256sum", 64},
		{"sha512 -j 4", []string{"-j4", "--checksum=sha512"}, "sha512sum", 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := mustMkdir(t, join(dir, "src"))
			makeChecksumTree(t, src)
			args := append([]string{"-a", "--checksum-file=dst/SUMS"}, tc.args...)
			r := fastcp(t, dir, append(args, "src/.", "dst")...)
			wantSuccess(t, r)
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			dst := join(dir, "dst")
			sumsCheck(t, tc.tool, dst, "SUMS")
			files := regularUnder(t, dst)
			files = slicesDelete(files, "SUMS")
			if got := manifestNames(t, join(dst, "SUMS"), tc.size); strings.Join(got, "|") != strings.Join(files, "|") {
				t.Errorf("the manifest lists\n%q\nthe copy has\n%q", got, files)
			}
			// Its lines are the ones the tool writes itself.
			b, _ := os.ReadFile(join(dst, "SUMS"))
			for _, n := range []string{"big", "sub/new\nline", `sub/back\slash`, "sub/carriage\rreturn", "sparse", "empty"} {
				if l := toolLine(t, tc.tool, dst, n); !strings.Contains(string(b), l) {
					t.Errorf("the manifest lacks %s's own line %q", tc.tool, l)
				}
			}
			if fi, err := os.Stat(join(dst, "SUMS")); err != nil || fi.Mode().Perm()&0o044 == 0 {
				t.Errorf("the manifest's mode: %v, %v; want a new file's", fi.Mode(), err)
			}
			assertNoTemps(t, dst)
		})
	}
}

func slicesDelete(s []string, drop string) []string {
	var out []string
	for _, x := range s {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// Names as the user checks them: relative to the manifest's directory when
// it is DEST's directory or DEST itself, else as DEST was given (checked
// from the directory fastcp ran in); "-" writes the manifest alone to
// standard output, the -v lines going to stderr.
func TestChecksumManifestNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "a"), randomBytes(10000, "a"), 0o644)
	writeFile(t, join(dir, "b c"), randomBytes(20000, "b"), 0o644)
	mustMkdir(t, join(dir, "out"))
	mustMkdir(t, join(dir, "elsewhere"))
	mustMkdir(t, join(dir, "treesrc", "sub"))
	writeFile(t, join(dir, "treesrc", "a"), []byte("a\n"), 0o644)
	writeFile(t, join(dir, "treesrc", "sub", "b"), []byte("b\n"), 0o644)
	for _, tc := range []struct {
		args      []string
		manifest  string // where it is, "" for stdout
		checkFrom string
		want      []string
	}{
		{[]string{"--checksum-file=out/S", "a", "b c", "out"}, "out/S", "out", []string{"a", "b c"}},
		{[]string{"--checksum-file=out/S", "a", "b c", "out/"}, "out/S", "out", []string{"a", "b c"}},
		{[]string{"--checksum-file=out/S", "-t", "out", "a"}, "out/S", "out", []string{"a"}},
		{[]string{"--checksum-file=out/S", "a", "out/renamed"}, "out/S", "out", []string{"renamed"}},
		{[]string{"--checksum-file=S", "a", "out/x"}, "S", ".", []string{"out/x"}},
		{[]string{"--checksum-file=elsewhere/S", "a", "out/y"}, "elsewhere/S", ".", []string{"out/y"}},
		{[]string{"--checksum-file=" + join(dir, "elsewhere/T"), "a", join(dir, "out")}, "elsewhere/T", "/", []string{join(dir, "out/a")}},
		{[]string{"-r", "--checksum-file=out/S", "treesrc", "out/tree"}, "out/S", "out", []string{"tree/a", "tree/sub/b"}},
		{[]string{"--checksum-file=-", "-v", "a", "b c", "out"}, "", ".", []string{"out/a", "out/b c"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			os.RemoveAll(join(dir, "out"))
			mustMkdir(t, join(dir, "out"))
			r := fastcp(t, dir, tc.args...)
			if r.code != 0 {
				t.Fatalf("%v", r)
			}
			m := tc.manifest
			if m == "" {
				m = join(t.TempDir(), "stdout")
				writeFile(t, m, []byte(r.stdout), 0o644)
				if !strings.Contains(r.stderr, "'a' -> 'out/a'") {
					t.Errorf("the -v lines are not on stderr: %q", r.stderr)
				}
			} else {
				m = join(dir, m)
				wantSuccess(t, r)
			}
			got := manifestNames(t, m, 64)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("names %q, want %q", got, tc.want)
			}
			sumsCheck(t, "sha256sum", join(dir, tc.checkFrom), m)
		})
	}
}

// Every strategy, forced, gives the same line for the same file, on the
// filesystems where it works: the one sha256sum writes.
func TestChecksumEveryStrategySameLine(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(9<<20+123, "strategies")
	for _, kind := range []string{"ext4", "btrfs"} {
		dir := fsDir(t, kind)
		writeFile(t, join(dir, "src"), data, 0o644)
		writeSparse(t, join(dir, "holes"), 40<<20, []span{{off: 8 << 20, data: data[:1<<20]}, {off: 32<<20 + 5, data: data[:99]}})
		for _, s := range []string{"reflink", "copy_file_range", "direct", "sendfile", "splice", "rw", "auto"} {
			if s == "reflink" && kind == "ext4" {
				continue
			}
			for _, name := range []string{"src", "holes"} {
				t.Run(kind+"/"+s+"/"+name, func(t *testing.T) {
					out := mustMkdir(t, join(dir, "out-"+s+"-"+name))
					r := fastcp(t, dir, "--strategy="+s, "--checksum-file="+join(out, "S"), name, out)
					wantSuccess(t, r)
					got, _ := os.ReadFile(join(out, "S"))
					if want := toolLine(t, "sha256sum", dir, name); string(got) != want {
						t.Errorf("--strategy=%s: %q, want sha256sum's %q", s, got, want)
					}
					sumsCheck(t, "sha256sum", out, "S")
				})
			}
		}
	}
}

// A source that changes while it is copied is refused as without
// --checksum, and the manifest lists only the file that was copied.
func TestChecksumSourceChangedNoLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := join(dir, "src")
	writeFile(t, src, randomBytes(2<<20, "changing"), 0o644)
	writeFile(t, join(dir, "other"), []byte("other\n"), 0o644)
	out := mustMkdir(t, join(dir, "out"))
	faultReady(t)
	log := join(t.TempDir(), "strace.log")
	done := make(chan traced, 1)
	go func() {
		// 32 writes of 64 KiB, 60 ms each: about 2 s in which to change src.
		done <- faultStraceLog(t, dir, log, []string{"-e", "trace=pwrite64", "-e", "inject=pwrite64:delay_enter=60000"},
			"--strategy=rw", "--buffer-size=64K", "--checksum-file=out/S", "other", "src", "out")
	}()
	if !waitFor(func() bool {
		fi, err := os.Stat(join(out, "other"))
		return err == nil && fi.Size() > 0 && len(openTempsAnywhere(out)) > 0
	}) {
		t.Fatal("the copy of src never began")
	}
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("more"))
	f.Close()
	// The change must land while src is still being copied, or this test
	// proves nothing: the temporary file is still open after the append.
	if len(openTempsAnywhere(out)) == 0 {
		t.Fatal("src's copy ended before src changed: the injected delay is too short for this machine")
	}
	tr := <-done
	wantOneLineError(t, tr.result, "'src' changed size while being copied", "'out/src' was not replaced")
	assertNotExist(t, join(out, "src"))
	if got := manifestNames(t, join(out, "S"), 64); strings.Join(got, "|") != "other" {
		t.Errorf("the manifest lists %q, want only other", got)
	}
	sumsCheck(t, "sha256sum", out, "S")
}

// --verify --checksum: a DEST corrupted on the device before the read-back
// (the test build's hook) fails the copy naming the file, DEST keeps its
// old bytes, and the manifest has no line for it; intact, it passes and
// the source is not read again.
func TestChecksumVerifyCatchesCorruption(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(9<<20+777, "verify-sum")
	for _, kind := range []string{"ext4", "xfs"} {
		for _, verify := range []string{"--verify", "--verify=source"} {
			t.Run(kind+"/"+verify, func(t *testing.T) {
				t.Parallel()
				dir := fsDir(t, kind)
				writeFile(t, join(dir, "src"), data, 0o644)
				old := []byte("old DEST\n")
				writeFile(t, join(dir, "dst"), old, 0o644)
				cmd := fastcpCmd(t.Context(), dir, verify, "--checksum-file=S", "src", "dst")
				cmd.Path = hookFastcp(t)
				cmd.Env = append(cmd.Env, durCorruptEnv+"="+strconv.Itoa(5<<20+3))
				r := runCmd(t, cmd)
				wantOneLineError(t, r, "fastcp: verify failed for 'dst': checksums differ: sha256 of the copy read back ", "of the source as copied "+fileDigest(t, sha256.New(), join(dir, "src")))
				assertFileBytes(t, join(dir, "dst"), old)
				assertNoTemps(t, dir)
				if b, err := os.ReadFile(join(dir, "S")); err != nil || len(b) != 0 {
					t.Errorf("the manifest: %q, %v; want it empty", b, err)
				}
				wantSuccess(t, fastcp(t, dir, verify, "--checksum-file=S", "src", "dst"))
				assertFileBytes(t, join(dir, "dst"), data)
				sumsCheck(t, "sha256sum", dir, "S")
			})
		}
	}
}

// SIGKILL in the middle of a --resume --checksum copy, then --resume
// --checksum: the hash's state recorded with the checkpoint is taken up
// (the part done is not read again), and the manifest's line is the whole
// DEST's, sha256sum's. A record whose hash state was changed (a byte of
// it, or cut short) or taken away is not trusted: the part done is hashed
// again, and the line is right all the same.
func TestChecksumResumeAfterKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		forge  func(rec string) string
		reread bool
	}{
		{"recorded", nil, false},
		{"state changed", func(rec string) string {
			i := strings.Index(rec, "state=") + len("state=") + 20
			c := "A"
			if rec[i] == 'A' {
				c = "B"
			}
			return rec[:i] + c + rec[i+1:]
		}, true},
		{"state cut", func(rec string) string {
			i := strings.Index(rec, "state=") + len("state=")
			return rec[:i] + rec[i+30:]
		}, true},
		{"no state", func(rec string) string { return rec[:strings.Index(rec, " hash=")] }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, temp := join(dir, "src"), join(dir, resumeTemp)
			writePattern(t, src, 96<<20, t.Name())
			run := startSlow(t, dir, "pwrite64", 60*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "--checksum", "src", "dst")
			run.waitUntil(t, "a checkpoint", func() bool { return checkpointOf(temp) >= 8<<20 })
			if code := run.signal(t, syscall.SIGKILL); code != 128+9 && code != -1 {
				t.Fatalf("exit status %d after SIGKILL; stderr %q", code, run.output())
			}
			ckpt := checkpointOf(temp)
			b := make([]byte, 1024)
			n, err := unix.Getxattr(temp, resumeXattr, b)
			if err != nil || !strings.Contains(string(b[:n]), " hash=sha256 ") {
				t.Fatalf("the leftover's record %q (%v) has no hash state", b[:n], err)
			}
			if tc.forge != nil {
				if err := unix.Setxattr(temp, resumeXattr, []byte(tc.forge(string(b[:n]))), 0); err != nil {
					t.Fatal(err)
				}
			}
			r := fastcp(t, dir, "--resume", "--debug", "--checksum-file=S", "src", "dst")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("the rerun: %v", r)
			}
			res := parseResumed(t, r.stdout)
			if len(res.offsets) != 1 || res.offsets[0] == 0 || res.offsets[0] > ckpt {
				t.Fatalf("resumed at %v, want one offset up to the checkpoint %d; stdout %q", res.offsets, ckpt, r.stdout)
			}
			reread := fmt.Sprintf("the %d bytes done are hashed again, read from SOURCE", res.offsets[0])
			taken := "state at offset " + strconv.FormatInt(res.offsets[0], 10) + " taken from the leftover's record; 0 bytes read again"
			if tc.reread && !strings.Contains(r.stdout, reread) || !tc.reread && !strings.Contains(r.stdout, taken) {
				t.Errorf("--debug does not say %q:\n%s", map[bool]string{true: reread, false: taken}[tc.reread], r.stdout)
			}
			sameFiles(t, src, join(dir, "dst"))
			got, _ := os.ReadFile(join(dir, "S"))
			if want := toolLine(t, "sha256sum", dir, "dst"); string(got) != want {
				t.Errorf("manifest %q, want sha256sum's %q", got, want)
			}
		})
	}
}

// -r --resume skips the files already complete: the manifest still lists
// them, hashed from their SOURCE.
func TestChecksumResumeTreeListsSkippedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustMkdir(t, join(dir, "src"))
	makeChecksumTree(t, src)
	wantSuccess(t, fastcp(t, dir, "-a", "src/.", "dst"))
	os.Remove(join(dir, "dst", "big"))
	r := fastcp(t, dir, "-a", "--resume", "--checksum-file=dst/SUMS", "src/.", "dst")
	wantSuccess(t, r)
	files := slicesDelete(regularUnder(t, join(dir, "dst")), "SUMS")
	if got := manifestNames(t, join(dir, "dst", "SUMS"), 64); strings.Join(got, "|") != strings.Join(files, "|") {
		t.Errorf("the manifest lists\n%q\nthe copy has\n%q", got, files)
	}
	sumsCheck(t, "sha256sum", join(dir, "dst"), "SUMS")
}

// Bad input: an unknown algorithm is a usage error; a FILE that cannot be
// written, or inside a SOURCE tree, or a SOURCE itself, fails before
// anything is copied.
func TestChecksumBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "f"), []byte("data\n"), 0o644)
	mustMkdir(t, join(dir, "tree", "sub"))
	writeFile(t, join(dir, "tree", "sub", "g"), []byte("g\n"), 0o644)
	wantFailure(t, fastcp(t, dir, "--checksum=md5", "f", "x"), 1,
		"fastcp: invalid argument 'md5' for '--checksum'\nValid arguments are:\n  - 'sha256'\n  - 'sha512'\nTry 'fastcp --help' for more information.\n")
	wantFailure(t, fastcp(t, dir, "--checksum-file=", "f", "x"), 1,
		"fastcp: invalid --checksum-file argument ''\nFILE is the manifest's name, or - for standard output.\nTry 'fastcp --help' for more information.\n")
	wantFailure(t, fastcp(t, dir, "--checksum-file=no/such/S", "f", "x"), 1,
		"fastcp: cannot create regular file 'no/such/S': No such file or directory\n")
	wantFailure(t, fastcp(t, dir, "-r", "--checksum-file=tree/sub/S", "tree", "x"), 1,
		"fastcp: will not write the checksum file 'tree/sub/S' inside the source directory 'tree': it would be copied with it\n")
	wantFailure(t, fastcp(t, dir, "--checksum-file=f", "f", "x"), 1,
		"fastcp: will not write the checksum file 'f' over the source 'f'\n")
	wantFailure(t, fastcp(t, dir, "--checksum-file=tree", "f", "x"), 1,
		"fastcp: cannot create regular file 'tree': Is a directory\n")
	assertNotExist(t, join(dir, "x"))
	assertNotExist(t, join(dir, "tree", "sub", "S"))
	assertFileBytes(t, join(dir, "f"), []byte("data\n"))
	// Without -r the tree is not copied: a manifest in it is fine.
	wantSuccess(t, fastcp(t, dir, "--checksum-file=tree/sub/S", "f", "x"))
	assertNoTemps(t, dir, join(dir, "tree", "sub"))
}

// A FILE in a directory nobody may create in (immutable, even for root)
// fails before anything is copied.
func TestChecksumUnwritableManifest(t *testing.T) {
	t.Parallel()
	needRoot(t)
	chattr := needTool(t, "chattr")
	dir := fsDir(t, "ext4")
	writeFile(t, join(dir, "f"), []byte("data\n"), 0o644)
	locked := mustMkdir(t, join(dir, "locked"))
	if out, err := exec.Command(chattr, "+i", locked).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(chattr, "-i", locked).Run() })
	wantFailure(t, fastcp(t, dir, "--checksum-file=locked/S", "f", "x"), 1,
		"fastcp: cannot create regular file 'locked/S': Operation not permitted\n")
	assertNotExist(t, join(dir, "x"))
}

// --sync makes the manifest durable as a copy is: flushed, renamed, its
// directory synced; an existing manifest keeps its mode.
func TestChecksumManifestReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "f"), []byte("data\n"), 0o644)
	writeFile(t, join(dir, "S"), []byte("old manifest\n"), 0o640)
	wantSuccess(t, fastcp(t, dir, "--sync=data", "--checksum-file=S", "f", "g"))
	if fi, _ := os.Stat(join(dir, "S")); fi.Mode().Perm() != 0o640 {
		t.Errorf("the manifest's mode %v, want the old one's 0640", fi.Mode().Perm())
	}
	sumsCheck(t, "sha256sum", dir, "S")
	want := sha512.Sum512([]byte("data\n"))
	wantSuccess(t, fastcp(t, dir, "--checksum=sha512", "--checksum-file=S", "f", "g"))
	if b, _ := os.ReadFile(join(dir, "S")); string(b) != hex.EncodeToString(want[:])+"  g\n" {
		t.Errorf("manifest %q", b)
	}
	assertNoTemps(t, dir)
}

// With --sync the hash of what the kernel copied catches up while DEST is
// flushed: a source that shrinks after the copy, while its bytes are still
// read for the hash (each read held back by strace), is refused all the
// same, and gets no line.
func TestChecksumSourceChangedWhileHashing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := join(dir, "src")
	data := randomBytes(24<<20, "hash-later")
	writeFile(t, src, data, 0o644)
	out := mustMkdir(t, join(dir, "out"))
	faultReady(t)
	log := join(t.TempDir(), "strace.log")
	done := make(chan traced, 1)
	go func() {
		done <- faultStraceLog(t, dir, log, []string{"-e", "trace=pread64", "-e", "inject=pread64:delay_enter=50000"},
			"--sync=data", "--strategy=copy_file_range", "--checksum-file=out/S", "src", "out")
	}()
	if !waitFor(func() bool {
		for _, p := range openTempsAnywhere(out) {
			if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the copy never completed")
	}
	if err := os.Truncate(src, 1<<20); err != nil {
		t.Fatal(err)
	}
	tr := <-done
	wantOneLineError(t, tr.result, "'src' changed size while being copied", "'out/src' was not replaced")
	assertNotExist(t, join(out, "src"))
	if b, err := os.ReadFile(join(out, "S")); err != nil || len(b) != 0 {
		t.Errorf("the manifest: %q, %v; want it empty", b, err)
	}
	assertNoTemps(t, out)
}

// A FILE that is not a regular file is written into, as a shell's
// redirection would, and never replaced: a device (a node of /dev/null's
// kind), a FIFO a reader is waiting on, a symbolic link to a regular file
// (the file it leads to gets the manifest, the link stays), /dev/stdout
// when standard output is a file.
func TestChecksumFileNotReplaced(t *testing.T) {
	t.Parallel()
	data := []byte("data\n")
	sum := sha256.Sum256(data)
	line := func(name string) string { return hex.EncodeToString(sum[:]) + "  " + name + "\n" }

	t.Run("device", func(t *testing.T) {
		t.Parallel()
		needRoot(t)
		dir := t.TempDir()
		writeFile(t, join(dir, "f"), data, 0o644)
		null := join(dir, "null")
		if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		for _, sync := range []string{"--sync=none", "--sync=full"} {
			wantSuccess(t, fastcp(t, dir, sync, "--checksum-file=null", "f", "g"))
			var st unix.Stat_t
			if err := unix.Lstat(null, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
				t.Fatalf("%s: the device is now mode %o rdev %d (%v), want the character device 1,3", sync, st.Mode, st.Rdev, err)
			}
		}
		assertNoTemps(t, dir)
	})

	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, join(dir, "f"), data, 0o644)
		fifo := join(dir, "fifo")
		if err := unix.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(fifo) // blocks until fastcp opens it, reads to its close
			got <- string(b)
		}()
		wantSuccess(t, fastcp(t, dir, "--checksum-file=fifo", "f", "g"))
		if s := <-got; s != line("g") {
			t.Errorf("the FIFO's reader got %q, want %q", s, line("g"))
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO is now %v (%v)", fi.Mode(), err)
		}
		assertNoTemps(t, dir)
	})

	t.Run("symlink", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, join(dir, "f"), data, 0o644)
		sub := mustMkdir(t, join(dir, "sums"))
		writeFile(t, join(sub, "S"), []byte("old\n"), 0o640)
		if err := os.Symlink("sums/S", join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		wantSuccess(t, fastcp(t, dir, "--checksum-file=link", "f", "g"))
		if target, err := os.Readlink(join(dir, "link")); err != nil || target != "sums/S" {
			t.Errorf("the link now reads %q (%v), want sums/S", target, err)
		}
		if b, _ := os.ReadFile(join(sub, "S")); string(b) != line("g") {
			t.Errorf("the link's file holds %q, want %q", b, line("g"))
		}
		if fi, _ := os.Stat(join(sub, "S")); fi.Mode().Perm() != 0o640 {
			t.Errorf("the link's file has mode %v, want its own 0640", fi.Mode().Perm())
		}
		sumsCheck(t, "sha256sum", dir, "link")
		assertNoTemps(t, dir, sub)
	})

	t.Run("stdout-to-a-file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeFile(t, join(dir, "f"), data, 0o644)
		out, err := os.Create(join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		var before unix.Stat_t
		if err := unix.Lstat("/dev/stdout", &before); err != nil {
			t.Skip("no /dev/stdout:", err)
		}
		link, err := os.Readlink("/dev/stdout")
		if err != nil {
			t.Skip("/dev/stdout is not a link:", err)
		}
		cmd := exec.Command(setup.Bin, "--checksum-file=/dev/stdout", "f", "g")
		var stderr strings.Builder
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("fastcp: %v %s", err, stderr.String())
		}
		var after unix.Stat_t
		if err := unix.Lstat("/dev/stdout", &after); err != nil || after.Mode != before.Mode || after.Ino != before.Ino {
			// Put the system's link back before failing.
			if os.Remove("/dev/stdout") == nil {
				os.Symlink(link, "/dev/stdout")
			}
			t.Fatalf("/dev/stdout was replaced: mode %o inode %d (%v), was mode %o inode %d", after.Mode, after.Ino, err, before.Mode, before.Ino)
		}
		if b, _ := os.ReadFile(join(dir, "out")); string(b) != line("g") {
			t.Errorf("standard output's file holds %q, want %q", b, line("g"))
		}
	})
}
