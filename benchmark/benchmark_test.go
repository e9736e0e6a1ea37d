// SPDX-License-Identifier: MIT

package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fastcp/checksum"
	"fastcp/copier"
	"fastcp/durability"

	"golang.org/x/sys/unix"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		in   []float64
		want summary
	}{
		{nil, summary{}},
		{[]float64{2.5}, summary{2.5, 2.5, 2.5}},
		{[]float64{3, 1, 2}, summary{2, 1, 3}},
		{[]float64{4, 1, 3, 2}, summary{2.5, 1, 4}},
		{[]float64{1, 1, 9}, summary{1, 1, 9}},
		{[]float64{0.5, 0.25, 10, 0.75, 0.3}, summary{0.5, 0.25, 10}},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		if got := summarize(tt.in); got != tt.want {
			t.Errorf("summarize(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("summarize reordered its argument: %v, was %v", tt.in, in)
		}
	}
}

func TestMBPerSec(t *testing.T) {
	if got := mbPerSec(256<<20, 0.5); math.Abs(got-536.870912) > 1e-9 {
		t.Errorf("mbPerSec(256 MiB, 0.5 s) = %v, want 536.870912", got)
	}
	if got := mbPerSec(1, 0); got != 0 {
		t.Errorf("mbPerSec(1, 0) = %v, want 0", got)
	}
}

