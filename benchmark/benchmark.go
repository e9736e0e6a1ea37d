// SPDX-License-Identifier: MIT

// Package benchmark is fastcp --benchmark: it times every copy strategy, the
// rw loop's buffer sizes, every --sync mode and the cost of a system call on
// the filesystem it is pointed at, and prints tables or JSON.
//
// # What runs
//
// A test file of Config.Size random bytes (ChaCha8: incompressible, and
// generated faster than the disk writes) is written into a private
// directory DIR/.fastcp-bench-XXXXXX (or one in Config.From; when DIR is
// on a network or FUSE mount, one on a local filesystem: localSource), and
// copied into a private directory in DIR, each strategy forced (no
// fallback):
//
//  1. auto as fastcp chooses (as a copy without --sync, and as one with
//     it), then every strategy (reflink, copy_file_range, direct, sendfile,
//     splice, rw with copier.DefaultBufferSize), cold cache: before each
//     run the source is written back and evicted (fdatasync, posix_fadvise
//     POSIX_FADV_DONTNEED, then checked with mincore: a row whose source
//     stayed in memory, as on tmpfs, says "warm"); after each run the copy
//     is evicted and removed, untimed. Each run is timed to two end points:
//     the copy's return (as with --sync=none), and its data on the device
//     (the copy, then fdatasync). The device's limit (limit.go) runs among
//     them, and the rows take turns, one run of each a round, so that they
//     share the host's weather. The verdict (verdict.go) compares auto's
//     choice with the fastest strategy beyond the runs' noise;
//  2. the rw loop at 4 KiB, 8 KiB, ... 16 MiB buffers, warm cache (the
//     source is read into the page cache first, the copy is written to the
//     page cache and removed unflushed, so the rows measure the cost per
//     call, as in APUE Figure 3.6);
//  3. every --sync mode with the fastest strategy of section 1 and with rw,
//     warm source, timed from durability.Create to Destination.Commit, as a
//     real copy, as in APUE Figure 3.13. A test file larger than
//     syncFileBytes is replaced by a random file of that size first, since
//     the O_SYNC rows of the offload strategies crawl (the header says so);
//  4. one raw getpid(2) against one non-inlined Go function call, timed in
//     the thread's CPU time, so that a busy machine does not inflate them.
//
// Rows of sections 2 and 3 stop after the run that takes their total past
// rowBudget (at least one run; every row reports its number of runs), so a
// huge --bench-size stays bounded. Every timed copy runs on a goroutine
// locked to its thread, whose CPU time (getrusage RUSAGE_THREAD) is the
// row's user and system time. The system call counts are the copier's own
// (copier.Result.Stats), so each row shows the calls of the strategy it names.
//
// The benchmark refuses to start when DIR (or From) has less than twice the
// test size available, and removes its private directories on return and,
// through durability.AtInterrupt, on SIGINT, SIGTERM and SIGHUP (which
// also erase its progress line).
//
// The tables fit Config.Width columns (80 unless the terminal is wider):
// prose is wrapped, and each table takes the widest of its layouts that
// fits (layout.go); --json has every figure.
//
// # JSON (--json)
//
// One document on stdout (schema 1), every key always present:
//
//	{
//	  "schema": 1,
//	  "dir": "/mnt/new",              copies written here
//	  "dir_fs": "xfs",                filesystem type (mount table)
//	  "from": "/mnt/new",             source file here (= dir without --bench-from,
//	                                  unless dir is a network or FUSE mount)
//	  "from_fs": "xfs",
//	  "from_why": "",                 why: "", "--bench-from", or why dir's mount
//	                                  made it take a local filesystem
//	  "size_bytes": 268435456,        test file size
//	  "runs": 3,                      --bench-runs
//	  "sections": [                   sections 1, 2, 3
//	    {
//	      "number": 1,
//	      "title": "Strategies (forced, no fallback; auto as fastcp chooses)",
//	      "cache": "cold",            "cold" when every row's source was evicted, else "warm"
//	      "timed": "...",             what the timer covered
//	      "note": "...",              how the rows were made ("" if nothing to add)
//	      "rows": [
//	        {
//	          "section": 1,
//	          "strategy": "rw",       auto (section 1's first two rows), reflink,
//	                                  copy_file_range, direct, sendfile, splice, rw
//	          "buffer_size": 1048576, rw's buffer in bytes, 0 for other strategies
//	          "sync": "none",         none, data, full, osync, odsync (section 1:
//	                                  "data" on the auto row that chose as --sync does)
//	          "cache": "cold",        the source: "cold" (evicted, mincore < 1% resident) or "warm"
//	          "bytes": 268435456,     bytes per copy (section 3: at most 32 MiB)
//	          "runs": 3,              timed runs (fewer in sections 2, 3 over budget; 0 when refused)
//	          "median_s": 0.41,       wall seconds until the copy returned: median,
//	                                  min, max of the runs
//	          "min_s": 0.40,
//	          "max_s": 0.43,
//	          "mb_per_s": 654.7,      bytes / median_s / 10^6
//	          "user_s": 0.01,         median CPU seconds of the copying thread
//	          "sys_s": 0.21,
//	          "syscalls": 515,        median number of system calls the copier made
//	          "calls": {              the copier's counters of the median-time run
//	            "reflink":         {"calls": 0, "bytes": 0},
//	            "copy_file_range": {"calls": 0, "bytes": 0},
//	            "direct":          {"calls": 0, "bytes": 0},
//	            "sendfile":        {"calls": 0, "bytes": 0},
//	            "splice":          {"calls": 0, "bytes": 0},
//	            "rw":              {"calls": 513, "bytes": 268435456},
//	            "other":           {"calls": 2, "bytes": 0}     fstat, lseek, ftruncate
//	          },
//	          "open_flags": "",       section 3: "O_SYNC" or "O_DSYNC" as fcntl(F_GETFL) saw them
//	          "shared_extents": false, the copy shares the source's extents (FIEMAP): no data copied
//	          "resident": 0.0,        the largest cached share of the source before a run
//	          "flushed_median_s": 0.45, section 1: seconds until the data was on the
//	          "flushed_min_s": 0.43,    device (the copy, then fdatasync), median,
//	          "flushed_max_s": 0.47,    min, max; 0 in sections 2 and 3
//	          "flushed_mb_per_s": 596.5, bytes / flushed_median_s / 10^6
//	          "share_of_limit": 0.48, flushed_mb_per_s against the device limit
//	                                  (0: none, or shared extents)
//	          "share_note": "",       why a share passes 1, or why there is none
//	          "chosen": "rw",         the strategy that moved the bytes (auto's choice)
//	          "durability": {         section 3: what durability did (zeros in sections 1, 2)
//	            "flush": "fdatasync",           final flush: "fdatasync", "fsync", "" for none
//	            "flush_s": 0.031,               its seconds
//	            "dir_sync_s": 0.002,            the directory fsync after the rename
//	            "sync_file_range_calls": 4,     writeback started behind the copy
//	            "background_flushes": 0         fdatasyncs during the copy
//	          },
//	          "refused": false,       true: the kernel or filesystem refused the strategy;
//	          "errno": "",              then the measurements are 0, errno is "EOPNOTSUPP"
//	          "error": ""               and error "ioctl(FICLONE): EOPNOTSUPP (Operation not supported)"
//	        }
//	      ],
//	      "device_limit": {           section 1's yardstick (zeros in sections 2, 3)
//	        "block_bytes": 4194304,   O_DIRECT requests of this size,
//	        "depth": 8,               this many in flight on each side
//	        "buffers": "2 MiB transparent huge pages",   or "2 MiB huge pages
//	                                  (hugetlb)", "4 KiB pages"
//	        "runs": 3,                one a round of section 1
//	        "read_s": 0.19,           the source read whole, cold, while the
//	        "read_mb_per_s": 1412.8,  write runs (median)
//	        "read_resident": 0.0,     the source's largest cached share before a read
//	        "write_s": 0.20,          a new file as large, and its fdatasync (median)
//	        "flush_s": 0.01,          that fdatasync
//	        "write_mb_per_s": 1342.2,
//	        "limit_mb_per_s": 1342.2, the slower of the two; 0 when unknown
//	        "limit_min_mb_per_s": 1300.1,   the spread of the runs
//	        "limit_max_mb_per_s": 1400.5,
//	        "error": ""               why it could not be measured, or ""
//	      }
//	    }
//	  ],
//	  "syscall_cost": {               section 4
//	    "section": 4,
//	    "runs": 3,
//	    "syscalls_per_run": 1200000,  getpid calls per timed loop
//	    "syscall_ns": 83.1,           median ns per call, and min, max
//	    "syscall_min_ns": 82.0,
//	    "syscall_max_ns": 85.9,
//	    "syscall_user_s": 0.01,       CPU seconds of one getpid loop (median)
//	    "syscall_sys_s": 0.09,
//	    "func_calls_per_run": 90000000,
//	    "func_ns": 1.1,               median ns per function call, and min, max
//	    "func_min_ns": 1.1,
//	    "func_max_ns": 1.2,
//	    "ratio": 75.5,                syscall_ns / func_ns
//	    "syscall_method": "raw syscall",
//	    "clock": "CLOCK_THREAD_CPUTIME_ID"   the ns are the thread's CPU time
//	  },
//	  "hash_rates": [                 section 4: each --checksum algorithm on one core
//	    {
//	      "algorithm": "sha256",      sha256, sha512
//	      "runs": 3,
//	      "bytes_per_run": 209715200, hashed per timed loop, in 1 MiB writes
//	      "mb_per_s": 1762.4,         median of the thread's CPU time, and min, max
//	      "min_mb_per_s": 1740.0,
//	      "max_mb_per_s": 1770.9,
//	      "share_of_limit": 1.31      against section 1's device limit (0: unknown);
//	                                  below 1 the hash bounds a checksummed copy
//	    }
//	  ],
//	  "fastest": "copy_file_range",   the forced section 1 row with the smallest median_s
//	                                  ("" if all were refused)
//	  "fastest_mb_per_s": 654.7,
//	  "verdict": {                    auto's choice against the fastest strategy
//	    "rule": "...",                how the runs' noise is judged
//	    "plain": {                    copies without --sync, by median_s
//	      "auto": "copy_file_range",  auto's choice
//	      "auto_median_s": 0.41,      its median, and its min and max with
//	      "auto_min_s": 0.40,         those of its choice's forced row
//	      "auto_max_s": 0.52,
//	      "best": "sendfile",         the fastest forced strategy
//	      "best_median_s": 0.30,
//	      "best_min_s": 0.29,
//	      "best_max_s": 0.31,
//	      "noise": 0.12,              the median row's (max-min)/median, >= 0.10
//	      "beats": true,              best's slowest run beat auto's fastest
//	                                  by more than the noise
//	      "why": "..."                the judgement in words
//	    },
//	    "synced": {...},              copies with --sync, by flushed_median_s
//	    "advice": "--strategy=sendfile without --sync",   "" for nothing
//	    "text": "what to do: ..."     the tables' last line
//	  },
//	  "seconds": 61.2,                wall time of the whole benchmark
//	  "notes": []                     anything that makes a row less than it claims
//	}
package benchmark

