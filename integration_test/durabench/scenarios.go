// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"fastcp/internal/fsdir"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"fastcp/copier"
	"fastcp/durability"
)

// syncScenario: a durable 1 GiB copy, warm source, against cp && sync, dd
// conv=fdatasync and fio's O_DIRECT sequential write, flushed at its end
// as the copy is, from huge pages where they could be reserved (no source
// to read: the device's write speed, the floor of any durable copy).
func syncScenario(ctx context.Context, c config) error { return syncRun(ctx, c, false) }

// syncColdScenario: the same with the source evicted before every run, so
// that it is read from the same disk the copy is written to.
func syncColdScenario(ctx context.Context, c config) error { return syncRun(ctx, c, true) }

func syncRun(ctx context.Context, c config, coldSource bool) error {
	src, dst := filepath.Join(c.ws, "src"), filepath.Join(c.ws, "dst")
	if err := makeSource(src, c.size); err != nil {
		return err
	}
	prep := prepRun(src, dst, coldSource)
	tools := []tool{
		{name: "fastcp --sync=data", prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, c.bin, "--sync=data", src, dst)
		}},
		{name: "cp && sync DST", prep: prep, run: func(ctx context.Context) error {
			return shCmd(ctx, `cp "$1" "$2" && sync "$2"`, src, dst)
		}},
		{name: "dd bs=1M conv=fdatasync", prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, "dd", "if="+src, "of="+dst, "bs=1M", "conv=fdatasync", "status=none")
		}},
		{name: "fastcp && sync DST", prep: prep, run: func(ctx context.Context) error {
			return shCmd(ctx, `"$1" "$2" "$3" && sync "$3"`, c.bin, src, dst)
		}},
	}
	haveFio := false
	if _, err := exec.LookPath("fio"); err == nil {
		haveFio = true
		tools = append(tools, tool{name: "fio write --direct=1 bs=1M", prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, "fio", "--name=w", "--rw=write", "--bs=1M", fmt.Sprintf("--size=%d", c.size),
				"--direct=1", "--mem="+c.fioMem, "--end_fsync=1", "--filename="+dst, "--output=/dev/null")
		}})
	}
	state := "warm source"
	if coldSource {
		state = "cold source (read from the same disk)"
	}
	fmt.Printf("\nsync: %s copy made durable, %s\n", mib(c.size), state)
	r, err := measure(ctx, c.runs, tools)
	for _, t := range tools {
		r.row(t.name, c.size)
	}
	r.ratio("fastcp --sync=data", "cp && sync DST", 0.85)
	r.ratio("fastcp --sync=data", "dd bs=1M conv=fdatasync", 0.9)
	if haveFio {
		r.ratio("fastcp --sync=data", "fio write --direct=1 bs=1M", 1.4)
	}
	os.Remove(dst)
	return err
}

// modesScenario: every --sync mode, 1 GiB, warm source.
func modesScenario(ctx context.Context, c config) error {
	src, dst := filepath.Join(c.ws, "src"), filepath.Join(c.ws, "dst")
	if err := makeSource(src, c.size); err != nil {
		return err
	}
	prep := prepRun(src, dst, false)
	var tools []tool
	for _, m := range durability.SyncModes() {
		arg := "--sync=" + m.String()
		tools = append(tools, tool{name: "fastcp " + arg, prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, c.bin, arg, src, dst)
		}})
	}
	// The rw loop writes 1 MiB at a time: with O_SYNC/O_DSYNC each write
	// waits for the device, unlike copy_file_range's 64 MiB calls.
	for _, m := range []durability.SyncMode{durability.SyncData, durability.SyncOSync, durability.SyncODSync} {
		arg := "--sync=" + m.String()
		tools = append(tools, tool{name: "fastcp --strategy=rw " + arg, prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, c.bin, "--strategy=rw", arg, src, dst)
		}})
	}
	fmt.Printf("\nmodes: %s copy with each --sync mode, warm source\n", mib(c.size))
	r, err := measure(ctx, c.runs, tools)
	for _, t := range tools {
		r.row(t.name, c.size)
	}
	os.Remove(dst)
	return err
}

