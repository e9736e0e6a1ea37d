// SPDX-License-Identifier: MIT

package integration_test

// On a real network mount: sshfs over an sshd of the test's own, bound to
// 127.0.0.1. Such a mount has no O_TMPFILE and no user xattrs, sets a
// symbolic link's owner and times on the file it points to (the SFTP
// server follows the link), and every metadata call is a round trip.

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// sshfsMount mounts a directory of the test's own with sshfs (fsfixture's
// MountSSHFS), unmounted when the test ends. Without root, the right to
// mount, /dev/fuse, sshd, ssh or sshfs the test is skipped, saying which,
// except under CI=true.
func sshfsMount(t testing.TB) *fsfixture.SSHFS {
	t.Helper()
	needMount(t)
	skipUnless(t, fsfixture.SSHFSMissing())
	m, err := fsfixture.MountSSHFS(t.TempDir())
	if err != nil {
		t.Fatalf("mounting sshfs: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmounting sshfs: %v", err)
		}
	})
	return m
}

// linkTree makes under dir a tree whose links are hard to copy onto a
// mount that follows links: one made before its target (its name sorts
// first), a dangling one, an absolute one, one leading out of the copy to
// outside (a file that exists where the copy lands), one in a
// subdirectory, and n more pairs of a file and a link to it, the link's
// name first. Each link is owned by uid 4321 and has its own mtime; each
// file has another.
func linkTree(t *testing.T, dir, outside string, n int) {
	t.Helper()
	mustMkdir(t, join(dir, "sub"))
	for i := range n {
		mustMkdir(t, join(dir, fmt.Sprintf("d%02d", i%6)))
	}
	files := map[string]string{"zzz-target": "target\n"}
	links := map[string]string{
		"aaa-link":  "zzz-target",
		"dangling":  "no-such-file",
		"absolute":  "/nonexistent/fastcp-test",
		"outside":   "../" + outside,
		"sub/up":    "../zzz-target",
		"sub/outer": "../../" + outside,
	}
	for i := range n {
		d := fmt.Sprintf("d%02d", i%6)
		files[fmt.Sprintf("%s/z%03d", d, i)] = fmt.Sprintf("file %d\n", i)
		links[fmt.Sprintf("%s/a%03d", d, i)] = fmt.Sprintf("z%03d", i)
	}
	fileTime := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	linkTime := time.Date(2011, 11, 11, 0, 0, 0, 0, time.UTC)
	for name, data := range files {
		writeFile(t, join(dir, name), []byte(data), 0o644)
		if err := os.Chtimes(join(dir, name), fileTime, fileTime); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, 4321, 4321); err != nil {
			t.Fatal(err)
		}
		tv := []unix.Timespec{unix.NsecToTimespec(linkTime.UnixNano()), unix.NsecToTimespec(linkTime.UnixNano())}
		if err := lutimes(p, tv); err != nil {
			t.Fatal(err)
		}
	}
}

// lutimes sets a symbolic link's own times.
func lutimes(path string, ts []unix.Timespec) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// treeEntries describes each entry under root, for comparing trees: a
// link's target; a file's bytes (their hash), mode, owner and, with times,
// mtime; a directory's mode.
func treeEntries(t *testing.T, root string, times bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		st := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := fnv.New64a()
			h.Write(b)
			out[rel] = fmt.Sprintf("file of %d bytes, fnv %x, %v %d:%d", len(b), h.Sum64(), fi.Mode(), st.Uid, st.Gid)
			if times {
				out[rel] += " " + fi.ModTime().UTC().Format(time.RFC3339Nano)
			}
		case fi.IsDir() && rel != ".":
			out[rel] = fmt.Sprintf("dir %v", fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffTrees describes how two treeEntries differ ("" when they do not).
func diffTrees(want, got map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s: missing (want %s)", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s: %s, want %s", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: unexpected %s", k, g))
		}
	}
	slices.Sort(d)
	return strings.Join(d, "\n")
}

// linkAttrsWarningRE is the warning that links keep the owner and times
// they were made with on a filesystem that would set them on the files the
// links point to.
var linkAttrsWarningRE = regexp.MustCompile(`^fastcp: warning: cannot preserve the ownership and times of symbolic links on the filesystem of '[^']*': it would set them on the files the links point to\n$`)

