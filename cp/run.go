// Package cp is cp's semantics: it resolves the operands into a plan of
// copies, walks the source trees, decides for each entry what happens to
// an existing DEST, executes the copies (on -j workers), sets attributes
// and prints each entry's record in order.
package cp

import (
	"bufio"
	"io"
	"sync"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

var (
	quote   = output.Quote
	errText = output.ErrText
)

// app is one run of fastcp.
type app struct {
	opts  *flags.Options
	out   *output.Output
	stdin *bufio.Reader
	umask uint32
	memo  copier.Memo
	seq   sequencer

	progress *output.Progress // nil: no progress bar

	// work runs entry copies on -j workers; nil: in the walker itself.
	work chan func()
	wg   sync.WaitGroup

	// session holds the temporary files being written, for the signal
	// handler, and what the sweep of leftovers found per directory.
	session *durability.Session

	noCkptOnce sync.Once // the warning that --resume cannot record checkpoints

	swapOnce  sync.Once
	swapFiles map[devIno]bool // the swap files in use (activeSwapFile)

	entryMu   sync.Mutex
	entryDirs map[string]bool // with --sync: directories that got a new entry other than a regular file

	linksMu sync.Mutex
	links   map[devIno]*linkFirst // -a: the first copy of each multiply-linked inode
	dirs    []dirDone             // directories whose attributes are set at the end
	tops    map[topCopy]bool      // the command-line SOURCEs copied, and where
}

// Run copies as opts say, printing to out and reading -i's answers from
// stdin; its temporary files are registered with session, which the
// signal handler interrupts. It reports whether anything failed.
func Run(opts *flags.Options, out *output.Output, stdin io.Reader, session *durability.Session) (failed bool) {
	a := &app{opts: opts, out: out, stdin: bufio.NewReader(stdin), links: make(map[devIno]*linkFirst), session: session}
	a.seq.out = out
	a.umask = uint32(unix.Umask(0))
	unix.Umask(int(a.umask))
	if a.selinuxChecks() {
		return true
	}
	a.startProgress()
	a.startWorkers()
	a.copyAll()
	a.finish()
	if a.progress != nil {
		a.progress.Finish()
	}
	return a.seq.failed
}

// startProgress starts the bar if the options and stderr call for one.
func (a *app) startProgress() {
	switch a.opts.Progress {
	case flags.ProgressOff:
		return
	case flags.ProgressAuto:
		if !a.out.StderrIsTerminal() {
			return
		}
	}
	a.progress = a.out.StartProgress(a.totalBytes())
}
