// SPDX-License-Identifier: MIT

package integration_test

// GNU cp compatibility: the same scenarios run through /usr/bin/cp and
// fastcp from identical fixture trees, and the exit status, stdout, stderr
// and resulting trees are compared. This file holds the harness and the
// main table; cpcompat_unpriv_test.go runs scenarios as an unprivileged
// user, cpcompat_jobs_test.go compares -j N with -j 1, and
// cpcompat_attrs_test.go watches DEST appear with inotify.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ccGNUcp is the reference implementation.
const ccGNUcp = "/usr/bin/cp"

// ccNobody is the unprivileged uid and gid the non-root scenarios run as.
const ccNobody = 65534

// ccEntry is one entry of a fixture tree, relative to the work directory.
type ccEntry struct {
	path   string
	kind   byte // 'f' file, 'd' directory, 'l' symlink, 'h' hard link, 'p' FIFO, 'c' char device, 'm' mount point (data: fs type)
	data   string
	perm   uint32 // permission bits, set exactly (whatever the umask)
	target string // symlink target, or the existing path a hard link joins
	major  uint32
	minor  uint32
	owned  bool
	uid    int
	gid    int
	xattrs [][2]string
	timed  bool // explicit mtime instead of the one derived from the path
	mtime  unix.Timespec
}

func ccFile(path, data string, perm uint32) ccEntry {
	return ccEntry{path: path, kind: 'f', data: data, perm: perm}
}

func ccDir(path string, perm uint32) ccEntry { return ccEntry{path: path, kind: 'd', perm: perm} }

func ccLink(path, target string) ccEntry { return ccEntry{path: path, kind: 'l', target: target} }

func ccHard(path, existing string) ccEntry { return ccEntry{path: path, kind: 'h', target: existing} }

func ccFIFO(path string, perm uint32) ccEntry { return ccEntry{path: path, kind: 'p', perm: perm} }

// ccMount is a directory with a fresh filesystem of type fstype (tmpfs,
// ramfs) mounted on it for the test's lifetime; entries after it below
// path are made on that filesystem.
func ccMount(path, fstype string, perm uint32) ccEntry {
	return ccEntry{path: path, kind: 'm', data: fstype, perm: perm}
}

func ccChar(path string, major, minor, perm uint32) ccEntry {
	return ccEntry{path: path, kind: 'c', major: major, minor: minor, perm: perm}
}

// owner makes the entry belong to uid:gid (needs root).
func (e ccEntry) owner(uid, gid int) ccEntry {
	e.owned, e.uid, e.gid = true, uid, gid
	return e
}

// xattr gives the entry an extended attribute.
func (e ccEntry) xattr(name, value string) ccEntry {
	e.xattrs = append(slices.Clone(e.xattrs), [2]string{name, value})
	return e
}

// at gives the entry an explicit mtime.
func (e ccEntry) at(sec, nsec int64) ccEntry {
	e.timed, e.mtime = true, unix.Timespec{Sec: sec, Nsec: nsec}
	return e
}

// ccTimes returns the fixture times of an entry: an mtime in 2017-2019
// with nanoseconds, derived from the path, and an atime in 2096. The atime
// lies in the future so that reading the file does not change it under
// relatime, and preserved atimes can be compared too.
func ccTimes(e ccEntry) (atime, mtime unix.Timespec) {
	h := fnv.New64a()
	io.WriteString(h, e.path)
	s := h.Sum64()
	mtime = unix.Timespec{Sec: 1_500_000_000 + int64(s%40_000_000), Nsec: int64((s >> 32) % 1_000_000_000)}
	if e.timed {
		mtime = e.mtime
	}
	atime = unix.Timespec{Sec: 4_000_000_000 + int64(s%100_000), Nsec: int64((s >> 20) % 1_000_000_000)}
	return atime, mtime
}

// ccBuild creates the fixture in a fresh directory dir/w and returns w.
// workOwner, when >= 0, is given the work directory itself (uid and gid).
func ccBuild(t testing.TB, dir string, entries []ccEntry, workOwner int) string {
	t.Helper()
	w := filepath.Join(dir, "w")
	if err := os.MkdirAll(w, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(w, e.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch e.kind {
		case 'f':
			err = os.WriteFile(p, []byte(e.data), 0o600)
		case 'd':
			err = os.Mkdir(p, 0o700)
		case 'l':
			err = os.Symlink(e.target, p)
		case 'h':
			err = os.Link(filepath.Join(w, e.target), p)
		case 'p':
			err = unix.Mkfifo(p, 0o600)
		case 'c':
			err = unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(e.major, e.minor)))
		case 'm':
			needMount(t)
			if err = os.Mkdir(p, 0o700); err == nil {
				err = unix.Mount("none", p, e.data, 0, "")
			}
			if err == nil {
				t.Cleanup(func() { unix.Unmount(p, unix.MNT_DETACH) })
			}
		default:
			err = fmt.Errorf("unknown fixture kind %q", e.kind)
		}
		if err != nil {
			t.Fatalf("fixture %s: %v", e.path, err)
		}
	}
	// Attributes after every entry exists: creating entries changes their
	// directory's mtime, setting attributes does not.
	for _, e := range entries {
		if e.kind == 'h' {
			continue // the inode's attributes come from the first name
		}
		p := filepath.Join(w, e.path)
		if e.owned {
			if err := os.Lchown(p, e.uid, e.gid); err != nil {
				t.Fatalf("fixture %s: %v", e.path, err)
			}
		}
		if e.kind != 'l' {
			// After the chown, which clears set-user-ID bits.
			if err := os.Chmod(p, os.FileMode(e.perm&0o777)|ccModeBits(e.perm)); err != nil {
				t.Fatalf("fixture %s: %v", e.path, err)
			}
		}
		for _, x := range e.xattrs {
			if err := unix.Lsetxattr(p, x[0], []byte(x[1]), 0); err != nil {
				t.Fatalf("fixture %s: setting %s: %v", e.path, x[0], err)
			}
		}
	}
	for _, e := range entries {
		if e.kind == 'h' {
			continue
		}
		atime, mtime := ccTimes(e)
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(w, e.path), []unix.Timespec{atime, mtime}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatalf("fixture %s: %v", e.path, err)
		}
	}
	if workOwner >= 0 {
		if err := os.Chown(w, workOwner, workOwner); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// ccModeBits turns the set-ID and sticky bits of a raw mode into os.FileMode's.
func ccModeBits(perm uint32) os.FileMode {
	var m os.FileMode
	if perm&unix.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if perm&unix.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if perm&unix.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}

// ccNode is what the comparison looks at for one entry of a tree.
type ccNode struct {
	mode     uint32 // st_mode: type and every permission bit
	uid, gid uint32
	size     int64
	sum      string // content digest of a regular file
	link     string // symlink target
	rdev     uint64
	mtime    int64 // nanoseconds
	atime    int64
	xattrs   string
	ino      uint64
	group    string // the paths in the tree sharing this inode
}

// ccSnapshot records every entry below w (not w itself): first all the
// metadata, then the contents, so that reading does not disturb times.
func ccSnapshot(t testing.TB, w string) map[string]*ccNode {
	t.Helper()
	nodes := map[string]*ccNode{}
	err := filepath.WalkDir(w, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == w {
			return nil
		}
		rel, _ := filepath.Rel(w, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		n := &ccNode{
			mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, rdev: st.Rdev,
			mtime: st.Mtim.Nano(), atime: st.Atim.Nano(), ino: st.Ino,
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			n.size = 0 // a directory's size says nothing about its entries
		}
		n.xattrs = ccXattrs(t, p)
		nodes[rel] = n
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", w, err)
	}
	byIno := map[uint64][]string{}
	for rel, n := range nodes {
		switch n.mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(filepath.Join(w, rel))
			if err != nil {
				t.Fatal(err)
			}
			s := sha256.Sum256(b)
			n.sum = hex.EncodeToString(s[:8])
		case unix.S_IFLNK:
			l, err := os.Readlink(filepath.Join(w, rel))
			if err != nil {
				t.Fatal(err)
			}
			// Absolute links into the work directory (-s @W@/a) name
			// each tree's own: compared as @W@.
			n.link = strings.ReplaceAll(l, w, "@W@")
			n.size = int64(len(n.link))
		}
		if n.mode&unix.S_IFMT != unix.S_IFDIR {
			byIno[n.ino] = append(byIno[n.ino], rel)
		}
	}
	for _, paths := range byIno {
		sort.Strings(paths)
		g := strings.Join(paths, " ")
		for _, p := range paths {
			nodes[p].group = g
		}
	}
	return nodes
}

// ccXattrs lists path's extended attributes (not following a symlink) as
// "name=value" lines, sorted. SELinux labels are left out.
func ccXattrs(t testing.TB, path string) string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return ""
		}
		t.Fatalf("listing the xattrs of %s: %v", path, err)
	}
	var out []string
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name == "" || name == "security.selinux" {
			continue
		}
		val := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(path, name, val)
		if err != nil {
			t.Fatalf("reading xattr %s of %s: %v", name, path, err)
		}
		out = append(out, name+"="+string(val[:m]))
	}
	sort.Strings(out)
	return strings.Join(out, ";")
}

