// SPDX-License-Identifier: MIT

// Command fastcp copies large files fast and safely: see ../man/fastcp.1.
// main turns argv into an exit status: it parses the options, handles
// signals and hands the copy to package cp (or the benchmark).
package main

import (
	_ "embed"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"fastcp/benchmark"
	"fastcp/cp"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/sysx"
	"fastcp/output"
)

// version is stamped by the Makefile (-ldflags -X main.version=...: VERSION,
// and inside the git work tree git describe's -N-gHASH); a plain go build
// gets the VERSION file's.
var version = ""

//go:embed VERSION
var versionFile string

func main() {
	os.Exit(run(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is fastcp: it returns the exit status.
func run(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := output.New(filepath.Base(argv0), stdout, stderr)
	opts, err := flags.Parse(args)
	if err != nil {
		var ue *flags.UsageError
		if !errors.As(err, &ue) {
			ue = &flags.UsageError{Msg: err.Error()}
		}
		out.Usage(ue.Msg, ue.Hint)
		return 1
	}
	if opts.Help {
		out.WriteStdout(flags.Help(out.Prog()))
		return 0
	}
	if opts.Version {
		out.WriteStdout(output.Version(versionString()))
		return 0
	}
	out.SetQuiet(opts.Quiet)
	session := durability.NewSession()
	arm, stop := handleSignals(out, session)
	session.SetArm(arm)
	defer stop()

	if opts.Benchmark {
		dir := "."
		if len(opts.Operands) > 0 {
			dir = opts.Operands[0]
		}
		return benchmark.Run(benchmark.Config{
			Dir:     dir,
			From:    opts.BenchFrom,
			Size:    opts.BenchSize,
			Runs:    opts.BenchRuns,
			JSON:    opts.JSON,
			Quiet:   opts.Progress == flags.ProgressOff,
			Width:   benchmark.Width(stdout, os.LookupEnv),
			Session: session,
		}, stdout, stderr, out.Prog())
	}

	if ue := cp.CheckUsage(opts); ue != nil {
		out.Usage(ue.Msg, ue.Hint)
		return 1
	}
	stopStatus := handleStatus(out, opts.Progress == flags.ProgressOn || opts.Progress == flags.ProgressJSON)
	defer stopStatus()
	failed := cp.Run(opts, out, stdin, session)
	stopStatus()
	stop()
	if err := out.WriteErr(); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// The reader of stdout is gone (-v | head) and every copy
			// is finished: cp's death by SIGPIPE, without a message.
			die(syscall.SIGPIPE)
		}
		out.Errorf("%s", output.WriteError(err))
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

func versionString() string {
	if version != "" {
		return version
	}
	return strings.TrimSpace(versionFile)
}

// handleSignals makes SIGINT, SIGTERM and SIGHUP remove the temporary files
// in progress, then kill the process with the same signal, as cp dies of
// it: the shell sees a death by signal (a loop stops at the first Ctrl-C,
// $? reads 130, 143 or 129), where an exit(130) would tell it the signal
// was handled. Without signal.Notify, Go would die without any cleanup. A
// signal the caller ignores stays ignored, as it would for cp: nohup sets
// SIGHUP so, and a shell sets SIGINT so for a background job.
//
// SIGPIPE is caught too: the runtime turns EPIPE on stdout (-v into a
// closed pipe) and a write into a pipe DEST whose reader left into that
// signal. The -v and --debug lines are printed once their file is
// complete, so the files being copied then are cleaned up and fastcp dies
// of SIGPIPE, as cp does. (The runtime installs its own SIGPIPE handler
// even when the caller ignored it, so that case cannot be told apart.)
//
// The handlers are installed by arm, which the session calls before it
// first holds something to clean up (durability.Session.SetArm):
// signal.Notify costs a round trip to the runtime's signal-mask thread per
// signal, a quarter of a millisecond for the four, more than a 4 KiB copy
// into an unnamed temporary file takes. Until then a fatal signal kills
// the process by the default action (the runtime's handler re-raises it),
// which is the same death: the unnamed file has no name to leave behind.
func handleSignals(out *output.Output, session *durability.Session) (arm, stop func()) {
	var (
		handling          sync.Mutex
		armOnce, stopOnce sync.Once
		armed             bool
	)
	done := make(chan struct{})
	arm = func() {
		armOnce.Do(func() {
			armed = true
			c := make(chan os.Signal, 1)
			go onSignal(c, done, &handling, out, session)
			for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
				if !signal.Ignored(s) {
					signal.Notify(c, s)
				}
			}
		})
	}
	// stop ends the goroutine but leaves the handlers in place: undoing
	// signal.Notify costs a round trip per signal to the runtime's
	// signal-mask thread (docs/measurements.md), and the
	// process exits right after. A signal that comes in between finds the
	// channel full or unread and is dropped: the copies are finished. A
	// signal already being handled keeps stop waiting until the handler
	// has killed the process, so it never exits 0 in the middle. After
	// stop, arm does nothing.
	stop = func() {
		stopOnce.Do(func() {
			armOnce.Do(func() {})
			if armed {
				close(done)
				handling.Lock()
			}
		})
	}
	return arm, stop
}

// statusArmDelay is how long a run goes before SIGUSR1 is handled, unless
// progress was asked for: a copy that takes less never pays for
// signal.Notify's round trip to the runtime (docs/measurements.md).
const statusArmDelay = 10 * time.Millisecond

// handleStatus makes SIGUSR1 print one status line on stderr (out.Status):
// the file, the bytes done of the total, the rate and the time left, as dd
// prints its statistics, bar or not; the copy goes on. The handler is
// installed once the run has lasted statusArmDelay, or at once when
// progress is shown (now).
//
// SIGUSR1 never kills fastcp once Go's runtime has started, which it does
// before any of fastcp's code runs: the runtime catches SIGUSR1 from then
// on, and drops it until signal.Notify asks for it. Only in the first
// moments of the process, before the runtime installed its handlers,
// would it end the process by its default action, as it ends dd before dd
// installed its own. A caller that starts fastcp with SIGUSR1 ignored
// closes even that window, and fastcp still answers it: the runtime's
// handler replaces the inherited SIG_IGN (os/signal keeps only SIGHUP and
// SIGINT ignored), and so does Notify.
//
// stop ends the answering goroutine; a SIGUSR1 after it is dropped.
func handleStatus(out *output.Output, now bool) (stop func()) {
	var (
		mu      sync.Mutex
		stopped bool
	)
	done := make(chan struct{})
	install := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGUSR1)
		go func() {
			for {
				select {
				case <-c:
					out.Status()
				case <-done:
					return
				}
			}
		}()
	}
	var t *time.Timer
	if now {
		install()
	} else {
		t = time.AfterFunc(statusArmDelay, install)
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		stopped = true
		if t != nil {
			t.Stop()
		}
		close(done)
	}
}