// -a of a tree of links onto sshfs, also with -j 4: every link arrives with
// its target as cp -a makes it (none lost, whatever its target), no file's
// owner or times are changed through a link (neither in the copy nor the
// file outside it a link leads to), and the run ends with exit 0 and at
// most one warning: the mount cannot give a link its own owner and times.
func TestSSHFSLinks(t *testing.T) {
	m := sshfsMount(t)
	src := join(t.TempDir(), "tree")
	mustMkdir(t, src)
	linkTree(t, src, "outside-file", 60)
	outside := join(m.Remote, "outside-file")
	want := treeEntries(t, src, true)
	for _, tc := range []struct{ name, tool string }{{"j1", setup.Bin}, {"j4", setup.Bin}, {"cp", ccGNUcp}} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(outside)
			writeFile(t, outside, []byte("outside\n"), 0o600)
			before := statT(t, outside)
			args := []string{"-a"}
			if tc.name == "j4" {
				args = append(args, "-j", "4")
			}
			cmd := exec.Command(tc.tool, append(args, src, join(m.Dir, tc.name))...)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			r := runCmd(t, cmd)
			got := treeEntries(t, join(m.Remote, tc.name), true)
			if tc.name == "cp" {
				// cp sets a link's owner and times on its target through
				// this mount: only its links are compared.
				for k, v := range want {
					if strings.HasPrefix(v, "link") && got[k] != v {
						t.Errorf("cp -a: %s is %q, want %q", k, got[k], v)
					}
				}
				return
			}
			if d := diffTrees(want, got); d != "" {
				t.Errorf("the copy differs from the source:\n%s", d)
			}
			if r.code != 0 || r.stdout != "" || !linkAttrsWarningRE.MatchString(r.stderr) {
				t.Errorf("exit %d, %d lines on stderr, first %q; want exit 0 and the one warning", r.code, strings.Count(r.stderr, "\n"), firstLine([]byte(r.stderr)))
			}
			after := statT(t, outside)
			if after.Uid != before.Uid || after.Mtim != before.Mtim {
				t.Errorf("the file outside the copy a link leads to changed: uid %d, mtime %v; was %d, %v", after.Uid, after.Mtim, before.Uid, before.Mtim)
			}
		})
	}
}

// A link's owner that cannot be set never costs the link: refused
// (EOPNOTSUPP, ENOENT, EPERM), it is a warning and exit 0; failed (EIO),
// an error and exit 1. Either way the link is there, with its target.
func TestLinkKeptWhenItsOwnerFails(t *testing.T) {
	needRoot(t)
	strace := durStrace(t)
	dir := t.TempDir()
	mustMkdir(t, join(dir, "src"))
	if err := os.Symlink("nowhere", join(dir, "src", "l")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		errno, text string
		code        int
		kind        string
	}{
		{"EOPNOTSUPP", "Operation not supported", 0, "warning: "},
		{"ENOENT", "No such file or directory", 0, "warning: "},
		{"EPERM", "Operation not permitted", 0, "warning: "},
		{"EIO", "Input/output error", 1, ""},
	} {
		t.Run(tc.errno, func(t *testing.T) {
			dst := "dst-" + tc.errno
			// A link is given its owner with lchown (fchownat where the
			// kernel has no lchown); files and directories with fchown.
			cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=?lchown,?fchownat",
				"-e", "inject=?lchown,?fchownat:error="+tc.errno, setup.Bin, "-a", "src", dst)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			r := runCmd(t, cmd)
			want := fmt.Sprintf("fastcp: %sfailed to preserve ownership for '%s/l': %s\n", tc.kind, dst, tc.text)
			if r.code != tc.code || r.stderr != want {
				t.Errorf("%v, want exit %d and stderr %q", r, tc.code, want)
			}
			if target, err := os.Readlink(join(dir, dst, "l")); err != nil || target != "nowhere" {
				t.Errorf("the link: %q, %v; want it made, to 'nowhere'", target, err)
			}
			assertNoTemps(t, join(dir, dst))
		})
	}
}