// ccRecent reports whether a timestamp was made by the run (now, give or
// take a day) rather than taken from the fixture (2017-2019 or 2096).
func ccRecent(ns int64) bool {
	d := time.Since(time.Unix(0, ns))
	return d > -24*time.Hour && d < 24*time.Hour
}

// ccDiff lists the differences between cp's tree and fastcp's. Mtimes are
// compared to the nanosecond unless both are the time of the run (a new
// entry made without preserving times); renamed lists directories whose
// mtime fastcp changes by renaming a temporary file into them where cp
// writes an existing file in place. Atimes are compared (the same way)
// when times is set: the command preserves timestamps.
func ccDiff(cp, fc map[string]*ccNode, renamed []string, times bool) []string {
	var diffs []string
	var paths []string
	for p := range cp {
		paths = append(paths, p)
	}
	for p := range fc {
		if _, ok := cp[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		c, f := cp[p], fc[p]
		switch {
		case f == nil:
			diffs = append(diffs, fmt.Sprintf("%s: made by cp (mode %#o), missing with fastcp", p, c.mode))
			continue
		case c == nil:
			diffs = append(diffs, fmt.Sprintf("%s: made by fastcp (mode %#o), not by cp", p, f.mode))
			continue
		}
		field := func(name string, cv, fv any) {
			if cv != fv {
				diffs = append(diffs, fmt.Sprintf("%s: %s %v with cp, %v with fastcp", p, name, cv, fv))
			}
		}
		field("mode", fmt.Sprintf("%#o", c.mode), fmt.Sprintf("%#o", f.mode))
		field("owner", fmt.Sprintf("%d:%d", c.uid, c.gid), fmt.Sprintf("%d:%d", f.uid, f.gid))
		field("size", c.size, f.size)
		field("content digest", c.sum, f.sum)
		field("symlink target", c.link, f.link)
		field("rdev", c.rdev, f.rdev)
		field("xattrs", c.xattrs, f.xattrs)
		field("hard links", c.group, f.group)
		switch {
		case slices.Contains(renamed, p):
			// The mtime differs by design: not compared.
		case !(ccRecent(c.mtime) && ccRecent(f.mtime)):
			field("mtime", ccTime(c.mtime), ccTime(f.mtime))
		}
		// An existing DEST that cp overwrites in place keeps its atime,
		// fastcp's new inode has a new one: atimes are compared only when
		// the command preserves them.
		if times && !(ccRecent(c.atime) && ccRecent(f.atime)) && c.mode&unix.S_IFMT != unix.S_IFDIR {
			field("atime", ccTime(c.atime), ccTime(f.atime))
		}
	}
	return diffs
}

// ccPreservesTimes reports whether a command line preserves timestamps:
// -a, -p (also bundled), --preserve without a list, or a list naming
// timestamps or all.
func ccPreservesTimes(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--archive", a == "--preserve":
			return true
		case strings.HasPrefix(a, "--preserve="):
			for _, v := range strings.Split(strings.TrimPrefix(a, "--preserve="), ",") {
				if v == "timestamps" || v == "all" {
					return true
				}
			}
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			// Stop at -t's value, which may be glued on.
			opts, _, _ := strings.Cut(a[1:], "t")
			if strings.ContainsAny(opts, "ap") {
				return true
			}
		}
	}
	return false
}

func ccTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// ccRun says how to run one command of a scenario.
type ccRun struct {
	dir   string
	stdin string
	umask string // "" means 022
	user  bool   // as ccNobody, with no supplementary groups
	env   []string
}

// ccExec runs prog (cp or fastcp) with args as ccRun says.
func ccExec(t testing.TB, prog string, args []string, o ccRun) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	umask := o.umask
	if umask == "" {
		umask = "022"
	}
	// Run by its base name through PATH, so that both programs see the
	// same kind of argv[0] ("cp", "fastcp"): GNU cp names itself with
	// argv[0] as given.
	shArgs := append([]string{"-c", `umask "$0" && exec "$@"`, umask, filepath.Base(prog)}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = o.dir
	cmd.Env = append(ccBaseEnv(), "LC_ALL=C", "PATH="+filepath.Dir(prog)+":/usr/bin:/bin")
	cmd.Env = append(cmd.Env, o.env...)
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.WaitDelay = 5 * time.Second
	if o.user {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
	}
	return runCmd(t, cmd)
}

// ccBaseEnv is the test's environment without the variables that change
// what cp does (a developer's VERSION_CONTROL must not change a result).
func ccBaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "POSIXLY_CORRECT", "VERSION_CONTROL", "SIMPLE_BACKUP_SUFFIX":
		default:
			env = append(env, kv)
		}
	}
	return env
}

// ccArgsIn puts the work directory w where an argument says @W@ (an
// absolute path into the tree).
func ccArgsIn(args []string, w string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "@W@", w)
	}
	return out
}