import (
	"cmp"
	"encoding/json"
	"errors"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// Config is what the command line asks of a benchmark run.
type Config struct {
	Dir   string // where the copies go (and the source, unless From is set)
	From  string // where the source file goes; "" means Dir
	Size  int64  // test file size in bytes
	Runs  int    // timed runs per row
	JSON  bool   // one JSON document on stdout instead of tables
	Quiet bool   // no progress indication
	// Width is the report's width in columns (Width(stdout, ...));
	// below MinWidth, MinWidth.
	Width int
	// Session is the run's, which the signal handler interrupts: the
	// benchmark's files are removed then. nil: they are not.
	Session *durability.Session
}

// Section 2 buffer sizes: 4 KiB to 16 MiB, doubling.
const (
	minBuffer = 4 << 10
	maxBuffer = 16 << 20
)

// rowBudget bounds the total time of one row of sections 2 and 3: after
// the run that reaches it, the row stops (it always has at least one run,
// and the table says how many it had). At the default size on an idle
// machine only the slowest rows (O_SYNC/O_DSYNC with an offload strategy,
// which the kernel writes and syncs in 64 KiB pieces) stop early; a huge
// --bench-size would otherwise spend minutes in the 4 KiB row alone.
const rowBudget = 3 * time.Second

// syncFileBytes caps the file section 3 copies: the O_SYNC and O_DSYNC rows
// with copy_file_range, sendfile or splice move a few percent of the
// disk's speed (docs/measurements.md), so one run of a large file would take
// longer than the rest of the section.
// A larger test file is replaced by a fresh random file of this size (the
// section header says so).
const syncFileBytes = 32 << 20

// coldThreshold is the fraction of the source still in the page cache above
// which an eviction is said to have failed (tmpfs cannot evict at all).
const coldThreshold = 0.01

const sections = 4

// Run runs the benchmark and returns the exit status.
func Run(c Config, stdout, stderr io.Writer, prog string) int {
	out := output.New(prog, stdout, stderr)
	b := &bench{cfg: c, prog: newProgress(out, c.Quiet), ws: &workspace{}}
	if !c.JSON {
		b.tables = &tablePrinter{out: out, width: max(c.Width, MinWidth)}
	}
	// A fatal signal erases the progress line before the process dies.
	defer b.prog.freezeAt(c.Session)()
	err := b.run()
	b.prog.clear()
	if err != nil {
		out.Errorf("%s", err)
		return 1
	}
	var werr error
	if c.JSON {
		// As json.Encoder with an indent writes it: the document, a newline.
		doc, err := json.MarshalIndent(&b.rep, "", "  ")
		if err != nil {
			werr = err
		} else {
			out.WriteStdout(string(doc) + "\n")
			werr = out.WriteErr()
		}
	} else {
		b.tables.footer(&b.rep)
		werr = b.tables.err
	}
	if werr != nil {
		out.Errorf("%s", output.WriteError(werr))
		return 1
	}
	return 0
}

// bench is one benchmark run.
type bench struct {
	cfg    Config
	size   int64
	runs   int
	prog   *progress
	tables *tablePrinter // nil with --json
	ws     *workspace
	rep    Report

	srcDir, dstDir   string // the private directories (the same without From)
	srcPath, dstPath string
}

// checkDirs checks that the benchmark can write its files: dir and from
// are directories with room for twice the test file.
func (b *bench) checkDirs(dir, from string) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	if from != dir {
		if err := checkDir(from); err != nil {
			return err
		}
	}
	need := int64(math.MaxInt64)
	if b.size <= math.MaxInt64/2 {
		need = 2 * b.size
	}
	if err := checkSpace(dir, need); err != nil {
		return err
	}
	if from != dir {
		return checkSpace(from, need)
	}
	return nil
}

