package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"

	"fastcp/benchmark"
	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// app is one run of fastcp.
type app struct {
	opts  *flags.Options
	out   *output
	stdin *bufio.Reader
	umask uint32
	memo  copier.Memo
	seq   sequencer

	progress *progress // nil: no progress bar

	// work runs entry copies on -j workers; nil: in the walker itself.
	work chan func()
	wg   sync.WaitGroup

	leftovers leftoverDirs // directories looked at for leftover temporary files

	swapOnce  sync.Once
	swapFiles map[devIno]bool // the swap files in use (activeSwapFile)

	entryMu   sync.Mutex
	entryDirs map[string]bool // with --sync: directories that got a new entry other than a regular file

	linksMu sync.Mutex
	links   map[devIno]*linkFirst // -a: the first copy of each multiply-linked inode
	dirs    []dirDone             // directories whose attributes are set at the end
}

// run is fastcp: it returns the exit status.
func run(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &output{prog: filepath.Base(argv0), stdout: stdout, stderr: stderr}
	opts, err := flags.Parse(args)
	if err != nil {
		var ue *flags.UsageError
		if !errors.As(err, &ue) {
			ue = &flags.UsageError{Msg: err.Error()}
		}
		out.usage(ue)
		return 2
	}
	if opts.Help {
		io.WriteString(stdout, flags.Help(out.prog))
		return 0
	}
	if opts.Version {
		fmt.Fprintf(stdout, "fastcp %s\n", versionString())
		return 0
	}
	out.quiet = opts.Quiet
	stop := handleSignals(out)
	defer stop()

	if opts.Benchmark {
		dir := "."
		if len(opts.Operands) > 0 {
			dir = opts.Operands[0]
		}
		return benchmark.Run(benchmark.Config{
			Dir:   dir,
			From:  opts.BenchFrom,
			Size:  opts.BenchSize,
			Runs:  opts.BenchRuns,
			JSON:  opts.JSON,
			Quiet: opts.Quiet,
		}, stdout, stderr, out.prog)
	}

	a := &app{opts: opts, out: out, stdin: bufio.NewReader(stdin), links: make(map[devIno]*linkFirst)}
	a.seq.out = out
	a.umask = uint32(unix.Umask(0))
	unix.Umask(int(a.umask))
	a.startProgress(stderr)
	a.startWorkers()
	a.copyAll()
	a.finish()
	if a.progress != nil {
		a.progress.finish(out)
	}
	if out.outErr != nil {
		out.errorf("write error: %s", errText(out.outErr))
		return 1
	}
	if a.seq.failed {
		return 1
	}
	return 0
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// handleSignals makes SIGINT, SIGTERM and SIGHUP remove the temporary files
// in progress before the process exits with 128+signal (130, 143, 129):
// without signal.Notify, Go would die without running any cleanup.
func handleSignals(out *output) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// A closed stdout (-v into `head`) must be an error, not a silent death.
	signal.Ignore(syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			durability.RemoveTempsForExit()
			out.mu.Lock()
			if out.clearLine != nil {
				out.clearLine()
			}
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	// stop ends the goroutine but leaves the handlers in place: undoing
	// signal.Notify costs a round trip per signal to the runtime's
	// signal-mask thread (about 0.5 ms of a 12 ms small copy), and the
	// process exits right after. A signal that comes in between finds the
	// channel full or unread and is dropped: the copies are finished.
	return func() {
		close(done)
	}
}