// ccScenario is one command line run through both programs.
type ccScenario struct {
	name  string
	args  []string
	stdin string
	// code is the exit status GNU cp has (checked, so that a broken
	// fixture shows), and fastcp must have the same.
	code int
	// usage: a usage error. GNU cp and fastcp exit 1 (CLI.md); fastcp ends
	// stderr with "Try 'fastcp --help' for more information."; only the
	// first stderr lines are compared.
	usage bool
	// ordered: stdout and stderr must be in the same line order. Otherwise
	// they are compared as sorted lines: fastcp visits a directory's
	// entries in name order, cp in inode order.
	ordered bool
	// stderr, when set, is fastcp's exact stderr, where its words
	// legitimately differ from cp's (cp's is then not compared).
	stderr string
	// cpRemoved: cp -v prints "removed 'X'" before replacing X, fastcp
	// replaces X by a rename and prints no such line; cp's are dropped
	// before comparing and fastcp must print none.
	cpRemoved bool
	// renamed lists directories in which fastcp renames a temporary file
	// over an existing DEST that cp overwrites in place: their mtime
	// changes with fastcp only.
	renamed []string
	// exist and absent are checked in both trees (a scenario that does
	// not do what it says fails even when both programs agree).
	exist, absent []string
	// check makes further assertions on both trees.
	check func(t *testing.T, w string)
	// fastcpOnly are options given to fastcp only, before args: options
	// GNU cp does not have (-q), compared with cp's run without them.
	fastcpOnly []string
	// cpExtra lists paths that only GNU cp creates, deliberately: cp
	// copies a directory into itself up to the point where it meets the
	// copy, fastcp refuses before writing anything (CLI.md: "a directory
	// is never copied into itself"); cp leaves a new DEST whose attributes
	// failed, fastcp removes its temporary file. They must not exist with
	// fastcp; their parent directory's mtime is not compared.
	cpExtra []string
	// cpLost lists paths that cp removes in a copy that then fails, and
	// fastcp, which touches nothing before it knows the copy can be made,
	// keeps: they must exist with fastcp and not with cp.
	cpLost []string
	// anyCode: the exit status cp has is the one expected (generated
	// scenarios: the comparison is the test).
	anyCode bool
	// user runs both programs as ccNobody (needs root for the setup).
	user bool
	// umask for both programs ("" means 022).
	umask string
	// fixture replaces the standard tree.
	fixture []ccEntry
	// env is added to both programs' environment.
	env []string
	// v911: GNU cp 9.1 lacks the behaviour, or has the one 9.2-9.11
	// changed: fastcp alone runs, and is held to 9.11's documented
	// behaviour (code, exact stdout and stderr; exist, absent and check).
	v911 *cc911
}

// cc911 is what cp 9.11 does where 9.1 differs, as fastcp must do it.
type cc911 struct {
	code           int
	stdout, stderr string
}

// ccStdTree is the standard fixture: files of several modes and owners,
// symlinks (to files, to a directory, dangling), hard links, extended
// attributes, a FIFO and a device node, and directories to copy into.
func ccStdTree() []ccEntry {
	return []ccEntry{
		ccFile("a", "alpha\n", 0o644),
		ccFile("b", string(randomBytes(100<<10, "cpcompat-b")), 0o640),
		ccFile("exe", "#!/bin/sh\necho hi\n", 0o755),
		ccFile("empty", "", 0o600),
		ccFile("o", "owned\n", 0o4755).owner(1234, 5678),
		ccFile("xa", "xattr\n", 0o644).xattr("user.x", "1").xattr("user.y", "two"),
		ccFile("-x", "dash\n", 0o644),
		ccLink("la", "a"),
		ccLink("lb", "b"),
		ccLink("ld", "d"),
		ccLink("lnope", "nope"),
		ccDir("D", 0o755),
		ccDir("E", 0o755),
		ccFile("E/a", "old a, longer than the new one\n", 0o600).owner(2000, 2000),
		ccDir("I", 0o755),
		ccFile("I/a", "old I/a\n", 0o644),
		ccFile("I/b", "old I/b\n", 0o644),
		ccDir("H", 0o755),
		ccFile("H/x", "old\n", 0o644),
		ccHard("H/y", "H/x"),
		ccDir("U", 0o755),
		ccFile("U/older", "older\n", 0o644).at(1_000_000_000, 1),
		ccFile("U/newer", "newer\n", 0o644).at(1_900_000_000, 5),
		ccDir("d", 0o755),
		ccFile("d/f1", "f1\n", 0o644),
		ccFile("d/hl1", "hard\n", 0o644),
		ccHard("d/hl2", "d/hl1"),
		ccLink("d/link", "f1"),
		ccLink("d/dangling", "missing"),
		ccFile("d/own", "own\n", 0o640).owner(1234, 5678),
		ccFile("d/xa", "x\n", 0o600).xattr("user.x", "1"),
		ccFile("d/empty", "", 0o644),
		ccDir("d/edir", 0o700),
		ccDir("d/sub", 0o750),
		ccFile("d/sub/f2", string(randomBytes(10<<10, "cpcompat-f2")), 0o600),
		ccLink("d/sub/up", "../f1"),
		ccDir("s", 0o755),
		ccFIFO("s/fifo", 0o640),
		ccChar("s/null", 1, 3, 0o666),
		ccLink("s/dangling", "nowhere"),
		ccFile("s/f", "f\n", 0o644),
		ccDir("R", 0o755),
		ccDir("R/d", 0o755),
		ccFile("R/d/f1", "stale f1\n", 0o644),
		ccLink("R/d/link", "elsewhere"),
		ccDir("c", 0o755),
		ccDir("c/src", 0o755),
		ccFile("c/src/x", "x\n", 0o644),
		ccFile("c/src/w", "w\n", 0o644),
		ccDir("c/src/y", 0o755),
		ccFile("c/src/y/z", "z\n", 0o644),
		ccDir("c/dst", 0o755),
		ccDir("c/dst/src", 0o755),
		ccDir("c/dst/src/x", 0o755),
		ccFile("c/dst/src/y", "y\n", 0o644),
	}
}

// ccArgs is a shorthand for a command line.
func ccArgs(a ...string) []string { return a }

// ccACL is a POSIX access ACL in its xattr form (posix_acl_xattr): version
// 2, then (tag, permissions, id) for the owner rw-, user 65534 r--, the
// group r--, the mask r-- and others r--.
var ccACL = func() string {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, 65534}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 4, 0xffffffff}} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return string(b)
}()

// ccDestXattrTree: sources, and DESTs with extended attributes (an empty
// value among them) and with an ACL.
func ccDestXattrTree() []ccEntry {
	return []ccEntry{
		ccFile("a", "alpha\n", 0o640),
		ccFile("xa", "xattr\n", 0o644).xattr("user.x", "1").xattr("user.y", "two"),
		ccFile("XD", "old XD, longer than the new one\n", 0o664).xattr("user.d", "keep").xattr("user.e", ""),
		ccFile("XA", "old XA\n", 0o644).xattr("system.posix_acl_access", ccACL),
		ccFile("XC", "old XC\n", 0o755).xattr("security.capability", ccCapNetRaw),
	}
}

// ccCapNetRaw is the security.capability of `setcap cap_net_raw+ep`
// (vfs_cap_data revision 2, effective; CAP_NET_RAW is bit 13).
var ccCapNetRaw = string([]byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})

