// SPDX-License-Identifier: MIT

package integration_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// strategies are the --strategy values, "auto" first.
var strategies = []string{"auto", "reflink", "copy_file_range", "direct", "sendfile", "splice", "rw"}

// fsPair is a copy from a file on one filesystem kind to another. When
// src == dst both files are on the same (package-wide) filesystem.
type fsPair struct{ src, dst string }

func (p fsPair) String() string { return p.src + "-" + p.dst }

func (p fsPair) same() bool { return p.src == p.dst }

func (p fsPair) canClone() bool { return p.same() && (p.src == "xfs" || p.src == "btrfs") }

// works reports whether this kernel does a forced strategy for p:
// reflink only within one xfs or btrfs, copy_file_range only within one
// filesystem (EXDEV across), everything else everywhere.
func (p fsPair) works(strategy string) bool {
	switch strategy {
	case "reflink":
		return p.canClone()
	case "copy_file_range":
		return p.same()
	}
	return true
}

// autoStrategy is the strategy --debug must name for auto on p (for a
// non-empty regular file): a clone where the filesystem shares extents,
// else copy_file_range within one filesystem, else sendfile.
func (p fsPair) autoStrategy() string {
	switch {
	case p.canClone():
		return "reflink"
	case p.same():
		return "copy_file_range"
	}
	return "sendfile"
}

// copyPairs are the filesystem pairs of the copy matrix.
var copyPairs = []fsPair{
	{"ext4", "ext4"}, {"tmpfs", "tmpfs"}, {"xfs", "xfs"}, {"btrfs", "btrfs"},
	{"ext4", "tmpfs"}, {"xfs", "btrfs"}, {"tmpfs", "xfs"},
}

// matrixFile is one source file of the copy matrix.
type matrixFile struct {
	name   string
	size   int64
	sparse bool   // spans hold the data, the rest is holes; else size random bytes
	spans  []span // the data of a sparse file
	slack  int64  // 512-byte blocks the copy may take beyond the source
	debug  bool   // also check --debug on it
}

// defaultHoleSlack is how many 512-byte blocks a copy of a sparse file may
// take beyond its source: 64 KiB, for a filesystem's allocation granularity
// and preallocation (xfs allocates a few blocks past a write). A copy that
// filled the holes takes megabytes or gigabytes more.
const defaultHoleSlack = 128

var matrixFiles = []matrixFile{
	{name: "empty", size: 0},
	{name: "1", size: 1},
	{name: "4095", size: 4095},
	{name: "4096", size: 4096},
	{name: "4097", size: 4097},
	{name: "1MiB+1", size: 1<<20 + 1, debug: true},
	{name: "sparse2G", size: bigSparseSize, sparse: true, spans: bigSparseSpans("sparse2G"), slack: defaultHoleSlack, debug: true},
	// Holes between extents, the last extent a few bytes at the very end.
	{name: "midholes", size: 64<<20 + 100, sparse: true, slack: defaultHoleSlack, spans: []span{
		{off: 8 << 20, data: randomBytes(4096, "m1")},
		{off: 9<<20 + 4096, data: randomBytes(100000, "m2")},
		{off: 64 << 20, data: randomBytes(100, "m3")},
	}},
	// A trailing hole: the size comes from a final ftruncate. xfs keeps
	// the speculative preallocation past the last write as unwritten
	// extents once that ftruncate moves EOF beyond it (GNU cp's copy gets
	// the same), hence the 1 MiB of slack.
	{name: "tailhole", size: 64 << 20, sparse: true, slack: 2048, spans: []span{{off: 0, data: randomBytes(1<<20, "t")}}},
	// No data at all: nothing but holes.
	{name: "allholes", size: 16 << 20, sparse: true, slack: defaultHoleSlack},
}

// reflinkRefusalRE is the tail of a refused --strategy=reflink message:
// the call (optional) and the errno this kernel gives.
var reflinkRefusalRE = regexp.MustCompile(`^(\S+: )?(EOPNOTSUPP|EXDEV|EINVAL) \([A-Z][^)]*\)$`)

// TestCopyMatrix copies files of every awkward size and a 2 GiB sparse file
// with every strategy within and across ext4, xfs, btrfs and tmpfs, and
// checks the bytes, the holes, the refusals and what --debug says.
func TestCopyMatrix(t *testing.T) {
	t.Parallel()
	for _, p := range copyPairs {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			srcDir := fsDir(t, p.src)
			dstDir := fsDir(t, p.dst)
			for _, f := range matrixFiles {
				path := join(srcDir, f.name)
				if f.sparse {
					writeSparse(t, path, f.size, f.spans)
				} else {
					writeFile(t, path, randomBytes(int(f.size), f.name), 0o644)
				}
			}
			for _, s := range strategies {
				t.Run(s, func(t *testing.T) {
					for _, f := range matrixFiles {
						t.Run(f.name, func(t *testing.T) {
							checkMatrixCopy(t, p, s, f, join(srcDir, f.name), dstDir)
						})
					}
				})
			}
		})
	}
}