func (b *bench) run() (err error) {
	start := time.Now()
	b.size, b.runs = b.cfg.Size, max(b.cfg.Runs, 1)
	if b.size <= 0 {
		return fmt.Errorf("--bench-size must be positive")
	}
	dir, from := b.cfg.Dir, b.cfg.From
	if dir == "" {
		dir = "."
	}
	fromWhy := ""
	if from != "" {
		fromWhy = "--bench-from"
	} else {
		from = dir
		if err := checkDir(dir); err != nil {
			return err
		}
		if local, why := localSource(dir, b.size); local != "" {
			from, fromWhy = local, why
		}
	}
	// Everything is checked before anything is created.
	if err := b.checkDirs(dir, from); err != nil {
		return err
	}

	unregister := b.ws.register(b.cfg.Session)
	defer func() {
		rerr := b.ws.remove()
		unregister()
		if err == nil && rerr != nil {
			err = fmt.Errorf("cannot remove the benchmark's files: %s", rerr)
		}
	}()
	if b.dstDir, err = b.ws.mkdir(dir); err != nil {
		return fmt.Errorf("cannot create a directory in %s: %s", quote(dir), errText(err))
	}
	b.srcDir = b.dstDir
	if from != dir {
		if b.srcDir, err = b.ws.mkdir(from); err != nil {
			return fmt.Errorf("cannot create a directory in %s: %s", quote(from), errText(err))
		}
	}
	b.srcPath = filepath.Join(b.srcDir, "source")
	b.dstPath = filepath.Join(b.dstDir, "copy")

	b.rep = Report{
		Schema: 1, Dir: dir, DirFS: fsTypeOf(dir), From: from, FromFS: fsTypeOf(from), FromWhy: fromWhy,
		SizeBytes: b.size, Runs: b.runs, Sections: []Section{}, Notes: []string{},
	}
	if b.tables != nil {
		b.tables.header(&b.rep)
	}

	if err := b.makeSource(); err != nil {
		return err
	}

	fastest, err := b.section1()
	if err != nil {
		return err
	}
	if err := b.section2(); err != nil {
		return err
	}
	if err := b.section3(fastest); err != nil {
		return err
	}
	b.prog.set("section 4/%d: system call cost", sections)
	b.rep.SyscallCost = measureSyscallCost(b.runs, func(run int) {
		b.prog.set("section 4/%d: getpid run %d/%d", sections, run, b.runs)
	})
	var limit float64
	for _, s := range b.rep.Sections {
		if s.Number == 1 {
			limit = s.DeviceLimit.LimitMBps
		}
	}
	b.rep.HashRates = measureHashRates(b.runs, limit, func(alg string, run int) {
		b.prog.set("section 4/%d: %s run %d/%d", sections, alg, run, b.runs)
	})
	b.prog.clear()
	if b.tables != nil {
		b.tables.syscallCost(&b.rep.SyscallCost)
		b.tables.hashRates(b.rep.HashRates, limit)
	}
	b.rep.Seconds = time.Since(start).Seconds()
	return nil
}

