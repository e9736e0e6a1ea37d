// SPDX-License-Identifier: MIT

// Package cp is cp's semantics: it resolves the operands into a plan of
// copies, walks the source trees, decides for each entry what happens to
// an existing DEST, executes the copies (on -j workers), sets attributes
// and prints each entry's record in order.
package cp

import (
	"bufio"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

var (
	quote   = output.Quote
	errText = output.ErrText
	quotef  = output.Quotef
)

// app is one run of fastcp: what every entry's copy shares.
type app struct {
	opts *flags.Options
	jobs int // copies at once (Jobs)
	// ownBackup: the copy is SOURCE's own backup (intoOwnBackup), made
	// without backups.
	ownBackup bool
	out       *output.Output
	stdin     *bufio.Reader
	umask     uint32
	memo      copier.Memo
	seq       sequencer

	progress *output.Progress // nil: no progress bar
	scan     *scanner         // the scan that counts the trees for the bar, or nil

	// window holds the source and destination directories open, as few as
	// the descriptor limit allows; cwdNode is the current directory, in
	// which the operands are.
	window  *fsdir.Window
	cwdNode *fsdir.Node

	sched   scheduler
	created *createdSet  // with several SOURCEs: the entries this run made; else nil
	links   linkRegistry // -a: the first copies of inodes with several links
	swaps   *swapFiles

	// session holds the temporary files being written, for the signal
	// handler, and what the sweep of leftovers found per directory.
	session *durability.Session

	noCkptOnce sync.Once // the warning that --resume cannot record checkpoints
	sideOnce   sync.Once // the warning that --resume records beside the files

	linkAttrs linkAttrs // where a symbolic link's own owner and times can be set

	syncFSMu sync.Mutex
	syncFS   map[uint64]bool // --sync: DEST filesystems (devices) looked at

	bufferSize int // --buffer-size, bounded by maxBufferTotal across -j

	parentDirs []parentDone     // --parents: the directories above each SOURCE
	tops       map[topCopy]bool // the command-line SOURCEs copied, and where

	sums *manifest // --checksum-file's; nil: none

	started int64 // when the run began, ns since the epoch
}

// Run copies as opts say, printing to out and reading -i's answers from
// stdin; its temporary files are registered with session, which the
// signal handler interrupts. It reports whether anything failed.
func Run(opts *flags.Options, out *output.Output, stdin io.Reader, session *durability.Session) (failed bool) {
	a := &app{opts: opts, out: out, stdin: bufio.NewReader(stdin), session: session, swaps: newSwapFiles(), started: time.Now().UnixNano()}
	a.seq.out = out
	a.jobs = Jobs(opts)
	if a.jobs > 1 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(workersGCPercent)
	}
	a.umask = sysx.Umask()
	if a.selinuxChecks() {
		return true
	}
	a.boundBuffers()
	if opts.ChecksumFile == "-" {
		// The manifest has standard output to itself.
		out.LinesToStderr()
	}
	if !a.openManifest() {
		return true
	}
	a.seq.sums = a.sums
	copyDirs, scanDirs := windowSizes(a.jobs)
	a.window = fsdir.NewWindow(copyDirs)
	a.cwdNode = a.window.Fixed(cwd)
	p := a.makePlan()
	a.startProgress(p, scanDirs)
	a.sched.start(a.jobs)
	a.copyAll(p)
	a.finish()
	a.finishManifest()
	if a.progress != nil {
		a.progress.Finish()
	}
	return a.seq.failed
}

// Jobs is how many files opts copies at once: one with -i (it asks in
// order), else -j's N, else one for a single SOURCE file, else autoJobs.
// Workers pay off on trees of small files, where Go's work for each file
// overlaps the kernel's, and on a network filesystem, where each one hides
// a round trip; -j 1 copies one file at a time as cp does (figures:
// docs/measurements.md).
func Jobs(opts *flags.Options) int {
	sources := len(opts.Operands)
	if !opts.HasTargetDir() {
		sources-- // the last operand is DEST
	}
	switch {
	case opts.Interactive:
		return 1 // -i asks in order
	case opts.Jobs > 0:
		return opts.Jobs
	case !opts.Recursive && sources <= 1:
		return 1
	}
	return autoJobs
}

