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
	"sync"
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

// benchStrategies are section 1's rows, as the table labels them: auto as
// fastcp chooses, without and with --sync, then every strategy forced (rw
// with its default buffer, copier.DefaultBufferSize).
var benchStrategies = []string{"auto", "auto --sync", "reflink", "copy_file_range", "direct", "sendfile", "splice", "rw (512 KiB)"}

// benchWide is the terminal width of the runs whose section 1 rows are
// parsed: wide enough for every column, the copier's calls included.
const benchWide = "250"

// benchRowRE is a section 1 row that ran, on a wide terminal: label, the
// copy's median and min-max, the flushed copy's median and min-max, MB/s,
// share of the device's limit (a "*" when a note says why it is what it
// is), user, sys, syscalls, the source's residency before the runs, then
// the copier's calls, which must include the named strategy (or auto's
// choice) moving all 8 MiB.
var benchRowRE = regexp.MustCompile(`^(auto --sync|\S+(?: \([0-9.]+ [KMG]iB\))?) +([0-9.]+) +([0-9.]+-[0-9.]+) +([0-9.]+) +([0-9.]+-[0-9.]+) +(\d+) +(\d+%\*?|-\*?) +(\d+\.\d\d) +(\d+\.\d\d) +(\d+) +(\d+\.\d%)  (.+)$`)

// benchRefusedRE is a section 1 row that the filesystem refused.
var benchRefusedRE = regexp.MustCompile(`^(\S+) +refused: (.+)$`)

// benchRun runs fastcp as the benchmark tests do, with COLUMNS set to
// columns ("": unset, so the width comes from stdout, a pipe: 80).
func benchRun(t *testing.T, dir, columns string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, args...)
	env := slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "COLUMNS=") })
	if columns != "" {
		env = append(env, "COLUMNS="+columns)
	}
	cmd.Env = env
	return runCmd(t, cmd)
}