func (b *bench) addSection(s Section) {
	s.Cache = "cold"
	for _, r := range s.Rows {
		if r.Cache != "cold" && !r.Refused {
			s.Cache = "warm"
		}
	}
	b.rep.Sections = append(b.rep.Sections, s)
	b.prog.clear()
	if b.tables != nil {
		b.tables.section(&b.rep.Sections[len(b.rep.Sections)-1])
	}
}

func (b *bench) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	if !slices.Contains(b.rep.Notes, n) {
		b.rep.Notes = append(b.rep.Notes, n)
	}
}

// section1 times every strategy, cold, and auto as fastcp chooses (as a
// copy without --sync, and as one with it), each to two end points: the
// copy's return and its data on the device. The rows take turns, one run
// of each a round, the device limit among them, the first of the round
// changing from round to round: the host's weather changes by the minute,
// and rows measured one after the other would each get their own. It
// returns the fastest forced strategy.
func (b *bench) section1() (copier.Strategy, error) {
	s := Section{
		Number: 1, Title: "Strategies (forced, no fallback; auto as fastcp chooses)",
		Timed: "each copy to two end points: until it returned (copy ms, what a copy without --sync waits for), " +
			"and until its data was on the device (disk ms: the copy, then fdatasync of the destination; " +
			"what a --sync copy waits for, and the device limit's end point); min-max, MB/s and share are of disk ms",
		Note: "the rows take turns, one run of each a round, the device limit among them; " +
			"before each run the source and the previous copy are written back and evicted (fdatasync, posix_fadvise DONTNEED); " +
			"cached = the largest share of the source in the page cache right before a run (mincore); " +
			"share = disk MB/s against the device limit; " +
			"auto chooses as a copy without --sync does, auto --sync as one with it",
	}
	specs := []rowSpec{
		{section: 1, strategy: copier.Auto, cold: true},
		{section: 1, strategy: copier.Auto, sync: durability.SyncData, cold: true},
	}
	for _, st := range copier.Strategies() {
		specs = append(specs, rowSpec{section: 1, strategy: st, buffer: bufferFor(st), cold: true})
	}
	type rowState struct {
		row     Row
		samples []sample
		done    bool // refused
	}
	states := make([]rowState, len(specs))
	for i, spec := range specs {
		states[i].row = b.newRow(spec)
	}
	lim := b.newLimitProbe()
	defer lim.close()
	n := len(specs) + 1 // the device limit is the last
	for run := 1; run <= b.runs; run++ {
		for k := range n {
			i := (k + run - 1) % n
			if i == len(specs) {
				b.prog.set("section 1/%d: the device's O_DIRECT limit run %d/%d", sections, run, b.runs)
				lim.run()
				continue
			}
			st := &states[i]
			if st.done {
				continue
			}
			b.prog.set("section 1/%d: %s run %d/%d", sections, specs[i].label(), run, b.runs)
			smp, refused, err := b.runRow(specs[i], &st.row)
			if err != nil {
				return 0, err
			}
			if refused {
				st.done = true
				continue
			}
			st.samples = append(st.samples, smp)
		}
	}
	s.DeviceLimit = lim.result()
	if s.DeviceLimit.Error != "" {
		b.note("the device's O_DIRECT limit is unknown: %s", s.DeviceLimit.Error)
	} else if s.DeviceLimit.Buffers == buffersSmall {
		b.note("no huge pages for the device limit's buffers: its requests were cut to %s, what the device takes in one; "+
			"reserve huge pages (sysctl vm.nr_hugepages=64) or enable transparent ones for a truer limit", formatSize(int64(s.DeviceLimit.BlockBytes)))
	}
	fastest, best := copier.RW, -1.0
	found := false
	resident := 0.0
	for i := range states {
		st := &states[i]
		r := st.row
		if !r.Refused {
			b.fill(&r, st.samples)
			resident = max(resident, r.Resident)
			shareOfLimit(&r, &s.DeviceLimit, isRemote(b.rep.DirFS))
			if specs[i].strategy != copier.Auto && (best < 0 || r.MedianS < best) {
				fastest, best, found = specs[i].strategy, r.MedianS, true
				b.rep.Fastest, b.rep.FastestMBps = r.Strategy, r.MBps
			}
		}
		s.Rows = append(s.Rows, r)
	}
	s.Note += fmt.Sprintf("; at most %.1f%% of the source was cached before a run", 100*resident)
	if slices.ContainsFunc(s.Rows, func(r Row) bool { return !r.Refused && r.Cache != "cold" }) {
		s.Note += "; " + b.rep.FromFS + " keeps the source in memory: it cannot be evicted, so the cache is warm"
	}
	b.rep.Verdict = verdictOf(s.Rows, b.runs, b.rep.Dir)
	b.addSection(s)
	if !found {
		return 0, errors.New("every strategy was refused: nothing to measure in sections 2 and 3")
	}
	return fastest, nil
}

