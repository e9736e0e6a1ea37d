// SPDX-License-Identifier: MIT

package benchmark

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"fastcp/copier"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// Report is the --json document: everything the tables show.
type Report struct {
	Schema      int         `json:"schema"`       // 1
	Dir         string      `json:"dir"`          // where the copies were written
	DirFS       string      `json:"dir_fs"`       // its filesystem type ("ext4")
	From        string      `json:"from"`         // where the source file was
	FromFS      string      `json:"from_fs"`      // its filesystem type
	SizeBytes   int64       `json:"size_bytes"`   // test file size
	Runs        int         `json:"runs"`         // --bench-runs
	Sections    []Section   `json:"sections"`     // sections 1 to 3: copies
	SyscallCost SyscallCost `json:"syscall_cost"` // section 4
	Fastest     string      `json:"fastest"`      // the fastest strategy of section 1
	FastestMBps float64     `json:"fastest_mb_per_s"`
	Seconds     float64     `json:"seconds"` // wall time of the whole benchmark
	Notes       []string    `json:"notes"`
}

// Section is one table of copy rows.
type Section struct {
	Number int    `json:"number"` // 1, 2 or 3
	Title  string `json:"title"`
	Cache  string `json:"cache"` // "cold" or "warm": the source's page cache before each run
	Timed  string `json:"timed"` // what the timer covered
	Note   string `json:"note"`  // how the rows were made; "" when nothing to add
	Rows   []Row  `json:"rows"`
	// DeviceLimit is section 1's yardstick: the device's own O_DIRECT
	// sequential read and write speed on this filesystem (zero in the
	// other sections).
	DeviceLimit DeviceLimit `json:"device_limit"`
}

// DeviceLimit is what the device gives a copy with O_DIRECT on the
// benchmark's filesystems: the source read whole, cold, and a new file of
// the same size written (preallocated, no flush, as the section 1 copies),
// both at once, Depth requests of BlockBytes in flight on each side, as fio
// measures a read job and a write job running together (rw=read and
// rw=write, direct=1, iodepth=Depth). A copy reads and writes every byte,
// so it cannot beat the slower of the two: LimitMBps.
type DeviceLimit struct {
	BlockBytes   int     `json:"block_bytes"`
	Depth        int     `json:"depth"` // requests in flight on each side
	ReadS        float64 `json:"read_s"`
	ReadMBps     float64 `json:"read_mb_per_s"`
	ReadResident float64 `json:"read_resident"` // the source's cached fraction before the read (mincore)
	WriteS       float64 `json:"write_s"`
	WriteMBps    float64 `json:"write_mb_per_s"`
	LimitMBps    float64 `json:"limit_mb_per_s"` // min(read, write); 0 when unknown
	Error        string  `json:"error"`          // why it could not be measured ("" when it was)
}

// Row is one measured configuration: the median of its runs, with min and max.
type Row struct {
	Section    int     `json:"section"`
	Strategy   string  `json:"strategy"`    // copier strategy, forced
	BufferSize int     `json:"buffer_size"` // rw's buffer in bytes; 0 for the other strategies
	Sync       string  `json:"sync"`        // --sync mode: none, data, full, osync, odsync
	Cache      string  `json:"cache"`       // "cold" (source evicted, checked with mincore) or "warm"
	Bytes      int64   `json:"bytes"`       // bytes per copy
	Runs       int     `json:"runs"`        // timed runs (0 when refused)
	MedianS    float64 `json:"median_s"`    // wall seconds
	MinS       float64 `json:"min_s"`
	MaxS       float64 `json:"max_s"`
	MBps       float64 `json:"mb_per_s"` // bytes / median, in 10^6 bytes per second
	UserS      float64 `json:"user_s"`   // median user CPU seconds of the copying thread
	SysS       float64 `json:"sys_s"`    // median system CPU seconds of the copying thread
	Syscalls   int64   `json:"syscalls"` // system calls the copier made in the median run
	// Calls breaks Syscalls down by the copier's own counters: one entry per
	// strategy ("reflink", "copy_file_range", "direct", "sendfile", "splice", "rw")
	// and "other" (fstat, lseek, ftruncate), always all seven.
	Calls     map[string]CallCount `json:"calls"`
	OpenFlags string               `json:"open_flags"` // section 3: O_SYNC/O_DSYNC as fcntl(F_GETFL) saw them on the destination, else ""
	// SharedExtents is true when the copy shares extents with the source
	// (FIEMAP_EXTENT_SHARED): a clone, no data was copied.
	SharedExtents bool `json:"shared_extents"`
	// Resident is the largest fraction of the source that was in the page
	// cache right before one of the row's timed runs (mincore, after the
	// eviction of a cold row): what "cold" rests on.
	Resident float64 `json:"resident"`
	// ShareOfLimit is MBps as a fraction of section 1's device limit
	// (0 in the other sections, or when the limit is unknown).
	ShareOfLimit float64 `json:"share_of_limit"`
	// Durability is what durability.Destination did (section 3; zero in
	// sections 1 and 2, which write a plain file and do not flush it).
	Durability DurabilityStats `json:"durability"`
	Refused    bool            `json:"refused"` // the filesystem or kernel refused the strategy
	Errno      string          `json:"errno"`   // when refused: "EOPNOTSUPP"
	Error      string          `json:"error"`   // when refused: "ioctl(FICLONE): EOPNOTSUPP (Operation not supported)"
}

