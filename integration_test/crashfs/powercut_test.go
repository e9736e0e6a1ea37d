// SPDX-License-Identifier: MIT

package crashfs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fastcpBin is the binary under test, built from the repository root by
// TestMain; resumeBin is the same built with the fastcp_crashfs tag, which
// only makes --resume checkpoint every 256 KiB instead of every GiB (or
// 5 s), so that a copy of a few MiB has checkpoints to cut between.
var fastcpBin, resumeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "crashfs-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fastcpBin, resumeBin = filepath.Join(dir, "fastcp"), filepath.Join(dir, "fastcp-resume")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	for bin, tags := range map[string]string{fastcpBin: "", resumeBin: "fastcp_crashfs"} {
		build := exec.Command(goBin, "build", "-tags="+tags, "-o", bin, ".")
		build.Dir = filepath.Join("..", "..")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building fastcp: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needFUSE skips a test without root or /dev/fuse, or where root cannot
// mount a FUSE filesystem (a container without CAP_SYS_ADMIN: probed once),
// except under CI=true, where skipping is a failure.
func needFUSE(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (to mount FUSE without fusermount)"
	} else if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "needs /dev/fuse"
	} else {
		why = fuseProbe()
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s, and CI=true forbids skipping", why)
	}
	t.Skip(why)
}

// fuseProbe mounts and unmounts an empty filesystem once, and says why
// that failed (empty: it worked).
var fuseProbe = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "crashfs-probe-")
	if err != nil {
		return err.Error()
	}
	defer os.Remove(dir)
	fs := New()
	if err := fs.Mount(dir); err != nil {
		return fmt.Sprintf("cannot mount a FUSE filesystem here: %v", err)
	}
	if err := fs.Unmount(); err != nil {
		return fmt.Sprintf("cannot unmount a FUSE filesystem here: %v", err)
	}
	return ""
})

// mounted returns a new filesystem and its mount point; the test unmounts
// it at the end.
func mounted(t *testing.T) (*FS, string) {
	needFUSE(t)
	fs := New()
	mnt := t.TempDir()
	t.Cleanup(func() { fs.Unmount() })
	return fs, mnt
}

func mount(t *testing.T, fs *FS, mnt string) {
	t.Helper()
	if err := fs.Mount(mnt); err != nil {
		t.Fatalf("mount: %v", err)
	}
}

func unmount(t *testing.T, fs *FS) {
	t.Helper()
	if err := fs.Unmount(); err != nil {
		t.Fatalf("unmount: %v", err)
	}
}

// run is one fastcp run.
type run struct {
	exit   int  // -1 when killed
	killed bool // by the crash
	out    string
	someOK bool // of two runs at once, one exited 0 (fixture.runTwo)
}

func fastcp(args ...string) run { return fastcpWith(fastcpBin, args...) }

func fastcpWith(bin string, args ...string) run { return fastcpIn("", bin, args...) }

// fastcpIn runs bin in directory dir ("": here).
func fastcpIn(dir, bin string, args ...string) run {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := run{out: out.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		}
	default:
		r.exit = -2
		r.out += err.Error()
	}
	return r
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestModel checks the model itself through the mount: what fsync makes
// durable and what it does not, and the images a crash can leave.
func TestModel(t *testing.T) {
	fs, mnt := mounted(t)
	fs.Setup("old", []byte("old content"), 0o644)
	mount(t, fs, mnt)
	p := filepath.Join(mnt, "f")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(" world")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, err := os.ReadFile(p); err != nil || string(got) != "hello world" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if err := os.Rename(filepath.Join(mnt, "old"), filepath.Join(mnt, "moved")); err != nil {
		t.Fatal(err)
	}
	sn := fs.Snapshot()
	if sn.MetaOps() != 2 { // create f, rename old moved
		t.Fatalf("%d volatile directory ops, want 2: %s", sn.MetaOps(), sn.Pending())
	}
	// Nothing kept: f never named, old still under its name.
	im := sn.Image(0, DataAll)
	if _, ok := im.Stat("f"); ok {
		t.Error("f survives without its directory fsynced")
	}
	if e, ok := im.Stat("old"); !ok || string(e.Data) != "old content" {
		t.Errorf("old after a crash that kept no rename: %q %v", e.Data, ok)
	}
	// The create kept: f holds its fsynced data, or more of what followed.
	for p, want := range map[DataPolicy]string{DataLost: "hello", DataFirst: "hello world", DataAll: "hello world", DataZeros: "hello\x00\x00\x00\x00\x00\x00"} {
		if e, ok := sn.Image(1, p).Stat("f"); !ok || string(e.Data) != want {
			t.Errorf("%v: f = %q %v, want %q", p, e.Data, ok, want)
		}
	}
	// The rename is atomic: one name or the other, never both or none.
	for m := 0; m <= 2; m++ {
		_, a := sn.Image(m, DataAll).Stat("old")
		_, b := sn.Image(m, DataAll).Stat("moved")
		if a == b {
			t.Errorf("%d ops kept: old %v, moved %v", m, a, b)
		}
	}
	// An fsync of the directory makes both entries durable.
	d, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	sn = fs.Snapshot()
	if sn.MetaOps() != 0 {
		t.Fatalf("after the directory fsync: %s", sn.Pending())
	}
	if e, ok := sn.Image(0, DataLost).Stat("f"); !ok || string(e.Data) != "hello" {
		t.Errorf("f after directory fsync, unsynced data lost: %q %v", e.Data, ok)
	}
	// O_DSYNC writes are durable when they return.
	g, err := os.OpenFile(filepath.Join(mnt, "f"), os.O_WRONLY|os.O_TRUNC|syscall.O_DSYNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("sync"))
	g.Close()
	if e, _ := fs.Snapshot().Image(0, DataLost).Stat("f"); string(e.Data) != "sync" {
		t.Errorf("O_DSYNC write not durable: %q", e.Data)
	}
}