// shareOfLimit sets a row's share of the device limit, at the same end
// point (its data on the device), and says why when it passes 100%;
// remote: the copies go to a network or FUSE mount.
func shareOfLimit(r *Row, d *DeviceLimit, remote bool) {
	switch {
	case r.SharedExtents:
		r.ShareNote = "the copy shares the source's extents: no data was copied, so it has no share of the device's limit"
		return
	case d.LimitMBps <= 0 || r.FlushedMBps <= 0:
		return
	}
	r.ShareOfLimit = r.FlushedMBps / d.LimitMBps
	if r.ShareOfLimit <= 1 {
		return
	}
	mb := float64(r.Bytes) / 1e6
	fastest, slowest := mb/r.FlushedMinS, mb/r.FlushedMaxS
	switch {
	case r.Cache != "cold":
		r.ShareNote = "the source was in the page cache, so the copy read memory, not the device"
	case remote && slowest > d.LimitMaxMBps:
		r.ShareNote = fmt.Sprintf("faster than the limit measured here (%.0f-%.0f MB/s against %.0f-%.0f): on a network or FUSE mount "+
			"each O_DIRECT write of the limit waits for the server, where a copy's buffered writes are gathered and sent on together, "+
			"so the limit understates what the mount takes", slowest, fastest, d.LimitMinMBps, d.LimitMaxMBps)
	case slowest <= d.LimitMaxMBps:
		r.ShareNote = fmt.Sprintf("within the runs' spread: this row's %.0f-%.0f MB/s and the limit's %.0f-%.0f MB/s overlap",
			slowest, fastest, d.LimitMinMBps, d.LimitMaxMBps)
	default:
		r.ShareNote = fmt.Sprintf("faster than the limit measured here in every run (%.0f-%.0f MB/s against %.0f-%.0f): "+
			"the kernel kept more than the limit's %d requests of %s in flight, or the host's cache answered the reads (a virtual disk)",
			slowest, fastest, d.LimitMinMBps, d.LimitMaxMBps, d.Depth, formatSize(int64(d.BlockBytes)))
	}
}

// verdictOf judges section 1's rows: auto's choice against the fastest
// forced strategy, without --sync by the copy's time, with --sync by the
// time until the data was on the device.
func verdictOf(rows []Row, runs int, dir string) Verdict {
	var plainAuto, syncAuto timing
	var plain, synced []timing
	for _, r := range rows {
		n := r.Runs
		if r.Refused {
			n = 0
		}
		p := timing{strategy: r.Strategy, runs: n, median: r.MedianS, min: r.MinS, max: r.MaxS}
		d := timing{strategy: r.Strategy, runs: n, median: r.FlushedMedianS, min: r.FlushedMinS, max: r.FlushedMaxS}
		if r.Strategy == copier.Auto.String() {
			p.strategy, d.strategy = r.Chosen, r.Chosen
			if r.Sync == durability.SyncNone.String() {
				plainAuto = p
			} else {
				syncAuto = d
			}
			continue
		}
		plain, synced = append(plain, p), append(synced, d)
	}
	v := Verdict{Rule: verdictRule(), Plain: judge(plainAuto, plain), Synced: judge(syncAuto, synced)}
	v.Advice, v.Text = advise(v.Plain, v.Synced, "into "+dir)
	return v
}

