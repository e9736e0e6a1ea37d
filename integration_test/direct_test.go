// SPDX-License-Identifier: MIT

package integration_test

// The direct strategy: O_DIRECT copies byte for byte on every
// filesystem, auto picks it for a large cold source and says why, a source
// with dirty pages is read as it is now, a failure part-way leaves nothing
// renamed, and a cold copy does not fill the page cache.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fastcp/durability"
	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// directFiles are the sizes around every alignment edge, and a 5 GiB sparse
// file whose data runs across the 2 GiB and 4 GiB boundaries.
var directFiles = []matrixFile{
	{name: "empty", size: 0},
	{name: "1", size: 1},
	{name: "511", size: 511},
	{name: "4095", size: 4095},
	{name: "4096", size: 4096},
	{name: "4097", size: 4097},
	{name: "1MiB+1", size: 1<<20 + 1},
	{name: "sparse5G", size: 5<<30 + 123, sparse: true, slack: defaultHoleSlack, spans: []span{
		{off: 2<<30 - 6<<20, data: randomBytes(8<<20+4096, "d2")},
		{off: 4<<30 - 12288, data: randomBytes(9<<20+17, "d4")},
		{off: 5<<30 + 23, data: randomBytes(100, "d5")},
	}},
}

// wantDebugSuccess checks exit 0 and nothing on stderr (--debug prints on
// stdout).
func wantDebugSuccess(t testing.TB, r result) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and no stderr, got %v", r)
	}
}

// evictPath drops path's pages from the page cache (written back first).
func evictPath(t testing.TB, path string) {
	t.Helper()
	if err := durability.EvictPath(path); err != nil {
		t.Fatal(err)
	}
}

// cachedBytes is how much of path is in the page cache (cachestat).
func cachedBytes(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if fi.Size() == 0 {
		return 0
	}
	n, err := durability.CachedBytes(f, fi.Size())
	if err != nil {
		t.Fatalf("cachestat %s: %v", path, err)
	}
	return n
}

func TestDirectCopies(t *testing.T) {
	t.Parallel()
	for _, p := range []fsPair{{"ext4", "ext4"}, {"xfs", "xfs"}, {"btrfs", "btrfs"}, {"ext4", "xfs"}, {"ext4", "tmpfs"}} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			srcDir, dstDir := fsDir(t, p.src), fsDir(t, p.dst)
			for _, f := range directFiles {
				t.Run(f.name, func(t *testing.T) {
					src := join(srcDir, f.name)
					if f.sparse {
						writeSparse(t, src, f.size, f.spans)
					} else {
						writeFile(t, src, randomBytes(int(f.size), f.name), 0o644)
					}
					defer os.Remove(src)
					for _, mode := range []string{"forced", "auto-cold"} {
						dst := join(dstDir, mode+"-"+f.name)
						args := []string{"--debug", "--strategy=direct", src, dst}
						if mode == "auto-cold" {
							evictPath(t, src)
							args = []string{"--debug", "--sync=data", src, dst}
						}
						r := fastcp(t, dstDir, args...)
						wantDebugSuccess(t, r)
						assertSameContent(t, src, dst)
						assertNoTemps(t, dstDir)
						d := parseDebug(t, r.stdout, src, dst)
						if mode == "forced" && (d.strategy != "direct" || len(d.fallbacks) > 0) {
							t.Errorf("forced direct: --debug says\n%s", r.stdout)
						}
						if mode == "forced" && !strings.Contains(r.stdout, "direct: forced; alignment: memory ") {
							t.Errorf("--debug names no alignment:\n%s", r.stdout)
						}
						if f.sparse {
							if sb, db := blocks(t, src), blocks(t, dst); db > sb+f.slack {
								t.Errorf("%s: the copy takes %d blocks, the source %d: holes were filled", mode, db, sb)
							}
						}
						os.Remove(dst)
					}
				})
			}
		})
	}
}