// benchWithin fails the test if a line of out is wider than width columns.
func benchWithin(t *testing.T, out string, width int) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("a line of %d columns, wider than %d: %q", n, width, l)
		}
	}
}

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
			if strings.HasPrefix(l, s+"  ") {
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
		if strings.HasPrefix(s, "auto") {
			name = `\S+`
		}
		if !regexp.MustCompile(`(^|, )` + name + ` \d+ \(8 MiB\)`).MatchString(m[12]) {
			t.Errorf("%s row does not show %s calls moving 8 MiB: %q", s, name, m[12])
		}
	}
	if !strings.HasPrefix(benchLastLine(out), "what to do: ") {
		t.Errorf("the last line does not say what to do: %q", benchLastLine(out))
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

// benchLastLine is the report's last paragraph's first line: its last line
// that is not indented, as a paragraph wrapped at the width goes on in
// lines that are.
func benchLastLine(out string) string {
	ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i := len(ls) - 1; i > 0; i-- {
		if !strings.HasPrefix(ls[i], " ") {
			return ls[i]
		}
	}
	return ls[0]
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
			r := benchRun(t, dir, benchWide, append(benchArgs, dir)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
			}
			benchCheckOutput(t, r.stdout, c.refused)
			if _, refused := c.refused["reflink"]; !refused && !strings.HasSuffix(benchSection1(t, r.stdout)["reflink"], "; extents shared, no data copied") {
				t.Errorf("the reflink row on %s does not say it shared extents: %q", c.kind, benchSection1(t, r.stdout)["reflink"])
			}
			if want := fmt.Sprintf("\n1. Strategies (forced, no fallback; auto as fastcp chooses), %s cache\n", c.cache); !strings.Contains(r.stdout, want) {
				t.Errorf("section 1 is not headed %q:\n%s", want, r.stdout)
			}
			if want := fmt.Sprintf("fastcp --benchmark: copies into %s (%s)\n", dir, c.kind); !strings.HasPrefix(r.stdout, want) {
				t.Errorf("first line is not %q:\n%s", want, r.stdout)
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
	r := benchRun(t, from, benchWide, append(benchArgs, "--bench-from="+from, dir)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
	}
	// No clone and no copy_file_range between an ext4 and a tmpfs.
	benchCheckOutput(t, r.stdout, map[string]string{"reflink": refusedXDev, "copy_file_range": cfrXDev})
	if want := fmt.Sprintf("fastcp --benchmark: copies into %s (tmpfs)\nsource file: in %s (ext4): --bench-from\n", dir, from); !strings.HasPrefix(r.stdout, want) {
		t.Errorf("the header does not start with %q:\n%s", want, r.stdout)
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
	Chosen        string `json:"chosen"`
	Refused       bool   `json:"refused"`
	Errno         string `json:"errno"`
	Error         string `json:"error"`
}

var benchRowKeys = []string{"section", "strategy", "buffer_size", "sync", "cache", "bytes", "runs", "median_s", "min_s", "max_s",
	"mb_per_s", "user_s", "sys_s", "syscalls", "calls", "open_flags", "shared_extents", "resident",
	"flushed_median_s", "flushed_min_s", "flushed_max_s", "flushed_mb_per_s", "share_of_limit", "share_note", "chosen",
	"durability", "refused", "errno", "error"}

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
	nrows := []int{8, 13, 10}
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
			c := row.Calls[row.Chosen]
			if row.Strategy != "auto" && row.Chosen != row.Strategy {
				t.Errorf("section %d row %s chose %q", s.Number, row.Strategy, row.Chosen)
			}
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
		if !strings.HasPrefix(benchLastLine(strings.ReplaceAll(out, "\r\n", "\n")), "what to do: ") {
			t.Errorf("the progress line was left on the terminal: %q", out)
		}
	}
	benchWantSame(t, dir, before)
}

// TestBenchmark80Columns runs the benchmark as an administrator would, 3
// runs a row, and holds every line of the report to 80 columns: with
// COLUMNS=80, and with no COLUMNS and no terminal. A wider COLUMNS gives
// wider tables (more columns), never wider than it says.
func TestBenchmark80Columns(t *testing.T) {
	dir := fsDir(t, "ext4")
	for _, columns := range []string{"80", "", "132"} {
		t.Run("COLUMNS="+columns, func(t *testing.T) {
			r := benchRun(t, dir, columns, "--benchmark", "--bench-size=8M", dir)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit 0 and nothing on stderr, got %v", r)
			}
			width := 80
			if columns == "132" {
				width = 132
			}
			benchWithin(t, r.stdout, width)
			if columns == "132" {
				wide := false
				for _, l := range strings.Split(r.stdout, "\n") {
					wide = wide || len([]rune(l)) > 80
				}
				if !wide {
					t.Errorf("COLUMNS=132 gave no line wider than 80:\n%s", r.stdout)
				}
			}
			for _, want := range []string{"\n1. Strategies", "\nauto  ", "\nauto --sync  ", "\ndevice limit  ",
				"\n2. rw loop", "\n3. --sync modes", "\n4. Cost of one system call", "\nverdict: "} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the report lacks %q:\n%s", want, r.stdout)
				}
			}
			if last := benchLastLine(r.stdout); !strings.HasPrefix(last, "what to do: ") {
				t.Errorf("the last line does not say what to do: %q", last)
			}
		})
	}
}

