// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A sample is one timed run of a tool.
type sample struct {
	wall, user, sys time.Duration
	maxRSS          int64 // bytes
	// Cold scenarios: the source's bytes in the page cache right before
	// the run, and how much Cached: grew during it.
	resident, cacheGrowth int64
	// read is what the command had read from storage (read_bytes of
	// /proc/PID/io; -1 unknown): a cold source read once is its size.
	read int64
}

// toolResult is what a scenario measured of one tool.
type toolResult struct {
	tool      tool
	samples   []sample
	dstBlocks int64    // st_blocks of its first copy
	debug     []string // fastcp's --debug decisions, from an untimed run
}

func (tr *toolResult) walls() []time.Duration {
	var ds []time.Duration
	for _, s := range tr.samples {
		ds = append(ds, s.wall)
	}
	return ds
}

func (tr *toolResult) total() time.Duration {
	var t time.Duration
	for _, s := range tr.samples {
		t += s.wall
	}
	return t
}

func (tr *toolResult) median() time.Duration { return median(tr.walls()) }

// medianUser and medianSys are the medians of the runs' CPU times.
func (tr *toolResult) medianUser() time.Duration {
	return tr.medianOf(func(s sample) time.Duration { return s.user })
}
func (tr *toolResult) medianSys() time.Duration {
	return tr.medianOf(func(s sample) time.Duration { return s.sys })
}

func (tr *toolResult) medianOf(f func(sample) time.Duration) time.Duration {
	var ds []time.Duration
	for _, s := range tr.samples {
		ds = append(ds, f(s))
	}
	return median(ds)
}