func TestFormatSize(t *testing.T) {
	tests := map[int64]string{
		0:                 "0 B",
		4096:              "4 KiB",
		1 << 20:           "1 MiB",
		256 << 20:         "256 MiB",
		3 << 29:           "1.5 GiB",
		16<<20 - 16<<10*3: "15.9 MiB",
	}
	for n, want := range tests {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSecs(t *testing.T) {
	tests := map[float64]string{
		0:          "0",
		2.5:        "2.500",
		0.4721:     "0.472",
		0.04721:    "0.0472",
		0.00004721: "0.0000472",
		123.4567:   "123.457",
	}
	for s, want := range tests {
		if got := secs(s); got != want {
			t.Errorf("secs(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestTableLayouts(t *testing.T) {
	tb := &table{
		cols:    []column{{"name", false}, {"n", true}, {"note", false}},
		layouts: []layout{{0, 1, 2}, {0, 1}},
	}
	tb.add("a", "1", "x")
	tb.add("longer", "1000", "")
	tb.addSpan("gone", "refused: EXDEV (Invalid cross-device link), and more words to wrap")
	want := "" +
		"name       n  note\n" +
		"a          1  x\n" +
		"longer  1000\n" +
		"gone    refused: EXDEV (Invalid cross-device link), and more words to wrap\n"
	if got := strings.Join(tb.lines(100), "\n") + "\n"; got != want {
		t.Errorf("table at 100 columns:\n%s\nwant:\n%s", got, want)
	}
	// Narrower: the "note" column goes, the span wraps under itself.
	tb.rows[0].cells[2] = "a note too long for thirty columns"
	want = "" +
		"name       n\n" +
		"a          1\n" +
		"longer  1000\n" +
		"gone    refused: EXDEV\n" +
		"        (Invalid cross-device\n" +
		"        link), and more words\n" +
		"        to wrap\n"
	if got := strings.Join(tb.lines(30), "\n") + "\n"; got != want {
		t.Errorf("table at 30 columns:\n%s\nwant:\n%s", got, want)
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		text, first, rest string
		width             int
		want              []string
	}{
		{"one two three", "", "", 80, []string{"one two three"}},
		{"one two three", "> ", "  ", 9, []string{"> one two", "  three"}},
		{"a /very/long/path/that/does/not/fit b", "x: ", "   ", 14, []string{"x: a", "   /very/long/", "   path/that/", "   does/not/", "   fit b"}},
		{"abcdefghijklmnop", "", "  ", 6, []string{"abcdef", "  ghij", "  klmn", "  op"}},
		{"", "x: ", "", 10, nil},
	}
	for _, tt := range tests {
		if got := wrap(tt.text, tt.first, tt.rest, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}

func TestMs(t *testing.T) {
	tests := map[float64]string{
		0:          "0",
		0.342:      "342",
		0.0472:     "47.2",
		0.00472:    "4.72",
		0.000472:   "0.472",
		0.00000472: "0.00472",
		12.3456:    "12346",
	}
	for s, want := range tests {
		if got := ms(s); got != want {
			t.Errorf("ms(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestWidth(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == "COLUMNS" && v != "" {
				return v, true
			}
			return "", false
		}
	}
	var buf bytes.Buffer
	for v, want := range map[string]int{"": 80, "80": 80, "132": 132, "40": 80, "x": 80, " 100 ": 100} {
		if got := Width(&buf, env(v)); got != want {
			t.Errorf("COLUMNS=%q: width %d, want %d", v, got, want)
		}
	}
}

// testSize is the test file of the unit-test runs: big enough for every
// strategy to make more than one call, small enough to take a second.
const testSize = 1 << 20

// run runs the benchmark as fastcp would and returns its exit status and output.
func run(t *testing.T, c Config) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(c, &out, &errb, "fastcp")
	return code, out.String(), errb.String()
}

// jsonRun is one --json run in a temporary directory, shared by the tests
// that read its document.
var jsonRun struct {
	once           sync.Once
	dir            string
	code           int
	stdout, stderr string
}

func runJSON(t *testing.T) (doc []byte, dir string) {
	t.Helper()
	jsonRun.once.Do(func() {
		d, err := os.MkdirTemp("", "fastcp-benchmark-test-")
		if err != nil {
			jsonRun.code, jsonRun.stderr = -1, err.Error()
			return
		}
		jsonRun.dir = d
		var out, errb bytes.Buffer
		jsonRun.code = Run(Config{Dir: d, Size: testSize, Runs: 2, JSON: true}, &out, &errb, "fastcp")
		jsonRun.stdout, jsonRun.stderr = out.String(), errb.String()
	})
	if jsonRun.code != 0 {
		t.Fatalf("exit %d, stderr %q", jsonRun.code, jsonRun.stderr)
	}
	if jsonRun.stderr != "" {
		t.Errorf("stderr must be empty (not a terminal), got %q", jsonRun.stderr)
	}
	return []byte(jsonRun.stdout), jsonRun.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if jsonRun.dir != "" {
		os.RemoveAll(jsonRun.dir)
	}
	os.Exit(code)
}

// rowKeys are the keys every row of the JSON document must carry.
var rowKeys = []string{
	"section", "strategy", "buffer_size", "sync", "cache", "bytes", "runs",
	"median_s", "min_s", "max_s", "mb_per_s", "user_s", "sys_s", "syscalls",
	"calls", "open_flags", "shared_extents", "resident", "flushed_median_s", "flushed_min_s", "flushed_max_s", "flushed_mb_per_s",
	"share_of_limit", "share_note", "chosen", "durability", "refused", "errno", "error",
}

func TestJSONEveryRowCarriesEveryField(t *testing.T) {
	doc, dir := runJSON(t)
	if !json.Valid(doc) {
		t.Fatalf("stdout is not one JSON document:\n%s", doc)
	}
	// Exactly one document: nothing after it but the newline.
	dec := json.NewDecoder(bytes.NewReader(doc))
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value on stdout")
	}
	for _, k := range []string{"schema", "dir", "dir_fs", "from", "from_fs", "from_why", "size_bytes", "runs", "sections", "syscall_cost", "fastest", "fastest_mb_per_s", "verdict", "seconds", "notes"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("document lacks %q", k)
		}
	}
	sections := raw["sections"].([]any)
	if len(sections) != 3 {
		t.Fatalf("%d sections, want 3", len(sections))
	}
	for _, s := range sections {
		for _, r := range s.(map[string]any)["rows"].([]any) {
			row := r.(map[string]any)
			for _, k := range rowKeys {
				if _, ok := row[k]; !ok {
					t.Errorf("section %v row %v lacks %q", row["section"], row["strategy"], k)
				}
			}
			if len(row) != len(rowKeys) {
				t.Errorf("row has %d keys, want %d: %v", len(row), len(rowKeys), row)
			}
			calls := row["calls"].(map[string]any)
			for _, k := range callKeys {
				c, ok := calls[k].(map[string]any)
				if !ok {
					t.Errorf("row %v: calls lacks %q", row["strategy"], k)
					continue
				}
				if _, ok := c["calls"]; !ok {
					t.Errorf("row %v: calls[%q] lacks calls", row["strategy"], k)
				}
				if _, ok := c["bytes"]; !ok {
					t.Errorf("row %v: calls[%q] lacks bytes", row["strategy"], k)
				}
			}
		}
	}
	cost := raw["syscall_cost"].(map[string]any)
	for _, k := range []string{"section", "runs", "syscalls_per_run", "syscall_ns", "syscall_min_ns", "syscall_max_ns", "syscall_user_s", "syscall_sys_s", "func_calls_per_run", "func_ns", "func_min_ns", "func_max_ns", "ratio", "syscall_method", "clock"} {
		if _, ok := cost[k]; !ok {
			t.Errorf("syscall_cost lacks %q", k)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("the benchmark left %d entries in %s: %v", len(ents), dir, ents)
	}
}

func decodeReport(t *testing.T) Report {
	t.Helper()
	doc, _ := runJSON(t)
	var r Report
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDeviceLimit: section 1 measures the device's O_DIRECT read and write
// (the temporary directory is on a disk that takes O_DIRECT here), every
// row that ran gives its share of the slower one, and a cold row proves it
// with the residency measured before its runs.
func TestDeviceLimit(t *testing.T) {
	r := decodeReport(t)
	for _, s := range r.Sections {
		d := s.DeviceLimit
		if s.Number != 1 {
			if d != (DeviceLimit{}) {
				t.Errorf("section %d has a device limit: %+v", s.Number, d)
			}
			continue
		}
		if d.Error != "" || d.ReadMBps <= 0 || d.WriteMBps <= 0 || d.LimitMBps != min(d.ReadMBps, d.WriteMBps) || d.ReadResident >= coldThreshold ||
			d.Runs != r.Runs || d.FlushS <= 0 || d.FlushS >= d.WriteS || !(d.LimitMinMBps <= d.LimitMBps*1.000001 && d.LimitMBps <= d.LimitMaxMBps*1.000001) {
			t.Fatalf("device limit %+v", d)
		}
		// Huge pages make the requests whole; small pages cut them to
		// what the device takes in one, with more in flight.
		switch d.Buffers {
		case buffersHugeTLB, buffersTHP:
			if d.BlockBytes != limitBlockBytes || d.Depth != limitDepth {
				t.Errorf("device limit with %s: %d requests of %d bytes", d.Buffers, d.Depth, d.BlockBytes)
			}
		case buffersSmall:
			if d.BlockBytes > limitBlockBytes || d.BlockBytes*d.Depth != limitBlockBytes*limitDepth && d.Depth != maxLimitDepth {
				t.Errorf("device limit with %s: %d requests of %d bytes", d.Buffers, d.Depth, d.BlockBytes)
			}
		default:
			t.Errorf("device limit buffers %q", d.Buffers)
		}
		for _, row := range s.Rows {
			if row.Refused {
				continue
			}
			want := row.FlushedMBps / d.LimitMBps
			if row.SharedExtents {
				want = 0
			}
			if math.Abs(row.ShareOfLimit-want) > 1e-9*row.ShareOfLimit {
				t.Errorf("%s: share %v, want %v", row.Strategy, row.ShareOfLimit, want)
			}
			if row.ShareOfLimit > 1 && row.ShareNote == "" {
				t.Errorf("%s: share %v without a word why", row.Strategy, row.ShareOfLimit)
			}
			if !(row.FlushedMinS <= row.FlushedMedianS && row.FlushedMedianS <= row.FlushedMaxS && row.FlushedMinS >= row.MinS) {
				t.Errorf("%s: flushed %v-%v (median %v) against the copy's %v-%v", row.Strategy, row.FlushedMinS, row.FlushedMaxS, row.FlushedMedianS, row.MinS, row.MaxS)
			}
			if (row.Cache == "cold") != (row.Resident < coldThreshold) {
				t.Errorf("%s: cache %s with %v of the source resident", row.Strategy, row.Cache, row.Resident)
			}
		}
	}
}

func TestJSONRows(t *testing.T) {
	r := decodeReport(t)
	if r.Schema != 1 || r.SizeBytes != testSize || r.Runs != 2 {
		t.Errorf("schema %d, size %d, runs %d; want 1, %d, 2", r.Schema, r.SizeBytes, r.Runs, testSize)
	}
	var names []string
	for _, s := range copier.Strategies() {
		names = append(names, s.String())
	}
	var want [][3]string // section, strategy, buffer/sync
	want = append(want, [3]string{"1", "auto", "none"}, [3]string{"1", "auto", "data"})
	for _, n := range names {
		want = append(want, [3]string{"1", n, "none"})
	}
	for b := 4 << 10; b <= 16<<20; b *= 2 {
		want = append(want, [3]string{"2", "rw", fmt.Sprint(b)})
	}
	if r.Fastest == "" || !slices.Contains(names, r.Fastest) {
		t.Fatalf("fastest = %q", r.Fastest)
	}
	s3 := []string{r.Fastest}
	if r.Fastest != "rw" {
		s3 = append(s3, "rw")
	}
	for _, m := range durability.SyncNames {
		for _, s := range s3 {
			want = append(want, [3]string{"3", s, m})
		}
	}
	var got [][3]string
	for i, s := range r.Sections {
		if s.Number != i+1 {
			t.Errorf("section %d numbered %d", i+1, s.Number)
		}
		if s.Cache != "cold" && s.Cache != "warm" {
			t.Errorf("section %d cache %q", s.Number, s.Cache)
		}
		for _, row := range s.Rows {
			if row.Section != s.Number {
				t.Errorf("row %s in section %d says section %d", row.Strategy, s.Number, row.Section)
			}
			k := row.Sync
			if s.Number == 2 {
				k = fmt.Sprint(row.BufferSize)
			}
			got = append(got, [3]string{fmt.Sprint(row.Section), row.Strategy, k})
			checkRow(t, row)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %v\nwant %v", got, want)
	}
	v := r.Verdict
	if v.Rule != verdictRule() || !strings.HasPrefix(v.Text, "what to do: ") || v.Plain.Auto == "" || v.Synced.Auto == "" || v.Plain.Why == "" || v.Synced.Why == "" {
		t.Errorf("verdict %+v", v)
	}
	// Two runs a row cannot tell a strategy from noise: none is named.
	if v.Plain.Beats || v.Synced.Beats || v.Advice != "" {
		t.Errorf("with 2 runs a row the verdict named a strategy: %+v", v)
	}
	c := r.SyscallCost
	if c.Section != 4 || c.Runs != 2 || c.SyscallNs <= 0 || c.FuncNs <= 0 || c.Syscalls <= 0 || c.FuncCalls <= 0 {
		t.Errorf("syscall cost: %+v", c)
	}
	if c.SyscallMinNs > c.SyscallNs || c.SyscallNs > c.SyscallMaxNs || c.FuncMinNs > c.FuncNs || c.FuncNs > c.FuncMaxNs {
		t.Errorf("syscall cost: median outside min-max: %+v", c)
	}
	if math.Abs(c.Ratio-c.SyscallNs/c.FuncNs) > 1e-9*c.Ratio {
		t.Errorf("ratio %v, want %v", c.Ratio, c.SyscallNs/c.FuncNs)
	}
	// Every --checksum algorithm, against the device limit when known.
	var limit float64
	for _, s := range r.Sections {
		if s.Number == 1 {
			limit = s.DeviceLimit.LimitMBps
		}
	}
	if len(r.HashRates) != len(checksum.Names)-1 {
		t.Fatalf("hash rates %+v, want one per algorithm", r.HashRates)
	}
	for i, h := range r.HashRates {
		if h.Algorithm != checksum.Names[i+1] || h.Runs != 2 || h.BytesPerRun < hashChunk || h.MBps <= 0 ||
			h.MinMBps > h.MBps || h.MBps > h.MaxMBps {
			t.Errorf("hash rate %+v", h)
		}
		if want := h.MBps / limit; limit > 0 && math.Abs(h.ShareOfLimit-want) > 1e-9*want || limit == 0 && h.ShareOfLimit != 0 {
			t.Errorf("%s: share of the limit %v, want %v", h.Algorithm, h.ShareOfLimit, want)
		}
	}
}

// checkRow checks that a row is consistent and proves its strategy ran.
func checkRow(t *testing.T, row Row) {
	t.Helper()
	name := fmt.Sprintf("section %d %s buffer %d sync %s", row.Section, row.Strategy, row.BufferSize, row.Sync)
	var sum int64
	for _, k := range callKeys {
		sum += row.Calls[k].Calls
	}
	if row.Refused {
		if row.Section != 1 {
			t.Errorf("%s: refused outside section 1: %s", name, row.Error)
		}
		if row.Errno == "" || !strings.Contains(row.Error, row.Errno) || row.Runs != 0 || row.MedianS != 0 {
			t.Errorf("%s: refused row: errno %q, error %q, runs %d, median %v", name, row.Errno, row.Error, row.Runs, row.MedianS)
		}
		if row.Calls[row.Strategy].Calls == 0 {
			t.Errorf("%s: refused without trying: calls %v", name, row.Calls)
		}
		return
	}
	if row.Errno != "" || row.Error != "" {
		t.Errorf("%s: not refused but errno %q, error %q", name, row.Errno, row.Error)
	}
	if row.Runs < 1 || row.Runs > 2 {
		t.Errorf("%s: %d runs", name, row.Runs)
	}
	if !(row.MinS > 0 && row.MinS <= row.MedianS && row.MedianS <= row.MaxS) {
		t.Errorf("%s: min %v, median %v, max %v", name, row.MinS, row.MedianS, row.MaxS)
	}
	if math.Abs(row.MBps-float64(row.Bytes)/1e6/row.MedianS) > 1e-6*row.MBps {
		t.Errorf("%s: %v MB/s, want bytes/median/1e6 = %v", name, row.MBps, float64(row.Bytes)/1e6/row.MedianS)
	}
	if row.UserS < 0 || row.SysS < 0 || row.UserS+row.SysS > row.MaxS*1.5+0.05 {
		t.Errorf("%s: user %v s, sys %v s for at most %v s of wall time", name, row.UserS, row.SysS, row.MaxS)
	}
	// The strategy the row names (or auto chose) moved every byte, no
	// other one made a call (but a clone auto tried first).
	if row.Strategy != "auto" && row.Chosen != row.Strategy || row.Chosen == "" || row.Chosen == "auto" {
		t.Errorf("%s: chosen %q", name, row.Chosen)
	}
	for _, k := range callKeys {
		c := row.Calls[k]
		switch {
		case row.Strategy == "auto" && k == "reflink" && row.Chosen != k && c.Bytes == 0:
		case k == row.Chosen:
			if c.Calls == 0 || c.Bytes != row.Bytes {
				t.Errorf("%s: %s made %d calls moving %d bytes, want all %d", name, k, c.Calls, c.Bytes, row.Bytes)
			}
		case k == "other":
			if c.Calls < 2 {
				t.Errorf("%s: %d other calls, want at least the 2 fstat", name, c.Calls)
			}
		case c.Calls != 0 || c.Bytes != 0:
			t.Errorf("%s: %s made %d calls (%d bytes) in a forced %s copy", name, k, c.Calls, c.Bytes, row.Strategy)
		}
	}
	if row.Syscalls != sum {
		// Syscalls is the median over runs, calls the median run's: with
		// identical runs (always, for regular files) they agree.
		t.Errorf("%s: syscalls %d, calls add up to %d", name, row.Syscalls, sum)
	}
	if (row.Section == 1) != (row.FlushedMedianS > 0) {
		t.Errorf("%s: flushed median %v in section %d", name, row.FlushedMedianS, row.Section)
	}
	if row.Section != 3 {
		if row.Durability != (DurabilityStats{}) || row.OpenFlags != "" {
			t.Errorf("%s: durability %+v, open flags %q outside section 3", name, row.Durability, row.OpenFlags)
		}
		return
	}
	want := map[string]string{"osync": "O_SYNC", "odsync": "O_DSYNC"}[row.Sync]
	if row.OpenFlags != want {
		t.Errorf("%s: open flags %q, want %q", name, row.OpenFlags, want)
	}
	d := row.Durability
	wantFlush := map[string]string{"data": "fdatasync", "full": "fsync", "osync": "fsync", "odsync": "fdatasync"}[row.Sync]
	if d.Flush != wantFlush || (wantFlush == "") != (d.FlushS == 0) || (wantFlush == "") != (d.DirSyncS == 0) {
		t.Errorf("%s: durability %+v, want a final %q and a directory fsync unless --sync=none", name, d, wantFlush)
	}
}

// TestRW4KiBCalls checks the system call count of the 4 KiB rw row exactly:
// the loop reads a 4 KiB block and writes it, size/4096 times, then one
// more read returns 0 at end of file. The copier counts reads and writes of
// the rw loop together; the engine's own calls are the two fstat (source,
// destination): a file with all its blocks is not walked for holes.
func TestRW4KiBCalls(t *testing.T) {
	r := decodeReport(t)
	var row *Row
	for i := range r.Sections[1].Rows {
		if r.Sections[1].Rows[i].BufferSize == 4096 {
			row = &r.Sections[1].Rows[i]
		}
	}
	if row == nil {
		t.Fatal("no 4 KiB row in section 2")
	}
	blocks := int64(testSize / 4096)
	if got, want := row.Calls["rw"].Calls, 2*blocks+1; got != want {
		t.Errorf("rw at 4 KiB made %d calls for %d bytes, want %d (%d reads + 1 read at EOF + %d writes)",
			got, row.Bytes, want, blocks, blocks)
	}
	if got := row.Calls["rw"].Bytes; got != testSize {
		t.Errorf("rw at 4 KiB moved %d bytes, want %d", got, testSize)
	}
	if got := row.Calls["other"].Calls; got != 2 {
		t.Errorf("%d other calls, want 2 (fstat of source and destination)", got)
	}
	if row.Syscalls != 2*blocks+3 {
		t.Errorf("syscalls %d, want %d", row.Syscalls, 2*blocks+3)
	}
}

func TestTables(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := run(t, Config{Dir: dir, Size: 64 << 10, Runs: 1})
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, s := range append([]copier.Strategy{copier.Auto}, copier.Strategies()...) {
		if !strings.Contains(out, "\n"+s.String()+" ") {
			t.Errorf("section 1 has no %s row:\n%s", s, out)
		}
	}
	for _, want := range []string{
		"\n1. Strategies", "\n2. rw loop by buffer size", "\n3. --sync modes", "\n4. Cost of one system call",
		"  4 KiB", " 16 MiB", "\nosync ", "\nodsync ", "getpid (raw syscall)", "MB/s", "copy ms", "disk ms", "CPU s", "syscalls",
		"\n" + autoSyncLabel + " ", "\ndevice limit ", "\nverdict: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := len(lines) - 1 // the last paragraph's first line: wrapped lines go on indented
	for last > 0 && strings.HasPrefix(lines[last], " ") {
		last--
	}
	if !strings.HasPrefix(lines[last], "what to do: ") {
		t.Errorf("the last paragraph %q does not say what to do", lines[last:])
	}
	for _, l := range lines {
		if len([]rune(l)) > MinWidth {
			t.Errorf("a line wider than %d columns: %q", MinWidth, l)
		}
	}
	if strings.Contains(out, "\r") || strings.Contains(out, "\x1b") {
		t.Errorf("progress escapes on stdout:\n%q", out)
	}
	assertEmpty(t, dir)
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in %s: %v", dir, names)
	}
}

// fakeStatfs makes statfs report avail bytes free in dirs (others as they are).
func fakeStatfs(t *testing.T, avail int64, dirs ...string) {
	t.Helper()
	real := statfs
	t.Cleanup(func() { statfs = real })
	statfs = func(path string, st *unix.Statfs_t) error {
		if err := real(path, st); err != nil {
			return err
		}
		if slices.Contains(dirs, path) {
			st.Bsize = 4096
			st.Bavail = uint64(avail / 4096)
		}
		return nil
	}
}

func TestFreeSpaceRefusal(t *testing.T) {
	dir, from := t.TempDir(), t.TempDir()
	tests := []struct {
		name    string
		c       Config
		tight   string
		message string
	}{
		{"dir", Config{Dir: dir, Size: 64 << 20}, dir,
			"fastcp: not enough free space in '" + dir + "' for the benchmark: 127.9 MiB available, 128 MiB needed (twice --bench-size); try a smaller --bench-size\n"},
		{"from", Config{Dir: dir, From: from, Size: 8 << 20}, from,
			"fastcp: not enough free space in '" + from + "' for the benchmark: 15.9 MiB available, 16 MiB needed (twice --bench-size); try a smaller --bench-size\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeStatfs(t, 2*tt.c.Size-4096, tt.tight)
			code, out, errs := run(t, tt.c)
			if code != 1 || out != "" || errs != tt.message {
				t.Errorf("exit %d, stdout %q, stderr:\n %q\nwant exit 1, no stdout, stderr:\n %q", code, out, errs, tt.message)
			}
			assertEmpty(t, dir)
			assertEmpty(t, from)
		})
	}
	t.Run("huge size", func(t *testing.T) {
		code, _, errs := run(t, Config{Dir: dir, Size: math.MaxInt64})
		if code != 1 || !strings.HasPrefix(errs, "fastcp: not enough free space in '"+dir+"' for the benchmark: ") {
			t.Errorf("--bench-size=MaxInt64: exit %d, stderr %q", code, errs)
		}
		assertEmpty(t, dir)
	})
	t.Run("exactly enough", func(t *testing.T) {
		fakeStatfs(t, 2*64<<10, dir)
		code, _, errs := run(t, Config{Dir: dir, Size: 64 << 10, Runs: 1, JSON: true})
		if code != 0 {
			t.Errorf("exit %d with exactly twice the size free: %s", code, errs)
		}
		assertEmpty(t, dir)
	})
}

func TestBadDirectory(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	code, out, errs := run(t, Config{Dir: missing, Size: 64 << 10, Runs: 1})
	if want := "fastcp: cannot access '" + missing + "': No such file or directory\n"; code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, \"\", %q", code, out, errs, want)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, Config{Dir: dir, From: file, Size: 64 << 10, Runs: 1})
	if want := "fastcp: '" + file + "' is not a directory\n"; code != 1 || errs != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, errs, want)
	}
}

// TestErrorRemovesFiles makes writing the test file fail half-way (a file
// size limit: Go ignores SIGXFSZ, so write returns EFBIG) and checks that
// the benchmark says so and leaves nothing behind.
func TestErrorRemovesFiles(t *testing.T) {
	dir := t.TempDir()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = 256 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip("cannot lower RLIMIT_FSIZE:", err)
	}
	code, _, errs := run(t, Config{Dir: dir, Size: 1 << 20, Runs: 1})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.HasPrefix(errs, "fastcp: cannot write '"+dir+"/"+privatePrefix) || !strings.HasSuffix(errs, "/source': File too large\n") {
		t.Errorf("exit %d, stderr %q; want 1 and a write error", code, errs)
	}
	assertEmpty(t, dir)
}

// TestInterruptRemovesEverything runs the hook the signal handler calls.
func TestInterruptRemovesEverything(t *testing.T) {
	dir := t.TempDir()
	w := &workspace{}
	p, err := w.mkdir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(p), privatePrefix) {
		t.Errorf("private directory %s does not start with %s", p, privatePrefix)
	}
	f, err := w.create(filepath.Join(p, "source"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w.interrupted()
	assertEmpty(t, dir)
	if w.mu.TryLock() {
		t.Error("the interrupt hook must keep the workspace locked until the process exits")
	}
}

func TestResidentFraction(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeRandom(f, 1<<20); err != nil {
		t.Fatal(err)
	}
	if fr, err := residentFraction(f, 1<<20); err != nil || fr != 1 {
		t.Errorf("just written: resident %v, %v; want 1", fr, err)
	}
	if err := evict(f); err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		t.Skip("tmpfs cannot evict")
	}
	if fr, err := residentFraction(f, 1<<20); err != nil || fr >= coldThreshold {
		t.Errorf("evicted: resident %v, %v; want 0", fr, err)
	}
}

// TestSourceOffTheMount: a benchmark into a network or FUSE mount keeps its
// source on a local filesystem, and says which and why; --bench-from still
// decides where it asks.
func TestSourceOffTheMount(t *testing.T) {
	mount, local, tmpfs := t.TempDir(), t.TempDir(), t.TempDir()
	realType, realDirs := fsTypeOf, localDirs
	t.Cleanup(func() { fsTypeOf, localDirs = realType, realDirs })
	fsTypeOf = func(dir string) string {
		switch dir {
		case mount:
			return "fuse.sshfs"
		case tmpfs:
			return "tmpfs"
		}
		return "ext4"
	}
	for _, tt := range []struct {
		name    string
		dirs    []string
		from    string
		want    string
		wantWhy string
	}{
		{"a disk", []string{tmpfs, local}, "", local, "is on a fuse.sshfs mount, and copies onto one read from a local disk"},
		{"only memory", []string{filepath.Join(mount, "missing"), tmpfs}, "", tmpfs, "is on a fuse.sshfs mount"},
		{"nowhere else", []string{mount}, "", mount, ""},
		{"--bench-from", []string{local}, tmpfs, tmpfs, "--bench-from"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			localDirs = func() []string { return tt.dirs }
			var out, errb bytes.Buffer
			if code := Run(Config{Dir: mount, From: tt.from, Size: 64 << 10, Runs: 1, JSON: true}, &out, &errb, "fastcp"); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var r Report
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.From != tt.want || !strings.Contains(r.FromWhy, tt.wantWhy) || (tt.wantWhy == "") != (r.FromWhy == "") {
				t.Errorf("source in %s (%q), want %s (%q)", r.From, r.FromWhy, tt.want, tt.wantWhy)
			}
			if r.DirFS != "fuse.sshfs" || r.Dir != mount {
				t.Errorf("copies into %s (%s)", r.Dir, r.DirFS)
			}
			for _, d := range []string{mount, local, tmpfs} {
				assertEmpty(t, d)
			}
		})
	}
	// The tables say it in their header.
	localDirs = func() []string { return []string{local} }
	code, out, errs := run(t, Config{Dir: mount, Size: 64 << 10, Runs: 1})
	want := "source file: in " + local + " (ext4): " + mount + " is on a fuse.sshfs mount"
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("exit %d, stderr %q; the header does not say %q:\n%s", code, errs, want, out)
	}
}