// A chown that would change nothing is not made (on a network mount it is
// three round trips: the kernel's getattr, the setattr, the getattr after):
// -a of files that already have the owner a new file gets makes no fchown,
// of one owned by another user one.
func TestNoChownThatChangesNothing(t *testing.T) {
	needRoot(t)
	strace := durStrace(t)
	dir := t.TempDir()
	mustMkdir(t, join(dir, "src"))
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, join(dir, "src", n), []byte(n), 0o644)
	}
	if err := os.Chown(join(dir, "src", "c"), 4321, 4321); err != nil {
		t.Fatal(err)
	}
	log := join(dir, "strace.log")
	cmd := exec.Command(strace, "-f", "-qq", "-o", log, "-e", "trace=fchown", setup.Bin, "-a", "src/a", "src/b", "src/c", "dst/")
	cmd.Dir = dir
	mustMkdir(t, join(dir, "dst"))
	wantSuccess(t, runCmd(t, cmd))
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if calls := regexp.MustCompile(`fchown\(\d+, (\d+), (\d+)(\)| <unfinished)`).FindAllStringSubmatch(string(b), -1); len(calls) != 1 || calls[0][1] != "4321" {
		t.Errorf("fchown calls %v, want one, to 4321", calls)
	}
	for _, n := range []string{"a", "b", "c"} {
		if st := statT(t, join(dir, "dst", n)); st.Uid != statT(t, join(dir, "src", n)).Uid {
			t.Errorf("dst/%s belongs to %d", n, st.Uid)
		}
	}
}

// --sync onto sshfs flushes the data but cannot promise the name: sshfs
// answers a directory fsync without asking the server. One warning per run
// says so, for a file as for a tree.
func TestSSHFSSyncSaysWhatItCannot(t *testing.T) {
	m := sshfsMount(t)
	src := t.TempDir()
	writeFile(t, join(src, "f"), randomBytes(1<<20, t.Name()), 0o644)
	mustMkdir(t, join(src, "tree", "sub"))
	for _, n := range []string{"a", "b", "sub/c"} {
		writeFile(t, join(src, "tree", n), randomBytes(4096, n), 0o644)
	}
	warning := func(dst string) string {
		return "fastcp: warning: --sync: " + q(dst) + " is on a FUSE filesystem, whose directory fsync may not reach stable storage: the data is flushed, the name may not be\n"
	}
	dst := join(m.Dir, "f")
	r := fastcp(t, src, "--sync=data", "f", dst)
	if r.code != 0 || r.stdout != "" || r.stderr != warning(dst) {
		t.Errorf("%v, want exit 0 and the warning", r)
	}
	assertSameContent(t, join(src, "f"), join(m.Remote, "f"))
	r = fastcp(t, src, "-r", "--sync=full", "tree", join(m.Dir, "tree"))
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "is on a FUSE filesystem, whose directory fsync may not reach stable storage") {
		t.Errorf("%v, want exit 0 and one warning", r)
	}
	if d := diffTrees(treeEntries(t, join(src, "tree"), false), treeEntries(t, join(m.Remote, "tree"), false)); d != "" {
		t.Errorf("the tree differs:\n%s", d)
	}
}

// sideCheckpoint is the checkpoint recorded in the side record at path
// (sshfs keeps no user xattrs), -1 when there is none.
func sideCheckpoint(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`checkpoint=(\d+)`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

// sideWarningRE is --resume's warning, at the start, that its records go
// into side records on sshfs.
var sideWarningRE = regexp.MustCompile(`^fastcp: warning: --resume: the filesystem of '[^']*' keeps no user extended attributes; the resume records go into files beside the temporary files, as '[^']*\.fastcp-dst\.000000000000\.rec'$`)

// --resume on sshfs, which keeps no user xattrs: the records go into side
// records, and one warning at the start says so. SIGTERM keeps the
// leftover (and says so); SIGKILL after a checkpoint leaves it; either
// way the next run continues it from where it got, and DEST is the source
// byte for byte, with nothing left beside it.
func TestSSHFSResume(t *testing.T) {
	m := sshfsMount(t)
	src := join(t.TempDir(), "src")
	// At 100 ms a MiB, long enough that the checkpoint, which comes
	// after 5 s, falls in the middle.
	const size = 128 << 20
	writePattern(t, src, size, t.Name())
	temp, side := join(m.Remote, resumeTemp), join(m.Remote, resumeTemp+".rec")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			os.Remove(join(m.Remote, "dst"))
			run := startSlow(t, m.Dir, "pwrite64", 100*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", src, "dst")
			if sig == syscall.SIGKILL {
				// Checkpoints come at least every 5 s.
				run.waitUntil(t, "a checkpoint", func() bool { return sideCheckpoint(side) > 1<<20 })
			} else {
				run.waitUntil(t, "8 MiB copied", func() bool { return sizeOf(temp) >= 8<<20 })
			}
			code := run.signal(t, sig)
			if code != 128+int(sig) {
				t.Fatalf("exit status %d after %v, want %d; stderr %q", code, sig, 128+int(sig), run.output())
			}
			out := lines(run.output())
			if len(out) == 0 || !sideWarningRE.MatchString(out[0]) {
				t.Errorf("stderr %q: want the warning about side records first", run.output())
			}
			if sig == syscall.SIGTERM && (len(out) != 2 || keptRE.FindStringSubmatch(out[1]) == nil) {
				t.Errorf("stderr %q: want the warning, then the kept file", run.output())
			}
			ckpt := sideCheckpoint(side)
			if ckpt <= 0 || ckpt > sizeOf(temp) {
				t.Fatalf("the leftover (%d bytes) has checkpoint %d in its side record", sizeOf(temp), ckpt)
			}
			assertNotExist(t, join(m.Remote, "dst"))
			r := fastcp(t, m.Dir, "--resume", "--debug", src, "dst")
			res := parseResumed(t, r.stdout)
			if r.code != 0 || !sideWarningRE.MatchString(strings.TrimSpace(r.stderr)) || len(res.offsets) != 1 || res.offsets[0] != ckpt&^(1<<20-1) {
				t.Fatalf("the rerun: %v; want it resumed from %d", r, ckpt&^(1<<20-1))
			}
			if res.written != size-res.offsets[0] {
				t.Errorf("the rerun wrote %d bytes, want %d", res.written, size-res.offsets[0])
			}
			sameFiles(t, src, join(m.Remote, "dst"))
			assertNoTemps(t, m.Remote)
		})
	}
}

