// SPDX-License-Identifier: MIT

// Package cp is cp's semantics: it resolves the operands into a plan of
// copies, walks the source trees, decides for each entry what happens to
// an existing DEST, executes the copies (on -j workers), sets attributes
// and prints each entry's record in order.
package cp

import (
	"bufio"
	"io"
	"sync"
	"time"

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

// app is one run of fastcp: what every entry's copy shares.
type app struct {
	opts  *flags.Options
	out   *output.Output
	stdin *bufio.Reader
	umask uint32
	memo  copier.Memo
	seq   sequencer

	progress *output.Progress // nil: no progress bar
	files    int              // regular files the plan will copy, for the bar

	sched   scheduler
	created *createdSet // with several SOURCEs: the entries this run made; else nil
	links   linkRegistry
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
	a.umask = uint32(unix.Umask(0))
	unix.Umask(int(a.umask))
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
	p := a.makePlan()
	a.startProgress(p.total, a.files)
	if !opts.Interactive {
		// -i asks in order: no workers.
		a.sched.start(opts.Jobs)
	}
	a.copyAll(p)
	a.finish()
	a.finishManifest()
	if a.progress != nil {
		a.progress.Finish()
	}
	return a.seq.failed
}

// maxBufferTotal bounds the rw loop's buffers of all -j copies together:
// with the direct I/O rings (copier.DirectBudgetBytes) a run holds at most
// 64 MiB of buffers, whatever -j.
const maxBufferTotal = 64<<20 - copier.DirectBudgetBytes

// boundBuffers gives each copy a buffer such that -j copies at once hold
// at most maxBufferTotal, and says so when --buffer-size is cut down.
func (a *app) boundBuffers() {
	o := a.opts
	a.bufferSize = o.BufferSize
	jobs := max(o.Jobs, 1)
	size := o.BufferSize
	if size == 0 {
		size = copier.DefaultBufferSize
	}
	if int64(jobs)*int64(size) <= maxBufferTotal {
		return
	}
	a.bufferSize = max(maxBufferTotal/jobs, minBufferSize)
	if o.BufferSize != 0 {
		a.out.Warnf("--buffer-size=%s with -j %d would take %s; each copy uses %s (%s in all)",
			output.Size(int64(o.BufferSize)), jobs, output.Size(int64(jobs)*int64(size)),
			output.Size(int64(a.bufferSize)), output.Size(int64(jobs)*int64(a.bufferSize)))
	}
}

// minBufferSize is the smallest buffer boundBuffers gives a copy.
const minBufferSize = maxBufferTotal / 1024

// startProgress starts the bar if the options and stderr call for one,
// --progress=json's objects if asked, else only the counting that a
// status request (SIGUSR1) reports.
func (a *app) startProgress(total int64, files int) {
	switch a.opts.Progress {
	case flags.ProgressJSON:
		a.progress = a.out.StartProgressJSON(total, files)
		return
	case flags.ProgressOff:
		a.progress = a.out.StartCounting(total, files)
		return
	case flags.ProgressAuto:
		if !a.out.StderrIsTerminal() {
			a.progress = a.out.StartCounting(total, files)
			return
		}
	}
	// A fatal signal clears the bar before the process dies.
	a.session.Arm()
	a.progress = a.out.StartProgress(total, files)
}