// bufferFor is the rw buffer a strategy row uses (0: not an rw row).
func bufferFor(s copier.Strategy) int {
	if s == copier.RW {
		return copier.DefaultBufferSize
	}
	return 0
}

// section2 times the rw loop by buffer size, warm.
func (b *bench) section2() error {
	if err := b.warmSource(); err != nil {
		return err
	}
	s := Section{
		Number: 2, Title: "rw loop by buffer size (APUE Figure 3.6)",
		Timed: "the copy alone; the source is in the page cache, the copy goes to the page cache and is removed unflushed",
		Note:  fmt.Sprintf("a row stops after the run that takes its runs past %v (at least one run)", rowBudget),
	}
	for buf := minBuffer; buf <= maxBuffer; buf *= 2 {
		r, err := b.row(rowSpec{section: 2, strategy: copier.RW, buffer: buf, budget: rowBudget})
		if err != nil {
			return err
		}
		s.Rows = append(s.Rows, r)
	}
	b.addSection(s)
	return nil
}

// section3 times every --sync mode with the fastest strategy and rw.
func (b *bench) section3(fastest copier.Strategy) error {
	note := fmt.Sprintf("a row stops after the run that takes its runs past %v (at least one run)", rowBudget)
	if b.size > syncFileBytes {
		if err := b.replaceSource(syncFileBytes); err != nil {
			return err
		}
		note = fmt.Sprintf("copies a %s random file, not the %s test file: O_SYNC and O_DSYNC through the offload strategies crawl; ",
			formatSize(syncFileBytes), formatSize(b.rep.SizeBytes)) + note
	}
	if err := b.warmSource(); err != nil {
		return err
	}
	strategies := []copier.Strategy{fastest}
	if fastest != copier.RW {
		strategies = append(strategies, copier.RW)
	}
	s := Section{
		Number: 3, Title: "--sync modes (APUE Figure 3.13)",
		Timed: "durability.Create + copy + Commit, as a real copy (temporary file, flush, rename, directory fsync); the source is in the page cache",
		Note:  note,
	}
	for _, mode := range durability.SyncModes() {
		for _, st := range strategies {
			r, err := b.row(rowSpec{section: 3, strategy: st, buffer: bufferFor(st), sync: mode, durable: true, budget: rowBudget})
			if err != nil {
				return err
			}
			if want := syncOpenFlag(mode); want != "" && r.OpenFlags != want && !r.Refused {
				b.note("--sync=%s: the destination was not opened with %s (fcntl F_GETFL says %q): durability does not implement it yet", mode, want, r.OpenFlags)
			}
			s.Rows = append(s.Rows, r)
		}
	}
	b.addSection(s)
	return nil
}

// syncOpenFlag is the open flag a --sync mode must show on the destination.
func syncOpenFlag(m durability.SyncMode) string {
	switch m {
	case durability.SyncOSync:
		return "O_SYNC"
	case durability.SyncODSync:
		return "O_DSYNC"
	}
	return ""
}

// openFlags names the synchronous-I/O flags set on f.
func openFlags(f sysx.Descriptor) string {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	switch {
	case err != nil:
		return "?"
	case fl&unix.O_SYNC == unix.O_SYNC: // O_SYNC includes the O_DSYNC bit
		return "O_SYNC"
	case fl&unix.O_DSYNC != 0:
		return "O_DSYNC"
	}
	return ""
}

// replaceSource removes the test file and writes a new one of size bytes in
// its place (sections 3 and 4 do not need the big one, and the free space
// check counted on one source file only).
func (b *bench) replaceSource(size int64) error {
	if err := os.Remove(b.srcPath); err != nil {
		return fmt.Errorf("cannot remove %s: %s", quote(b.srcPath), errText(err))
	}
	b.size = size
	return b.makeSource()
}

// makeSource writes the random test file of b.size bytes.
func (b *bench) makeSource() error {
	b.prog.set("creating a %s test file", formatSize(b.size))
	f, err := b.ws.create(b.srcPath)
	if err != nil {
		return fmt.Errorf("cannot create %s: %s", quote(b.srcPath), errText(err))
	}
	err = writeRandom(f, b.size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %s", quote(b.srcPath), errText(err))
	}
	return nil
}

// warmSource reads the source into the page cache.
func (b *bench) warmSource() error {
	f, err := os.Open(b.srcPath)
	if err != nil {
		return fmt.Errorf("cannot open %s: %s", quote(b.srcPath), errText(err))
	}
	defer f.Close()
	b.prog.set("reading the test file into the page cache")
	if err := warm(f, b.size); err != nil {
		return fmt.Errorf("cannot read %s: %s", quote(b.srcPath), errText(err))
	}
	return nil
}

// rowSpec is one row to measure.
type rowSpec struct {
	section  int
	strategy copier.Strategy
	buffer   int // rw buffer; 0 for the other strategies
	sync     durability.SyncMode
	cold     bool          // evict the source before each run
	durable  bool          // through durability.Create/Commit (section 3)
	budget   time.Duration // stop after the run that reaches it; 0: all runs
}