// mode is one way of running fastcp that the power-cut test cuts under.
type mode struct {
	name  string
	flags []string
	// tree copies the small tree with -r; otherwise one file.
	tree bool
	// fresh: DEST does not exist before the copy.
	fresh bool
	// durable: exit 0 promises that the copy survives a power cut.
	durable bool
	// allowPartial: before exit 0 (and, without durable, after it), DEST
	// may hold part of the new data: what docs/crash-safety.md says of --sync=none
	// and --inplace.
	allowPartial bool
	// resume: run resumeBin; the next run after the cut continues the
	// leftover (--resume), and must get DEST exactly right.
	resume bool
	// overOld: the tree is copied over an older copy of it (some files
	// with other content), which must never go missing.
	overOld bool
	// parents: --parents copies sub/deeper/g of the tree (relative, run
	// in the tree) into the existing directory dst, making dst/sub and
	// dst/sub/deeper; checked as a tree.
	parents bool
	// noTmpfile: the filesystem refuses O_TMPFILE (as NFS and many FUSE
	// filesystems do), so every temporary file is a named one.
	noTmpfile bool
	// planted: another user (uid 65534) put a file with a resume record
	// of the source's true identity under DEST's first temporary name;
	// the trust rule refuses it, so the copy goes on under another name
	// and the plant stays as it is, named in a warning by every run.
	planted bool
	// twoRuns: two runs with --resume start at once on one DEST, over the
	// leftover of an interrupted copy (checkpoint at 1 MiB) under its
	// first temporary name, and two again after the cut, over what the
	// cut left: one continues the leftover, the other fails because that
	// one is running, or copies under a name of its own (it came once the
	// leftover was committed, or gone).
	twoRuns bool
	// targets: two -t DIRECTORYs, t1 and t2, each with an old DEST
	// (t1/src, t2/src): one read, two copies, each DEST all or nothing
	// on its own.
	targets bool
}

// dests are the DESTs m writes (a single file's copy), as paths in the
// filesystem.
func (m mode) dests() []string {
	if m.targets {
		return []string{"t1/src", "t2/src"}
	}
	return []string{"dst"}
}

// plantName and plantData are the planted leftover's name and bytes.
const plantName = ".fastcp-dst.000000000000"

var plantData = bytes.Repeat([]byte{0xEE}, 2<<20)

// run runs fastcp in mode m into mnt (again: the run after the reboot).
func (fx *fixture) run(m mode, mnt string, again bool) run {
	if m.twoRuns {
		return fx.runTwo(m, mnt, again)
	}
	bin, dir := fastcpBin, ""
	if m.resume {
		bin = resumeBin
	}
	if m.parents {
		dir = fx.tree
	}
	return fastcpIn(dir, bin, fx.args(m, mnt, again)...)
}

// runTwo runs m's two copies at once. One that failed because the other
// was writing the leftover, or (once the power was cut) with the cut's
// EIO, did what it may: the pair's result is killed when either was cut
// short, exit 0 when each ended as it may, someOK when one exited 0.
// The second of the pair before the cut starts as fx.second says; after
// the cut both start at once.
func (fx *fixture) runTwo(m mode, mnt string, again bool) run {
	var rs [2]run
	first := make(chan struct{})
	go func() {
		rs[0] = fastcpIn("", resumeBin, fx.args(m, mnt, again)...)
		close(first)
	}()
	for !again && fx.second != 0 {
		n := 0
		if fx.fs != nil {
			n, _ = fx.fs.Ops()
		}
		if fx.second > 0 && n >= fx.second {
			break
		}
		select {
		case <-first:
		case <-time.After(100 * time.Microsecond):
			continue
		}
		break
	}
	rs[1] = fastcpIn("", resumeBin, fx.args(m, mnt, again)...)
	<-first
	var r run
	for i, x := range rs {
		r.out += fmt.Sprintf("[run %d] %s", i+1, x.out)
		switch {
		case x.killed:
			r.killed = true
		case x.exit == 0:
			r.someOK = true
		case x.exit == 1 && strings.Contains(x.out, "another copy to it is running"):
		case fx.fs != nil && fx.fs.Crashed():
			r.killed = true
		default:
			r.exit = x.exit
		}
	}
	return r
}