// ccRunScenario builds the fixture twice under base, runs cp and fastcp
// (bin) and compares what they did.
func ccRunScenario(t *testing.T, sc ccScenario, base, bin string) {
	t.Helper()
	fixture := sc.fixture
	if fixture == nil {
		fixture = ccStdTree()
	}
	owner := -1
	if sc.user {
		owner = ccNobody
	}
	if sc.v911 != nil {
		cc911Run(t, sc, base, bin, fixture, owner)
		return
	}
	cpW := ccBuild(t, filepath.Join(base, "cp"), fixture, owner)
	fcW := ccBuild(t, filepath.Join(base, "fastcp"), fixture, owner)
	run := ccRun{stdin: sc.stdin, user: sc.user, env: sc.env, umask: sc.umask}
	run.dir = cpW
	rc := ccExec(t, ccGNUcp, ccArgsIn(sc.args, cpW), run)
	rc.stdout, rc.stderr = strings.ReplaceAll(rc.stdout, cpW, "@W@"), strings.ReplaceAll(rc.stderr, cpW, "@W@")
	run.dir = fcW
	fcArgs := append(slices.Clone(sc.fastcpOnly), sc.args...)
	rf := ccExec(t, bin, ccArgsIn(fcArgs, fcW), run)
	rf.stdout, rf.stderr = strings.ReplaceAll(rf.stdout, fcW, "@W@"), strings.ReplaceAll(rf.stderr, fcW, "@W@")
	cmdline := "cp " + strings.Join(sc.args, " ")
	fcCmdline := "fastcp " + strings.Join(fcArgs, " ")
	t.Logf("%s\n  cp:     %v\n  fastcp: %v", cmdline, rc, rf)

	// Exit status.
	switch {
	case sc.usage:
		if rc.code != 1 {
			t.Errorf("scenario: GNU cp exited %d on this usage error, expected 1", rc.code)
		}
		if rf.code != 1 {
			t.Errorf("exit status: fastcp %d, want 1 for a usage error, as GNU cp", rf.code)
		}
	default:
		if rc.code != sc.code && !sc.anyCode {
			t.Errorf("scenario: GNU cp exited %d, the scenario expects %d", rc.code, sc.code)
		}
		if rf.code != rc.code {
			t.Errorf("exit status: fastcp %d, GNU cp %d", rf.code, rc.code)
		}
	}

	// Stdout.
	cpOut := lines(rc.stdout)
	if sc.cpRemoved {
		var kept []string
		removed := 0
		for _, l := range cpOut {
			if strings.HasPrefix(l, "removed '") {
				removed++
				continue
			}
			kept = append(kept, l)
		}
		if removed == 0 {
			t.Errorf("scenario: GNU cp printed no \"removed\" line")
		}
		cpOut = kept
		for _, l := range lines(rf.stdout) {
			if strings.HasPrefix(l, "removed ") {
				t.Errorf("fastcp printed %q: it replaces DEST by a rename, there is nothing to remove", l)
			}
		}
	}
	ccCompareLines(t, "stdout", cpOut, lines(rf.stdout), sc.ordered)

	// Stderr.
	cpErr := strings.ReplaceAll(rc.stderr, "cp: ", "fastcp: ")
	cpErr = strings.ReplaceAll(cpErr, "'cp --help'", "'fastcp --help'")
	switch {
	case sc.stderr != "":
		if rf.stderr != sc.stderr {
			t.Errorf("stderr:\n  fastcp %q\n  want   %q\n  (GNU cp: %q)", rf.stderr, sc.stderr, rc.stderr)
		}
	case sc.usage:
		cl, fl := lines(cpErr), lines(rf.stderr)
		if len(cl) == 0 || len(fl) < 2 || cl[0] != fl[0] {
			t.Errorf("usage message:\n  fastcp %q\n  GNU cp %q", rf.stderr, rc.stderr)
		}
		if len(fl) == 0 || fl[len(fl)-1] != "Try 'fastcp --help' for more information." {
			t.Errorf("fastcp's usage error must end with the --help hint line, got %q", rf.stderr)
		}
	default:
		ccCompareLines(t, "stderr (with cp: rewritten as fastcp:)", ccStderrLines(cpErr), ccStderrLines(rf.stderr), sc.ordered)
	}

	// Trees.
	cpTree, fcTree := ccSnapshot(t, cpW), ccSnapshot(t, fcW)
	renamed := sc.renamed
	for _, x := range sc.cpExtra {
		if _, ok := cpTree[x]; !ok {
			t.Errorf("scenario: GNU cp no longer creates %s", x)
		}
		if _, ok := fcTree[x]; ok {
			t.Errorf("fastcp created %s, which only cp leaves behind (a directory copied into itself in part; a DEST left by a failed copy)", x)
		}
		for p := range cpTree {
			if p == x || strings.HasPrefix(p, x+"/") {
				delete(cpTree, p)
			}
		}
		renamed = append(slices.Clone(renamed), filepath.Dir(x))
	}
	for _, x := range sc.cpLost {
		if _, ok := cpTree[x]; ok {
			t.Errorf("scenario: GNU cp no longer removes %s", x)
		}
		if _, ok := fcTree[x]; !ok {
			t.Errorf("fastcp removed %s in a copy that failed", x)
		}
		delete(fcTree, x)
	}
	for _, d := range ccDiff(cpTree, fcTree, renamed, ccPreservesTimes(sc.args)) {
		t.Errorf("tree: %s", d)
	}
	for _, w := range []struct{ who, dir string }{{"GNU cp", cpW}, {"fastcp", fcW}} {
		for _, p := range sc.exist {
			if _, err := os.Lstat(filepath.Join(w.dir, p)); err != nil {
				t.Errorf("after %s: %s must exist: %v", w.who, p, err)
			}
		}
		for _, p := range sc.absent {
			if _, err := os.Lstat(filepath.Join(w.dir, p)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("after %s: %s must not exist (Lstat: %v)", w.who, p, err)
			}
		}
		if sc.check != nil {
			t.Run("check-"+strings.Fields(w.who)[len(strings.Fields(w.who))-1], func(t *testing.T) { sc.check(t, w.dir) })
		}
	}
	if t.Failed() {
		t.Logf("reproduce: in two copies of the fixture, run `LC_ALL=C %s` and `LC_ALL=C %s`", cmdline, fcCmdline)
	}
}

