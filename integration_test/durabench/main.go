// SPDX-License-Identifier: MIT

// Command durabench times fastcp's durable copies against the usual ways of
// getting a file onto the disk, and sweeps the writeback window of the
// durability package. It prints medians, min-max and ratios; it asserts
// nothing (times depend on the machine and on what else it is doing).
//
//	go run ./integration_test/durabench                 # sync, modes, nocache, verify
//	go run ./integration_test/durabench -sweep          # sync_file_range window x depth
//	go run ./integration_test/durabench -sweep -only nocache
//	go run ./integration_test/durabench -only 'sync|verify' -runs 9
//
// Scenarios (ratios are fastcp's time over the peer's):
//
//	sync     1 GiB, warm source: fastcp --sync=data vs `cp && sync DST` (<= 0.85),
//	         `dd bs=1M conv=fdatasync` (<= 0.9) and fio's sequential O_DIRECT
//	         write of the same size, the device's limit (<= 1.4)
//	sync-cold the same with the source evicted before each run
//	modes    fastcp with each --sync mode
//	nocache  2 GiB, cold source: fastcp --nocache vs fastcp (<= 1.15), the
//	         growth of Cached in /proc/meminfo (< 256 MiB)
//	verify   1 GiB: fastcp --sync=data --verify vs without; the difference
//	         against one sequential read of the file (O_DIRECT and cold cache)
//	resume   4 GiB, cold source: fastcp --resume vs fastcp, the cost
//	         of the checkpoints (<= 1.03); fastcp --resume continuing a
//	         leftover at 75% vs the full copy (<= 0.35)
//	resume-sum the same with --checksum-file, -size (1 GiB): the resumed
//	         run's manifest line must be sha256sum's of DEST
//	partial  DEST left at 75% by an interrupted cp, continued with --resume,
//	         vs the full copy: on ext4 (<= 0.6), on xfs and btrfs, where the
//	         prefix is shared (<= 0.35); cold source and DEST
//
// Everything lives in one directory under -dir (the ext4 root filesystem by
// default) that is removed at the end, also on SIGINT, SIGTERM and SIGHUP.
// Before every timed run the previous destination is removed and sync(2)
// settles the filesystem (ext4 mounted with discard trims at commit), and
// the source is made warm or cold as the scenario says.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"fastcp/integration_test/fsfixture"
)

func main() { os.Exit(run()) }

type config struct {
	runs        int
	size        int64
	nocacheSize int64
	resumeSize  int64
	bin         string
	ws          string
	// fioMem is fio's --mem: shmhuge when huge pages could be reserved
	// (a 1 MiB request of 4 KiB pages is 256 segments, more than a
	// virtio disk takes in one request), else malloc.
	fioMem string
	filter *regexp.Regexp // -only: scenarios, or with -sweep its parts
}

func run() int {
	var (
		runs    = flag.Int("runs", 5, "timed runs per tool (the tools take turns)")
		only    = flag.String("only", "", "run only the scenarios whose name matches this regular expression")
		sweep   = flag.Bool("sweep", false, "sweep the writeback window and depth instead")
		dir     = flag.String("dir", "/var/tmp", "parent of the workspace (the filesystem measured)")
		size    = flag.String("size", "1G", "file size for sync, modes, verify and the sweep")
		ncSize  = flag.String("nocache-size", "2G", "file size for nocache")
		rsSize  = flag.String("resume-size", "4G", "file size for resume")
		fastcpF = flag.String("fastcp", "", "fastcp binary (default: built from this module into the workspace)")
	)
	flag.Parse()
	if flag.NArg() > 0 || *runs < 1 {
		flag.Usage()
		return 2
	}
	c := config{runs: *runs}
	var err error
	if c.size, err = parseSize(*size); err != nil {
		return usage("-size", err)
	}
	if c.nocacheSize, err = parseSize(*ncSize); err != nil {
		return usage("-nocache-size", err)
	}
	if c.resumeSize, err = parseSize(*rsSize); err != nil {
		return usage("-resume-size", err)
	}
	filter, err := regexp.Compile(*only)
	if err != nil {
		return usage("-only", err)
	}
	c.filter = filter

	ws, err := os.MkdirTemp(*dir, "fastcp-durabench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "durabench:", err)
		return 1
	}
	c.ws = ws
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	defer os.RemoveAll(ws)

	c.bin = *fastcpF
	if c.bin == "" {
		c.bin = filepath.Join(ws, "fastcp")
		if err := build(c.bin); err != nil {
			fmt.Fprintln(os.Stderr, "durabench: building fastcp:", err)
			return 1
		}
	}
	c.fioMem = "malloc"
	if _, err := exec.LookPath("fio"); err == nil {
		if restore, err := fsfixture.ReserveHugePages(16 << 20); err != nil {
			fmt.Printf("note: fio without huge pages (%v): its 1 MiB requests of 4 KiB pages are split at the device's segment limit\n", err)
		} else {
			c.fioMem = "shmhuge"
			defer restore()
		}
	}
	printHeader(c, ws)

	type scenario struct {
		name string
		run  func(context.Context, config) error
	}
	all := []scenario{{"sync", syncScenario}, {"sync-cold", syncColdScenario}, {"modes", modesScenario}, {"nocache", nocacheScenario}, {"verify", verifyScenario}, {"resume", resumeScenario}, {"resume-sync", resumeSyncScenario},
		{"resume-sum", resumeSumScenario}, {"partial", partialScenario}}
	if *sweep {
		all = []scenario{{"sweep", sweepScenario}}
	}
	status := 0
	for _, sc := range all {
		if !*sweep && !filter.MatchString(sc.name) {
			continue
		}
		if err := sc.run(ctx, c); err != nil {
			fmt.Fprintf(os.Stderr, "durabench: %s: %v\n", sc.name, err)
			status = 1
		}
		if ctx.Err() != nil {
			return 130
		}
	}
	return status
}

func usage(flagName string, err error) int {
	fmt.Fprintf(os.Stderr, "durabench: %s: %v\n", flagName, err)
	return 2
}

// build compiles fastcp from the module root (go run runs us there; the
// module root is found through `go env GOMOD` in any case).
func build(out string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return err
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, b)
	}
	return nil
}

func printHeader(c config, ws string) {
	var fs syscall.Statfs_t
	syscall.Statfs(ws, &fs)
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("durabench: %s, workspace %s (fs magic %#x), %d runs per tool, load %s; fio --mem=%s\n",
		host, ws, fs.Type, c.runs, strings.Fields(string(load) + " ?")[0], c.fioMem)
}

// parseSize reads 512, 64K, 256M, 1G (powers of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}
