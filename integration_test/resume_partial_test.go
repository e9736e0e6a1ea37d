// SPDX-License-Identifier: MIT

package integration_test

// --resume continues a DEST that another tool left partial (an
// interrupted cp or dd): its bytes are compared with SOURCE's, the equal
// prefix is cloned (xfs, btrfs) or copied (ext4) into the temporary file,
// the rest copied; DEST itself stays as it was until the commit, and
// anything that is not such a prefix, or not the caller's, is copied
// anew, --debug saying why.

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var partialRE = regexp.MustCompile(`(?m)^partial DEST '([^']*)': (.*)$`)

// partialLine is --debug's line about DEST as a partial copy ("" none).
func partialLine(stdout string) string {
	m := partialRE.FindStringSubmatch(stdout)
	if m == nil {
		return ""
	}
	return m[2]
}

// cutCopy writes the first n bytes of src to dst, as an interrupted cp
// leaves it, dated a minute back.
func cutCopy(t *testing.T, src, dst string, n int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b[:n], 0o644)
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(dst, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestResumePartialDest(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(40<<20+12345, "partial")
	for _, kind := range []string{"ext4", "xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := fsDir(t, kind)
			writeFile(t, join(dir, "src"), data, 0o644)
			// 75%, not at a MiB boundary: the whole MiBs are kept.
			cutCopy(t, join(dir, "src"), join(dir, "dst"), 30<<20+777)
			r := fastcp(t, dir, "--resume", "--debug", "--checksum-file=S", "src", "dst")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("%v", r)
			}
			how := "copied into"
			if kind != "ext4" {
				how = "shared with DEST (reflink) into"
			}
			if l := partialLine(r.stdout); !strings.HasPrefix(l, "continued from 31457280: 31457280 of its 31458057 bytes equal SOURCE's") || !strings.Contains(l, how) {
				t.Errorf("--debug says %q, want it continued from 30 MiB, %s", l, how)
			}
			res := parseResumed(t, r.stdout)
			if res.written != int64(len(data))-30<<20 {
				t.Errorf("wrote %d bytes, want only the %d after the prefix", res.written, int64(len(data))-30<<20)
			}
			assertFileBytes(t, join(dir, "dst"), data)
			got, _ := os.ReadFile(join(dir, "S"))
			if want := toolLine(t, "sha256sum", dir, "dst"); string(got) != want {
				t.Errorf("manifest %q, want %q", got, want)
			}
			assertNoTemps(t, dir)
		})
	}
}

// Only whole MiBs that equal SOURCE's are kept: a byte changed at 10 MiB
// + 5 keeps the first 10 MiB.
func TestResumePartialDestDiffers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := randomBytes(24<<20, "differs")
	writeFile(t, join(dir, "src"), data, 0o644)
	cutCopy(t, join(dir, "src"), join(dir, "dst"), 20<<20)
	f, err := os.OpenFile(join(dir, "dst"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{data[10<<20+5] ^ 1}, 10<<20+5)
	f.Close()
	old := time.Now().Add(-time.Minute)
	os.Chtimes(join(dir, "dst"), old, old)
	r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	if l := partialLine(r.stdout); !strings.HasPrefix(l, "continued from 10485760: 10485760 of its 20971520 bytes") {
		t.Errorf("--debug: %q", l)
	}
	assertFileBytes(t, join(dir, "dst"), data)
}

// A DEST that cannot be a partial copy of this SOURCE is copied over from
// the start, and --debug says why.
func TestResumePartialDestRefused(t *testing.T) {
	t.Parallel()
	needRoot(t)
	data := randomBytes(8<<20, "refused")
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, dst string)
		why  string
	}{
		{"other bytes", func(t *testing.T, dst string) {
			writeFile(t, dst, randomBytes(6<<20, "other"), 0o644)
			old := time.Now().Add(-time.Minute)
			os.Chtimes(dst, old, old)
		}, "not continued: its first 1 MiB differs from SOURCE's (or it was written meanwhile)"},
		{"newer", func(t *testing.T, dst string) {
			writeFile(t, dst, data[:6<<20], 0o644)
			future := time.Now().Add(time.Hour)
			os.Chtimes(dst, future, future)
		}, "not continued: it was changed after this run began"},
		{"not ours", func(t *testing.T, dst string) {
			writeFile(t, dst, data[:6<<20], 0o644)
			os.Chown(dst, ccNobody, ccNobody)
			old := time.Now().Add(-time.Minute)
			os.Chtimes(dst, old, old)
		}, "not continued: it is owned by uid 65534, not by this user"},
		{"as long", func(t *testing.T, dst string) {
			writeFile(t, dst, data, 0o644)
		}, "not continued: it is not shorter than SOURCE (8388608 of 8388608 bytes)"},
		{"small", func(t *testing.T, dst string) {
			writeFile(t, dst, data[:1000], 0o644)
			old := time.Now().Add(-time.Minute)
			os.Chtimes(dst, old, old)
		}, "not continued: it holds less than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, join(dir, "src"), data, 0o644)
			tc.prep(t, join(dir, "dst"))
			r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
			if r.code != 0 {
				t.Fatalf("%v", r)
			}
			if l := partialLine(r.stdout); l != tc.why {
				t.Errorf("--debug says %q, want %q", l, tc.why)
			}
			if res := parseResumed(t, r.stdout); res.written != int64(len(data)) {
				t.Errorf("wrote %d bytes, want the whole %d", res.written, len(data))
			}
			assertFileBytes(t, join(dir, "dst"), data)
		})
	}
}

// DEST stays as the other tool left it until the commit: a continued copy
// killed part-way leaves it byte for byte.
func TestResumePartialDestWholeUntilCommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writePattern(t, join(dir, "src"), 64<<20, t.Name())
	cutCopy(t, join(dir, "src"), join(dir, "dst"), 16<<20+3)
	before, err := os.ReadFile(join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "src", "dst")
	temp := join(dir, resumeTemp)
	run.waitUntil(t, "the copy past the prefix", func() bool { return sizeOf(temp) >= 20<<20 })
	if code := run.signal(t, syscall.SIGKILL); code != 128+9 && code != -1 {
		t.Fatalf("exit status %d after SIGKILL", code)
	}
	assertFileBytes(t, join(dir, "dst"), before)
	// Killed before its first checkpoint, the leftover is dropped, and
	// DEST, still the other tool's prefix, is continued.
	r := fastcp(t, dir, "--resume", "--debug", "src", "dst")
	if r.code != 0 || !strings.HasPrefix(partialLine(r.stdout), "continued from 16777216") {
		t.Fatalf("the rerun: %v", r)
	}
	sameFiles(t, join(dir, "src"), join(dir, "dst"))
}