// cc911Run runs a v911 scenario: fastcp alone, held to what cp 9.11 does.
func cc911Run(t *testing.T, sc ccScenario, base, bin string, fixture []ccEntry, owner int) {
	t.Helper()
	w := ccBuild(t, filepath.Join(base, "fastcp"), fixture, owner)
	fcArgs := append(slices.Clone(sc.fastcpOnly), sc.args...)
	r := ccExec(t, bin, ccArgsIn(fcArgs, w), ccRun{dir: w, stdin: sc.stdin, user: sc.user, env: sc.env})
	t.Logf("fastcp %s (as cp 9.11)\n  fastcp: %v", strings.Join(fcArgs, " "), r)
	want := sc.v911
	if r.code != want.code {
		t.Errorf("exit status %d, want %d (cp 9.11)", r.code, want.code)
	}
	if r.stdout != want.stdout {
		t.Errorf("stdout %q, want %q (cp 9.11)", r.stdout, want.stdout)
	}
	if r.stderr != want.stderr {
		t.Errorf("stderr %q, want %q (cp 9.11)", r.stderr, want.stderr)
	}
	for _, p := range sc.exist {
		if _, err := os.Lstat(filepath.Join(w, p)); err != nil {
			t.Errorf("%s must exist: %v", p, err)
		}
	}
	for _, p := range sc.absent {
		if _, err := os.Lstat(filepath.Join(w, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s must not exist (Lstat: %v)", p, err)
		}
	}
	if sc.check != nil {
		sc.check(t, w)
	}
}

// ccStderrLines splits stderr into lines, ending each -i prompt (which
// has no newline) with one, so that prompts can be compared as lines.
func ccStderrLines(s string) []string {
	return lines(strings.ReplaceAll(s, "? ", "? \n"))
}

// ccCompareLines compares cp's output lines with fastcp's, in order or as
// sorted lists, and reports the lines only one side printed.
func ccCompareLines(t *testing.T, what string, cp, fc []string, ordered bool) {
	t.Helper()
	if !ordered {
		cp, fc = slices.Clone(cp), slices.Clone(fc)
		sort.Strings(cp)
		sort.Strings(fc)
	}
	if slices.Equal(cp, fc) {
		return
	}
	count := map[string]int{}
	for _, l := range cp {
		count[l]++
	}
	for _, l := range fc {
		count[l]--
	}
	var onlyCp, onlyFc []string
	for _, l := range cp {
		if count[l] > 0 {
			onlyCp = append(onlyCp, l)
			count[l]--
		}
	}
	for _, l := range fc {
		if count[l] < 0 {
			onlyFc = append(onlyFc, l)
			count[l]++
		}
	}
	if len(onlyCp) == 0 && len(onlyFc) == 0 {
		t.Errorf("%s: the same lines in another order:\n  GNU cp: %q\n  fastcp: %q", what, cp, fc)
		return
	}
	t.Errorf("%s differs:\n  only GNU cp printed: %q\n  only fastcp printed: %q", what, onlyCp, onlyFc)
}

// ccType and the helpers after it are small assertions for scenario
// checks, on the tree in work directory w. ccType checks p's file type
// (S_IFREG, S_IFDIR...) and returns its stat when it matches.
func ccType(t *testing.T, w, p string, want uint32) *unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(w, p), &st); err != nil {
		t.Errorf("%s: %v", p, err)
		return nil
	}
	if st.Mode&unix.S_IFMT != want {
		t.Errorf("%s has type %#o, want %#o", p, st.Mode&unix.S_IFMT, want)
		return nil
	}
	return &st
}

func ccSameInode(t *testing.T, w string, p, q string, want bool) {
	t.Helper()
	a, b := ccType(t, w, p, unix.S_IFREG), ccType(t, w, q, unix.S_IFREG)
	if a == nil || b == nil {
		return
	}
	if got := a.Ino == b.Ino && a.Dev == b.Dev; got != want {
		t.Errorf("%s and %s share an inode: %v, want %v", p, q, got, want)
	}
}

func ccContent(t *testing.T, w, p, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w, p))
	if err != nil {
		t.Error(err)
		return
	}
	if string(b) != want {
		t.Errorf("%s holds %q, want %q", p, b, want)
	}
}

func ccLinkTo(t *testing.T, w, p, want string) {
	t.Helper()
	if ccType(t, w, p, unix.S_IFLNK) == nil {
		return
	}
	if got, _ := os.Readlink(filepath.Join(w, p)); got != want {
		t.Errorf("%s points to %q, want %q", p, got, want)
	}
}

func ccPerm(t *testing.T, w, p string, want uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(w, p), &st); err != nil {
		t.Error(err)
		return
	}
	if st.Mode&0o7777 != want {
		t.Errorf("%s has mode %#o, want %#o", p, st.Mode&0o7777, want)
	}
}

func ccOwner(t *testing.T, w, p string, uid, gid uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(w, p), &st); err != nil {
		t.Error(err)
		return
	}
	if st.Uid != uid || st.Gid != gid {
		t.Errorf("%s belongs to %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
	}
}

func ccMtimeOf(t *testing.T, w, p string, e ccEntry) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(w, p), &st); err != nil {
		t.Error(err)
		return
	}
	_, want := ccTimes(e)
	if st.Mtim != want {
		t.Errorf("%s has mtime %s, want the source's %s", p, ccTime(st.Mtim.Nano()), ccTime(want.Nano()))
	}
}

// ccStd returns the standard fixture entry at path (for its times).
func ccStd(path string) ccEntry {
	for _, e := range ccStdTree() {
		if e.path == path {
			return e
		}
	}
	panic("no fixture entry " + path)
}