// TestBenchmarkOnSSHFS points the benchmark at a real network mount: its
// source goes on a local filesystem (a copy onto a mount reads from a
// local disk), the report says where and why, no share of the device's
// limit passes 100% without the reason, and neither the mount nor the
// local directory keeps anything.
func TestBenchmarkOnSSHFS(t *testing.T) {
	m := sshfsMount(t)
	before := benchListing(t, m.Dir)
	leftovers := func() []string {
		var l []string
		for _, d := range []string{"/var/tmp", "/tmp"} {
			found, _ := filepath.Glob(join(d, ".fastcp-bench-*"))
			l = append(l, found...)
		}
		return l
	}
	local := leftovers()
	r := benchRun(t, m.Dir, "80", "--benchmark", "--bench-size=4M", "--bench-runs=1", "--json", m.Dir)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want exit 0 and nothing on stderr, got %v\n%s", r, m.Log())
	}
	var rep benchmark.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
	}
	if rep.DirFS != "fuse.sshfs" || rep.Dir != m.Dir {
		t.Errorf("copies into %s (%s), want %s (fuse.sshfs)", rep.Dir, rep.DirFS, m.Dir)
	}
	if rep.From != "/var/tmp" && rep.From != "/tmp" || strings.HasPrefix(rep.FromFS, "fuse") ||
		!strings.Contains(rep.FromWhy, m.Dir+" is on a fuse.sshfs mount") {
		t.Errorf("source in %s (%s) because %q; want /var/tmp or /tmp, local, and why", rep.From, rep.FromFS, rep.FromWhy)
	}
	for _, row := range rep.Sections[0].Rows {
		if row.ShareOfLimit > 1 && row.ShareNote == "" {
			t.Errorf("%s: %.0f%% of the device's limit without a reason", row.Strategy, 100*row.ShareOfLimit)
		}
	}
	// The tables say it in their header, within 80 columns.
	r = benchRun(t, m.Dir, "80", "--benchmark", "--bench-size=4M", "--bench-runs=1", m.Dir)
	if r.code != 0 {
		t.Fatalf("tables: %v", r)
	}
	benchWithin(t, r.stdout, 80)
	// Compared without blanks: a path longer than a line is cut.
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if !strings.Contains(flat(r.stdout), flat("source file: in "+rep.From+" ("+rep.FromFS+"): "+m.Dir+" is on a fuse.sshfs mount")) {
		t.Errorf("the header does not say where the source is and why:\n%s", r.stdout)
	}
	// --bench-from still decides.
	from := t.TempDir()
	r = benchRun(t, m.Dir, "80", "--benchmark", "--bench-size=4M", "--bench-runs=1", "--json", "--bench-from="+from, m.Dir)
	var rep2 benchmark.Report
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep2) != nil || rep2.From != from || rep2.FromWhy != "--bench-from" {
		t.Errorf("--bench-from=%s: source in %s (%q): %v", from, rep2.From, rep2.FromWhy, r)
	}
	benchWantSame(t, m.Dir, before)
	if after := leftovers(); !slices.Equal(local, after) {
		t.Errorf("private directories left: before %q, after %q", local, after)
	}
}

// TestBenchmarkSignalErasesProgress interrupts a benchmark that draws its
// progress line on a terminal: the line is erased before the process dies
// of the signal, as the copy's bar is.
func TestBenchmarkSignalErasesProgress(t *testing.T) {
	dir := fsDir(t, "ext4")
	master, tty := openPTY(t, 80)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "--benchmark", "--bench-size=64M", dir)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	tty.Close()
	drawn := make(chan string, 1)
	var mu sync.Mutex
	var seen []byte
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			seen = append(seen, buf[:n]...)
			mu.Unlock()
			if err != nil {
				drawn <- string(seen)
				return
			}
		}
	}()
	// Interrupt once section 1's copies are being drawn.
	if !waitFor(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(seen, []byte(" run 1/3\x1b[K"))
	}) {
		t.Fatalf("no progress line drawn; stdout %q", stdout.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	out := <-drawn
	wantSignalDeath(t, err, "SIGINT", 130, "")
	last := strings.LastIndex(out, "\rsection ")
	if last < 0 || !strings.HasSuffix(out, "\r\x1b[K") || strings.Contains(out[last+1:], "\rsection") {
		t.Errorf("the progress line was not erased at the signal: output ends %q", out[max(0, len(out)-80):])
	}
}