// nocacheScenario: a copy larger than what should stay cached, cold source
// (a file that big is rarely cached), with and without --nocache, and how
// much Cached grew.
func nocacheScenario(ctx context.Context, c config) error {
	src, dst := filepath.Join(c.ws, "src-nocache"), filepath.Join(c.ws, "dst")
	if err := makeSource(src, c.nocacheSize); err != nil {
		return err
	}
	prep := prepRun(src, dst, true)
	growth := map[string][][2]int64{}
	watched := func(name string, argv ...string) tool {
		return tool{name: name, prep: prep, run: func(ctx context.Context) error {
			w := watchCache()
			err := runCmd(ctx, argv...)
			peak, end := w.stop()
			growth[name] = append(growth[name], [2]int64{peak, end})
			return err
		}}
	}
	tools := []tool{
		watched("fastcp", c.bin, src, dst),
		// A cold source this large goes direct even without --nocache;
		// the in-process copy below, which has no residency to decide
		// by, is copy_file_range through the cache with --nocache's
		// eviction behind it, and is held against the same copy
		// without the eviction.
		watched("fastcp buffered", c.bin, "--strategy=copy_file_range", src, dst),
		watched("fastcp --nocache", c.bin, "--nocache", src, dst),
		watched("fastcp --sync=data", c.bin, "--sync=data", src, dst),
		watched("fastcp --sync=data --nocache", c.bin, "--sync=data", "--nocache", src, dst),
	}
	tools = append(tools, tool{name: "fastcp && sync DST", prep: prep, run: func(ctx context.Context) error {
		return shCmd(ctx, `"$1" "$2" "$3" && sync "$3"`, c.bin, src, dst)
	}})
	const inProc = "in process: --nocache, Source"
	tools = append(tools, tool{name: inProc, prep: prep, run: func(ctx context.Context) error {
		w := watchCache()
		_, err := inProcessCopy(src, dst, durability.Options{NoCache: true}, copier.Auto)
		peak, end := w.stop()
		growth[inProc] = append(growth[inProc], [2]int64{peak, end})
		return err
	}})
	fmt.Printf("\nnocache: %s copy, cold source\n", mib(c.nocacheSize))
	r, err := measure(ctx, c.runs, tools)
	for _, t := range tools {
		r.row(t.name, c.nocacheSize)
	}
	r.ratio("fastcp --nocache", "fastcp", 1.15)
	r.ratio("fastcp --sync=data --nocache", "fastcp --sync=data", 0)
	r.ratio("fastcp --nocache", "fastcp && sync DST", 0)
	r.ratio(inProc, "fastcp buffered", 1.15)
	r.ratio(inProc, "fastcp", 0)
	for _, t := range tools {
		g := growth[t.name]
		if len(g) == 0 {
			continue
		}
		var peaks, ends []int64
		for _, x := range g {
			peaks = append(peaks, x[0])
			ends = append(ends, x[1])
		}
		slices.Sort(peaks)
		slices.Sort(ends)
		fmt.Printf("  Cached growth %-26s peak median %s (max %s), at exit median %s (max %s)\n",
			t.name, mib(peaks[len(peaks)/2]), mib(peaks[len(peaks)-1]), mib(ends[len(ends)/2]), mib(ends[len(ends)-1]))
	}
	os.Remove(dst)
	return err
}