// ccScenarios is the main table, run as root.
var ccScenarios = []ccScenario{
	// Plain files and DEST forms.
	{name: "file-to-new", args: ccArgs("a", "x"), exist: []string{"x"},
		check: func(t *testing.T, w string) { ccContent(t, w, "x", "alpha\n"); ccPerm(t, w, "x", 0o644) }},
	{name: "file-over-file", args: ccArgs("a", "b"),
		check: func(t *testing.T, w string) { ccContent(t, w, "b", "alpha\n"); ccPerm(t, w, "b", 0o640) }},
	{name: "file-over-file-keeps-mode-and-owner", args: ccArgs("a", "E/a"), renamed: []string{"E"},
		check: func(t *testing.T, w string) {
			ccContent(t, w, "E/a", "alpha\n")
			ccPerm(t, w, "E/a", 0o600)
			ccOwner(t, w, "E/a", 2000, 2000)
		}},
	{name: "file-into-dir", args: ccArgs("a", "D"), exist: []string{"D/a"}},
	{name: "file-into-dir-slash", args: ccArgs("a", "D/"), exist: []string{"D/a"}},
	{name: "file-into-dir-over-existing", args: ccArgs("a", "E"), renamed: []string{"E"},
		check: func(t *testing.T, w string) { ccContent(t, w, "E/a", "alpha\n") }},
	{name: "empty-file", args: ccArgs("empty", "x"), exist: []string{"x"},
		check: func(t *testing.T, w string) { ccContent(t, w, "x", ""); ccPerm(t, w, "x", 0o600) }},
	{name: "setuid-file-without-p", args: ccArgs("o", "x"), exist: []string{"x"},
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 0, 0) }},
	{name: "dest-symlink-written-through", args: ccArgs("a", "lb"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "lb", "b"); ccContent(t, w, "b", "alpha\n") }},
	{name: "dest-dangling-symlink", args: ccArgs("a", "lnope"), code: 1, absent: []string{"nope"}},
	{name: "same-file", args: ccArgs("a", "a"), code: 1},
	{name: "same-file-through-symlink", args: ccArgs("a", "la"), code: 1},
	{name: "trailing-slash-missing-dest", args: ccArgs("a", "x/"), code: 1, absent: []string{"x"}},
	{name: "trailing-slash-file-dest", args: ccArgs("a", "b/"), code: 1},
	{name: "missing-source", args: ccArgs("nope", "x"), code: 1, absent: []string{"x"}},
	{name: "missing-among-sources", args: ccArgs("a", "nope", "b", "D"), code: 1, ordered: true,
		exist: []string{"D/a", "D/b"}, absent: []string{"D/nope"}},
	{name: "multiple-into-dir", args: ccArgs("-v", "a", "b", "exe", "D"), ordered: true,
		exist: []string{"D/a", "D/b", "D/exe"}},
	{name: "multiple-missing-target", args: ccArgs("a", "b", "x"), code: 1, absent: []string{"x"}},
	{name: "multiple-nondir-target", args: ccArgs("a", "b", "exe"), code: 1,
		check: func(t *testing.T, w string) { ccContent(t, w, "exe", "#!/bin/sh\necho hi\n") }},

	// -t and -T.
	{name: "t-dir", args: ccArgs("-t", "D", "a", "b"), exist: []string{"D/a", "D/b"}},
	{name: "target-directory-long", args: ccArgs("-v", "--target-directory=D", "b", "a"), ordered: true, exist: []string{"D/a", "D/b"}},
	{name: "t-missing-dir", args: ccArgs("-t", "nope", "a"), code: 1, absent: []string{"nope"}},
	{name: "t-file", args: ccArgs("-t", "a", "b"), code: 1},
	{name: "T-file-to-file", args: ccArgs("-T", "a", "x"), exist: []string{"x"}},
	{name: "T-file-onto-dir", args: ccArgs("-T", "a", "D"), code: 1, absent: []string{"D/a"}},
	{name: "T-dir-onto-existing-dir", args: ccArgs("-rT", "d", "D"), exist: []string{"D/f1", "D/sub/f2"}, absent: []string{"D/d"}},

	// Directories.
	{name: "dir-without-r", args: ccArgs("d", "x"), code: 1, absent: []string{"x"}},
	{name: "dir-without-r-among-files", args: ccArgs("a", "d", "b", "D"), code: 1, ordered: true,
		exist: []string{"D/a", "D/b"}, absent: []string{"D/d"}},
	{name: "r-dir-to-new", args: ccArgs("-r", "d", "x"), exist: []string{"x/f1", "x/sub/f2", "x/edir"},
		check: func(t *testing.T, w string) {
			ccSameInode(t, w, "x/hl1", "x/hl2", false) // -r does not keep hard links
			ccLinkTo(t, w, "x/link", "f1")             // symlinks are copied as links
			ccLinkTo(t, w, "x/dangling", "missing")
			ccPerm(t, w, "x/sub", 0o750)
		}},
	{name: "R-dir-into-existing-dir", args: ccArgs("-R", "d", "D"), exist: []string{"D/d/f1", "D/d/sub/up"}},
	{name: "rv-dir-into-dir-slash", args: ccArgs("-rv", "d", "D/"), exist: []string{"D/d/f1"}},
	{name: "rv-dir-slash-to-new", args: ccArgs("-rv", "d/", "x"), exist: []string{"x/f1"}},
	{name: "r-dir-to-new-slash", args: ccArgs("-r", "d", "x/"), exist: []string{"x/f1"}},
	{name: "r-empty-dir", args: ccArgs("-r", "d/edir", "x"), exist: []string{"x"},
		check: func(t *testing.T, w string) {
			if st := ccType(t, w, "x", unix.S_IFDIR); st != nil {
				ccPerm(t, w, "x", 0o700)
			}
		}},
	{name: "r-dir-into-itself", args: ccArgs("-r", "d", "d"), code: 1, cpExtra: []string{"d/d"}},
	{name: "r-dir-into-its-subdir", args: ccArgs("-r", "d", "d/sub"), code: 1, cpExtra: []string{"d/sub/d"}},
	{name: "r-dir-onto-file", args: ccArgs("-r", "d", "a"), code: 1,
		check: func(t *testing.T, w string) { ccContent(t, w, "a", "alpha\n") }},
	{name: "r-conflicts-inside-tree", args: ccArgs("-rv", "c/src", "c/dst"), code: 1,
		exist: []string{"c/dst/src/w", "c/dst/src/x"},
		check: func(t *testing.T, w string) {
			ccType(t, w, "c/dst/src/x", unix.S_IFDIR) // a file never replaces a directory
			ccContent(t, w, "c/dst/src/y", "y\n")     // nor a directory a file
		}},
	{name: "rv-merge-into-existing-tree", args: ccArgs("-rv", "d", "R"), cpRemoved: true,
		check: func(t *testing.T, w string) {
			ccContent(t, w, "R/d/f1", "f1\n")
			ccLinkTo(t, w, "R/d/link", "f1")
		}},
	{name: "r-specials-recreated", args: ccArgs("-r", "s", "x"),
		check: func(t *testing.T, w string) {
			ccType(t, w, "x/fifo", unix.S_IFIFO)
			if st := ccType(t, w, "x/null", unix.S_IFCHR); st != nil && st.Rdev != unix.Mkdev(1, 3) {
				t.Errorf("x/null: rdev %#x, want 1,3", st.Rdev)
			}
		}},

	// Archive and attributes.
	{name: "a-tree", args: ccArgs("-a", "d", "x"),
		check: func(t *testing.T, w string) {
			ccSameInode(t, w, "x/hl1", "x/hl2", true)
			ccOwner(t, w, "x/own", 1234, 5678)
			ccMtimeOf(t, w, "x/sub/f2", ccStd("d/sub/f2"))
			ccMtimeOf(t, w, "x/sub", ccStd("d/sub"))
			ccMtimeOf(t, w, "x/link", ccStd("d/link"))
			ccLinkTo(t, w, "x/dangling", "missing")
		}},
	{name: "av-tree", args: ccArgs("-av", "d", "x"), exist: []string{"x/xa"}},
	{name: "a-specials", args: ccArgs("-a", "s", "x"),
		check: func(t *testing.T, w string) {
			ccType(t, w, "x/fifo", unix.S_IFIFO)
			ccPerm(t, w, "x/fifo", 0o640)
			ccType(t, w, "x/null", unix.S_IFCHR)
			ccPerm(t, w, "x/null", 0o666)
			ccLinkTo(t, w, "x/dangling", "nowhere")
		}},
	{name: "a-hard-links-on-command-line", args: ccArgs("-a", "d/hl1", "d/hl2", "D"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "D/hl1", "D/hl2", true) }},
	{name: "a-dir-into-existing", args: ccArgs("-a", "d", "D"), exist: []string{"D/d/sub/f2"}},
	{name: "a-empty-dir", args: ccArgs("-a", "d/edir", "x"),
		check: func(t *testing.T, w string) { ccPerm(t, w, "x", 0o700); ccMtimeOf(t, w, "x", ccStd("d/edir")) }},
	{name: "a-symlink", args: ccArgs("-a", "la", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a"); ccMtimeOf(t, w, "x", ccStd("la")) }},
	{name: "p-file", args: ccArgs("-p", "o", "x"),
		check: func(t *testing.T, w string) {
			ccPerm(t, w, "x", 0o4755)
			ccOwner(t, w, "x", 1234, 5678)
			ccMtimeOf(t, w, "x", ccStd("o"))
		}},
	{name: "p-over-existing", args: ccArgs("-p", "a", "E"), renamed: []string{"E"},
		check: func(t *testing.T, w string) {
			ccPerm(t, w, "E/a", 0o644)
			ccOwner(t, w, "E/a", 0, 0)
			ccMtimeOf(t, w, "E/a", ccStd("a"))
		}},
	{name: "p-dir-without-r", args: ccArgs("-p", "d", "x"), code: 1, absent: []string{"x"}},
	{name: "preserve-bare", args: ccArgs("--preserve", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 1234, 5678); ccPerm(t, w, "x", 0o4755) }},
	{name: "preserve-mode", args: ccArgs("--preserve=mode", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 0, 0) }},
	{name: "preserve-ownership", args: ccArgs("--preserve=ownership", "o", "x"),
		check: func(t *testing.T, w string) { ccOwner(t, w, "x", 1234, 5678) }},
	{name: "preserve-timestamps", args: ccArgs("--preserve=timestamps", "a", "x"),
		check: func(t *testing.T, w string) { ccMtimeOf(t, w, "x", ccStd("a")) }},
	{name: "preserve-xattr", args: ccArgs("--preserve=xattr", "xa", "x"),
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "x")); got != "user.x=1;user.y=two" {
				t.Errorf("x has xattrs %q, want user.x=1;user.y=two", got)
			}
		}},
	{name: "no-xattr-without-preserve", args: ccArgs("xa", "x"),
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "x")); got != "" {
				t.Errorf("x has xattrs %q, want none", got)
			}
		}},
	// An existing DEST keeps its own extended attributes and ACL: cp writes
	// into it, fastcp gives them to the file it renames over it.
	{name: "dest-keeps-xattrs", args: ccArgs("a", "XD"), fixture: ccDestXattrTree(), renamed: []string{"."},
		check: func(t *testing.T, w string) {
			ccContent(t, w, "XD", "alpha\n")
			if got := ccXattrs(t, filepath.Join(w, "XD")); got != "user.d=keep;user.e=" {
				t.Errorf("XD has xattrs %q, want its own: user.d=keep;user.e=", got)
			}
		}},
	{name: "dest-keeps-acl", args: ccArgs("a", "XA"), fixture: ccDestXattrTree(), renamed: []string{"."},
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "XA")); got != "system.posix_acl_access="+ccACL {
				t.Errorf("XA has xattrs %q, want its ACL", got)
			}
		}},
	{name: "dest-loses-capability", args: ccArgs("a", "XC"), fixture: ccDestXattrTree(), renamed: []string{"."},
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "XC")); got != "" {
				t.Errorf("XC has xattrs %q, want none: a write drops file capabilities", got)
			}
		}},
	{name: "p-replaces-dest-acl", args: ccArgs("-p", "a", "XA"), fixture: ccDestXattrTree(), renamed: []string{"."},
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "XA")); got != "" {
				t.Errorf("XA has xattrs %q, want none: -p gives it the source's permissions", got)
			}
			ccPerm(t, w, "XA", 0o640)
		}},
	{name: "preserve-xattr-over-dest-xattrs", args: ccArgs("--preserve=xattr", "xa", "XD"), fixture: ccDestXattrTree(), renamed: []string{"."},
		check: func(t *testing.T, w string) {
			if got := ccXattrs(t, filepath.Join(w, "XD")); got != "user.d=keep;user.e=;user.x=1;user.y=two" {
				t.Errorf("XD has xattrs %q, want its own and the source's", got)
			}
		}},
	{name: "r-preserve-all", args: ccArgs("-r", "--preserve=all", "d", "x"),
		check: func(t *testing.T, w string) {
			ccOwner(t, w, "x/own", 1234, 5678)
			ccMtimeOf(t, w, "x/f1", ccStd("d/f1"))
			if got := ccXattrs(t, filepath.Join(w, "x/xa")); got != "user.x=1" {
				t.Errorf("x/xa has xattrs %q, want user.x=1", got)
			}
		}},
	{name: "r-preserve-links", args: ccArgs("-r", "--preserve=links", "d", "x"),
		check: func(t *testing.T, w string) { ccSameInode(t, w, "x/hl1", "x/hl2", true) }},
	{name: "preserve-bad-value", args: ccArgs("--preserve=bogus", "a", "x"), usage: true, absent: []string{"x"}},

	// Overwrite control.
	{name: "f-over-existing", args: ccArgs("-f", "a", "exe"),
		check: func(t *testing.T, w string) { ccContent(t, w, "exe", "alpha\n"); ccPerm(t, w, "exe", 0o755) }},
	{name: "n-existing", args: ccArgs("-n", "a", "b"),
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "nv-existing", args: ccArgs("-nv", "a", "b", "E"), exist: []string{"E/b"},
		check: func(t *testing.T, w string) { ccContent(t, w, "E/a", "old a, longer than the new one\n") }},
	{name: "n-new", args: ccArgs("-n", "a", "x"), exist: []string{"x"}},
	{name: "i-yes", args: ccArgs("-i", "a", "b"), stdin: "y\n", ordered: true,
		check: func(t *testing.T, w string) { ccContent(t, w, "b", "alpha\n") }},
	// cp 9.2 and later: a "no" is exit status 1 (9.1 exits 0).
	{name: "i-no", args: ccArgs("-i", "a", "E"), stdin: "n\n",
		v911:  &cc911{code: 1, stderr: "fastcp: overwrite 'E/a'? "},
		check: func(t *testing.T, w string) { ccContent(t, w, "E/a", "old a, longer than the new one\n") }},
	{name: "i-yes-then-no", args: ccArgs("-i", "a", "b", "I"), stdin: "y\nn\n",
		v911: &cc911{code: 1, stderr: "fastcp: overwrite 'I/a'? fastcp: overwrite 'I/b'? "},
		// Two prompts in command-line order: I/a (yes), then I/b (no).
		check: func(t *testing.T, w string) {
			ccContent(t, w, "I/a", "alpha\n")
			ccContent(t, w, "I/b", "old I/b\n")
		}},
	{name: "ri-yes-in-tree", args: ccArgs("-ri", "d", "R"), stdin: "y\ny\n",
		// Two prompts, R/d/f1 and R/d/link, in an order that differs
		// (cp: inode order): both answered yes.
		check: func(t *testing.T, w string) {
			ccContent(t, w, "R/d/f1", "f1\n")
			ccLinkTo(t, w, "R/d/link", "f1")
		}},
	{name: "i-new-file-no-prompt", args: ccArgs("-i", "a", "x"), stdin: "n\n", exist: []string{"x"}},
	{name: "n-after-i-wins", args: ccArgs("-i", "-n", "a", "b"), stdin: "y\n",
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "u-source-newer", args: ccArgs("-u", "a", "U/older"), renamed: []string{"U"},
		check: func(t *testing.T, w string) { ccContent(t, w, "U/older", "alpha\n") }},
	{name: "u-source-older", args: ccArgs("-u", "a", "U/newer"),
		check: func(t *testing.T, w string) { ccContent(t, w, "U/newer", "newer\n") }},
	{name: "u-new-dest", args: ccArgs("-u", "a", "x"), exist: []string{"x"}},

	// Symbolic links on the command line and in trees.
	{name: "symlink-followed-by-default", args: ccArgs("la", "x"),
		check: func(t *testing.T, w string) { ccType(t, w, "x", unix.S_IFREG) }},
	{name: "P-symlink", args: ccArgs("-P", "la", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "P-dangling-symlink", args: ccArgs("-P", "lnope", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "nope") }},
	{name: "dangling-symlink-followed", args: ccArgs("lnope", "x"), code: 1, absent: []string{"x"}},
	{name: "r-symlink-to-dir-copied-as-link", args: ccArgs("-r", "ld", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "d") }},
	{name: "rL-follows-everything", args: ccArgs("-rL", "ld", "x"), code: 1, absent: []string{"x/dangling"},
		check: func(t *testing.T, w string) {
			ccType(t, w, "x", unix.S_IFDIR)
			ccType(t, w, "x/link", unix.S_IFREG)
			ccType(t, w, "x/sub/up", unix.S_IFREG)
		}},
	{name: "rH-follows-command-line-only", args: ccArgs("-rH", "ld", "x"),
		check: func(t *testing.T, w string) {
			ccType(t, w, "x", unix.S_IFDIR)
			ccLinkTo(t, w, "x/link", "f1")
			ccLinkTo(t, w, "x/dangling", "missing")
		}},
	{name: "H-file-symlink", args: ccArgs("-H", "la", "x"),
		check: func(t *testing.T, w string) { ccType(t, w, "x", unix.S_IFREG) }},
	{name: "rH-tree-with-links", args: ccArgs("-r", "-H", "d", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x/sub/up", "../f1") }},
	{name: "P-symlink-over-file", args: ccArgs("-P", "la", "exe"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "exe", "a") }},
	{name: "L-after-P-wins", args: ccArgs("-P", "-L", "la", "x"),
		check: func(t *testing.T, w string) { ccType(t, w, "x", unix.S_IFREG) }},

	// Output options and option syntax.
	{name: "v-file", args: ccArgs("-v", "a", "x"), ordered: true},
	// GNU cp has no -q: fastcp -q is compared with plain cp (errors still
	// go to stderr).
	{name: "q-success", fastcpOnly: ccArgs("-q"), args: ccArgs("a", "x"), exist: []string{"x"}},
	{name: "q-error", fastcpOnly: ccArgs("-q"), args: ccArgs("a", "nope", "D"), code: 1, ordered: true, exist: []string{"D/a"}},
	{name: "q-verbose", fastcpOnly: ccArgs("-q"), args: ccArgs("-v", "a", "D"), ordered: true},
	{name: "bundled-rpv", args: ccArgs("-rpv", "d/sub", "x"), check: func(t *testing.T, w string) { ccMtimeOf(t, w, "x/f2", ccStd("d/sub/f2")) }},
	{name: "double-dash", args: ccArgs("--", "a", "x"), exist: []string{"x"}},
	{name: "dash-file-after-double-dash", args: ccArgs("-v", "--", "-x", "y"), ordered: true,
		check: func(t *testing.T, w string) { ccContent(t, w, "y", "dash\n") }},
	{name: "dash-file-into-dir", args: ccArgs("-t", "D", "--", "-x", "a"), exist: []string{"D/-x", "D/a"}},
	{name: "options-after-operands", args: ccArgs("a", "x", "-v"), ordered: true, exist: []string{"x"}},

	{name: "long-archive-verbose", args: ccArgs("--archive", "--verbose", "d/sub", "x"),
		check: func(t *testing.T, w string) { ccMtimeOf(t, w, "x/f2", ccStd("d/sub/f2")) }},
	{name: "long-recursive-dereference", args: ccArgs("--recursive", "--dereference", "d/sub", "x"),
		check: func(t *testing.T, w string) { ccContent(t, w, "x/up", "f1\n") }},
	{name: "long-no-dereference", args: ccArgs("--no-dereference", "la", "x"),
		check: func(t *testing.T, w string) { ccLinkTo(t, w, "x", "a") }},
	{name: "long-update-no-target-directory", args: ccArgs("--update", "--no-target-directory", "a", "U/newer"),
		check: func(t *testing.T, w string) { ccContent(t, w, "U/newer", "newer\n") }},
	{name: "long-interactive-then-no-clobber", args: ccArgs("--interactive", "--no-clobber", "a", "b"), stdin: "y\n",
		check: func(t *testing.T, w string) { ccContent(t, w, "b", string(randomBytes(100<<10, "cpcompat-b"))) }},
	{name: "long-force-target-directory", args: ccArgs("--force", "--target-directory", "E", "a"), renamed: []string{"E"},
		check: func(t *testing.T, w string) { ccContent(t, w, "E/a", "alpha\n") }},
	{name: "ru-merge-into-existing-tree", args: ccArgs("-ru", "d", "R"),
		exist: []string{"R/d/sub/f2"}},

	// Usage errors: GNU cp exits 1, fastcp 2 with a hint (CLI.md).
	{name: "usage-no-operand", args: nil, usage: true},
	{name: "usage-one-operand", args: ccArgs("a"), usage: true},
	{name: "usage-unknown-long", args: ccArgs("--bogus", "a", "x"), usage: true, absent: []string{"x"}},
	{name: "usage-unknown-short", args: ccArgs("-y", "a", "x"), usage: true, absent: []string{"x"}},
	{name: "usage-T-extra-operand", args: ccArgs("-T", "a", "b", "x"), usage: true, absent: []string{"x"}},
	{name: "usage-t-and-T", args: ccArgs("-t", "D", "-T", "a", "b"), usage: true, absent: []string{"D/a"}},
	// -x is --one-file-system: "y" is the only operand.
	{name: "usage-x-without-double-dash", args: ccArgs("-x", "y"), usage: true},
}