// TestTablesWiderTerminal: a wider terminal gets more columns (the
// copier's calls), 80 columns the figures that matter.
func TestTablesWiderTerminal(t *testing.T) {
	dir := t.TempDir()
	for _, width := range []int{80, 200} {
		code, out, errs := run(t, Config{Dir: dir, Size: 64 << 10, Runs: 1, Width: width})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		widest := 0
		for _, l := range strings.Split(out, "\n") {
			widest = max(widest, len([]rune(l)))
		}
		calls := strings.Contains(out, "calls by strategy (bytes)")
		if widest > width || calls != (width > 80) || (width > 80) != (widest > 80) {
			t.Errorf("width %d: widest line %d, calls column shown: %v", width, widest, calls)
		}
	}
}

// The limit is the slower of the median read and the median write; when
// those come from different runs it can lie outside every run's own
// limit (the slower side of that run), and the spread still holds it.
func TestLimitSpreadHoldsTheLimit(t *testing.T) {
	const size = 1000 << 20
	run := func(readS, writeS float64) limitRun {
		return limitRun{read: time.Duration(readS * float64(time.Second)), write: time.Duration(writeS * float64(time.Second)), flush: time.Millisecond, writeBytes: size}
	}
	// Per-run limits: 1000/1.25 = 800 and 1000/1.2 = 833 MB/s (MiB as
	// mbPerSec counts them); the medians: read 1.1 s, write 1.1 s, so the
	// limit of the medians is above both runs' limits.
	p := &limitProbe{b: &bench{size: size}, runs: []limitRun{run(1.0, 1.25), run(1.2, 0.95)}}
	d := p.result()
	if d.Error != "" || !(d.LimitMinMBps <= d.LimitMBps && d.LimitMBps <= d.LimitMaxMBps) || d.LimitMBps != min(d.ReadMBps, d.WriteMBps) {
		t.Fatalf("limit %.1f, spread %.1f-%.1f, read %.1f, write %.1f", d.LimitMBps, d.LimitMinMBps, d.LimitMaxMBps, d.ReadMBps, d.WriteMBps)
	}
	if want := mbPerSec(size, 1.25); d.LimitMinMBps != want {
		t.Errorf("spread from %.1f, want the slowest run's %.1f", d.LimitMinMBps, want)
	}
}