var modes = []mode{
	{name: "--sync=none", flags: []string{"--sync=none"}, allowPartial: true},
	{name: "--sync=data", flags: []string{"--sync=data"}, durable: true},
	{name: "--sync=data, no DEST before", flags: []string{"--sync=data"}, fresh: true, durable: true},
	{name: "--sync=none, no O_TMPFILE", flags: []string{"--sync=none"}, allowPartial: true, noTmpfile: true},
	{name: "--sync=data, no O_TMPFILE", flags: []string{"--sync=data"}, durable: true, noTmpfile: true},
	{name: "--sync=full", flags: []string{"--sync=full"}, durable: true},
	{name: "--sync=osync", flags: []string{"--sync=osync"}, durable: true},
	{name: "--sync=odsync", flags: []string{"--sync=odsync"}, durable: true},
	{name: "--sync=data --strategy=direct", flags: []string{"--sync=data", "--strategy=direct"}, durable: true},
	// The direct pipeline writes out of order into a preallocated file:
	// auto picks it for --nocache; without O_TMPFILE the file is named.
	{name: "--nocache --sync=data", flags: []string{"--nocache", "--sync=data"}, durable: true},
	{name: "--sync=none --strategy=direct, no O_TMPFILE", flags: []string{"--sync=none", "--strategy=direct"}, allowPartial: true, noTmpfile: true},
	{name: "--inplace --sync=data", flags: []string{"--inplace", "--sync=data"}, durable: true, allowPartial: true},
	// A tree is copied by workers unless -j 1: one mode each way.
	{name: "-r -j 1 --sync=data", flags: []string{"-r", "-j", "1", "--sync=data"}, tree: true, durable: true},
	{name: "-r -j 4 --sync=data", flags: []string{"-r", "-j", "4", "--sync=data"}, tree: true, durable: true},
	{name: "-r -j 4 --sync=data, no O_TMPFILE", flags: []string{"-r", "-j", "4", "--sync=data"}, tree: true, durable: true, noTmpfile: true},
	{name: "--parents --sync=data", flags: []string{"--parents", "--sync=data"}, tree: true, parents: true, durable: true},
	{name: "-a --sync=data over an older copy", flags: []string{"-a", "--sync=data"}, tree: true, durable: true, overOld: true},
	// The rw loop checkpoints between its calls; sendfile moves a file
	// of a few MiB in one call, with no checkpoint inside.
	{name: "--resume --sync=data", flags: []string{"--resume", "--sync=data", "--strategy=rw"}, durable: true, resume: true},
	{name: "--resume", flags: []string{"--resume", "--strategy=rw"}, allowPartial: true, resume: true},
	{name: "--resume --sync=data --strategy=direct", flags: []string{"--resume", "--sync=data", "--strategy=direct"}, durable: true, resume: true},
	{name: "--resume --sync=data, a planted leftover refused", flags: []string{"--resume", "--sync=data", "--strategy=rw"}, durable: true, resume: true, planted: true},
	{name: "--resume --sync=data, two runs on one DEST", flags: []string{"--resume", "--sync=data", "--strategy=rw"}, durable: true, resume: true, twoRuns: true},
	// Two -t DIRECTORYs: the source read once, each DEST made on its own.
	{name: "--sync=data, two -t DIRECTORYs", flags: []string{"--sync=data"}, durable: true, targets: true},
	{name: "--sync=data --strategy=direct, two -t DIRECTORYs, no O_TMPFILE", flags: []string{"--sync=data", "--strategy=direct"}, durable: true, targets: true, noTmpfile: true},
	{name: "--resume --sync=data, two -t DIRECTORYs", flags: []string{"--resume", "--sync=data", "--strategy=rw"}, durable: true, resume: true, targets: true},
}

