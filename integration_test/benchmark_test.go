// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"fastcp/benchmark"
	"fastcp/integration_test/fsfixture"
)

// The --benchmark tests run one after the other, not in parallel: they fill
// the shared filesystems with their test files and time copies.

// benchSize is the test file of these runs: --bench-size=8M.
const benchSize = 8 << 20

var benchArgs = []string{"--benchmark", "--bench-size=8M", "--bench-runs=1"}

// benchStrategies are section 1's rows, as the table labels them.
var benchStrategies = []string{"reflink", "copy_file_range", "direct", "sendfile", "splice", benchmark.DefaultRWLabel()}

// benchRowRE is a section 1 row that ran: label, runs, median, min-max,
// MB/s, user, sys, syscalls, the source's residency before the runs and
// the share of the device's limit, then the copier's calls, which must
// include the named strategy moving all 8 MiB.
var benchRowRE = regexp.MustCompile(`^(\S+(?: \([0-9.]+ [KMG]iB\))?) +1 +(\d+\.\d{3,}) +(\d+\.\d{3,})-(\d+\.\d{3,}) +(\d+) +(\d+\.\d\d) +(\d+\.\d\d) +(\d+) +(\d+\.\d%) +(\d+%|-)  (.+)$`)

// benchRefusedRE is a section 1 row that the filesystem refused.
var benchRefusedRE = regexp.MustCompile(`^(\S+) +refused: (.+)$`)

// benchListing describes everything under dir (names, types, sizes and
// modes, not times), to check that a benchmark left it exactly as it was.
func benchListing(t *testing.T, dir string) []string {
	t.Helper()
	var l []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size := fi.Size()
		if fi.IsDir() {
			size = 0 // directory sizes grow with entries once made, on some filesystems
		}
		l = append(l, fmt.Sprintf("%s %v %d", p, fi.Mode(), size))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// benchPopulate puts a file and a subdirectory in dir, so that "left as it
// was" means more than "empty".
func benchPopulate(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, join(dir, "keep"), randomBytes(1000, "keep"), 0o640)
	mustMkdir(t, join(dir, "sub"))
	writeFile(t, join(dir, "sub", "also"), randomBytes(10, "also"), 0o600)
}

func benchWantSame(t *testing.T, dir string, before []string) {
	t.Helper()
	if after := benchListing(t, dir); !slices.Equal(before, after) {
		t.Errorf("%s changed:\nbefore %q\nafter  %q", dir, before, after)
	}
}

// benchSection1 returns section 1's rows of a table output, by label.
func benchSection1(t *testing.T, out string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\n1. Strategies")
	if !ok {
		t.Fatalf("no section 1 in:\n%s", out)
	}
	block, _, _ := strings.Cut(rest, "\n\n")
	rows := map[string]string{}
	for _, l := range strings.Split(block, "\n") {
		for _, s := range benchStrategies {
			if strings.HasPrefix(l, s+" ") {
				rows[s] = l
			}
		}
	}
	return rows
}

// benchCheckOutput checks a table output: every strategy has a row, the
// refused ones (refused: label -> error text) say why, the others prove
// with the copier's counts that their strategy moved the whole file.
func benchCheckOutput(t *testing.T, out string, refused map[string]string) {
	t.Helper()
	rows := benchSection1(t, out)
	for _, s := range benchStrategies {
		l, ok := rows[s]
		if !ok {
			t.Errorf("no %s row in section 1:\n%s", s, out)
			continue
		}
		if want, ok := refused[s]; ok {
			m := benchRefusedRE.FindStringSubmatch(l)
			if m == nil || m[2] != want {
				t.Errorf("%s row %q, want %q", s, l, s+"  refused: "+want)
			}
			continue
		}
		m := benchRowRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("%s row does not parse: %q", s, l)
			continue
		}
		name, _, _ := strings.Cut(s, " (")
		if !regexp.MustCompile(`(^|, )` + name + ` \d+ \(8 MiB\)`).MatchString(m[11]) {
			t.Errorf("%s row does not show %s calls moving 8 MiB: %q", s, name, m[11])
		}
	}
	for _, want := range []string{"\n2. rw loop by buffer size", "\n3. --sync modes", "\n4. Cost of one system call"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q section in:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("progress escapes on stdout: %q", out)
	}
}

