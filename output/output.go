// SPDX-License-Identifier: MIT

// Package output is all of fastcp's terminal text: messages prefixed with
// the name the program was run as, file names in cp's quoting, the system's
// error text worded as cp words it, the -v and --debug lines, the progress
// bar and its one size formatter.
package output

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"fastcp/copier"
	"fastcp/durability"
)

// Output is the terminal of one run: stdout for -v and --debug lines,
// stderr for errors, warnings, prompts and the progress bar.
type Output struct {
	mu     sync.Mutex
	prog   string
	stdout io.Writer
	stderr io.Writer
	quiet  bool
	outErr error // first error writing stdout (EPIPE with -v into a closed pipe)
	// lines is where Println writes: stdout, or stderr when stdout is
	// given to one document (--checksum-file=-).
	lines io.Writer
	// clearLine, when set, removes the progress bar from the terminal
	// before a line is printed; called with mu held.
	clearLine func()
	// status is the run's progress, bar or not, which Status reports.
	status *Progress
}

// New is the output of a run as prog (the base name of argv[0]).
func New(prog string, stdout, stderr io.Writer) *Output {
	return &Output{prog: prog, stdout: stdout, stderr: stderr, lines: stdout}
}

// LinesToStderr sends the -v and --debug lines to stderr: stdout is
// for one document (the manifest of --checksum-file=-) and nothing else.
func (o *Output) LinesToStderr() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = o.stderr
}

// WriteStdout writes s, a whole document, to stdout.
func (o *Output) WriteStdout(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outErr != nil {
		return
	}
	if o.clearLine != nil {
		o.clearLine()
	}
	if _, err := io.WriteString(o.stdout, s); err != nil {
		o.outErr = err
	}
}

// Prog is the name messages are prefixed with.
func (o *Output) Prog() string { return o.prog }

// SetQuiet makes warnings silent (-q).
func (o *Output) SetQuiet(q bool) { o.quiet = q }

// WriteErr is the first error writing stdout, if any.
func (o *Output) WriteErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.outErr
}

// Println writes one line to stdout.
func (o *Output) Println(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outErr != nil {
		return
	}
	if o.clearLine != nil {
		o.clearLine()
	}
	if _, err := io.WriteString(o.lines, line+"\n"); err != nil && o.lines == o.stdout {
		o.outErr = err
	}
}

// Errorf prints "PROG: MESSAGE" to stderr.
func (o *Output) Errorf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clearLine != nil {
		o.clearLine()
	}
	fmt.Fprintf(o.stderr, "%s: %s\n", o.prog, fmt.Sprintf(format, a...))
}

// Warnf is Errorf for warnings, which -q silences.
func (o *Output) Warnf(format string, a ...any) {
	if o.quiet {
		return
	}
	o.Errorf("warning: "+format, a...)
}

// Redraw writes line over the current line of stderr, a terminal: a
// status rewritten in place (the benchmark's progress).
func (o *Output) Redraw(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	io.WriteString(o.stderr, "\r"+line+"\x1b[K")
}

// EraseLine erases what Redraw wrote.
func (o *Output) EraseLine() {
	o.mu.Lock()
	defer o.mu.Unlock()
	io.WriteString(o.stderr, "\r\x1b[K")
}

// Prompt asks "PROG: QUESTION" on stderr, without a newline (-i).
func (o *Output) Prompt(question string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clearLine != nil {
		o.clearLine()
	}
	fmt.Fprintf(o.stderr, "%s: %s", o.prog, question)
}

// Usage prints a usage error, its hint and the pointer to --help.
func (o *Output) Usage(msg, hint string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.stderr, "%s: %s\n", o.prog, msg)
	if hint != "" {
		fmt.Fprintln(o.stderr, hint)
	}
	fmt.Fprintf(o.stderr, "Try '%s --help' for more information.\n", o.prog)
}

// Freeze clears the progress bar and takes the output for good: nothing
// is printed after it. The signal handler calls it before the process
// exits, so no line is cut in half.
func (o *Output) Freeze() {
	o.mu.Lock()
	if o.clearLine != nil {
		o.clearLine()
	}
}

