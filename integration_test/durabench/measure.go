// SPDX-License-Identifier: MIT

package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"fastcp/durability"

	"golang.org/x/sys/unix"
)

// tool is one way of doing the job, timed again and again.
type tool struct {
	name string
	// prep runs before each timed run, untimed: remove the previous
	// destination, settle the filesystem, warm or cool the source.
	prep func() error
	// run is timed.
	run func(ctx context.Context) error
	// after runs after each timed run, untimed (checks, measurements).
	after func() error
}

// results are the wall times of each tool, by name.
type results map[string][]time.Duration

// measure runs every tool runs times, taking turns, and starting each round
// with the next tool, so that no tool always runs first (after a sync) or
// last.
func measure(ctx context.Context, runs int, tools []tool) (results, error) {
	res := results{}
	for round := range runs {
		for i := range tools {
			t := tools[(round+i)%len(tools)]
			if t.prep != nil {
				if err := t.prep(); err != nil {
					return res, fmt.Errorf("%s: preparing: %w", t.name, err)
				}
			}
			childCPU = 0
			start := time.Now()
			err := t.run(ctx)
			d := time.Since(start)
			cpu := childCPU
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if err != nil {
				return res, fmt.Errorf("%s: %w", t.name, err)
			}
			if t.after != nil {
				if err := t.after(); err != nil {
					return res, fmt.Errorf("%s: %w", t.name, err)
				}
			}
			res[t.name] = append(res[t.name], d)
			res[cpuKey+t.name] = append(res[cpuKey+t.name], cpu)
		}
	}
	return res, nil
}

// cpuKey prefixes a tool's name for the CPU time (user + system) of its
// runs' commands, kept beside their wall times.
const cpuKey = "cpu\x00"

// childCPU is the CPU time of the commands the tool running now ran
// (runCmd adds each one's).
var childCPU time.Duration

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// row prints one tool's median, min-max and throughput.
func (r results) row(name string, size int64) {
	ds := r[name]
	if len(ds) == 0 {
		fmt.Printf("  %-34s (no runs)\n", name)
		return
	}
	m := median(ds)
	fmt.Printf("  %-34s %9s  (%.3f-%.3f)  %7.0f MB/s  cpu %s\n", name, secs(m),
		slices.Min(ds).Seconds(), slices.Max(ds).Seconds(), float64(size)/m.Seconds()/1e6, secs(median(r[cpuKey+name])))
}

// ratio prints median(a)/median(b) and whether it meets limit (<=; 0: no target).
func (r results) ratio(a, b string, limit float64) {
	ma, mb := median(r[a]), median(r[b])
	if ma == 0 || mb == 0 {
		return
	}
	q := ma.Seconds() / mb.Seconds()
	verdict := ""
	if limit > 0 {
		verdict = fmt.Sprintf("  target <= %.2f: MISSED", limit)
		if q <= limit {
			verdict = fmt.Sprintf("  target <= %.2f: met", limit)
		}
	}
	fmt.Printf("  ratio %-28s %6.3f%s\n", a+" / "+b, q, verdict)
}

// runCmd runs argv and fails with its output when it fails.
func runCmd(ctx context.Context, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if ps := cmd.ProcessState; ps != nil {
		childCPU += ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func shCmd(ctx context.Context, script string, args ...string) error {
	return runCmd(ctx, append([]string{"/bin/sh", "-c", script, "sh"}, args...)...)
}

// makeSource writes size random bytes to path (ChaCha8, not compressible,
// not dedupable) and makes them durable.
func makeSource(path string, size int64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := rand.NewChaCha8([32]byte{'d', 'u', 'r', 'a'})
	buf := make([]byte, 8<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		r.Read(b)
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// warm reads path through the page cache so that it is all cached.
func warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	for {
		n, err := f.Read(buf)
		if n == 0 || err != nil {
			return nil
		}
	}
}

// settle removes the destinations of the previous run and waits for the
// filesystem to be quiet: sync(2) writes back everything dirty and commits
// the journal (and with it ext4's discards of the freed blocks).
func settle(paths ...string) error {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	unix.Sync()
	time.Sleep(200 * time.Millisecond)
	return nil
}

// cold evicts path from the page cache.
func cold(path string) error { return durability.EvictPath(path) }

// cachedBytes reads Cached from /proc/meminfo.
func cachedBytes() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cached:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no Cached in /proc/meminfo")
}

// cacheWatch samples Cached every 20 ms from start until stop and returns
// the growth at its peak and at the end, against the value at start.
type cacheWatch struct {
	base, peak, last int64
	stopc            chan struct{}
	wg               sync.WaitGroup
}

func watchCache() *cacheWatch {
	w := &cacheWatch{stopc: make(chan struct{})}
	w.base, _ = cachedBytes()
	w.peak = w.base
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stopc:
				return
			case <-tick.C:
				if c, err := cachedBytes(); err == nil && c > w.peak {
					w.peak = c
				}
			}
		}
	}()
	return w
}

func (w *cacheWatch) stop() (peak, end int64) {
	close(w.stopc)
	w.wg.Wait()
	w.last, _ = cachedBytes()
	w.peak = max(w.peak, w.last)
	return w.peak - w.base, w.last - w.base
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