// TestAutoDirectDecision: a large cold source goes direct with --sync=data
// and --debug says why; the same source cached does not; --nocache takes
// direct whatever the residency. The cached share --debug prints is matched
// loosely where the page cache decides it (another test's eviction or the
// kernel's reclaim can take a few pages of a "cached" source meanwhile); the
// strategy chosen is matched exactly.
//
// Not parallel, nor is TestDirectSyncDataLeavesOnlyTheFlush: each needs 600
// MiB of the 1 GiB ext4 mount.
func TestAutoDirectDecision(t *testing.T) {
	dir := fsDir(t, "ext4")
	src, dst := join(dir, "src"), join(dir, "dst")
	writeFile(t, src, randomBytes(300<<20, "auto"), 0o644)
	for _, c := range []struct {
		name     string
		cold     bool
		args     []string
		strategy string
		reason   string // a regular expression
	}{
		{"cold --sync=data", true, []string{"--sync=data"}, "direct", `direct: chosen: source [0-9.]+% \([0-9]+ of 314572800 bytes\) cached \(cachestat\), size 314572800 >= 268435456; alignment: memory `},
		{"cached --sync=data", false, []string{"--sync=data"}, "copy_file_range", `direct: skipped: source [0-9.]+% \([0-9]+ of 314572800 bytes\) cached \(cachestat\), copied faster from memory`},
		{"cached --nocache", false, []string{"--nocache"}, "direct", `direct: chosen for --nocache: source [0-9.]+% \([0-9]+ of 314572800 bytes\) cached, size 314572800 >= 1048576`},
		{"cold, no flush", true, nil, "copy_file_range", `direct: skipped: no --sync flush, and size 314572800 < `},
		{"cold --sync=odsync", true, []string{"--sync=odsync"}, "rw", `direct: skipped: O_SYNC/O_DSYNC destination`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cold {
				evictPath(t, src)
			} else if b, err := os.ReadFile(src); err != nil || len(b) != 300<<20 {
				t.Fatalf("reading the source into the cache: %v", err)
			}
			r := fastcp(t, dir, append(append([]string{"--debug"}, c.args...), src, dst)...)
			wantDebugSuccess(t, r)
			assertSameContent(t, src, dst)
			d := parseDebug(t, r.stdout, src, dst)
			if d.strategy != c.strategy || !regexp.MustCompile(c.reason).MatchString(r.stdout) {
				t.Errorf("want strategy %s and %q, --debug says\n%s", c.strategy, c.reason, r.stdout)
			}
			os.Remove(dst)
		})
	}
}

// TestDirectDirtySource copies a source written just before, whose pages
// are still dirty: an O_DIRECT read must see them (the kernel writes them
// back first), by force and through auto with --nocache.
func TestDirectDirtySource(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"ext4", "xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := fsDir(t, kind)
			src := join(dir, "src")
			writeFile(t, src, randomBytes(9<<20, "old"), 0o644)
			evictPath(t, src)
			for i, args := range [][]string{{"--strategy=direct"}, {"--nocache", "--reflink=never", "--debug"}} {
				// Rewrite part of it, no fsync: dirty pages over blocks
				// on the device that hold the old bytes.
				f, err := os.OpenFile(src, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt(randomBytes(3<<20+5, fmt.Sprint("new", i)), 1<<20+7); err != nil {
					t.Fatal(err)
				}
				f.Close()
				dst := join(dir, fmt.Sprint("dst", i))
				r := fastcp(t, dir, append(args, src, dst)...)
				wantDebugSuccess(t, r)
				assertSameContent(t, src, dst)
				if i == 1 && parseDebug(t, r.stdout, src, dst).strategy != "direct" {
					t.Errorf("--nocache did not take direct:\n%s", r.stdout)
				}
			}
		})
	}
}

// TestDirectPageCacheGrowth: a cold 1 GiB copy that auto makes with direct
// (--sync=data) leaves less than 64 MiB of either file in the page cache,
// where a buffered copy would leave both files there (2 GiB). Measured
// with cachestat of both files, not /proc/meminfo: other processes move
// Cached: meanwhile.
func TestDirectPageCacheGrowth(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if int64(fs.Bavail)*fs.Bsize < 3<<30 || fs.Type == unix.TMPFS_MAGIC {
		t.Skipf("needs 3 GiB free on a disk filesystem in %s", dir)
	}
	src, dst := join(dir, "src"), join(dir, "dst")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	chunk := randomBytes(64<<20, "cold")
	for range 16 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	evictPath(t, src)
	if c := cachedBytes(t, src); c > 1<<20 {
		t.Fatalf("the source is not cold: %d bytes cached", c)
	}
	r := fastcp(t, dir, "--debug", "--sync=data", src, dst)
	wantDebugSuccess(t, r)
	if d := parseDebug(t, r.stdout, src, dst); d.strategy != "direct" {
		t.Errorf("auto did not take direct:\n%s", r.stdout)
	}
	cs, cd := cachedBytes(t, src), cachedBytes(t, dst)
	t.Logf("cached after the copy: source %d bytes, copy %d bytes", cs, cd)
	if cs+cd >= 64<<20 {
		t.Errorf("the copy left %d + %d bytes in the page cache, want less than 64 MiB", cs, cd)
	}
	assertSameContent(t, src, dst)
}