// Interrupted says, after Freeze, that a fatal signal left the temporary
// file temp in place for --resume, holding done of size bytes of the copy
// to dest on stable storage; err is why the last flush failed, if it did.
func (o *Output) Interrupted(temp, dest string, done, size int64, err error) {
	flushed := ""
	if err != nil {
		flushed = fmt.Sprintf(" (the last flush failed: %s)", ErrText(err))
	}
	fmt.Fprintf(o.stderr, "%s: interrupted: %s keeps %s of %s of the copy to %s (%d of %d bytes)%s; run again with --resume to continue\n",
		o.prog, Quote(temp), Size(done), Size(size), Quote(dest), done, size, flushed)
}

// InterruptedInPlace says, after Freeze, that a fatal signal stopped the
// in-place copy (--inplace, or a device or FIFO DEST) to dest: it holds
// part of the copy.
func (o *Output) InterruptedInPlace(dest string) {
	fmt.Fprintf(o.stderr, "%s: interrupted: %s was written in place and is now incomplete\n", o.prog, Quote(dest))
}

// ErrText is the C library's text for err's errno, or err's own text.
var ErrText = copier.ErrText

// Worded is an error whose text is a complete message; Err (if not nil)
// is the system's error it words, for errors.Is.
type Worded struct {
	Msg string
	Err error
}

func (e *Worded) Error() string { return e.Msg }

func (e *Worded) Unwrap() error { return e.Err }

// Wordedf is a Worded error.
func Wordedf(format string, a ...any) error { return &Worded{Msg: fmt.Sprintf(format, a...)} }

// WordedErr is a Worded error that words err.
func WordedErr(err error, format string, a ...any) error {
	return &Worded{Msg: fmt.Sprintf(format, a...), Err: err}
}

// SourceChanged is a source that changed while it was copied; What says how.
type SourceChanged struct{ What string }

func (e *SourceChanged) Error() string { return e.What }

// CopyError words a failed copy of src to dst as cp does. reflinkAlways is
// --reflink=always, whose refusal cp words as a failed clone.
func CopyError(src, dst string, err error, reflinkAlways bool) string {
	// A durability step named first: a writeback error can also arrive
	// inside a copier error, when it ended the copy.
	var de *durability.Error
	if errors.As(err, &de) {
		switch de.Op {
		case durability.OpRename:
			return CannotReplace(dst, de.Err)
		case durability.OpCreate:
			return CannotCreateRegularFile(dst, de.Err)
		case durability.OpClose:
			return FailedToClose(dst, de.Err)
		case durability.OpFsyncDir:
			return fmt.Sprintf("fsync failed for the directory of %s: %s; %s is the new copy, but its name may not survive a power cut",
				Quote(dst), ErrText(de.Err), Quote(dst))
		}
		return fmt.Sprintf("%s failed for %s: %s", de.Op, Quote(dst), ErrText(de.Err))
	}
	var ce *copier.Error
	if errors.As(err, &ce) {
		if ce.Refused {
			if ce.Strategy == copier.Reflink && reflinkAlways {
				return fmt.Sprintf("failed to clone %s from %s: %s", Quote(dst), Quote(src), ErrText(ce.Err))
			}
			return fmt.Sprintf("cannot copy %s to %s with --strategy=%s: %s", Quote(src), Quote(dst), ce.Strategy, copier.ErrnoText(ce.Err))
		}
		if se := (*os.SyscallError)(nil); errors.As(ce.Err, &se) && (se.Syscall == "fdatasync" || se.Syscall == "fsync") {
			// A flush during the copy (a --resume checkpoint) failed:
			// named as the final flush is, not as a write.
			return fmt.Sprintf("%s failed for %s: %s", se.Syscall, Quote(dst), ErrText(se.Err))
		}
		side := ce.Side
		if side != copier.SideRead && (errors.Is(ce.Err, syscall.ENOSPC) || errors.Is(ce.Err, syscall.EDQUOT) || errors.Is(ce.Err, syscall.EFBIG)) {
			// Only a write runs out of room, whichever call it was
			// (copy_file_range, sendfile, splice): as cp words it.
			side = copier.SideWrite
		}
		switch side {
		case copier.SideRead:
			return ErrorReading(src, ce.Err)
		case copier.SideWrite:
			return ErrorWriting(dst, ce.Err)
		}
		return ErrorCopying(src, dst, ce.Err)
	}
	if we := (*Worded)(nil); errors.As(err, &we) {
		return we.Msg
	}
	if sc := (*SourceChanged)(nil); errors.As(err, &sc) {
		return fmt.Sprintf("%s %s; %s was not replaced", Quote(src), sc.What, Quote(dst))
	}
	return ErrorCopying(src, dst, err)
}

