// SPDX-License-Identifier: MIT

package benchmark

import (
	"errors"
	"fmt"
	"strings"

	"fastcp/copier"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// Report is the --json document: everything the tables show.
type Report struct {
	Schema int    `json:"schema"`  // 1
	Dir    string `json:"dir"`     // where the copies were written
	DirFS  string `json:"dir_fs"`  // its filesystem type ("ext4")
	From   string `json:"from"`    // where the source file was
	FromFS string `json:"from_fs"` // its filesystem type
	// FromWhy says why the source is where it is: "" (in dir),
	// "--bench-from", or why a local filesystem was taken for a dir on a
	// network or FUSE mount.
	FromWhy     string      `json:"from_why"`
	SizeBytes   int64       `json:"size_bytes"`   // test file size
	Runs        int         `json:"runs"`         // --bench-runs
	Sections    []Section   `json:"sections"`     // sections 1 to 3: copies
	SyscallCost SyscallCost `json:"syscall_cost"` // section 4
	HashRates   []HashRate  `json:"hash_rates"`   // section 4: --checksum's algorithms
	Fastest     string      `json:"fastest"`      // the fastest forced strategy of section 1, by median_s
	FastestMBps float64     `json:"fastest_mb_per_s"`
	Verdict     Verdict     `json:"verdict"` // auto against the fastest forced strategy, and what to do
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
// the same size written (preallocated, then flushed with fdatasync: the
// end point of the rows' flushed times), both at once, Depth requests of
// BlockBytes in flight on each side, as fio measures a read job and a
// write job running together (rw=read and rw=write, direct=1,
// iodepth=Depth, mem=shmhuge, end_fsync=1), once a round of section 1. A
// copy reads and writes every byte, so it cannot beat the slower of the
// two: LimitMBps.
type DeviceLimit struct {
	BlockBytes int `json:"block_bytes"`
	Depth      int `json:"depth"` // requests in flight on each side
	// Buffers says what memory the requests used: "2 MiB huge pages
	// (hugetlb)", "2 MiB transparent huge pages" or "4 KiB pages" (then
	// BlockBytes is cut to what the device takes in one request).
	Buffers      string  `json:"buffers"`
	Runs         int     `json:"runs"`
	ReadS        float64 `json:"read_s"` // medians of the runs
	ReadMBps     float64 `json:"read_mb_per_s"`
	ReadResident float64 `json:"read_resident"` // the source's largest cached fraction before a read (mincore)
	WriteS       float64 `json:"write_s"`       // the writes and the final fdatasync
	FlushS       float64 `json:"flush_s"`       // that fdatasync
	WriteMBps    float64 `json:"write_mb_per_s"`
	LimitMBps    float64 `json:"limit_mb_per_s"` // min(read, write); 0 when unknown
	// The spread of the runs: each run's min(read, write).
	LimitMinMBps float64 `json:"limit_min_mb_per_s"`
	LimitMaxMBps float64 `json:"limit_max_mb_per_s"`
	Error        string  `json:"error"` // why it could not be measured ("" when it was)
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
	// Section 1 only (zero elsewhere): the same runs timed until the
	// copy's data was on the device (the copy, then fdatasync of the
	// destination), the end point of the device limit and of --sync.
	FlushedMedianS float64 `json:"flushed_median_s"`
	FlushedMinS    float64 `json:"flushed_min_s"`
	FlushedMaxS    float64 `json:"flushed_max_s"`
	FlushedMBps    float64 `json:"flushed_mb_per_s"` // bytes / flushed_median_s
	// ShareOfLimit is FlushedMBps as a fraction of section 1's device
	// limit, both at the same end point (0 in the other sections, when
	// the limit is unknown, or when the copy shares extents).
	ShareOfLimit float64 `json:"share_of_limit"`
	// ShareNote says why a share passes 1 (or why there is none): ""
	// when it needs no word.
	ShareNote string `json:"share_note"`
	// Chosen is the strategy that moved the bytes: the row's own, or for
	// an "auto" row what auto chose (in the median run).
	Chosen string `json:"chosen"`
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