func (tr *toolResult) peakRSS() int64 {
	var m int64
	for _, s := range tr.samples {
		m = max(m, s.maxRSS)
	}
	return m
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// result is one scenario's measurements; err is set when it could not
// finish (a tool failed, a copy was wrong, a fixture could not be made).
type result struct {
	sc        *scenario
	tools     []*toolResult
	srcBlocks int64
	srcBytes  int64 // the source's size (its files' sizes, for a tree)
	rssFloor  int64 // the largest peak RSS of /bin/true, see launch.go
	err       error

	// The 1-minute load average before and after: other work on the
	// machine makes the numbers noisy, and this says when.
	loadBefore, loadAfter string
}

func (r *result) tool(name string) *toolResult {
	for _, tr := range r.tools {
		if tr.tool.name == name {
			return tr
		}
	}
	return nil
}

func runScenario(ctx context.Context, ws *workspace, sc *scenario, o options) *result {
	r := &result{sc: sc, loadBefore: loadAverage()}
	for _, t := range sc.tools {
		if strings.HasPrefix(t.argv[0], "{") && ws.bins[t.argv[0]] == "" {
			fmt.Fprintf(os.Stderr, "peerbench: %s: %s is not installed: its rows are left out\n", sc.id, t.name)
			continue
		}
		r.tools = append(r.tools, &toolResult{tool: t})
	}
	r.err = r.run(ctx, ws, o)
	r.loadAfter = loadAverage()
	if ctx.Err() != nil {
		r.err = context.Cause(ctx)
	}
	return r
}

// run times the tools in turns: every round runs each tool once, removing
// the destination (untimed) before each run. The first copy of every tool
// is compared with the source.
func (r *result) run(ctx context.Context, ws *workspace, o options) error {
	src, err := ws.source(ctx, r.sc.srcFS, r.sc.source)
	if err != nil {
		return err
	}
	dstFS, err := ws.dir(r.sc.dstFS)
	if err != nil {
		return err
	}
	dstDir, err := os.MkdirTemp(dstFS, r.sc.id+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dstDir)
	dst := filepath.Join(dstDir, "dst")
	// Further destinations ({dst2}, {dst3}...), each in a directory of
	// its own on its filesystem.
	dstDirs, dsts := []string{dstDir}, []string{dst}
	for _, kind := range r.sc.moreDsts {
		fs, err := ws.dir(kind)
		if err != nil {
			return err
		}
		d, err := os.MkdirTemp(fs, r.sc.id+"-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dstDirs, dsts = append(dstDirs, d), append(dsts, filepath.Join(d, "dst"))
	}
	// reset empties every destination's directory; with intoDirs it
	// makes each DST a directory for the copies to go into.
	reset := func() error {
		for i, d := range dstDirs {
			if err := clearDir(d); err != nil {
				return err
			}
			if r.sc.intoDirs {
				if err := os.Mkdir(dsts[i], 0o755); err != nil {
					return err
				}
			}
		}
		return nil
	}
	expand := func(argv []string) []string { return ws.expand(argv, src, dst, dsts[1:]...) }
	if err := reset(); err != nil {
		return err
	}
	if r.srcBlocks, err = diskUsage(src); err != nil {
		return err
	}
	if r.srcBytes, err = apparentSize(src); err != nil {
		return err
	}
	if !r.sc.cold && !r.sc.coldMeta {
		if err := warm(src); err != nil {
			return fmt.Errorf("reading the source: %w", err)
		}
	}

	// What fastcp decided, from one untimed --debug run per fastcp tool.
	for _, tr := range r.tools {
		if tr.tool.argv[0] != "{fastcp}" || r.sc.noDebug {
			continue
		}
		argv := slices.Insert(slices.Clone(tr.tool.argv), 1, "--debug")
		if r.sc.cold {
			if _, err := dropCaches(src); err != nil {
				return err
			}
		}
		_, out, err := timeRun(ctx, expand(argv))
		if err != nil {
			return fmt.Errorf("%s --debug: %w", tr.tool.name, err)
		}
		tr.debug = debugLines(out)
		if err := reset(); err != nil {
			return err
		}
	}

	for round := range o.runs {
		floor, err := rssFloor(ctx)
		if err != nil {
			return err
		}
		r.rssFloor = max(r.rssFloor, floor)
		// The order rotates (A B C, B C A, C A B): no tool always runs
		// right after the same neighbour (and its clean-up).
		for i := range r.tools {
			tr := r.tools[(i+round)%len(r.tools)]
			if round > 0 && tr.total() >= o.budget {
				continue
			}
			// The previous copy goes, and its filesystem is written back
			// (syncfs), before anything is timed.
			if err := reset(); err != nil {
				return err
			}
			if r.sc.existingDest {
				if err := prefill(ctx, src, dst, dstDir); err != nil {
					return err
				}
			}
			var resident int64
			if r.sc.cold {
				if resident, err = dropCaches(src); err != nil {
					return err
				}
			}
			if r.sc.coldMeta {
				if err := dropMetadata(); err != nil {
					return err
				}
			}
			s, _, err := timeRun(ctx, expand(tr.tool.argv))
			if err != nil {
				return fmt.Errorf("%s: %w", tr.tool.name, err)
			}
			if r.sc.cold {
				s.resident = resident
				if s.cacheGrowth, err = copyCacheGrowth(src, dst, resident); err != nil {
					return err
				}
			}
			tr.samples = append(tr.samples, s)
			if o.verbose {
				fmt.Fprintf(os.Stderr, "peerbench: %s round %d: %s: %s (user %s, sys %s, peak RSS %s, source cached %s, cache growth %s)\n",
					r.sc.id, round+1, tr.tool.name, fmtDur(s.wall), fmtDur(s.user), fmtDur(s.sys), fmtMiB(s.maxRSS), fmtMiB(s.resident), fmtMiB(s.cacheGrowth))
			}
			if round > 0 {
				continue
			}
			if tr.tool.yardstick {
				continue
			}
			if r.sc.intoDirs {
				if err := r.checkInto(tr, src, dsts); err != nil {
					return err
				}
				continue
			}
			if err := sameTree(src, dst); err != nil {
				return fmt.Errorf("%s copied wrongly: %w", tr.tool.name, err)
			}
			if left, err := names(dstDir); err != nil || len(left) != 1 {
				return fmt.Errorf("%s left %q in the destination directory (want only dst): %v", tr.tool.name, left, err)
			}
			if tr.dstBlocks, err = diskUsage(dst); err != nil {
				return err
			}
		}
	}
	for _, d := range dstDirs {
		if err := clearDir(d); err != nil {
			return err
		}
	}
	return nil
}

// checkInto checks the first copies of a tool of an intoDirs scenario:
// each destination it writes (tr.tool.into; nil: all of them) holds a
// copy of the source under its name, and nothing else; the others hold
// nothing.
func (r *result) checkInto(tr *toolResult, src string, dsts []string) error {
	base := filepath.Base(src)
	for i, d := range dsts {
		left, err := names(d)
		if err != nil {
			return err
		}
		if tr.tool.into != nil && !slices.Contains(tr.tool.into, i) {
			if len(left) != 0 {
				return fmt.Errorf("%s wrote %q into %s, which is not its destination", tr.tool.name, left, d)
			}
			continue
		}
		if err := sameTree(src, filepath.Join(d, base)); err != nil {
			return fmt.Errorf("%s copied wrongly: %w", tr.tool.name, err)
		}
		if len(left) != 1 {
			return fmt.Errorf("%s left %q in %s (want only %s)", tr.tool.name, left, d, base)
		}
		if tr.dstBlocks == 0 {
			if tr.dstBlocks, err = diskUsage(filepath.Join(d, base)); err != nil {
				return err
			}
		}
	}
	return nil
}

// prefill puts a copy of the source at dst (cp -r) and writes its
// filesystem back, so that the timed copy goes over an existing DEST.
func prefill(ctx context.Context, src, dst, dir string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-r", "--", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -r %s %s: %v: %s", src, dst, err, out)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: dir, Err: err}
	}
	return nil
}

// clearDir empties dir and writes its filesystem back (syncfs), so that
// every run starts without the previous run's dirty pages.
func clearDir(dir string) error {
	ns, err := names(dir)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: dir, Err: err}
	}
	return nil
}

// timeRun runs argv and measures it (launch): wall-clock time from fork to
// exit, and the child's user and system CPU and peak RSS from wait4's
// rusage. It returns the child's stdout. A non-zero exit is an error
// quoting stderr.
func timeRun(ctx context.Context, argv []string) (sample, string, error) {
	debug.FreeOSMemory()
	return launch(ctx, argv)
}

// rssFloor is the peak RSS a child that uses next to nothing reports.
func rssFloor(ctx context.Context) (int64, error) {
	s, _, err := timeRun(ctx, []string{"/bin/true"})
	return s.maxRSS, err
}

// loadAverage is the first field of /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// debugLines keeps the lines of fastcp --debug that say what it decided.
func debugLines(out string) []string {
	var keep []string
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		for _, p := range []string{"strategy:", "fallback:", "sparse:"} {
			if strings.HasPrefix(line, p) && !slices.Contains(keep, line) && len(keep) < 6 {
				keep = append(keep, line)
			}
		}
	}
	return keep
}