// EntryError words a failure to create dst (what: "cannot create symbolic
// link"...), or returns a Worded error's own message.
func EntryError(what, dst string, err error) string {
	var we *Worded
	if errors.As(err, &we) {
		return we.Msg
	}
	return fmt.Sprintf("%s %s: %s", what, Quote(dst), ErrText(err))
}

// Copying is the -v line for a copy of src to dst.
func Copying(src, dst string) string { return fmt.Sprintf("%s -> %s", Quote(src), Quote(dst)) }

// calls is "1 call", "2 calls" ("1 other call"...).
func calls(n int64, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %scall", what)
	}
	return fmt.Sprintf("%d %scalls", n, what)
}

// DebugLines explains one copy for --debug: cp's line, then fastcp's own.
func DebugLines(r *copier.Result) []string {
	lines := []string{fmt.Sprintf("copy offload: %s, reflink: %s, sparse detection: %s", r.Offload, r.Reflink, r.Sparse)}
	var used []string
	for _, s := range append([]copier.Strategy{}, copier.Strategies()...) {
		st := r.StatOf(s)
		if st.Calls == 0 && s != r.Strategy {
			continue
		}
		used = append(used, fmt.Sprintf("%s %d bytes in %s", s, st.Bytes, calls(st.Calls, "")))
	}
	lines = append(lines, fmt.Sprintf("strategy: %s (%s; %s)", r.Strategy, strings.Join(used, ", "), calls(r.StatOf(copier.Auto).Calls, "other ")))
	for _, f := range r.Fallbacks {
		how := copier.ErrnoText(f.Err)
		if f.Memo {
			how += ", refused earlier on these filesystems"
		}
		lines = append(lines, fmt.Sprintf("fallback: %s -> %s at offset %d: %s", f.From, f.To, f.Offset, how))
	}
	if r.Shared > 0 {
		lines = append(lines, fmt.Sprintf("shared read: SOURCE read once for %d destinations, %d bytes in %s", r.Shared, r.SharedRead.Bytes, calls(r.SharedRead.Calls, "")))
		if r.Paced > 0 {
			lines = append(lines, fmt.Sprintf("paced: the slowest destination, the others waited %.3f s for it", r.Paced.Seconds()))
		}
	}
	if r.Each > 0 {
		lines = append(lines, fmt.Sprintf("own copy: SOURCE in the page cache, copied by the kernel into each of %d destinations", r.Each))
	}
	if d := r.Direct.String(); d != "" {
		lines = append(lines, "direct: "+d)
	}
	switch r.Sparse {
	case copier.DetectSeekHole, copier.DetectSeekHoleZeros:
		lines = append(lines, fmt.Sprintf("sparse: %d data extents, %d bytes left as holes, size %d", r.Extents, r.Holes, r.Size))
	case copier.DetectZeros:
		lines = append(lines, fmt.Sprintf("sparse: zero blocks made holes: %d bytes, size %d", r.Holes, r.Size))
	}
	return lines
}

// ChecksumDebug is --debug's line for the hash (--checksum) of one copy:
// the digest, and what it took beside the copy.
func ChecksumDebug(alg string, digest []byte, r *copier.Result) string {
	h := r.Hash
	var how []string
	if h.Reread > 0 {
		how = append(how, fmt.Sprintf("%d read again after the kernel copied them", h.Reread))
	}
	if h.Tee > 0 {
		how = append(how, fmt.Sprintf("%d from splice's pipe (tee)", h.Tee))
	}
	if h.Zeros > 0 {
		how = append(how, fmt.Sprintf("%d of holes as zeros", h.Zeros))
	}
	if rest := h.Bytes - h.Reread - h.Tee - h.Zeros; rest > 0 {
		how = append(how, fmt.Sprintf("%d from the copy's buffers", rest))
	}
	line := fmt.Sprintf("checksum: %s %x: %d bytes", alg, digest, h.Bytes)
	if len(how) > 0 {
		line += " (" + strings.Join(how, ", ") + ")"
	}
	return line + fmt.Sprintf(", hashing %.3f s, the copy waited %.3f s for it", h.Time.Seconds(), h.Wait.Seconds())
}