func (r rowSpec) label() string {
	if r.strategy == copier.Auto && r.sync != durability.SyncNone {
		return autoSyncLabel
	}
	l := r.strategy.String()
	if r.buffer > 0 {
		l += " " + formatSize(int64(r.buffer))
	}
	if r.section == 3 {
		l = "--sync=" + r.sync.String() + " " + l
	}
	return l
}

// sample is one timed run.
type sample struct {
	wall   time.Duration
	disk   time.Duration // section 1: until the copy's data was on the device
	cpu    cpuTimes
	res    copier.Result
	flags  string
	shared bool // the copy shares extents with the source
	dur    DurabilityStats
	// resident: the source's cached fraction right before the run (cold rows)
	resident float64
}

// newRow is the row of spec, before its runs.
func (b *bench) newRow(spec rowSpec) Row {
	r := Row{
		Section: spec.section, Strategy: spec.strategy.String(), BufferSize: spec.buffer,
		Sync: spec.sync.String(), Cache: "warm", Bytes: b.size, Chosen: spec.strategy.String(),
	}
	if spec.cold {
		r.Cache = "cold"
	}
	return r
}

// runRow makes one run of spec for row r: the sample, or refused (the
// refusal is in r then).
func (b *bench) runRow(spec rowSpec, r *Row) (s sample, refused bool, err error) {
	s, cold, err := b.runOnce(spec)
	var ce *copier.Error
	if errors.As(err, &ce) && ce.Refused {
		r.Refused, r.Errno, r.Error = true, errnoName(ce.Err), copier.ErrnoText(ce.Err)
		r.Calls = callsOf(&s.res)
		r.Syscalls = s.res.Syscalls()
		r.Chosen = ""
		return s, true, nil
	}
	if err != nil {
		return s, false, err
	}
	if spec.cold && !cold {
		r.Cache = "warm"
	}
	return s, false, nil
}

// row measures one row: runs of one copy configuration, one after the
// other.
func (b *bench) row(spec rowSpec) (Row, error) {
	r := b.newRow(spec)
	var samples []sample
	var total time.Duration
	for run := 1; run <= b.runs; run++ {
		b.prog.set("section %d/%d: %s run %d/%d", spec.section, sections, spec.label(), run, b.runs)
		s, refused, err := b.runRow(spec, &r)
		if err != nil || refused {
			return r, err
		}
		samples = append(samples, s)
		total += s.wall
		if spec.budget > 0 && total >= spec.budget {
			break
		}
	}
	b.fill(&r, samples)
	return r, nil
}

// fill puts the median, min and max of the samples into r.
func (b *bench) fill(r *Row, samples []sample) {
	var walls, disks, users, syss []float64
	for _, s := range samples {
		walls = append(walls, s.wall.Seconds())
		disks = append(disks, s.disk.Seconds())
		users = append(users, s.cpu.user.Seconds())
		syss = append(syss, s.cpu.sys.Seconds())
	}
	w := summarize(walls)
	r.Runs = len(samples)
	r.MedianS, r.MinS, r.MaxS = w.median, w.min, w.max
	r.MBps = mbPerSec(r.Bytes, w.median)
	if r.Section == 1 {
		d := summarize(disks)
		r.FlushedMedianS, r.FlushedMinS, r.FlushedMaxS = d.median, d.min, d.max
		r.FlushedMBps = mbPerSec(r.Bytes, d.median)
	}
	r.UserS, r.SysS = summarize(users).median, summarize(syss).median
	// The system calls and their breakdown come from the run whose time
	// is the median (the lower middle one for an even count): the direct
	// pipeline's depth adapts, so runs need not make the same calls.
	order := make([]int, len(samples))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int { return cmp.Compare(samples[a].wall, samples[c].wall) })
	med := samples[order[(len(order)-1)/2]]
	r.Calls = callsOf(&med.res)
	r.Syscalls = med.res.Syscalls()
	if r.Strategy == copier.Auto.String() {
		r.Chosen = chosen(r.Calls)
	}
	for _, s := range samples {
		r.Resident = max(r.Resident, s.resident)
	}
	r.OpenFlags = med.flags
	r.SharedExtents = med.shared
	r.Durability = med.dur
}

// chosen is the strategy that moved the most bytes.
func chosen(calls map[string]CallCount) string {
	best, bytes := "", int64(-1)
	for _, k := range callKeys {
		if c := calls[k]; k != "other" && c.Bytes > bytes {
			best, bytes = k, c.Bytes
		}
	}
	return best
}

// runOnce prepares and times one copy, then removes it. cold reports whether
// the source was out of the page cache when the copy started.
func (b *bench) runOnce(spec rowSpec) (s sample, cold bool, err error) {
	src, err := os.Open(b.srcPath)
	if err != nil {
		return s, false, fmt.Errorf("cannot open %s: %s", quote(b.srcPath), errText(err))
	}
	defer src.Close()
	if spec.cold {
		if err := evict(src); err != nil {
			return s, false, fmt.Errorf("cannot evict %s from the page cache: %s", quote(b.srcPath), errText(err))
		}
		frac, err := residentFraction(src, b.size)
		if err != nil {
			return s, false, fmt.Errorf("cannot check the page cache for %s: %s", quote(b.srcPath), errText(err))
		}
		cold = frac < coldThreshold
		s.resident = frac
	}
	if spec.durable {
		s, err = b.durableCopy(spec, src)
	} else {
		s, err = b.plainCopy(spec, src)
	}
	if err == nil && (s.res.Size != b.size || s.res.Bytes != b.size) {
		err = fmt.Errorf("%s copied %d bytes into a file of %d bytes, expected %d: the benchmark cannot trust this copy",
			spec.label(), s.res.Bytes, s.res.Size, b.size)
	}
	return s, cold, err
}