// SIGKILL at every step of a copy onto sshfs (while it writes, at the
// flush, at the rename, at the directory's fsync), over an existing DEST
// and to a new one: DEST on the server is always the old file (or none) or
// the whole copy, never part of it. The temporary file a kill leaves has a
// side record naming its dead writer, and the next run removes both; the
// one killed at its rename (whose record went right before it) cannot be
// proved fastcp's, and is named with the command that removes it.
func TestSSHFSKillAtEveryStep(t *testing.T) {
	m := sshfsMount(t)
	src := join(t.TempDir(), "src")
	data := randomBytes(9<<20+5, t.Name()) // a side record from 8 MiB on
	writeFile(t, src, data, 0o644)
	old := randomBytes(3000, "old")
	dst, temp := join(m.Remote, "dst"), join(m.Remote, resumeTemp)
	for _, p := range []struct{ name, inject, set, sync string }{
		{"pwrite64-2", "pwrite64:signal=SIGKILL:when=2", "pwrite64", "none"},
		{"fdatasync", "fdatasync:signal=SIGKILL:when=1", "fdatasync", "data"},
		{"rename", "rename,renameat,renameat2:signal=SIGKILL:when=1", "rename,renameat,renameat2", "none"},
		{"fsync-directory", "fsync:signal=SIGKILL:when=1", "fsync", "full"},
	} {
		for _, existing := range []bool{true, false} {
			name := p.name + "/new"
			if existing {
				name = p.name + "/existing"
			}
			t.Run(name, func(t *testing.T) {
				var want []byte
				if existing {
					want = old
				}
				args := []string{"--strategy=rw", "--buffer-size=1M", "--sync=" + p.sync, src, "dst"}
				straceArgs := []string{"-e", "trace=" + p.set, "-e", "inject=" + p.inject}
				if p.name == "fsync-directory" {
					straceArgs = append(straceArgs, "-P", m.Dir) // DEST's directory's fsync
				}
				var tr traced
				retryMissed(t, p.inject, func() (int, []durSyscall) {
					os.Remove(join(m.Dir, "dst"))
					if existing {
						writeFile(t, join(m.Dir, "dst"), old, 0o644)
					}
					tr = faultStrace(t, m.Dir, straceArgs, args...)
					return tr.code, tr.calls
				})
				if tr.signal != syscall.SIGKILL {
					t.Fatalf("fastcp was not killed (exit %d, stderr %q)", tr.code, tr.stderr)
				}
				wantOldNewOrNothing(t, dst, want, data)
				r := fastcp(t, m.Dir, "-v", src, "dst")
				switch p.name {
				case "rename":
					hint := "fastcp: warning: " + q(resumeTemp) + " may be left over from an interrupted copy to 'dst' (it cannot be marked on this filesystem, and has no side record); if no copy to 'dst' is running, remove it: rm -- " + q(resumeTemp) + "\n"
					if r.code != 0 || r.stderr != hint {
						t.Fatalf("the run after the kill: %v, want the leftover named: %q", r, hint)
					}
					assertFileBytes(t, temp, data)
					cmd := exec.Command("sh", "-c", hint[strings.LastIndex(hint, ": ")+2:])
					cmd.Dir = m.Dir
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("the command the warning gives: %v: %s", err, out)
					}
				case "fsync-directory":
					if r.code != 0 || r.stderr != "" || r.stdout != q(src)+" -> 'dst'\n" {
						t.Fatalf("the run after the kill: %v", r)
					}
				default:
					want := q(src) + " -> 'dst'\nremoved " + q(resumeTemp) + "\n"
					if r.code != 0 || r.stderr != "" || r.stdout != want {
						t.Fatalf("the run after the kill: %v, want stdout %q", r, want)
					}
				}
				assertFileBytes(t, dst, data)
				assertNoTemps(t, m.Remote)
			})
		}
	}
}