func benchLastLine(out string) string {
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return ls[len(ls)-1]
}

const (
	refusedNotSupp = "ioctl(FICLONE): EOPNOTSUPP (Operation not supported)"
	refusedXDev    = "ioctl(FICLONE): EXDEV (Invalid cross-device link)"
	cfrXDev        = "copy_file_range: EXDEV (Invalid cross-device link)"
)

func TestBenchmarkFilesystems(t *testing.T) {
	for _, c := range []struct {
		kind    string
		refused map[string]string
		cache   string
	}{
		{"ext4", map[string]string{"reflink": refusedNotSupp}, "cold"},
		{"tmpfs", map[string]string{"reflink": refusedNotSupp}, "warm"}, // tmpfs cannot evict its pages
		{"xfs", nil, "cold"},
		{"btrfs", nil, "cold"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			dir := fsDir(t, c.kind)
			benchPopulate(t, dir)
			before := benchListing(t, dir)
			r := fastcp(t, dir, append(benchArgs, dir)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
			}
			benchCheckOutput(t, r.stdout, c.refused)
			if _, refused := c.refused["reflink"]; !refused && !strings.HasSuffix(benchSection1(t, r.stdout)["reflink"], "; extents shared, no data copied") {
				t.Errorf("the reflink row on %s does not say it shared extents: %q", c.kind, benchSection1(t, r.stdout)["reflink"])
			}
			if want := fmt.Sprintf("\n1. Strategies (forced, no fallback), %s cache\n", c.cache); !strings.Contains(r.stdout, want) {
				t.Errorf("section 1 is not headed %q:\n%s", want, r.stdout)
			}
			if want := fmt.Sprintf("fastest strategy on %s (%s): ", dir, c.kind); !strings.HasPrefix(benchLastLine(r.stdout), want) {
				t.Errorf("last line %q, want it to start with %q", benchLastLine(r.stdout), want)
			}
			benchWantSame(t, dir, before)
		})
	}
}

func TestBenchmarkAcrossFilesystems(t *testing.T) {
	from, dir := fsDir(t, "ext4"), fsDir(t, "tmpfs")
	benchPopulate(t, from)
	benchPopulate(t, dir)
	beforeFrom, beforeDir := benchListing(t, from), benchListing(t, dir)
	r := fastcp(t, from, append(benchArgs, "--bench-from="+from, dir)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
	}
	// No clone and no copy_file_range between an ext4 and a tmpfs.
	benchCheckOutput(t, r.stdout, map[string]string{"reflink": refusedXDev, "copy_file_range": cfrXDev})
	if want := fmt.Sprintf("fastest strategy from %s (ext4) to %s (tmpfs): ", from, dir); !strings.HasPrefix(benchLastLine(r.stdout), want) {
		t.Errorf("last line %q, want it to start with %q", benchLastLine(r.stdout), want)
	}
	benchWantSame(t, from, beforeFrom)
	benchWantSame(t, dir, beforeDir)
}

// benchReport is the part of the --json document these tests read.
type benchReport struct {
	Schema    int    `json:"schema"`
	Dir       string `json:"dir"`
	DirFS     string `json:"dir_fs"`
	SizeBytes int64  `json:"size_bytes"`
	Runs      int    `json:"runs"`
	Sections  []struct {
		Number int               `json:"number"`
		Cache  string            `json:"cache"`
		Rows   []json.RawMessage `json:"rows"`
	} `json:"sections"`
	SyscallCost struct {
		SyscallNs float64 `json:"syscall_ns"`
		FuncNs    float64 `json:"func_ns"`
		Ratio     float64 `json:"ratio"`
	} `json:"syscall_cost"`
	Fastest string `json:"fastest"`
}