// verifyScenario: what --verify adds to a durable copy, against the time of
// one sequential read of the file (with O_DIRECT as the read-back does, and
// through a cold page cache).
func verifyScenario(ctx context.Context, c config) error {
	src, dst := filepath.Join(c.ws, "src"), filepath.Join(c.ws, "dst")
	if err := makeSource(src, c.size); err != nil {
		return err
	}
	prep := prepRun(src, dst, false)
	tools := []tool{
		{name: "fastcp --sync=data", prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, c.bin, "--sync=data", src, dst)
		}},
		{name: "fastcp --sync=data --verify", prep: prep, run: func(ctx context.Context) error {
			return runCmd(ctx, c.bin, "--sync=data", "--verify", src, dst)
		}},
		{name: "in process: data", prep: prep, run: func(ctx context.Context) error {
			_, err := inProcessCopy(src, dst, durability.Options{Sync: durability.SyncData}, copier.Auto)
			return err
		}},
		{name: "in process: data, verify, Source", prep: prep, run: func(ctx context.Context) error {
			_, err := inProcessCopy(src, dst, durability.Options{Sync: durability.SyncData, Verify: true}, copier.Auto)
			return err
		}},
	}
	fmt.Printf("\nverify: %s durable copy with and without --verify, warm source\n", mib(c.size))
	r, err := measure(ctx, c.runs, tools)
	if err != nil {
		return err
	}
	// The reads, of a copy just made.
	if err := runCmd(ctx, c.bin, "--sync=data", src, dst); err != nil {
		return err
	}
	reads := []tool{
		{name: "read: dd iflag=direct bs=4M", run: func(ctx context.Context) error {
			return runCmd(ctx, "dd", "if="+dst, "of=/dev/null", "bs=4M", "iflag=direct", "status=none")
		}},
		{name: "read: cold cache, 1 MiB reads", prep: func() error { return cold(dst) }, run: func(ctx context.Context) error {
			return warm(dst)
		}},
	}
	rr, err := measure(ctx, c.runs, reads)
	for k, v := range rr {
		r[k] = v
	}
	for _, t := range append(tools, reads...) {
		r.row(t.name, c.size)
	}
	for _, pair := range [][2]string{{"fastcp --sync=data --verify", "fastcp --sync=data"}, {"in process: data, verify, Source", "in process: data"}} {
		added := median(r[pair[0]]) - median(r[pair[1]])
		for _, rd := range reads {
			m := median(r[rd.name])
			verdict := "MISSED"
			if added <= m {
				verdict = "met"
			}
			fmt.Printf("  %s adds %s; one sequential read (%s) %s: target added <= read: %s\n",
				pair[0], secs(added), rd.name[len("read: "):], secs(m), verdict)
		}
	}
	os.Remove(dst)
	return err
}