// plainCopy times copier.Copy into a new file, as sections 1 and 2 do.
// After the timer stops, a cold row's copy is written back and evicted, then
// every copy is removed.
func (b *bench) plainCopy(spec rowSpec, src *os.File) (sample, error) {
	var s sample
	dst, err := b.ws.create(b.dstPath)
	if err != nil {
		return s, fmt.Errorf("cannot create %s: %s", quote(b.dstPath), errText(err))
	}
	defer os.Remove(b.dstPath)
	defer dst.Close()
	opts := copier.Options{Strategy: spec.strategy, BufferSize: spec.buffer}
	if spec.strategy == copier.Auto {
		// As fastcp's copy asks: auto weighs the source's residency, and
		// whether the copy ends with a flush.
		opts.Flush = spec.sync != durability.SyncNone
		size := b.size
		opts.SourceCached = func() (int64, error) { return durability.CachedBytes(src, size) }
	}

	runtime.LockOSThread()
	c0 := threadCPU()
	t0 := time.Now()
	s.res, err = copier.Copy(dst, src, opts)
	s.wall = time.Since(t0)
	s.cpu = threadCPU().sub(c0)
	runtime.UnlockOSThread()
	if err == nil && spec.section == 1 {
		// The second end point: the data on the device.
		if ferr := sysx.IgnoringEINTR(func() error { return unix.Fdatasync(int(dst.Fd())) }); ferr != nil {
			return s, fmt.Errorf("cannot flush %s: %s", quote(b.dstPath), errText(os.NewSyscallError("fdatasync", ferr)))
		}
		s.disk = time.Since(t0)
	}

	if err != nil {
		return s, copyError(spec, err)
	}
	if spec.cold {
		if err := evict(dst); err != nil {
			return s, fmt.Errorf("cannot write back %s: %s", quote(b.dstPath), errText(err))
		}
	}
	if mayShare(spec.strategy) {
		if s.shared, err = sharedExtents(dst); err != nil {
			return s, fmt.Errorf("cannot map the extents of %s: %s", quote(b.dstPath), errText(err))
		}
	}
	return s, nil
}

// mayShare tells the strategies that may share extents instead of copying
// (FICLONE; copy_file_range on xfs, btrfs, NFS).
func mayShare(s copier.Strategy) bool {
	return s == copier.Reflink || s == copier.CopyFileRange
}

// durableCopy times a copy exactly as fastcp makes one: durability.Create
// (a temporary file, opened with the --sync mode's flags), copier.Copy with
// the Written hook, and Commit (flush, rename, directory fsync).
func (b *bench) durableCopy(spec rowSpec, src *os.File) (sample, error) {
	var s sample
	defer os.Remove(b.dstPath)
	opts := copier.Options{Strategy: spec.strategy, BufferSize: spec.buffer}

	runtime.LockOSThread()
	c0 := threadCPU()
	t0 := time.Now()
	dest, err := durability.Create(fsdir.Cwd, b.dstPath, durability.Options{Sync: spec.sync})
	if err == nil {
		s.flags = openFlags(dest.File)
		opts.Written = dest.Written
		s.res, err = copier.Copy(dest.File, src, opts)
		if err == nil {
			err = dest.Commit(src)
			st := dest.Stats()
			s.dur = DurabilityStats{
				Flush: string(spec.sync.FlushOp()), DirSyncS: st.DirSync.Seconds(),
				WritebackCalls: st.WritebackCalls, BackgroundFlushes: st.BackgroundFlushes,
			}
			if s.dur.Flush != "" {
				s.dur.FlushS = st.Flush.Seconds()
			}
		} else {
			dest.Abort()
		}
	}
	s.wall = time.Since(t0)
	s.cpu = threadCPU().sub(c0)
	runtime.UnlockOSThread()

	if err != nil {
		return s, copyError(spec, err)
	}
	if mayShare(spec.strategy) {
		f, err := os.Open(b.dstPath)
		if err == nil {
			s.shared, err = sharedExtents(f)
			f.Close()
		}
		if err != nil {
			return s, fmt.Errorf("cannot map the extents of %s: %s", quote(b.dstPath), errText(err))
		}
	}
	return s, nil
}

// copyError passes refusals through (the row says so) and words the rest.
func copyError(spec rowSpec, err error) error {
	var ce *copier.Error
	if errors.As(err, &ce) && ce.Refused {
		return err
	}
	if errors.As(err, &ce) {
		return fmt.Errorf("benchmark copy with %s failed: %s", spec.label(), copier.ErrnoText(ce.Err))
	}
	return fmt.Errorf("benchmark copy with %s failed: %s", spec.label(), errText(err))
}