// TestDirectEIOPartWay fails every O_DIRECT write to the temporary file but
// the first on each thread (strace counts per thread): the copy fails with
// the device's error, no other strategy takes over, and nothing is renamed.
func TestDirectEIOPartWay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := join(dir, "src"), join(dir, "dst")
	writeFile(t, src, randomBytes(20<<20, "eio"), 0o644)
	old := randomBytes(5000, "old")
	const inject = "pwrite64:error=EIO:when=2+"
	var tr traced
	retryMissed(t, inject, func() (int, []durSyscall) {
		writeFile(t, dst, old, 0o644)
		tr = faultStrace(t, dir, []string{"-e", "inject=" + inject}, "--debug", "--strategy=direct", "src", "dst")
		return tr.code, tr.calls
	})
	if tr.code != 1 || !strings.Contains(tr.stderr, "error writing 'dst': Input/output error") {
		t.Fatalf("want exit 1 and an error writing 'dst', got %v", tr.result)
	}
	if strings.Contains(tr.stdout, "fallback: direct") {
		t.Errorf("a failure fell back:\n%s", tr.stdout)
	}
	assertFileBytes(t, dst, old)
	assertNoTemps(t, dir)
}

// oDirectRE finds O_DIRECT among an open's flags (not O_DIRECTORY).
var oDirectRE = regexp.MustCompile(`O_DIRECT(\||\)|$)`)

// TestDirectSyncDataLeavesOnlyTheFlush: a cold large source copied with
// --sync=data goes direct, and then nothing is written back behind the copy
// (no sync_file_range, no background fdatasync): one fdatasync of the
// temporary file and the directory's fsync are all that is left. The
// destination gets O_DIRECT with F_SETFL and loses it again; the source's
// own descriptor never gets O_DIRECT (a second one is opened with it).
func TestDirectSyncDataLeavesOnlyTheFlush(t *testing.T) {
	needRoot(t)
	dir := fsDir(t, "ext4")
	src, dst := join(dir, "src"), join(dir, "dst")
	writeFile(t, src, randomBytes(300<<20, "flush"), 0o644)
	evictPath(t, src)
	tr := faultStrace(t, dir, []string{"-e", "trace=openat,fcntl,sync_file_range,fdatasync,fsync"}, "--sync=data", "src", "dst")
	if tr.code != 0 || tr.stderr != "" {
		t.Fatalf("want exit 0, got %v", tr.result)
	}
	assertSameContent(t, src, dst)
	var fdatasyncs, fsyncs, setOn, setOff, reopen int
	for _, c := range tr.calls {
		switch {
		case c.name == "sync_file_range":
			t.Errorf("writeback behind a direct copy: %s(%s)", c.name, c.args)
		case c.name == "fdatasync" && isTempArg(c.args, "dst"):
			fdatasyncs++
		case c.name == "fsync":
			fsyncs++
		case c.name == "fcntl" && strings.Contains(c.args, "F_SETFL") && isTempArg(c.args, "dst"):
			if strings.Contains(c.args, "O_DIRECT") {
				setOn++
			} else {
				setOff++
			}
			if strings.Contains(c.args, "O_SYNC") || strings.Contains(c.args, "O_DSYNC") {
				t.Errorf("F_SETFL carries a sync flag: %s", c.args)
			}
		case c.name == "fcntl" && strings.Contains(c.args, "F_SETFL") && strings.Contains(c.args, "/src>") && oDirectRE.MatchString(c.args):
			// (The open's O_NONBLOCK, cleared once the file is checked,
			// is no change of the copy's.)
			t.Errorf("the source's descriptor changed: %s", c.args)
		case c.name == "openat" && strings.Contains(c.args, "/proc/self/fd/") && oDirectRE.MatchString(c.args):
			reopen++
		}
	}
	if fdatasyncs != 1 || fsyncs != 1 || setOn != 1 || setOff != 1 || reopen != 1 {
		t.Errorf("fdatasync of the copy %d, fsync %d, F_SETFL O_DIRECT on %d and off %d, source reopened %d: want 1 each\n%s",
			fdatasyncs, fsyncs, setOn, setOff, reopen, tr.log)
	}
}