func checkMatrixCopy(t *testing.T, p fsPair, strategy string, f matrixFile, src, dstDir string) {
	dst := join(dstDir, strategy+"-"+f.name)
	defer os.Remove(dst)
	r := fastcp(t, dstDir, "--strategy="+strategy, src, dst)
	if !p.works(strategy) {
		wantRefusal(t, r, strategy, src, dst)
		assertNotExist(t, dst)
		assertNoTemps(t, dstDir)
		return
	}
	wantSuccess(t, r)
	assertSameContent(t, src, dst)
	assertNoTemps(t, dstDir)
	if f.sparse {
		// Holes stay holes, whatever the strategy.
		sb, db := blocks(t, src), blocks(t, dst)
		if db > sb+f.slack {
			t.Errorf("the copy of a sparse file takes %d blocks, the source %d: holes were filled", db, sb)
		}
	}
	if !f.debug {
		return
	}

	dbg := dst + ".debug"
	defer os.Remove(dbg)
	r = fastcp(t, dstDir, "--debug", "--strategy="+strategy, src, dbg)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--debug run: want exit 0 and no stderr, got %v", r)
	}
	assertSameContent(t, src, dbg)
	d := parseDebug(t, r.stdout, src, dbg)
	want := strategy
	if strategy == "auto" {
		want = p.autoStrategy()
	}
	if d.strategy != want {
		t.Errorf("--debug names strategy %q, want %q:\n%s", d.strategy, want, r.stdout)
	}
	if strategy != "auto" && len(d.fallbacks) > 0 {
		t.Errorf("a forced strategy must never fall back, --debug says:\n%s", r.stdout)
	}
	if strategy == "auto" {
		// auto starts with reflink; every fallback starts where the one
		// before it went, and the last one ends at the strategy named.
		from := "reflink"
		for _, l := range d.fallbacks {
			m := fallbackLineRE.FindStringSubmatch(l)
			if m == nil || m[1] != from {
				t.Errorf("fallback %q does not start from %s:\n%s", l, from, r.stdout)
				break
			}
			from = m[2]
		}
		if from != d.strategy {
			t.Errorf("the fallbacks lead to %s but the strategy is %s:\n%s", from, d.strategy, r.stdout)
		}
	}
	if want == "reflink" && d.reflink != "yes" {
		t.Errorf("a clone must say 'reflink: yes':\n%s", r.stdout)
	}
	if want == "copy_file_range" && d.offload != "yes" {
		t.Errorf("a copy_file_range copy must say 'copy offload: yes':\n%s", r.stdout)
	}
	if f.sparse && d.sparse != "SEEK_HOLE" {
		t.Errorf("a sparse source must say 'sparse detection: SEEK_HOLE':\n%s", r.stdout)
	}
}

// wantRefusal checks the error for a forced strategy the kernel refused:
// exit 1 and one line naming the strategy and the errno.
func wantRefusal(t testing.TB, r result, strategy, src, dst string) {
	t.Helper()
	wantFailure(t, r, 1, "")
	prefix := fmt.Sprintf("fastcp: cannot copy %s to %s with --strategy=%s: ", q(src), q(dst), strategy)
	ls := lines(r.stderr)
	if len(ls) != 1 || !strings.HasPrefix(ls[0], prefix) {
		t.Fatalf("want one line starting %q, got stderr %q", prefix, r.stderr)
	}
	tail := strings.TrimPrefix(ls[0], prefix)
	switch strategy {
	case "copy_file_range":
		if want := "copy_file_range: EXDEV (Invalid cross-device link)"; tail != want {
			t.Errorf("refusal reason %q, want %q", tail, want)
		}
	case "reflink":
		if !reflinkRefusalRE.MatchString(tail) {
			t.Errorf("refusal reason %q does not name EOPNOTSUPP, EXDEV or EINVAL", tail)
		}
	default:
		t.Errorf("strategy %s was refused: %s", strategy, tail)
	}
}

// TestDebugShowsFallback checks that --debug shows auto's fallback from
// copy_file_range to sendfile, with EXDEV, between ext4 and tmpfs, at the
// offset where the copy went on (the first data byte of a sparse file).
func TestDebugShowsFallback(t *testing.T) {
	t.Parallel()
	srcDir, dstDir := fsDir(t, "ext4"), fsDir(t, "tmpfs")
	dense, sparse := join(srcDir, "dense"), join(srcDir, "sparse")
	writeFile(t, dense, randomBytes(3<<20, "dense"), 0o644)
	writeSparse(t, sparse, bigSparseSize, bigSparseSpans("sparse"))
	for _, c := range []struct {
		src    string
		offset int64
	}{
		{dense, 0},
		{sparse, bigSparseSpans("")[0].off},
	} {
		dst := join(dstDir, "copy")
		r := fastcp(t, dstDir, "--debug", c.src, dst)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("want exit 0 and no stderr, got %v", r)
		}
		assertSameContent(t, c.src, dst)
		d := parseDebug(t, r.stdout, c.src, dst)
		want := fmt.Sprintf("fallback: copy_file_range -> sendfile at offset %d: copy_file_range: EXDEV (Invalid cross-device link)", c.offset)
		found := false
		for _, l := range d.fallbacks {
			found = found || l == want
		}
		if !found {
			t.Errorf("--debug lacks %q:\n%s", want, r.stdout)
		}
		if d.strategy != "sendfile" {
			t.Errorf("--debug names strategy %q, want sendfile:\n%s", d.strategy, r.stdout)
		}
		if d.offload != "unsupported" {
			t.Errorf("copy_file_range was refused: want 'copy offload: unsupported':\n%s", r.stdout)
		}
		os.Remove(dst)
	}
}