// autoJobs is the number of workers a tree gets without -j.
const autoJobs = 4

// workersGCPercent is the garbage collector's GOGC for a run with workers
// (unless GOGC is set): a tree's copy allocates about 2 KB a file over a
// live heap of a few MiB, so at Go's default of 100 the collector runs
// every few thousand files and takes CPU time from the workers. At
// 200 a tree of small files costs a few MiB more at its peak and is
// copied faster (docs/measurements.md).
const workersGCPercent = 200

// maxBufferTotal bounds the rw loop's buffers of all -j copies together:
// with the direct I/O rings (copier.DirectBudgetBytes) a run holds at most
// 64 MiB of buffers, whatever -j.
const maxBufferTotal = 64<<20 - copier.DirectBudgetBytes

// boundBuffers gives each copy a buffer such that -j copies at once hold
// at most maxBufferTotal, and says so when --buffer-size is cut down.
func (a *app) boundBuffers() {
	o := a.opts
	a.bufferSize = o.BufferSize
	jobs := a.jobs
	size := o.BufferSize
	if size == 0 {
		size = copier.DefaultBufferSize
	}
	if int64(jobs)*int64(size) <= maxBufferTotal {
		return
	}
	a.bufferSize = max(maxBufferTotal/jobs, minBufferSize)
	if o.BufferSize != 0 {
		a.out.Warnf("%s", output.BufferSizeBounded(int64(o.BufferSize), jobs, int64(size), int64(a.bufferSize)))
	}
}

// minBufferSize is the smallest buffer boundBuffers gives a copy.
const minBufferSize = maxBufferTotal / 1024

// startProgress starts the bar if the options and stderr call for one,
// --progress=json's objects if asked, else only the counting that a
// status request (SIGUSR1) reports; for a bar or the objects, the scan
// that counts the trees' entries for their totals (scan.go). Without
// them a tree's totals are not counted: unknown.
func (a *app) startProgress(p *plan, scanDirs int) {
	total, files := p.total, p.files
	counting := func() {
		a.progress = a.out.StartCounting(total, files)
		if p.trees {
			a.progress.TotalsUnknown()
		}
	}
	switch a.opts.Progress {
	case flags.ProgressJSON:
		if p.trees {
			a.progress = a.out.StartProgressJSONCounting(total, files)
			a.startScan(p, scanDirs)
		} else {
			a.progress = a.out.StartProgressJSON(total, files)
		}
		return
	case flags.ProgressOff:
		counting()
		return
	case flags.ProgressAuto:
		if !a.out.StderrIsTerminal() {
			counting()
			return
		}
	}
	// A fatal signal clears the bar before the process dies.
	a.session.Arm()
	a.progress = a.out.StartProgress(total, files)
	if p.trees {
		a.progress.CountingTotals()
		a.startScan(p, scanDirs)
	}
}

// The directories a run holds open: as many as the descriptor limit
// leaves once fdReserve (standard streams, the runtime, a read of /proc)
// and fdsPerJob for each -j copy (its source, its destination, a second
// descriptor for direct I/O, a lock) are set aside, up to maxOpenDirs,
// which a tree of any usual depth stays within; a quarter of them for the
// scan that counts the entries, the rest for the copy. A deeper tree opens
// an ancestor again when it needs it (fsdir.Window).
const (
	fdReserve   = 16
	fdsPerJob   = 4
	maxOpenDirs = 128
	minOpenDirs = 8
)

// windowSizes are the copy's and the scan's windows (fsdir.Window) for a
// run of jobs copies at once.
func windowSizes(jobs int) (copyDirs, scanDirs int) {
	limit := maxOpenDirs + fdReserve
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(limit)+uint64(fdsPerJob*max(jobs, 1)) {
		limit = int(rl.Cur) - fdsPerJob*max(jobs, 1)
	}
	n := min(max(limit-fdReserve, minOpenDirs), maxOpenDirs)
	scanDirs = max(n/4, 2)
	return n - scanDirs, scanDirs
}
