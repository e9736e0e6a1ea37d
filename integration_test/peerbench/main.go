// SPDX-License-Identifier: MIT

// Command peerbench times fastcp against its peers (GNU cp, dd and a plain Go
// io.Copy program) on real filesystems and prints, per scenario, each tool's
// median wall time with min-max, CPU and peak RSS, the ratios fastcp/peer and
// whether each of the project's targets is MET or MISSED.
//
// It is a report, not a test: a missed target does not fail it. It exits 1
// only when something could not run or a copy differs from its source, and
// 128+N when signal N interrupted it (130 for Ctrl-C). It needs root (it
// mounts tmpfs and loop ext4/xfs/btrfs images) and expects `make build` to
// have built ./fastcp:
//
//	make bench                                  # the default scenarios
//	go run ./integration_test/peerbench -sweep  # rw buffer sizes and strategies
//	go run ./integration_test/peerbench -only 'tmpfs' -runs 9
//
// Everything it creates lives in one directory under -dir and is removed
// (mounts unmounted first) when it ends, also on error and on SIGINT,
// SIGTERM, SIGHUP and SIGPIPE.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"
)

type options struct {
	runs    int
	budget  time.Duration
	verbose bool // print every timed run on stderr
}

func main() {
	if code, ok := launchMode(); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

func run() int {
	var (
		runs    = flag.Int("runs", 5, "timed runs of each tool per scenario (the tools take turns)")
		only    = flag.String("only", "", "run only the scenarios whose id matches this regular expression")
		sweep   = flag.Bool("sweep", false, "run the rw buffer-size and strategy sweep instead of the peer comparison")
		list    = flag.Bool("list", false, "list the scenarios and exit")
		dir     = flag.String("dir", "/var/tmp", "parent directory of the workspace (on the ext4 root filesystem)")
		size    = flag.String("size", "1G", "size of the random-data source files (K, M, G suffixes)")
		budget  = flag.Duration("budget", 20*time.Second, "stop timing a tool in a scenario once its runs took this long in total (it keeps at least one run)")
		fastcp  = flag.String("fastcp", "", "fastcp binary to time (default: ./fastcp at the repository root)")
		base    = flag.String("baseline", "", "an earlier fastcp binary, timed beside fastcp in every scenario as \"baseline\" (\"no worse than before\", in the same run)")
		verbose = flag.Bool("v", false, "print every timed run on stderr, as it ends")
		bigTree = flag.Int("bigtree", bigTreeFiles, "files in the large tree of small files (tree-2m; fewer for a quick run)")
	)
	flag.Parse()
	bigTreeFiles = *bigTree
	if flag.NArg() > 0 || *runs < 1 || *bigTree < 1 {
		flag.Usage()
		return 2
	}
	fileSize, err := parseSize(*size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: -size: %v\n", err)
		return 2
	}
	filter, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: -only: %v\n", err)
		return 2
	}
	all := defaultScenarios(fileSize)
	if *sweep {
		all = sweepScenarios(fileSize)
	}
	var scenarios []*scenario
	for _, sc := range all {
		if filter.MatchString(sc.id) {
			scenarios = append(scenarios, sc)
		}
	}
	if *base != "" {
		for _, sc := range scenarios {
			addBaseline(sc)
		}
	}
	if *list {
		for _, sc := range scenarios {
			fmt.Printf("%-18s %s\n", sc.id, sc.title)
		}
		return 0
	}
	if len(scenarios) == 0 {
		fmt.Fprintf(os.Stderr, "peerbench: no scenario matches %q (see -list)\n", *only)
		return 2
	}

	ctx, stop := handleSignals()
	defer stop()

	ws, err := newWorkspace(ctx, *dir, *fastcp, *base)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: %v\n", err)
		if ws != nil {
			ws.close()
		}
		return exitStatus(ctx, 1)
	}
	defer ws.close()
	ws.printHeader(os.Stdout, *runs)

	o := options{runs: *runs, budget: *budget, verbose: *verbose}
	var results []*result
	for _, sc := range scenarios {
		fmt.Fprintf(os.Stderr, "peerbench: %s: %d tools x %d runs\n", sc.id, len(sc.tools), o.runs)
		r := runScenario(ctx, ws, sc, o)
		results = append(results, r)
		measured[sc.id] = r
		r.print(os.Stdout)
		if ctx.Err() != nil {
			break
		}
	}
	printSummary(os.Stdout, results)

	status := 0
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, errSkipped) {
			status = 1
		}
	}
	return exitStatus(ctx, status)
}

// handleSignals cancels the returned context on the first SIGINT, SIGTERM,
// SIGHUP or SIGPIPE (stdout piped into head), so that the running tool is
// killed and the workspace cleaned up; a second signal exits at once.
func handleSignals() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "peerbench: %v: cleaning up\n", s)
			cancel(signalError{s.(syscall.Signal)})
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "peerbench: %v again: exiting without cleaning up\n", s)
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "interrupted by " + e.sig.String() }

// exitStatus is status, or 128+signal when a signal interrupted the run.
func exitStatus(ctx context.Context, status int) int {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return 128 + int(se.sig)
	}
	return status
}