// onSignal waits for a signal on c, or for done. On a signal it
// interrupts the session, says what was left behind and dies of it.
func onSignal(c <-chan os.Signal, done <-chan struct{}, handling *sync.Mutex, out *output.Output, session *durability.Session) {
	select {
	case s := <-c:
		handling.Lock()
		left := session.Interrupt()
		out.Freeze()
		for _, k := range left.Kept {
			out.Interrupted(k.Temp, k.Dest, k.Done, k.Size, k.Err)
		}
		for _, dest := range left.Partial {
			if s == syscall.SIGPIPE && isAnonymousPipe(dest) {
				// The pipe's reader left (/dev/stdout, >(cmd)): cp's
				// silent death. A named FIFO is a file the user
				// named, and is told about as a device is.
				continue
			}
			out.InterruptedInPlace(dest)
		}
		die(s.(syscall.Signal))
	case <-done:
	}
}

// isAnonymousPipe reports whether name leads to a pipe or socket that has
// no name in a filesystem (a magic link such as /dev/stdout to pipefs or
// sockfs), not to a named FIFO.
func isAnonymousPipe(name string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(name, &fs) != nil {
		return false
	}
	return fs.Type == pipefsMagic || fs.Type == sockfsMagic
}

// The f_type of pipefs and sockfs (linux/magic.h).
const (
	pipefsMagic = 0x50495045
	sockfsMagic = 0x534f434b
)

// die kills the process with s, by its default action: signal.Reset stops
// the runtime's delivery to the channel, and s gets SIG_DFL before it is
// raised again (the runtime's own handler ignores a SIGPIPE nobody wants).
func die(s syscall.Signal) {
	signal.Reset(s)
	sysx.DefaultAction(s)
	syscall.Kill(syscall.Getpid(), s)
	// The signal is pending on some thread; it ends the process at once.
	// Should it not, the exit status still says which signal it was.
	time.Sleep(time.Second)
	os.Exit(128 + int(s))
}