// fixture is what every crash point starts from and copies.
type fixture struct {
	src     string            // the single SOURCE (on the host's disk)
	newData []byte            // its content
	oldData []byte            // DEST's content before the copy
	tree    string            // the tree SOURCE for -r
	want    map[string]Entry  // the tree, by relative path
	oldTree map[string][]byte // the older copy's files, by relative path
	// resumed counts, per mode, the runs after a cut that continued a
	// leftover from a checkpoint past 0.
	resumed map[string]int
	// fs is the filesystem the runs copy into (whether the power was cut).
	fs *FS
	// second is when the second of two runs starts (mode twoRuns): 0
	// with the first, > 0 once the filesystem counted that many
	// operations, < 0 once the first ended.
	second int
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	fx := &fixture{src: filepath.Join(dir, "src"), newData: randomBytes(1, 3<<20+12345),
		oldData: randomBytes(2, 1<<20+777), tree: filepath.Join(dir, "tree"), want: map[string]Entry{}, oldTree: map[string][]byte{}, resumed: map[string]int{}}
	if err := os.WriteFile(fx.src, fx.newData, 0o644); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		path string
		size int
	}{
		{"a-empty", 0}, {"b-one", 1}, {"c", 100 << 10}, {"d", 300<<10 + 1}, {"sub/e", 4096},
		{"sub/f", 64<<10 + 1}, {"sub/deeper/g", 200 << 10}, {"sub/deeper/h", 10}, {"z", 130 << 10},
	}
	for i, f := range files {
		p := filepath.Join(fx.tree, f.path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := randomBytes(uint64(10+i), f.size)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fx.want[f.path] = Entry{Mode: syscall.S_IFREG, Data: data}
	}
	if err := os.Symlink("c", filepath.Join(fx.tree, "link")); err != nil {
		t.Fatal(err)
	}
	fx.want["link"] = Entry{Mode: syscall.S_IFLNK, Target: "c"}
	if err := syscall.Mkfifo(filepath.Join(fx.tree, "p-fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.want["p-fifo"] = Entry{Mode: syscall.S_IFIFO}
	// A hard link: -a keeps it one (a link made with Replace), -r copies
	// it twice.
	if err := os.Link(filepath.Join(fx.tree, "c"), filepath.Join(fx.tree, "sub/hard")); err != nil {
		t.Fatal(err)
	}
	fx.want["sub/hard"] = fx.want["c"]
	for i, p := range []string{"c", "d", "sub/e", "sub/deeper/g", "sub/hard"} {
		fx.oldTree[p] = randomBytes(uint64(100+i), 50<<10+i)
	}
	fx.want["sub"] = Entry{Mode: syscall.S_IFDIR}
	fx.want["sub/deeper"] = Entry{Mode: syscall.S_IFDIR}
	return fx
}

// args returns fastcp's command line for m into mnt.
func (fx *fixture) args(m mode, mnt string, again bool) []string {
	args := slices.Clone(m.flags)
	if again {
		args = append(args, "-v")
		if m.resume {
			args = append(args, "--debug") // says where it resumed
		}
	}
	if m.parents {
		return append(args, "sub/deeper/g", filepath.Join(mnt, "dst"))
	}
	if m.tree {
		return append(args, "-T", fx.tree, filepath.Join(mnt, "dst"))
	}
	if m.targets {
		return append(args, "-t", filepath.Join(mnt, "t1"), "-t", filepath.Join(mnt, "t2"), fx.src)
	}
	return append(args, fx.src, filepath.Join(mnt, "dst"))
}

// start resets fs to the state before the copy: DEST durable with its old
// content, unless m is fresh or a tree.
func (fx *fixture) start(fs *FS, m mode) {
	fs.Reset(nil)
	fs.NoTmpfile = m.noTmpfile
	if !m.fresh && !m.tree {
		for _, d := range m.dests() {
			fs.Setup(d, fx.oldData, 0o644)
		}
	}
	if m.twoRuns {
		// An interrupted copy's leftover, the caller's own: its data
		// durable up to its last checkpoint, 1 MiB and a bit.
		var st syscall.Stat_t
		syscall.Stat(fx.src, &st)
		record := fmt.Sprintf("fastcp-resume-1 dev=%d ino=%d size=%d mtime=%d ctime=%d checkpoint=%d",
			st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano(), 1<<20+4096)
		fs.Setup(plantName, fx.newData[:1<<20+4096], 0o600)
		fs.Plant(plantName, uint32(os.Getuid()), map[string][]byte{"user.fastcp.temp": []byte(record)})
	}
	if m.planted {
		var st syscall.Stat_t
		syscall.Stat(fx.src, &st)
		record := fmt.Sprintf("fastcp-resume-1 dev=%d ino=%d size=%d mtime=%d ctime=%d checkpoint=%d",
			st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano(), len(plantData))
		fs.Setup(plantName, plantData, 0o600)
		fs.Plant(plantName, 65534, map[string][]byte{"user.fastcp.temp": []byte(record)})
	}
	if m.parents {
		fs.Setup("dst/keep", nil, 0o644)
	}
	if m.overOld {
		for p, data := range fx.oldTree {
			fs.Setup("dst/"+p, data, 0o644)
		}
	}
}

// describe says what data is, against the old and new content.
func (fx *fixture) describe(data []byte) string {
	switch {
	case bytes.Equal(data, fx.newData):
		return "the new content"
	case bytes.Equal(data, fx.oldData):
		return "the old content"
	case len(data) == 0:
		return "empty"
	case !slices.ContainsFunc(data, func(b byte) bool { return b != 0 }):
		return fmt.Sprintf("%d bytes of zeros", len(data))
	case partOf(data, fx.newData):
		return fmt.Sprintf("%d bytes, part of the new content (the rest missing or zeros)", len(data))
	}
	return fmt.Sprintf("%d bytes, neither old nor new", len(data))
}

// partOf reports whether data is some of want: no longer, and every byte
// either want's or zero (never old data, never anything else).
func partOf(data, want []byte) bool {
	if len(data) > len(want) {
		return false
	}
	for i, b := range data {
		if b != 0 && b != want[i] {
			return false
		}
	}
	return true
}

// checkFiles checks every DEST of m in one crash image; it returns the
// problems.
func (fx *fixture) checkFiles(m mode, im *Image, exitedOK bool) []string {
	var bad []string
	for _, d := range m.dests() {
		if p := fx.checkFile(m, im, exitedOK, d); p != "" {
			if m.targets {
				p = d + ": " + p
			}
			bad = append(bad, p)
		}
	}
	return bad
}

// checkFile checks DEST (dst) in one crash image; it returns the problem
// or "".
func (fx *fixture) checkFile(m mode, im *Image, exitedOK bool, dst string) string {
	e, ok := im.Stat(dst)
	switch {
	case !ok && m.fresh && !(exitedOK && m.durable):
		return ""
	case !ok:
		return "DEST is missing"
	case e.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return fmt.Sprintf("DEST is not a regular file (mode %o)", e.Mode)
	case bytes.Equal(e.Data, fx.newData):
		return ""
	case exitedOK && m.durable:
		return "fastcp exited 0, and DEST is " + fx.describe(e.Data)
	case !m.fresh && bytes.Equal(e.Data, fx.oldData):
		return ""
	case m.allowPartial && partOf(e.Data, fx.newData):
		return ""
	}
	return "DEST is " + fx.describe(e.Data)
}

// wanted is the tree m copies, by path below dst.
func (fx *fixture) wanted(m mode) map[string]Entry {
	if !m.parents {
		return fx.want
	}
	return map[string]Entry{"keep": {Mode: syscall.S_IFREG}, "sub": fx.want["sub"],
		"sub/deeper": fx.want["sub/deeper"], "sub/deeper/g": fx.want["sub/deeper/g"]}
}

// checkTree checks the copied tree in one crash image. Temporary files are
// left to the caller.
func (fx *fixture) checkTree(m mode, im *Image, exitedOK bool) []string {
	var bad []string
	seen := map[string]bool{}
	for _, p := range im.Walk() {
		rel, ok := strings.CutPrefix(p, "dst/")
		if !ok {
			if p != "dst" {
				bad = append(bad, fmt.Sprintf("%s: not in the tree", p))
			}
			continue
		}
		if strings.HasPrefix(filepath.Base(rel), ".fastcp-") {
			continue
		}
		want, ok := fx.wanted(m)[rel]
		e, _ := im.Stat(p)
		old, hadOld := fx.oldTree[rel]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: not in the source tree", p))
		case m.overOld && hadOld && !exitedOK && e.Mode&syscall.S_IFMT == syscall.S_IFREG && bytes.Equal(e.Data, old):
		case !e.Equal(want):
			bad = append(bad, fmt.Sprintf("%s: %s (mode %o) instead of the source's %d bytes", p, fx.describe(e.Data), e.Mode, len(want.Data)))
		}
		seen[rel] = true
	}
	if m.overOld {
		for _, rel := range slices.Sorted(mapsKeys(fx.oldTree)) {
			if !seen[rel] {
				bad = append(bad, fmt.Sprintf("dst/%s, which existed, is missing", rel))
			}
		}
	}
	if exitedOK {
		if _, ok := im.Stat("dst"); !ok {
			bad = append(bad, "fastcp exited 0, and the new directory dst is missing")
		}
		for _, rel := range slices.Sorted(mapsKeys(fx.wanted(m))) {
			if !seen[rel] {
				bad = append(bad, fmt.Sprintf("fastcp exited 0, and dst/%s is missing", rel))
			}
		}
	}
	return bad
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// temps lists the temporary files of an image.
func temps(im *Image) []string {
	var out []string
	for _, p := range im.Walk() {
		if strings.HasPrefix(filepath.Base(p), ".fastcp-") {
			out = append(out, p)
		}
	}
	return out
}

// crashPoint runs fastcp in mode m with the power cut after the k-th
// operation (k past the end: after fastcp exited), checks every image the
// crash may leave, reboots into one of them and checks that the next run
// cleans up and succeeds. It returns the violations.
func (fx *fixture) crashPoint(t *testing.T, fs *FS, mnt string, m mode, k int) (bad []string) {
	fx.start(fs, m)
	mount(t, fs, mnt)
	fs.Arm(k)
	r := fx.run(m, mnt, false)
	_, trace := fs.Ops()
	// The cut (after the run if it did not crash) and the reboot: every
	// directory change kept, the data as one of the policies.
	policy := DataPolicies[k%len(DataPolicies)]
	reboot := func(sn *Snapshot) *Image { return sn.Image(sn.MetaOps(), policy) }
	sn, err := fs.Crash(reboot)
	if err != nil {
		t.Fatalf("crash: %v", err)
	}
	defer unmount(t, fs)
	where := fmt.Sprintf("%s, crash after operation %d", m.name, k)
	if k > 0 && k <= len(trace) {
		where += " (" + trace[k-1] + ")"
	}
	defer func() {
		for i := range bad {
			bad[i] = where + ": " + bad[i]
		}
	}()
	if !r.killed && r.exit != 0 {
		return []string{fmt.Sprintf("fastcp exited %d before the crash: %s", r.exit, r.out)}
	}
	// exitedOK: every run ended, and DEST is complete (some run exited
	// 0); committed: some run exited 0 (for two runs, the other may
	// have been cut short).
	exitedOK := !r.killed
	committed := exitedOK || r.someOK
	for _, im := range sn.Images() {
		var problems []string
		if m.planted {
			if e, _ := im.Stat(plantName); !bytes.Equal(e.Data, plantData) || e.Uid != 65534 {
				problems = append(problems, "the planted leftover was changed: "+fx.describe(e.Data))
			}
		}
		if exitedOK && m.durable {
			for _, p := range temps(im) {
				if m.planted && p == plantName {
					continue
				}
				problems = append(problems, fmt.Sprintf("fastcp exited 0, and the temporary file %s is there", p))
			}
		}
		if m.tree {
			problems = append(problems, fx.checkTree(m, im, exitedOK)...)
		} else {
			problems = append(problems, fx.checkFiles(m, im, committed)...)
		}
		for _, p := range problems {
			bad = append(bad, fmt.Sprintf("%s [%s; %s]", p, im, sn.Pending()))
		}
	}
	// The next run, on the filesystem rebooted into one image.
	im := reboot(sn)
	left := temps(im)
	r = fx.run(m, mnt, true)
	if r.exit != 0 {
		return append(bad, fmt.Sprintf("the run after the reboot [%s] exited %d: %s", im, r.exit, r.out))
	}
	if off := resumedFrom.FindStringSubmatch(r.out); off != nil && off[1] != "0" {
		fx.resumed[m.name]++
	}
	now := fs.Now()
	if m.tree {
		for _, p := range fx.checkTree(m, now, true) {
			bad = append(bad, "after the next run: "+p)
		}
	} else {
		for _, d := range m.dests() {
			if e, _ := now.Stat(d); !bytes.Equal(e.Data, fx.newData) {
				bad = append(bad, fmt.Sprintf("after the next run, DEST %s is %s", d, fx.describe(e.Data)))
			}
		}
	}
	// Every leftover is removed or named (a warning for what fastcp
	// cannot judge): -v says "removed 'x'" for one it removed. With
	// --resume the leftover becomes DEST: continued, or started over.
	for _, p := range left {
		if m.planted && p == plantName {
			if e, _ := now.Stat(p); !bytes.Equal(e.Data, plantData) || !strings.Contains(r.out, "foreign leftover (it is owned by uid 65534") {
				bad = append(bad, fmt.Sprintf("the planted leftover was changed or not named: %q", r.out))
			}
			continue
		}
		if m.resume {
			if slices.Contains(temps(now), p) {
				if e, _ := im.Stat(p); e.Xattrs["user.fastcp.temp"] == nil && strings.Contains(r.out, filepath.Base(p)) {
					// Its mark did not reach the disk: nothing proves it
					// is fastcp's, so it is named and kept (a user's file
					// under that name is never removed).
					continue
				}
				bad = append(bad, fmt.Sprintf("the next run with --resume left the leftover %s: %q", p, r.out))
			}
			continue
		}
		if !strings.Contains(r.out, filepath.Base(p)) {
			bad = append(bad, fmt.Sprintf("the next run did not name the leftover %s: %q", p, r.out))
		}
	}
	for _, p := range temps(now) {
		if !slices.Contains(left, p) {
			bad = append(bad, fmt.Sprintf("the next run left a temporary file of its own, %s", p))
		}
	}
	return bad
}

// resumedFrom finds --debug's line for a copy that continues a leftover.
var resumedFrom = regexp.MustCompile(`resume: .* from offset (\d+) of`)

// TestPowerCut crashes every mode at every operation of the copy.
func TestPowerCut(t *testing.T) {
	fs, mnt := mounted(t)
	fx := newFixture(t)
	fx.fs = fs
	points, violations, ran := 0, 0, 0
	for _, m := range modes {
		// One subtest per mode: go test -run 'TestPowerCut/--resume' for one.
		t.Run(m.name, func(t *testing.T) {
			ran++
			// A run without a crash counts the operations (of two runs,
			// the second started once the first ended: both copy).
			fx.start(fs, m)
			mount(t, fs, mnt)
			fs.Arm(-1)
			fx.second = -1
			r := fx.run(m, mnt, false)
			n, trace := fs.Ops()
			unmount(t, fs)
			if r.exit != 0 {
				t.Fatalf("fastcp exited %d without a crash: %s", r.exit, r.out)
			}
			t.Logf("%d operations: %s", n, strings.Join(trace, ", "))
			// Of two runs, the second starts with the first, in the
			// middle of its copy, or once it ended, in turn.
			firstOps := slices.IndexFunc(trace, func(op string) bool { return strings.HasPrefix(op, "rename ") }) + 1
			seconds := []int{0, max(firstOps/2, 1), -1}
			// Which temporary file the mode tests: unnamed (O_TMPFILE)
			// but for --resume and a filesystem without it; none in place.
			unnamed := slices.ContainsFunc(trace, func(op string) bool { return op == "tmpfile" })
			named := slices.ContainsFunc(trace, func(op string) bool { return strings.HasPrefix(op, "create .fastcp-") })
			inPlace := slices.Contains(m.flags, "--inplace")
			// Two runs over a leftover continue it: nothing new is made,
			// unless the one that came second took a name of its own.
			if wantUnnamed := !m.noTmpfile && !m.resume && !inPlace; unnamed != wantUnnamed || !m.twoRuns && named != (!wantUnnamed && !inPlace) {
				t.Errorf("O_TMPFILE files made: %v, named temporary files: %v; want unnamed %v", unnamed, named, wantUnnamed)
			}
			for k := 0; k <= n; k++ {
				fx.second = seconds[k%len(seconds)]
				bad := fx.crashPoint(t, fs, mnt, m, k)
				points++
				violations += len(bad)
				for i, b := range bad {
					if i == 3 {
						t.Errorf("... and %d more at this crash point", len(bad)-3)
						break
					}
					t.Error(b)
				}
			}
			if m.resume && m.planted && fx.resumed[m.name] != 0 {
				t.Errorf("%d runs after a cut continued a leftover beside a refused plant: only the first name is ever continued", fx.resumed[m.name])
			}
			if m.resume && !m.planted {
				t.Logf("%d runs after a cut continued from a checkpoint", fx.resumed[m.name])
				if fx.resumed[m.name] == 0 {
					t.Error("no run after a cut continued from a checkpoint: the mode tests nothing of --resume")
				}
			}
		})
	}
	fmt.Printf("power-cut: %d crash points, %d modes, %d violations\n", points, ran, violations)
	if ran == len(modes) && (points < 300 || ran < 7) {
		t.Errorf("only %d crash points over %d modes", points, ran)
	}
}

// TestPowerCutRegressions keeps the crash points that found bugs, by the
// operation they follow (its index moves when fastcp's calls change).
func TestPowerCutRegressions(t *testing.T) {
	fs, mnt := mounted(t)
	fx := newFixture(t)
	for _, c := range []struct {
		mode  string
		after string // the trace entry the power cut follows
		bug   string
	}{
		// -r: a symbolic link is made under the first temporary name
		// and renamed; a cut between the two left the link under that
		// name, and the next run neither removed nor named it.
		{"-r -j 1 --sync=data", "symlink .fastcp-link.000000000000", "leftover temporary symbolic link never named"},
		// The same for a FIFO and for a hard link (-a), made the same way.
		{"-a --sync=data over an older copy", "mknod .fastcp-p-fifo.000000000000", "leftover temporary FIFO never named"},
		{"-a --sync=data over an older copy", "link .fastcp-hard.000000000000", "leftover temporary hard link never named"},
	} {
		i := slices.IndexFunc(modes, func(m mode) bool { return m.name == c.mode })
		m := modes[i]
		// One file at a time: the cut must follow the same operation
		// in the run that finds it and in the run that is cut.
		m.flags = append(slices.Clone(m.flags), "-j", "1")
		fx.start(fs, m)
		mount(t, fs, mnt)
		fs.Arm(-1)
		fx.run(m, mnt, false)
		_, trace := fs.Ops()
		unmount(t, fs)
		k := slices.Index(trace, c.after)
		if k < 0 {
			t.Fatalf("%s: no operation %q in %v", c.mode, c.after, trace)
		}
		for _, b := range fx.crashPoint(t, fs, mnt, m, k+1) {
			t.Errorf("%s: %s", c.bug, b)
		}
	}
}

// faultRun sets up DEST (and SOURCE on the filesystem when srcOnFS), injects
// f, runs fastcp --sync=mode and checks what every fault must leave: exit 1,
// the message, DEST as it was, no temporary file, no rename.
func faultRun(t *testing.T, mode string, f *Fault, srcOnFS bool, message ...string) *FS {
	return faultRunWith(t, fastcpBin, []string{"--sync=" + mode}, f, srcOnFS, message...)
}

func faultRunWith(t *testing.T, bin string, flags []string, f *Fault, srcOnFS bool, message ...string) *FS {
	fs, mnt := mounted(t)
	fx := newFixture(t)
	fs.Setup("dst", fx.oldData, 0o644)
	src := fx.src
	if srcOnFS {
		fs.Setup("src", fx.newData, 0o644)
		src = filepath.Join(mnt, "src")
	}
	mount(t, fs, mnt)
	fs.Inject(f)
	fs.Arm(-1)
	r := fastcpWith(bin, append(flags, src, filepath.Join(mnt, "dst"))...)
	if r.exit != 1 {
		t.Errorf("exit %d, want 1: %s", r.exit, r.out)
	}
	for _, m := range message {
		if !strings.Contains(r.out, m) {
			t.Errorf("the message does not say %q: %q", m, r.out)
		}
	}
	if f.Hits == 0 {
		t.Errorf("the fault was never hit: %s", r.out)
	}
	_, trace := fs.Ops()
	for _, op := range trace {
		if strings.HasPrefix(op, "rename") {
			t.Errorf("renamed after the fault: %v", trace)
		}
	}
	now := fs.Now()
	if e, _ := now.Stat("dst"); !bytes.Equal(e.Data, fx.oldData) {
		t.Errorf("DEST is %s, want the old content", fx.describe(e.Data))
	}
	if left := temps(now); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// And the power cut after it: whatever the disk keeps, DEST is old.
	fs.CrashNow()
	for _, im := range fs.Snapshot().Images() {
		if e, _ := im.Stat("dst"); !bytes.Equal(e.Data, fx.oldData) {
			t.Errorf("after a power cut [%s], DEST is %s", im, fx.describe(e.Data))
		}
	}
	return fs
}

// TestFsyncEIO: the fsync of the temporary file fails once, then would
// succeed (with the data lost: the pages were marked clean). fastcp must
// fail, name the call, rename nothing, and never flush again to get a 0.
func TestFsyncEIO(t *testing.T) {
	for _, c := range []struct{ mode, call string }{
		{"data", "fdatasync"}, {"full", "fsync"}, {"osync", "fsync"}, {"odsync", "fdatasync"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			f := &Fault{Op: "fsync", Times: 1, Errno: syscall.EIO}
			fs := faultRun(t, c.mode, f, false, c.call, "Input/output error")
			// The temporary file, which has no name yet where the
			// filesystem has O_TMPFILE (crashfs has).
			if got := fs.Fsyncs(); len(got) != 1 || got[0] != c.call+" (O_TMPFILE)" {
				t.Errorf("flushes %v, want one %s of the temporary file", got, c.call)
			}
		})
	}
}

// TestCheckpointEIO: with --resume, the first checkpoint's fdatasync (run
// beside the copy) fails once. That is as final as the last flush's: exit 1,
// nothing renamed, no second fdatasync to get a 0.
func TestCheckpointEIO(t *testing.T) {
	f := &Fault{Op: "fsync", Times: 1, Errno: syscall.EIO}
	fs := faultRunWith(t, resumeBin, []string{"--resume", "--sync=data", "--strategy=rw"}, f, false, "fdatasync", "Input/output error")
	if got := fs.Fsyncs(); len(got) != 1 {
		t.Errorf("flushes %v, want the one that failed", got)
	}
}

// TestCloseEIO: the close of the temporary file reports a write error (as
// NFS does): exit 1 naming it, nothing renamed.
func TestCloseEIO(t *testing.T) {
	for _, mode := range []string{"none", "data"} {
		t.Run(mode, func(t *testing.T) {
			f := &Fault{Op: "close", Name: ".fastcp-dst.000000000000", Times: 1, Errno: syscall.EIO}
			faultRun(t, mode, f, false, "failed to close", "Input/output error")
		})
	}
}

// TestWriteENOSPC: the disk fills up part-way through the copy.
func TestWriteENOSPC(t *testing.T) {
	for _, mode := range []string{"none", "data"} {
		t.Run(mode, func(t *testing.T) {
			f := &Fault{Op: "write", From: 1 << 20, Errno: syscall.ENOSPC}
			faultRun(t, mode, f, false, "No space left on device")
		})
	}
}

// TestReadEIO: reading the source fails part-way.
func TestReadEIO(t *testing.T) {
	for _, mode := range []string{"none", "data"} {
		t.Run(mode, func(t *testing.T) {
			f := &Fault{Op: "read", Name: "src", From: 1 << 20, Errno: syscall.EIO}
			faultRun(t, mode, f, true, "Input/output error")
		})
	}
}

// TestCheckerCatchesUnsafeCopies runs copies that are not durable through
// the same checks as fastcp's --sync=data: the checks must find them out.
func TestCheckerCatchesUnsafeCopies(t *testing.T) {
	fs, mnt := mounted(t)
	fx := newFixture(t)
	var m mode
	for _, m = range modes {
		if m.name == "--sync=data" {
			break
		}
	}
	for _, c := range []struct {
		name, script, want string
	}{
		// No flush before the rename: the rename can reach the disk
		// without the data.
		{"no fsync", `cp "$1" "$2.tmp" && mv "$2.tmp" "$2"`, "fastcp exited 0, and DEST is empty"},
		// The file flushed, the directory not: the rename can be lost.
		{"no directory fsync", `cp "$1" "$2.tmp" && sync "$2.tmp" && mv "$2.tmp" "$2"`, "fastcp exited 0, and DEST is the old content"},
	} {
		fx.start(fs, m)
		mount(t, fs, mnt)
		out, err := exec.Command("sh", "-c", c.script, "sh", fx.src, filepath.Join(mnt, "dst")).CombinedOutput()
		sn := fs.Snapshot()
		unmount(t, fs)
		if err != nil {
			t.Fatalf("%s: %v: %s", c.name, err, out)
		}
		found := false
		for _, im := range sn.Images() {
			if fx.checkFile(m, im, true, "dst") == c.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no crash image gives %q", c.name, c.want)
		}
	}
}

// TestCrashPoint checks the crash point itself on a shell writing a file
// in three operations (create, write, write): armed after the second, the
// shell is killed at the third, which never happens, and the reboot keeps
// what the chosen image holds.
func TestCrashPoint(t *testing.T) {
	fs, mnt := mounted(t)
	mount(t, fs, mnt)
	fs.Arm(2)
	cmd := exec.Command("sh", "-c", `printf a > "$1/f"; printf b >> "$1/f"; echo survived`, "sh", mnt)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the writer was not killed at the crash point: %v %q", err, out)
	}
	if n, trace := fs.Ops(); n != 2 || !fs.Crashed() {
		t.Fatalf("%d operations before the cut (%v), crashed %v", n, trace, fs.Crashed())
	}
	sn, err := fs.Crash(func(sn *Snapshot) *Image { return sn.Image(sn.MetaOps(), DataAll) })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(got) != "a" {
		t.Errorf("after the reboot f = %q, %v; want the one write before the cut", got, err)
	}
	if _, ok := sn.Image(0, DataAll).Stat("f"); ok {
		t.Error("f survives in the image that keeps no directory change")
	}
}