// DurabilityStats is what the durability layer did in the median-time run
// of a section 3 row (durability.Destination.Stats).
type DurabilityStats struct {
	Flush             string  `json:"flush"`                 // the final flush: "fdatasync", "fsync" or "" (--sync=none)
	FlushS            float64 `json:"flush_s"`               // its seconds
	DirSyncS          float64 `json:"dir_sync_s"`            // seconds of the directory fsync after the rename
	WritebackCalls    int     `json:"sync_file_range_calls"` // writeback started behind the copy
	BackgroundFlushes int     `json:"background_flushes"`    // fdatasyncs during the copy
}

// CallCount is what one strategy did in one copy (the median run's).
type CallCount struct {
	Calls int64 `json:"calls"`
	Bytes int64 `json:"bytes"`
}

// SyscallCost is section 4: one raw getpid(2) against a function call.
type SyscallCost struct {
	Section       int     `json:"section"` // 4
	Runs          int     `json:"runs"`
	Syscalls      int64   `json:"syscalls_per_run"` // getpid calls timed per run
	SyscallNs     float64 `json:"syscall_ns"`       // median ns per getpid
	SyscallMinNs  float64 `json:"syscall_min_ns"`
	SyscallMaxNs  float64 `json:"syscall_max_ns"`
	SyscallUserS  float64 `json:"syscall_user_s"` // median CPU seconds of one run of the getpid loop
	SyscallSysS   float64 `json:"syscall_sys_s"`
	FuncCalls     int64   `json:"func_calls_per_run"`
	FuncNs        float64 `json:"func_ns"` // median ns per non-inlined call
	FuncMinNs     float64 `json:"func_min_ns"`
	FuncMaxNs     float64 `json:"func_max_ns"`
	Ratio         float64 `json:"ratio"`          // syscall_ns / func_ns
	SyscallMethod string  `json:"syscall_method"` // "raw syscall": syscall.RawSyscall, no Go scheduler hooks
	Clock         string  `json:"clock"`          // what the ns count: "CLOCK_THREAD_CPUTIME_ID", the thread's CPU time
}

// callKeys are the keys of Row.Calls, in table order.
var callKeys = []string{"reflink", "copy_file_range", "direct", "sendfile", "splice", "rw", "other"}

// callsOf turns the copier's counters into Row.Calls.
func callsOf(r *copier.Result) map[string]CallCount {
	m := make(map[string]CallCount, len(callKeys))
	for _, s := range copier.Strategies() {
		st := r.StatOf(s)
		m[s.String()] = CallCount{Calls: st.Calls, Bytes: st.Bytes}
	}
	m["other"] = CallCount{Calls: r.StatOf(copier.Auto).Calls}
	return m
}

// describeCalls renders Row.Calls for the table: the strategies that made
// calls, with the bytes they moved, then the engine's own calls.
func describeCalls(r *Row) string {
	m := r.Calls
	var parts []string
	for _, k := range callKeys {
		c := m[k]
		if c.Calls == 0 {
			continue
		}
		if k == "other" {
			parts = append(parts, fmt.Sprintf("other %d", c.Calls))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", k, c.Calls, formatSize(c.Bytes)))
	}
	s := strings.Join(parts, ", ")
	if r.SharedExtents {
		s += "; extents shared, no data copied"
	}
	if d := r.Durability; r.Section == 3 {
		var ds []string
		if d.WritebackCalls > 0 {
			ds = append(ds, fmt.Sprintf("%d sync_file_range", d.WritebackCalls))
		}
		if d.BackgroundFlushes > 0 {
			ds = append(ds, fmt.Sprintf("%d background fdatasync", d.BackgroundFlushes))
		}
		if d.Flush != "" {
			ds = append(ds, fmt.Sprintf("%s %s s", d.Flush, secs(d.FlushS)))
		}
		if d.DirSyncS > 0 {
			ds = append(ds, fmt.Sprintf("directory fsync %s s", secs(d.DirSyncS)))
		}
		if len(ds) > 0 {
			s += "; " + strings.Join(ds, ", ")
		}
	}
	return s
}

// formatSize prints a byte count in binary units, rounded down to a tenth.
var formatSize = output.Size

// quote quotes a file name in messages as cp does.
var quote = output.Quote

// errText is the C library's text for err's errno, or err's own text.
var errText = output.ErrText

// errnoName is the symbolic name of err's errno ("EOPNOTSUPP"), or "".
func errnoName(err error) string {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return ""
	}
	if errno == unix.EOPNOTSUPP {
		return "EOPNOTSUPP" // == ENOTSUP; the copier's spelling
	}
	return unix.ErrnoName(errno)
}