// TestCpCompat runs every scenario of the table through GNU cp and fastcp.
func TestCpCompat(t *testing.T) {
	needRoot(t) // the fixture has other owners and a device node
	t.Parallel()
	if _, err := os.Stat(ccGNUcp); err != nil {
		t.Fatalf("GNU cp is needed as the reference: %v", err)
	}
	seen := map[string]bool{}
	for _, sc := range ccScenarios {
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

// TestCpCompatHardLinkedDest encodes a deliberate difference: cp writes an
// existing DEST in place, so every hard link to it sees the new content;
// fastcp renames a temporary file over DEST (CLI.md, destination safety),
// so DEST gets a new inode and the other links keep the old content.
func TestCpCompatHardLinkedDest(t *testing.T) {
	t.Parallel()
	fixture := []ccEntry{ccFile("a", "alpha\n", 0o644), ccDir("H", 0o755), ccFile("H/x", "old\n", 0o644), ccHard("H/y", "H/x")}
	base := t.TempDir()
	cpW := ccBuild(t, filepath.Join(base, "cp"), fixture, -1)
	fcW := ccBuild(t, filepath.Join(base, "fastcp"), fixture, -1)
	if r := ccExec(t, ccGNUcp, ccArgs("a", "H/x"), ccRun{dir: cpW}); r.code != 0 {
		t.Fatalf("GNU cp: %v", r)
	}
	wantSuccess(t, ccExec(t, setup.Bin, ccArgs("a", "H/x"), ccRun{dir: fcW}))
	// GNU cp: one inode, new content under both names.
	ccContent(t, cpW, "H/x", "alpha\n")
	ccContent(t, cpW, "H/y", "alpha\n")
	ccSameInode(t, cpW, "H/x", "H/y", true)
	// fastcp: H/x is a new file, H/y keeps the old inode and content.
	ccContent(t, fcW, "H/x", "alpha\n")
	ccContent(t, fcW, "H/y", "old\n")
	ccSameInode(t, fcW, "H/x", "H/y", false)
	assertNoTemps(t, filepath.Join(fcW, "H"))
}