type benchRow struct {
	Section    int     `json:"section"`
	Strategy   string  `json:"strategy"`
	BufferSize int     `json:"buffer_size"`
	Sync       string  `json:"sync"`
	Bytes      int64   `json:"bytes"`
	Runs       int     `json:"runs"`
	MedianS    float64 `json:"median_s"`
	MinS       float64 `json:"min_s"`
	MaxS       float64 `json:"max_s"`
	MBps       float64 `json:"mb_per_s"`
	UserS      float64 `json:"user_s"`
	SysS       float64 `json:"sys_s"`
	Syscalls   int64   `json:"syscalls"`
	Calls      map[string]struct {
		Calls int64 `json:"calls"`
		Bytes int64 `json:"bytes"`
	} `json:"calls"`
	SharedExtents bool   `json:"shared_extents"`
	Refused       bool   `json:"refused"`
	Errno         string `json:"errno"`
	Error         string `json:"error"`
}

var benchRowKeys = []string{"section", "strategy", "buffer_size", "sync", "cache", "bytes", "runs", "median_s", "min_s", "max_s",
	"mb_per_s", "user_s", "sys_s", "syscalls", "calls", "open_flags", "shared_extents", "resident", "share_of_limit", "durability", "refused", "errno", "error"}

// TestBenchmarkJSON runs --json on xfs, where every strategy works and
// reflink really clones: its row shows the ioctl and the bytes it shared.
func TestBenchmarkJSON(t *testing.T) {
	dir := fsDir(t, "xfs")
	before := benchListing(t, dir)
	r := fastcp(t, dir, append(benchArgs, "--json", dir)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var rep benchReport
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatal("more than one JSON document on stdout")
	}
	if rep.Schema != 1 || rep.Dir != dir || rep.DirFS != "xfs" || rep.SizeBytes != benchSize || rep.Runs != 1 || len(rep.Sections) != 3 {
		t.Fatalf("document: %+v", rep)
	}
	nrows := []int{6, 13, 10}
	if rep.Fastest == "rw" {
		nrows[2] = 5
	}
	for i, s := range rep.Sections {
		if len(s.Rows) != nrows[i] {
			t.Errorf("section %d has %d rows, want %d", s.Number, len(s.Rows), nrows[i])
		}
		for _, raw := range s.Rows {
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil {
				t.Fatal(err)
			}
			for _, k := range benchRowKeys {
				if _, ok := keys[k]; !ok {
					t.Errorf("section %d row %s lacks %q", s.Number, raw, k)
				}
			}
			var row benchRow
			if err := json.Unmarshal(raw, &row); err != nil {
				t.Fatal(err)
			}
			if row.Refused {
				t.Errorf("xfs refused %s: %s", row.Strategy, row.Error)
				continue
			}
			c := row.Calls[row.Strategy]
			if row.Runs != 1 || row.MedianS <= 0 || row.MinS != row.MedianS || row.MaxS != row.MedianS || row.MBps <= 0 || c.Calls == 0 || c.Bytes != row.Bytes || row.Syscalls < c.Calls {
				t.Errorf("section %d row: %s", s.Number, raw)
			}
			if row.Section == 1 && row.Strategy == "reflink" && (c.Calls != 1 || !row.SharedExtents) {
				t.Errorf("reflink made %d calls, want one ioctl(FICLONE) and shared extents: %s", c.Calls, raw)
			}
			if row.Strategy == "rw" && row.SharedExtents {
				t.Errorf("an rw copy shares extents: %s", raw)
			}
		}
	}
	if rep.SyscallCost.SyscallNs <= 0 || rep.SyscallCost.FuncNs <= 0 || rep.SyscallCost.Ratio <= 1 {
		t.Errorf("syscall cost: %+v", rep.SyscallCost)
	}
	benchWantSame(t, dir, before)
}

