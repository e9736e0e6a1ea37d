// SPDX-License-Identifier: MIT

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fastcp/durability"

	"golang.org/x/sys/unix"
)

// Cold scenarios: before every timed run, after the previous
// copy was removed and its filesystem written back (clearDir), the whole
// page cache is dropped (sync, then 3 > /proc/sys/vm/drop_caches) and the
// source's pages once more with POSIX_FADV_DONTNEED; the source's residency
// is measured then (cachestat) and printed, so "cold" is shown, not assumed.
// The page cache's growth is what of the source and the copy is cached
// after the run less what of the source was before it (cachestat of both
// files, so other work on the machine does not count).

// dropCaches empties the page cache and reports how many bytes of src are
// still cached afterwards.
func dropCaches(src string) (int64, error) {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		return 0, fmt.Errorf("dropping the page cache: %w", err)
	}
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	f.Close()
	if err != nil {
		return 0, &os.PathError{Op: "posix_fadvise", Path: src, Err: err}
	}
	return treeCached(src)
}

// treeCached is how many bytes of the regular files at or under path are
// in the page cache (cachestat(2)).
func treeCached(path string) (int64, error) {
	var total int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.Size() == 0 {
			return err
		}
		n, err := durability.CachedBytes(f, fi.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		total += n
		return nil
	})
	return total, err
}

// copyCacheGrowth is how much more of the source and of the copy is in the
// page cache after a run than of the source before it (cachestat of both:
// Cached: of /proc/meminfo would count everything else the machine did).
func copyCacheGrowth(src, dst string, srcBefore int64) (int64, error) {
	s, err := treeCached(src)
	if err != nil {
		return 0, err
	}
	d, err := treeCached(dst)
	if errors.Is(err, fs.ErrNotExist) {
		// A yardstick that writes nothing (hashfloor); a copy that
		// made nothing fails its comparison.
		d, err = 0, nil
	}
	if err != nil {
		return 0, err
	}
	return max(s+d-srcBefore, 0), nil
}

// cacheGrowthAtMost: the page cache grew by at most limit bytes during
// every run of a (copyCacheGrowth).
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