// The mount goes away during a copy (sshfs killed, or the server with its
// SFTP session): fastcp ends at once with exit 1 and one cp-style error
// naming DEST and the system's error, and DEST on the server is still the
// old file, whole. Once mounted again, the next run removes what the lost
// one left (its side record names a writer that is gone) and copies.
func TestSSHFSVanishedMount(t *testing.T) {
	src := join(t.TempDir(), "src")
	data := randomBytes(32<<20, t.Name())
	writeFile(t, src, data, 0o644)
	old := randomBytes(3000, "old")
	errRE := regexp.MustCompile(`^fastcp: [^:]*'dst'[^:]*: (Transport endpoint is not connected|Input/output error|Software caused connection abort|Connection reset by peer)\n$`)
	for _, way := range []string{"client", "server"} {
		t.Run(way, func(t *testing.T) {
			m := sshfsMount(t)
			writeFile(t, join(m.Dir, "dst"), old, 0o640)
			run := startSlow(t, m.Dir, "pwrite64", 30*time.Millisecond, "--strategy=rw", "--buffer-size=1M", src, "dst")
			run.waitUntil(t, "8 MiB copied", func() bool { return sizeOf(join(m.Remote, resumeTemp)) >= 8<<20 })
			if way == "client" {
				m.KillClient()
			} else {
				m.KillServer()
			}
			if code := run.wait(t); code != 1 || !errRE.MatchString(run.output()) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one error naming DEST", code, run.output())
			}
			assertFileBytes(t, join(m.Remote, "dst"), old)
			if err := m.Remount(); err != nil {
				t.Fatalf("mounting again: %v", err)
			}
			r := fastcp(t, m.Dir, "-v", src, "dst")
			want := q(src) + " -> 'dst'\nremoved " + q(resumeTemp) + "\n"
			if r.code != 0 || r.stderr != "" || r.stdout != want {
				t.Fatalf("the run after the mount came back: %v, want stdout %q", r, want)
			}
			assertFileBytes(t, join(m.Remote, "dst"), data)
			if fi, err := os.Stat(join(m.Remote, "dst")); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("DEST: %v, %v; want the old DEST's mode 0640", fi, err)
			}
			assertNoTemps(t, m.Remote)
		})
	}
}

// An existing DEST on sshfs stays the old file, whole, until the copy is
// complete and renamed over it (cp truncates it at once): seen on the
// server and through the mount halfway through the copy.
func TestSSHFSReplaceExisting(t *testing.T) {
	m := sshfsMount(t)
	src := join(t.TempDir(), "src")
	data := randomBytes(16<<20, t.Name())
	writeFile(t, src, data, 0o644)
	old := randomBytes(3<<20, "old")
	writeFile(t, join(m.Dir, "dst"), old, 0o600)
	run := startSlow(t, m.Dir, "pwrite64", 30*time.Millisecond, "--strategy=rw", "--buffer-size=1M", src, "dst")
	run.waitUntil(t, "half the copy", func() bool { return sizeOf(join(m.Remote, resumeTemp)) >= 8<<20 })
	assertFileBytes(t, join(m.Remote, "dst"), old)
	assertFileBytes(t, join(m.Dir, "dst"), old)
	if code := run.wait(t); code != 0 || run.output() != "" {
		t.Fatalf("exit %d, stderr %q", code, run.output())
	}
	assertFileBytes(t, join(m.Remote, "dst"), data)
	if fi, err := os.Stat(join(m.Remote, "dst")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("DEST: %v, %v; want the old DEST's mode 0600", fi, err)
	}
	assertNoTemps(t, m.Remote)
}

