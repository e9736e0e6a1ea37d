package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Cold scenarios (issue 11): before every timed run, after the previous
// copy was removed and its filesystem written back (clearDir), the whole
// page cache is dropped (sync, then 3 > /proc/sys/vm/drop_caches) and the
// source's pages once more with POSIX_FADV_DONTNEED; the source's residency
// is measured then (cachestat) and printed, so "cold" is shown, not assumed.
// The page cache's growth during the run is Cached: of /proc/meminfo after
// the run less before it: machine-wide, so other work moves it too.

// dropCaches empties the page cache and reports how many bytes of the
// regular file src are still cached afterwards.
func dropCaches(src string) (int64, error) {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		return 0, fmt.Errorf("dropping the page cache: %w", err)
	}
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, &os.PathError{Op: "posix_fadvise", Path: src, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return 0, nil
	}
	var cs unix.Cachestat_t
	if err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{Off: 0, Len: uint64(fi.Size())}, &cs, 0); err != nil {
		return 0, &os.PathError{Op: "cachestat", Path: src, Err: err}
	}
	return min(int64(cs.Cache)*int64(os.Getpagesize()), fi.Size()), nil
}

// cachedBytes is Cached: of /proc/meminfo, in bytes (-1 when unreadable).
func cachedBytes() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Cached:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kib, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kib << 10
				}
			}
		}
	}
	return -1
}

// cacheGrowthAtMost: the page cache grew by at most limit bytes during
// every run of a (Cached: after the run less before it).
func cacheGrowthAtMost(a string, limit int64) target {
	return target{
		desc: fmt.Sprintf("%s page cache growth <= %s", a, humanSize(limit)),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 {
				return "", noData
			}
			g := ta.maxGrowth()
			return fmt.Sprintf("max %s", fmtMiB(g)), check(g <= limit)
		},
	}
}

func (tr *toolResult) maxGrowth() int64 {
	var m int64
	for _, s := range tr.samples {
		m = max(m, s.cacheGrowth)
	}
	return m
}

// coldNotes says, per tool, what the source's residency was before its
// runs and how much the page cache grew during them.
func coldNotes(r *result) []string {
	var out []string
	for _, tr := range r.tools {
		if len(tr.samples) == 0 {
			continue
		}
		var res []string
		var growth []int64
		for _, s := range tr.samples {
			res = append(res, fmtMiB(s.resident))
			growth = append(growth, s.cacheGrowth)
		}
		out = append(out, fmt.Sprintf("%s: source cached before each run %s; page cache growth median %s, max %s",
			tr.tool.name, strings.Join(res, ", "), fmtMiB(medianInt(growth)), fmtMiB(tr.maxGrowth())))
	}
	return out
}

func medianInt(v []int64) int64 {
	s := append([]int64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}
