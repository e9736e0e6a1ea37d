package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"
)

// All terminal output goes through here: messages are prefixed with the
// name the program was run as, name paths in cp's quoting, and end in the
// system's error text, the way cp words them.

var quote = flags.Quote

type output struct {
	mu     sync.Mutex
	prog   string
	stdout io.Writer
	stderr io.Writer
	quiet  bool
	outErr error // first error writing stdout (EPIPE with -v into a closed pipe)
	// clearLine, when set, removes the progress bar from the terminal
	// before a line is printed; called with mu held.
	clearLine func()
}

// println writes one line to stdout.
func (o *output) println(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.outErr != nil {
		return
	}
	if o.clearLine != nil {
		o.clearLine()
	}
	if _, err := io.WriteString(o.stdout, line+"\n"); err != nil {
		o.outErr = err
	}
}

// errorf prints "PROG: MESSAGE" to stderr.
func (o *output) errorf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clearLine != nil {
		o.clearLine()
	}
	fmt.Fprintf(o.stderr, "%s: %s\n", o.prog, fmt.Sprintf(format, a...))
}

// warnf is errorf for warnings, which -q silences.
func (o *output) warnf(format string, a ...any) {
	if o.quiet {
		return
	}
	o.errorf("warning: "+format, a...)
}

// usage prints a usage error, its hint and the pointer to --help.
func (o *output) usage(e *flags.UsageError) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.stderr, "%s: %s\n", o.prog, e.Msg)
	if e.Hint != "" {
		fmt.Fprintln(o.stderr, e.Hint)
	}
	fmt.Fprintf(o.stderr, "Try '%s --help' for more information.\n", o.prog)
}

// errText is the C library's text for err's errno, or err's own text.
var errText = copier.ErrText

// copyErrorMessage words a failed copy of src to dst as cp does.
func copyErrorMessage(src, dst string, err error, o *flags.Options) string {
	// A durability step named first: a writeback error can also arrive
	// inside a copier error, when it ended the copy.
	var de *durability.Error
	if errors.As(err, &de) {
		switch de.Op {
		case "rename":
			return fmt.Sprintf("cannot replace %s: %s", quote(dst), errText(de.Err))
		case "close":
			return fmt.Sprintf("failed to close %s: %s", quote(dst), errText(de.Err))
		}
		return fmt.Sprintf("%s failed for %s: %s", de.Op, quote(dst), errText(de.Err))
	}
	var ce *copier.Error
	if errors.As(err, &ce) {
		if ce.Refused {
			if ce.Strategy == copier.Reflink && o.Reflink == copier.ReflinkAlways {
				return fmt.Sprintf("failed to clone %s from %s: %s", quote(dst), quote(src), errText(ce.Err))
			}
			return fmt.Sprintf("cannot copy %s to %s with --strategy=%s: %s", quote(src), quote(dst), ce.Strategy, copier.ErrnoText(ce.Err))
		}
		switch ce.Side {
		case copier.SideRead:
			return fmt.Sprintf("error reading %s: %s", quote(src), errText(ce.Err))
		case copier.SideWrite:
			return fmt.Sprintf("error writing %s: %s", quote(dst), errText(ce.Err))
		}
		return fmt.Sprintf("error copying %s to %s: %s", quote(src), quote(dst), errText(ce.Err))
	}
	if ae := (*attrError)(nil); errors.As(err, &ae) {
		return ae.msg
	}
	if ce := (*changedError)(nil); errors.As(err, &ce) {
		return fmt.Sprintf("%s %s; %s was not replaced", quote(src), ce.what, quote(dst))
	}
	return fmt.Sprintf("error copying %s to %s: %s", quote(src), quote(dst), errText(err))
}

// debugLines explains one copy for --debug: cp's line, then fastcp's own.
func debugLines(r *copier.Result) []string {
	lines := []string{fmt.Sprintf("copy offload: %s, reflink: %s, sparse detection: %s", r.Offload, r.Reflink, r.Sparse)}
	var used []string
	for _, s := range append([]copier.Strategy{}, copier.Strategies()...) {
		st := r.StatOf(s)
		if st.Calls == 0 && s != r.Strategy {
			continue
		}
		used = append(used, fmt.Sprintf("%s %d bytes in %d calls", s, st.Bytes, st.Calls))
	}
	lines = append(lines, fmt.Sprintf("strategy: %s (%s; %d other calls)", r.Strategy, strings.Join(used, ", "), r.StatOf(copier.Auto).Calls))
	for _, f := range r.Fallbacks {
		how := copier.ErrnoText(f.Err)
		if f.Memo {
			how += ", refused earlier on these filesystems"
		}
		lines = append(lines, fmt.Sprintf("fallback: %s -> %s at offset %d: %s", f.From, f.To, f.Offset, how))
	}
	switch r.Sparse {
	case copier.DetectSeekHole, copier.DetectSeekHoleZeros:
		lines = append(lines, fmt.Sprintf("sparse: %d data extents, %d bytes left as holes, size %d", r.Extents, r.Holes, r.Size))
	case copier.DetectZeros:
		lines = append(lines, fmt.Sprintf("sparse: zero blocks made holes: %d bytes, size %d", r.Holes, r.Size))
	}
	return lines
}