// TestBenchmarkNoSpace points the benchmark at a 16 MiB tmpfs with a 64 MiB
// test file, and then as the --bench-from source of one: it must refuse
// before creating anything.
func TestBenchmarkNoSpace(t *testing.T) {
	needMount(t)
	small, err := fsfixture.Mount(t.TempDir(), "tmpfs", 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { small.Unmount() })
	big := fsDir(t, "ext4")
	want := fmt.Sprintf("fastcp: not enough free space in %s for the benchmark: 16 MiB available, 128 MiB needed (twice --bench-size); try a smaller --bench-size\n", q(small.Dir))
	for _, args := range [][]string{
		{"--benchmark", "--bench-size=64M", small.Dir},
		{"--benchmark", "--bench-size=64M", "--bench-from=" + small.Dir, big},
		{"--benchmark", "--bench-size=64M", "--json", small.Dir},
	} {
		beforeSmall, beforeBig := benchListing(t, small.Dir), benchListing(t, big)
		r := fastcp(t, big, args...)
		wantFailure(t, r, 1, want)
		benchWantSame(t, small.Dir, beforeSmall)
		benchWantSame(t, big, beforeBig)
	}
}

// TestBenchmarkSignal interrupts a benchmark once its private directory
// holds files: it must die of the signal and leave nothing behind.
func TestBenchmarkSignal(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fsDir(t, "ext4")
			benchPopulate(t, dir)
			before := benchListing(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, "--benchmark", "--bench-size=128M", dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Wait until the copies have started: the private directory
			// holds the test file and a copy.
			if !waitFor(func() bool {
				m, _ := filepath.Glob(join(dir, ".fastcp-bench-*", "copy"))
				return len(m) > 0
			}) {
				t.Fatalf("no copy appeared in a private directory; stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			wantSignalDeath(t, err, c.name, c.code, stderr.String())
			benchWantSame(t, dir, before)
		})
	}
}

// TestBenchmarkProgressOnATerminal runs the benchmark under script(1): the
// progress line ("section 1/4: sendfile run 1/1") is drawn on the terminal
// and erased before each table; -q draws none.
func TestBenchmarkProgressOnATerminal(t *testing.T) {
	needTool(t, "script") // gives fastcp a terminal
	dir := t.TempDir()
	before := benchListing(t, dir)
	for _, quiet := range []bool{false, true} {
		args := []string{setup.Bin, "--benchmark", "--bench-size=1M", "--bench-runs=1", dir}
		if quiet {
			args = append(args, "-q")
		}
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		r := runCmd(t, exec.CommandContext(ctx, "script", "-qfec", strings.Join(args, " "), "/dev/null"))
		cancel()
		if r.code != 0 {
			t.Fatalf("under a terminal: %v", r)
		}
		// script merges the terminal's stdout and stderr onto its stdout.
		out := r.stdout
		drawn := strings.Contains(out, "\rsection 1/4: sendfile run 1/1\x1b[K")
		if quiet {
			if drawn || strings.Contains(out, "\x1b[K") {
				t.Errorf("-q: progress drawn: %q", out)
			}
			continue
		}
		if !drawn || !strings.Contains(out, "\rsection 2/4: rw 4 KiB run 1/1\x1b[K") || !strings.Contains(out, "\rsection 4/4: ") {
			t.Errorf("no progress line on the terminal: %q", out)
		}
		// Erased before the tables: every table starts on a clean line.
		if !strings.Contains(out, "\r\x1b[K\r\n1. Strategies") && !strings.Contains(out, "\r\x1b[K\n1. Strategies") {
			t.Errorf("the progress line was not erased before section 1: %q", out)
		}
		if !strings.HasPrefix(benchLastLine(strings.ReplaceAll(out, "\r\n", "\n")), "fastest strategy on ") {
			t.Errorf("the progress line was left on the terminal: %q", out)
		}
	}
	benchWantSame(t, dir, before)
}