// table is a set of aligned columns. A row whose span is set prints its
// first cell, then span across the remaining columns (refusals).
type table struct {
	header []string
	right  []bool // right-align this column (numbers)
	rows   []tableRow
}

type tableRow struct {
	cells []string
	span  string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, tableRow{cells: cells}) }

func (t *table) addSpan(first, span string) {
	t.rows = append(t.rows, tableRow{cells: []string{first}, span: span})
}

func (t *table) write(w io.Writer) {
	width := make([]int, len(t.header))
	for i, h := range t.header {
		width[i] = len(h)
	}
	for _, r := range t.rows {
		for i, c := range r.cells {
			width[i] = max(width[i], len(c))
		}
	}
	line := func(cells []string, span string) {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i == len(cells)-1 && span == "" {
				b.WriteString(c) // no trailing blanks
			} else {
				b.WriteString(c + pad)
			}
		}
		if span != "" {
			b.WriteString("  " + span)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.header, "")
	for _, r := range t.rows {
		line(r.cells, r.span)
	}
}

// tablePrinter writes the human-readable report.
type tablePrinter struct {
	w   io.Writer
	err error
}

func (p *tablePrinter) printf(format string, a ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, format, a...)
}

func (p *tablePrinter) header(r *Report) {
	from := ""
	if r.From != r.Dir {
		from = fmt.Sprintf(", source file in %s (%s)", r.From, r.FromFS)
	}
	p.printf("fastcp --benchmark: copies into %s (%s)%s\n", r.Dir, r.DirFS, from)
	p.printf("test file %s of random bytes, %d timed run%s per row: median time, min-max, MB/s = 10^6 bytes/s\n",
		formatSize(r.SizeBytes), r.Runs, plural(r.Runs))
	p.printf("CPU = user and system seconds of the copying thread (getrusage RUSAGE_THREAD); syscalls = the copier's own counts\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// secs prints seconds with at least three decimals and at least three
// significant digits: 1.250, 0.472, 0.0472, 0.000472.
func secs(s float64) string {
	if s <= 0 {
		return "0"
	}
	decimals := max(3, 2-int(math.Floor(math.Log10(s))))
	return fmt.Sprintf("%.*f", min(decimals, 9), s)
}

// rowLead is the first cells of a row of section n: what the row varies.
func rowLead(n int, r *Row) []string {
	switch n {
	case 1:
		return []string{strategyLabel(r)}
	case 2:
		loops := int64(0)
		if r.BufferSize > 0 {
			loops = (r.Bytes + int64(r.BufferSize) - 1) / int64(r.BufferSize)
		}
		return []string{formatSize(int64(r.BufferSize)), fmt.Sprint(loops)}
	case 3:
		flags := r.OpenFlags
		if flags == "" {
			flags = "-"
		}
		return []string{r.Sync, strategyLabel(r), flags}
	}
	return nil
}

// section prints one copy section.
func (p *tablePrinter) section(s *Section) {
	p.printf("\n%d. %s, %s cache\n", s.Number, s.Title, s.Cache)
	p.printf("   timed: %s\n", s.Timed)
	if s.Note != "" {
		p.printf("   %s\n", s.Note)
	}
	t := &table{}
	var first []string
	var firstRight []bool
	switch s.Number {
	case 1:
		first, firstRight = []string{"strategy"}, []bool{false}
	case 2:
		first, firstRight = []string{"buffer", "loops"}, []bool{true, true}
	case 3:
		first, firstRight = []string{"sync", "strategy", "open flags"}, []bool{false, false, false}
	}
	calls := "calls by strategy (bytes)"
	if s.Number == 3 {
		calls += "; durability"
	}
	t.header = append(first, "runs", "time s", "min-max s", "MB/s", "user s", "sys s", "syscalls")
	t.right = append(firstRight, true, true, true, true, true, true, true)
	if s.Number == 1 {
		t.header = append(t.header, "cached", "share")
		t.right = append(t.right, true, true)
	}
	t.header = append(t.header, calls)
	t.right = append(t.right, false)
	for i := range s.Rows {
		r := &s.Rows[i]
		lead := rowLead(s.Number, r)
		if r.Refused {
			if len(lead) == 1 {
				t.addSpan(lead[0], "refused: "+r.Error)
			} else {
				t.addSpan(strings.Join(lead, "  "), "refused: "+r.Error)
			}
			continue
		}
		cells := append(lead,
			fmt.Sprint(r.Runs),
			secs(r.MedianS),
			secs(r.MinS)+"-"+secs(r.MaxS),
			fmt.Sprintf("%.0f", r.MBps),
			fmt.Sprintf("%.2f", r.UserS),
			fmt.Sprintf("%.2f", r.SysS),
			fmt.Sprint(r.Syscalls))
		if s.Number == 1 {
			share := "-"
			if r.ShareOfLimit > 0 {
				share = fmt.Sprintf("%.0f%%", 100*r.ShareOfLimit)
			}
			cells = append(cells, fmt.Sprintf("%.1f%%", 100*r.Resident), share)
		}
		t.add(append(cells, describeCalls(r))...)
	}
	if s.Number == 1 && s.DeviceLimit.LimitMBps > 0 {
		d := s.DeviceLimit
		blank := []string{"", "", ""}
		t.add(append([]string{"device read (O_DIRECT)", "1", secs(d.ReadS), "", fmt.Sprintf("%.0f", d.ReadMBps)}, append(blank,
			fmt.Sprintf("%.1f%%", 100*d.ReadResident), fmt.Sprintf("%.0f%%", 100*d.ReadMBps/d.LimitMBps),
			fmt.Sprintf("%d pread64 of %s in flight, while the write below runs", d.Depth, formatSize(int64(d.BlockBytes))))...)...)
		t.add(append([]string{"device write (O_DIRECT)", "1", secs(d.WriteS), "", fmt.Sprintf("%.0f", d.WriteMBps)}, append(blank,
			"", fmt.Sprintf("%.0f%%", 100*d.WriteMBps/d.LimitMBps),
			fmt.Sprintf("%d pwrite64 of %s in flight, while the read above runs; preallocated, no flush", d.Depth, formatSize(int64(d.BlockBytes))))...)...)
	}
	if p.err == nil {
		var b strings.Builder
		t.write(&b)
		p.printf("%s", b.String())
	}
}

// DefaultRWLabel is how the tables name the rw loop with its default
// buffer: "rw (512 KiB)".
func DefaultRWLabel() string {
	return fmt.Sprintf("rw (%s)", formatSize(copier.DefaultBufferSize))
}

func strategyLabel(r *Row) string {
	if r.Strategy == copier.RW.String() {
		return fmt.Sprintf("rw (%s)", formatSize(int64(r.BufferSize)))
	}
	return r.Strategy
}

// syscallCost prints section 4.
func (p *tablePrinter) syscallCost(c *SyscallCost) {
	p.printf("\n4. Cost of one system call against a function call (%d run%s, median)\n", c.Runs, plural(c.Runs))
	p.printf("   timed: the calling thread's CPU time (%s), so waiting for a busy CPU does not count\n", c.Clock)
	t := &table{
		header: []string{"call", "calls/run", "ns/call", "min-max ns", "user s", "sys s"},
		right:  []bool{false, true, true, true, true, true},
	}
	t.add("getpid ("+c.SyscallMethod+")", fmt.Sprint(c.Syscalls), fmt.Sprintf("%.1f", c.SyscallNs),
		fmt.Sprintf("%.1f-%.1f", c.SyscallMinNs, c.SyscallMaxNs), fmt.Sprintf("%.2f", c.SyscallUserS), fmt.Sprintf("%.2f", c.SyscallSysS))
	t.add("function call (//go:noinline)", fmt.Sprint(c.FuncCalls), fmt.Sprintf("%.2f", c.FuncNs),
		fmt.Sprintf("%.2f-%.2f", c.FuncMinNs, c.FuncMaxNs), "", "")
	if p.err == nil {
		var b strings.Builder
		t.write(&b)
		p.printf("%s", b.String())
	}
	p.printf("one system call costs as much as %.0f function calls\n", c.Ratio)
}

// footer prints the notes and the verdict.
func (p *tablePrinter) footer(r *Report) {
	p.printf("\n")
	for _, n := range r.Notes {
		p.printf("note: %s\n", n)
	}
	where := fmt.Sprintf("on %s (%s)", r.Dir, r.DirFS)
	if r.From != r.Dir {
		where = fmt.Sprintf("from %s (%s) to %s (%s)", r.From, r.FromFS, r.Dir, r.DirFS)
	}
	if r.Fastest == "" {
		p.printf("no strategy worked %s\n", where)
		return
	}
	how := "cold cache"
	if len(r.Sections) > 0 {
		for _, row := range r.Sections[0].Rows {
			if row.Strategy == r.Fastest {
				how = row.Cache + " cache"
				if row.SharedExtents {
					how += "; it shares extents, no data is copied"
				}
			}
		}
	}
	p.printf("fastest strategy %s: %s (%.0f MB/s, %s)\n", where, r.Fastest, r.FastestMBps, how)
}
