// SPDX-License-Identifier: MIT

package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Several -t DIRECTORY: one read of the source, a copy in each directory,
// against the copies made one at a time.

// targetsScenarios: a cold source to a disk and a tmpfs, flushed; a warm
// file to three tmpfs directories; a tree of small files to two.
func targetsScenarios(size int64) []*scenario {
	multi := "fastcp --sync=data -t ext4 -t tmpfs"
	ext4Alone, tmpfsAlone := "fastcp --sync=data -t ext4", "fastcp --sync=data -t tmpfs"
	three, threeRuns := "fastcp -t x3", "fastcp x3, one after the other"
	treeTwo, treeRuns := "fastcp -r -t x2", "fastcp -r x2, one after the other"
	treeCalls, treeCallsRuns := "fastcp's calls -t x2", "fastcp's calls x2, one after the other"
	return []*scenario{
		{
			id:       "targets-cold",
			title:    "ext4 -> ext4 and tmpfs at once, 4 GiB random file, cold cache, until on stable storage",
			srcFS:    rootFS,
			dstFS:    rootFS,
			moreDsts: []string{"tmpfs"},
			intoDirs: true,
			source:   randomFile(coldBytes),
			cold:     true,
			tools: []tool{
				{name: multi, argv: []string{"{fastcp}", "--sync=data", "-t", "{dst}", "-t", "{dst2}", "{src}"}},
				{name: ext4Alone, argv: []string{"{fastcp}", "--sync=data", "-t", "{dst}", "{src}"}, into: []int{0}},
				{name: tmpfsAlone, argv: []string{"{fastcp}", "--sync=data", "-t", "{dst2}", "{src}"}, into: []int{1}},
			},
			targets: []target{
				ratioToSlowestAtMost(multi, []string{ext4Alone, tmpfsAlone}, 1.15),
				readAtMost(multi, 1.01),
				ratio(multi, ext4Alone),
				ratio(multi, tmpfsAlone),
				peakRSSAtMost(multi, maxRSS),
			},
			notes: coldNotes,
		},
		{
			id:       "targets-warm",
			title:    fmt.Sprintf("ext4 -> three tmpfs directories, %s random file, warm cache", humanSize(size)),
			srcFS:    rootFS,
			dstFS:    "tmpfs",
			moreDsts: []string{"tmpfs", "tmpfs"},
			intoDirs: true,
			source:   randomFile(size),
			tools: []tool{
				{name: three, argv: []string{"{fastcp}", "-t", "{dst}", "-t", "{dst2}", "-t", "{dst3}", "{src}"}},
				{name: threeRuns, argv: []string{"sh", "-c", `"$0" -t "$2" "$1" && "$0" -t "$3" "$1" && "$0" -t "$4" "$1"`,
					"{fastcp}", "{src}", "{dst}", "{dst2}", "{dst3}"}},
			},
			targets: []target{
				ratioAtMost(three, threeRuns, 0.6),
				peakRSSAtMost(three, maxRSS),
			},
		},
		{
			id:       "targets-tree",
			title:    "ext4 -> two tmpfs directories, a tree of 20000 files of 4 KiB (200 directories), -r, warm cache",
			srcFS:    rootFS,
			dstFS:    "tmpfs",
			moreDsts: []string{"tmpfs"},
			intoDirs: true,
			source:   treeFiles(20000, 4<<10, 100),
			tools: []tool{
				{name: treeTwo, argv: []string{"{fastcp}", "-r", "-t", "{dst}", "-t", "{dst2}", "{src}"}},
				{name: treeRuns, argv: []string{"sh", "-c", `"$0" -r -t "$2" "$1" && "$0" -r -t "$3" "$1"`,
					"{fastcp}", "{src}", "{dst}", "{dst2}"}},
				// The filesystems' floor: the calls of fastcp's
				// protocol alone, in one process (integration_test/
				// kernelcalls), into both at once and one after the
				// other.
				{name: treeCalls, yardstick: true, argv: []string{"{kernelcalls}", "tree", "{src}", "{dst}", "{dst2}"}},
				{name: treeCallsRuns, yardstick: true, argv: []string{"sh", "-c", `"$0" tree "$1" "$2" && "$0" tree "$1" "$3"`,
					"{kernelcalls}", "{src}", "{dst}", "{dst2}"}},
			},
			targets: []target{
				ratioAtMostOrFloorRatio(treeTwo, treeRuns, 0.7, treeCalls, treeCallsRuns, 1.2),
				peakRSSAtMost(treeTwo, maxRSS),
			},
			noDebug: true,
		},
	}
}

// ratioToSlowestAtMost: a's median is at most limit times the largest
// median of the tools bs (the slowest of the copies a does at once).
func ratioToSlowestAtMost(a string, bs []string, limit float64) target {
	return target{
		desc: fmt.Sprintf("%s / slowest of (%s) <= %.2fx", a, strings.Join(bs, ", "), limit),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 {
				return "", noData
			}
			var slowest *toolResult
			for _, b := range bs {
				tb := r.tool(b)
				if tb == nil || len(tb.samples) == 0 {
					return "", noData
				}
				if slowest == nil || tb.median() > slowest.median() {
					slowest = tb
				}
			}
			q := quotient(ta.median(), slowest.median())
			return fmt.Sprintf("%.2fx (%s)", q, slowest.tool.name), check(q <= limit)
		},
	}
}

// readAtMost: in every run, a read at most factor times the source's size
// from storage (read_bytes of /proc/PID/io): a cold source read once, not
// once per destination. Its own binary, read after the caches were
// dropped, is the rest.
func readAtMost(a string, factor float64) target {
	return target{
		desc: fmt.Sprintf("%s read from storage <= %.2fx the source", a, factor),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 || r.srcBytes <= 0 {
				return "", noData
			}
			var most int64
			for _, s := range ta.samples {
				if s.read < 0 {
					return "read_bytes unknown", noData
				}
				most = max(most, s.read)
			}
			q := float64(most) / float64(r.srcBytes)
			return fmt.Sprintf("%.3fx (%s of %s)", q, fmtMiB(most), fmtMiB(r.srcBytes)), check(q <= factor)
		},
	}
}

// apparentSize is the size of the file path, or the sum of the sizes of
// the regular files of the tree path.
func apparentSize(path string) (int64, error) {
	var n int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}