// sweepScenario: the writeback window and depth, then the background
// flush interval, in process (durability + copier as fastcp --sync=data
// uses them), for copy_file_range (64 MiB calls on ext4) and the rw loop
// (1 MiB writes).
func sweepScenario(ctx context.Context, c config) error {
	src, dst := filepath.Join(c.ws, "src"), filepath.Join(c.ws, "dst")
	if err := makeSource(src, c.size); err != nil {
		return err
	}
	prep := prepRun(src, dst, false)
	prepCold := prepRun(src, dst, true)
	type cfg struct {
		name string
		o    durability.Options
	}
	const off = 1 << 62 // a window or interval never reached
	var windows []cfg
	windows = append(windows, cfg{"no pipeline, no bg flush", durability.Options{WritebackWindow: off, FlushEvery: -1}})
	for _, w := range []int64{2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20} {
		for _, d := range []int{1, 2, 4} {
			windows = append(windows, cfg{fmt.Sprintf("window %2d MiB depth %d", w>>20, d),
				durability.Options{WritebackWindow: w, WritebackDepth: d}})
		}
	}
	var flushes []cfg
	for _, f := range []int64{-1, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20} {
		name := "bg flush off"
		if f > 0 {
			name = fmt.Sprintf("bg flush every %3d MiB", f>>20)
		}
		flushes = append(flushes, cfg{name, durability.Options{FlushEvery: f}})
		if f < 0 {
			flushes = append(flushes, cfg{"bg flush off, no pipeline", durability.Options{FlushEvery: f, WritebackWindow: off}})
		}
	}
	var nocache []cfg
	for _, w := range []int64{4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20} {
		for _, d := range []int{1, 2, 4, 8} {
			if (d+1)*int(w) > 384<<20 {
				continue // more than --nocache may keep cached
			}
			nocache = append(nocache, cfg{fmt.Sprintf("window %2d MiB depth %d", w>>20, d),
				durability.Options{NoCache: true, WritebackWindow: w, WritebackDepth: d}})
		}
	}
	parts := []struct {
		title string
		strat copier.Strategy
		cfgs  []cfg
		cold  bool
	}{
		{"window x depth", copier.Auto, windows, false},
		{"window x depth", copier.RW, windows, false},
		{fmt.Sprintf("background fdatasync interval (window %d MiB, depth %d)", durability.DefaultWritebackWindow>>20, durability.DefaultWritebackDepth), copier.Auto, flushes, false},
		{fmt.Sprintf("background fdatasync interval (window %d MiB, depth %d)", durability.DefaultWritebackWindow>>20, durability.DefaultWritebackDepth), copier.RW, flushes, false},
		{"--nocache window x depth, source passed as Options.Source", copier.Auto, nocache, true},
	}
	for _, p := range parts {
		if !c.filter.MatchString(p.title + " " + p.strat.String()) {
			continue
		}
		stats := map[string][]durability.Stats{}
		var tools []tool
		pr := prep
		if p.cold {
			pr = prepCold
		}
		for _, x := range p.cfgs {
			o := x.o
			if !o.NoCache {
				o.Sync = durability.SyncData
			}
			tools = append(tools, tool{name: x.name, prep: pr, run: func(ctx context.Context) error {
				st, err := inProcessCopy(src, dst, o, p.strat)
				stats[x.name] = append(stats[x.name], st)
				return err
			}})
		}
		what := "--sync=data in process, strategy " + p.strat.String() + ", warm source"
		if p.cold {
			what = "--nocache in process, strategy " + p.strat.String() + ", cold source"
		}
		fmt.Printf("\nsweep: %s, %s %s\n", p.title, mib(c.size), what)
		r, err := measure(ctx, c.runs, tools)
		for _, t := range tools {
			r.row(t.name, c.size)
			var fl []time.Duration
			n := 0
			for _, st := range stats[t.name] {
				fl = append(fl, st.Flush)
				n = max(n, st.BackgroundFlushes)
			}
			fmt.Printf("  %34s final fdatasync median %s, background flushes %d\n", "", secs(median(fl)), n)
		}
		if err != nil {
			return err
		}
	}
	os.Remove(dst)
	return nil
}

// inProcessCopy copies src to dst as fastcp does: durability.Create,
// copier.Copy with the Written hook, Commit.
func inProcessCopy(src, dst string, o durability.Options, strat copier.Strategy) (durability.Stats, error) {
	sf, err := os.Open(src)
	if err != nil {
		return durability.Stats{}, err
	}
	defer sf.Close()
	if o.NoCache || o.Verify {
		// As main does not (yet) do: the source known from the start,
		// for drop-behind and for checksumming it behind the copy.
		o.Source = sf
	}
	d, err := durability.Create(fsdir.Cwd, dst, o)
	if err != nil {
		return durability.Stats{}, err
	}
	if _, err := copier.Copy(d.File, sf, copier.Options{Strategy: strat, Written: d.Written}); err != nil {
		d.Abort()
		return d.Stats(), err
	}
	err = d.Commit(sf)
	return d.Stats(), err
}

// prepRun is what comes before every timed run: the previous copy removed,
// the source read into the page cache (or, coldSource, evicted from it),
// and the disk settled, so no run pays for another's writeback.
func prepRun(src, dst string, coldSource bool) func() error {
	return func() error {
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			return err
		}
		if !coldSource {
			if err := warm(src); err != nil {
				return err
			}
		}
		if err := settle(); err != nil {
			return err
		}
		if coldSource {
			return cold(src)
		}
		return nil
	}
}
