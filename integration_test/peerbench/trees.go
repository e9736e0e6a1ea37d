// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Trees of small files, as a mail spool, a photo archive or a backup holds
// them: the peak memory of a copy, which must not follow the number of
// entries (200,000 files, then ten times as many), the time to the first
// file in DEST when the tree's metadata must come from the disk, and the
// time of the whole copy against cp's.

// measured is every scenario's result so far, by id: a target may hold a
// tool to what it measured in an earlier scenario.
var measured = map[string]*result{}

// bigTreeFiles is the number of files of the large tree (-bigtree).
var bigTreeFiles = 2_000_000

// smallFilesTree is a tree of files files of 0 to 100 bytes, 10 to a
// directory, made by mktree (integration_test/mktree, built in the
// workspace), once per run and shared by the scenarios that copy it.
func smallFilesTree(files int) source {
	return source{
		name: fmt.Sprintf("small-%d", files),
		make: func(ctx context.Context, path string) error {
			out, err := exec.CommandContext(ctx, mktreeBin, strconv.Itoa(files), path).CombinedOutput()
			if err != nil {
				return fmt.Errorf("mktree %d %s: %v: %s", files, path, err, out)
			}
			return nil
		},
	}
}

// mktreeBin is the tree maker, built by newWorkspace.
var mktreeBin string

// firstFileTool is a copy by bin with args that is timed until the first
// file appears in DST, and then killed (integration_test/firstfile). Not
// a whole copy, so DST is not compared with the source.
func firstFileTool(name, bin string, args ...string) tool {
	argv := append([]string{"{firstfile}", "{dst}", bin}, args...)
	return tool{name: name, yardstick: true, argv: append(argv, "{src}", "{dst}")}
}

// treeScenarios are the trees of small files: -only tree.
func treeScenarios() []*scenario {
	small := smallFilesTree(200_000)
	big := smallFilesTree(bigTreeFiles)
	return []*scenario{
		{
			id:     "tree-200k",
			title:  "ext4 -> tmpfs, 200,000 files of 0-100 bytes (10 a directory, 20,101 directories), warm cache",
			srcFS:  rootFS,
			dstFS:  "tmpfs",
			source: small,
			tools: []tool{fastcpTool("-r"), fastcpTool("-a"), fastcpTool("-r", "-j", "4"), fastcpTool("-a", "-j", "4"),
				cpRTool, cpATool},
			targets: []target{
				ratioAtMost("fastcp -r", "cp -r", 1.0),
				ratioAtMost("fastcp -a", "cp -a", 1.0),
				ratioAtMost("fastcp -r -j 4", "cp -r", 0.6),
				ratio("fastcp -a -j 4", "cp -a"),
				peakRSSAtMost("fastcp -r", maxRSS),
				peakRSSAtMost("fastcp -a -j 4", maxRSS),
			},
			noDebug:  true,
			baseline: "fastcp -r",
		},
		{
			// On ext4: the copies of two million files of up to 100
			// bytes would take 8 GiB of tmpfs, a page each. The
			// number that matters is the peak RSS, against the same
			// copy of the tree ten times smaller.
			id:      "tree-2m",
			title:   fmt.Sprintf("ext4 -> ext4, %s files of 0-100 bytes (10 a directory): peak memory", thousands(bigTreeFiles)),
			srcFS:   rootFS,
			dstFS:   rootFS,
			source:  big,
			tools:   []tool{fastcpTool("-r"), fastcpTool("-a", "-j", "4")},
			noDebug: true,
			targets: []target{
				peakRSSAtMost("fastcp -r", maxRSS),
				peakRSSAtMost("fastcp -a -j 4", maxRSS),
				rssGrowthAtMost("fastcp -r", "tree-200k", 4<<20),
				rssGrowthAtMost("fastcp -a -j 4", "tree-200k", 4<<20),
			},
		},
		{
			id:       "tree-first-file",
			title:    "ext4 -> tmpfs, 200,000 files of 0-100 bytes, metadata not cached: time to the first file in DEST",
			srcFS:    rootFS,
			dstFS:    "tmpfs",
			source:   small,
			coldMeta: true,
			tools:    []tool{firstFileTool("fastcp -r", "{fastcp}", "-r"), firstFileTool("cp -r", "{cp}", "-r")},
			targets: []target{
				medianUnder("fastcp -r", 100*time.Millisecond),
				ratio("fastcp -r", "cp -r"),
			},
		},
	}
}

// thousands prints n with its thousands apart: "2,000,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// rssGrowthAtMost: a's peak RSS is at most limit more than a's peak RSS in
// the scenario other (run before this one).
func rssGrowthAtMost(a, other string, limit int64) target {
	return target{
		desc: fmt.Sprintf("%s peak RSS <= its %s one + %s", a, other, humanSize(limit)),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			o := measured[other]
			if ta == nil || len(ta.samples) == 0 || o == nil || o.tool(a) == nil || len(o.tool(a).samples) == 0 {
				return "", noData
			}
			before := o.tool(a).peakRSS()
			return fmt.Sprintf("%s against %s", fmtMiB(ta.peakRSS()), fmtMiB(before)), check(ta.peakRSS()-before <= limit)
		},
	}
}

// dropMetadata writes everything back and drops the page cache, the
// dentries and the inodes, so that a tree's directories and inodes are
// read from the disk again.
func dropMetadata() error {
	if err := exec.Command("sync").Run(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
		return fmt.Errorf("dropping the caches: %w", err)
	}
	return nil
}