// TestDirectSignalWithRequestsInFlight: SIGTERM reaches a --resume copy
// whose direct pipeline has many slow writes in flight, out of order. The
// kept file's recorded checkpoint covers only bytes that are in it (the
// first chunk not yet written bounds it), and --resume finishes the copy
// from there, byte for byte.
func TestDirectSignalWithRequestsInFlight(t *testing.T) {
	dir := fsDir(t, "ext4")
	const size = 192 << 20
	src, dst, temp := join(dir, "src"), join(dir, "dst"), join(dir, resumeTemp)
	writePattern(t, src, size, t.Name())
	run := startSlow(t, dir, "pwrite64", 150*time.Millisecond, "--resume", "--strategy=direct", "src", "dst")
	// Direct issues no chunk further than its window (48 MiB) past the
	// part of the copy that is complete: the source's bytes at 64 MiB in
	// the temporary file mean that the checkpoint the signal records is
	// past the start, and the pipeline still has the rest to write.
	run.waitUntil(t, "the bytes at 64 MiB", func() bool { return holdsPattern(temp, 64<<20) })
	if code := run.signal(t, syscall.SIGTERM); code != 143 {
		t.Fatalf("exit status %d after SIGTERM, want 143; stderr %q", code, run.output())
	}
	m := keptRE.FindStringSubmatch(strings.TrimSpace(run.output()))
	kept := checkpointOf(temp)
	if m == nil || m[3] != strconv.FormatInt(kept, 10) {
		t.Fatalf("stderr %q, want the kept file and its checkpoint %d", run.output(), kept)
	}
	if kept <= 0 || kept >= size {
		t.Fatalf("checkpoint %d of %d: want part of the copy", kept, size)
	}
	want, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(temp)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) < kept || !bytes.Equal(got[:kept], want[:kept]) {
		t.Fatalf("the kept file's first %d bytes differ from the source's", kept)
	}
	r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
	wantDebugSuccess(t, r)
	if res := parseResumed(t, r.stdout); len(res.offsets) != 1 || res.offsets[0] <= 0 || res.offsets[0] > kept {
		t.Errorf("resumed from %v, want one offset in (0, %d]; stdout %q", res.offsets, kept, r.stdout)
	}
	assertFileBytes(t, dst, want)
	assertNotExist(t, temp)
}

// TestDirectNoRoomFailsBeforeWriting: a direct copy that cannot fit fails
// with ENOSPC from the preallocation, before a single data write; nothing
// is left behind and the space is free again.
func TestDirectNoRoomFailsBeforeWriting(t *testing.T) {
	needMount(t)
	strace := durStrace(t)
	small, err := fsfixture.Mount(t.TempDir(), "tmpfs", 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { small.Unmount() })
	dir := t.TempDir()
	writeFile(t, join(dir, "src"), randomBytes(24<<20, t.Name()), 0o644)
	free := freeBytesOf(t, small.Dir)
	log := join(dir, "strace.log")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-o", log, "-e", "trace=fallocate,pwrite64,write",
		setup.Bin, "--strategy=direct", join(dir, "src"), join(small.Dir, "dst"))
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	r := runCmd(t, cmd)
	wantOneLineError(t, r, "dst", "No space left on device")
	assertNotExist(t, join(small.Dir, "dst"))
	assertNoTemps(t, small.Dir)
	if now := freeBytesOf(t, small.Dir); now < free-(1<<20) {
		t.Errorf("%d bytes free after the failed copy, %d before", now, free)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	trace := string(b)
	if !strings.Contains(trace, "fallocate(") || !strings.Contains(trace, "ENOSPC") || strings.Contains(trace, "pwrite64(") {
		t.Errorf("want a refused fallocate and no data write, strace:\n%s", trace)
	}
}

// holdsPattern reports whether path holds writePattern's block at off (a
// multiple of 1 MiB past 0), which starts with its offset; it reads with
// O_DIRECT, past the page cache, as a direct copy writes.
func holdsPattern(path string, off int64) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return false
	}
	defer unix.Munmap(buf)
	n, err := unix.Pread(fd, buf, off)
	return err == nil && n >= 8 && binary.LittleEndian.Uint64(buf) == uint64(off)
}