// On sshfs (no O_TMPFILE: the temporary file is named from the start) -a
// makes no chown that would change nothing, each a round trip or three: a
// file of the copier's own is given no owner, one of another owner is. A
// named temporary file others could open is created 0600 whatever DEST's
// mode will be, and given that mode at the end. Every DEST ends with the
// source's mode and owner.
func TestSSHFSNoNeedlessSetattr(t *testing.T) {
	m := sshfsMount(t)
	strace := durStrace(t)
	src := t.TempDir()
	files := []struct {
		name        string
		mode        os.FileMode
		uid         int
		chmod       bool
		createdMode string
	}{
		{"public", 0o644, 0, true, "0600"},
		{"exec", 0o755, 0, true, "0600"},
		{"group", 0o640, 0, true, "0600"},
		{"private", 0o600, 0, false, "0600"},
		{"other-owner", 0o644, 4321, true, "0600"},
	}
	var names []string
	for _, f := range files {
		writeFile(t, join(src, f.name), []byte(f.name), f.mode)
		if err := os.Chown(join(src, f.name), f.uid, f.uid); err != nil {
			t.Fatal(err)
		}
		names = append(names, join(src, f.name))
	}
	log := join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, append([]string{"-f", "-qq", "-o", log, "-e", "trace=fchmod,fchown,openat", setup.Bin, "-a"}, append(names, m.Dir+"/")...)...)
	wantSuccess(t, runCmd(t, cmd))
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	trace := string(b)
	chmods := 0
	for _, f := range files {
		if f.chmod {
			chmods++
		}
	}
	if n := strings.Count(trace, "fchmod("); n != chmods {
		t.Errorf("%d fchmod calls, want %d (all but the 0600 file's):\n%s", n, chmods, trace)
	}
	if calls := regexp.MustCompile(`fchown\(\d+, (\d+), (\d+)(\)| <unfinished)`).FindAllStringSubmatch(trace, -1); len(calls) != 1 || calls[0][1] != "4321" {
		t.Errorf("fchown calls %v, want one, to 4321", calls)
	}
	// strace -f splits a call that another thread's interrupts into
	// "... <unfinished ...>" and "<... resumed>" lines: the arguments
	// are on the first.
	for _, f := range files {
		if !regexp.MustCompile(`openat\(\d+, "\.fastcp-` + f.name + `\.0{12}", [^)]*O_CREAT[^)]*, 0?` + strings.TrimPrefix(f.createdMode, "0") + `(\)| <unfinished)`).MatchString(trace) {
			t.Errorf("%s: not created with mode %s:\n%s", f.name, f.createdMode, trace)
		}
		st := statT(t, join(m.Remote, f.name))
		if os.FileMode(st.Mode&0o7777) != f.mode || int(st.Uid) != f.uid {
			t.Errorf("%s: mode %o, uid %d; want %o, %d", f.name, st.Mode&0o7777, st.Uid, f.mode, f.uid)
		}
	}
	// Without -p a new DEST gets the mode cp creates it with, less the
	// umask: the same rule, the same chmods.
	mustMkdir(t, join(m.Dir, "r"))
	cmd = exec.Command(strace, append([]string{"-f", "-qq", "-o", log, "-e", "trace=fchmod,fchown", "sh", "-c", `umask 022 && exec "$@"`, "sh", setup.Bin, "-r"}, append(names, join(m.Dir, "r")+"/")...)...)
	wantSuccess(t, runCmd(t, cmd))
	if b, err = os.ReadFile(log); err != nil {
		t.Fatal(err)
	}
	if n, c := strings.Count(string(b), "fchmod("), strings.Count(string(b), "fchown("); n != chmods || c != 0 {
		t.Errorf("-r: %d fchmod and %d fchown calls, want %d and none:\n%s", n, c, chmods, b)
	}
	for _, f := range files {
		if st := statT(t, join(m.Remote, "r", f.name)); os.FileMode(st.Mode&0o7777) != f.mode {
			t.Errorf("-r: %s has mode %o, want %o", f.name, st.Mode&0o7777, f.mode)
		}
	}
}
