// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"math"
	"strings"

	"fastcp/copier"
	"fastcp/output"
)

// tablePrinter writes the human-readable report, every line at most width
// columns.
type tablePrinter struct {
	out   *output.Output
	width int
	err   error
}

func (p *tablePrinter) lines(ls ...string) {
	for _, l := range ls {
		if p.err != nil {
			return
		}
		p.out.WriteStdout(l + "\n")
		p.err = p.out.WriteErr()
	}
}

// para prints text wrapped, its first line after first, the others
// indented by rest.
func (p *tablePrinter) para(text, first, rest string) {
	p.lines(wrap(text, first, rest, p.width)...)
}

func (p *tablePrinter) header(r *Report) {
	p.para(fmt.Sprintf("copies into %s (%s)", r.Dir, r.DirFS), "fastcp --benchmark: ", "  ")
	if r.From != r.Dir {
		from := fmt.Sprintf("in %s (%s)", r.From, r.FromFS)
		if r.FromWhy != "" {
			from += ": " + r.FromWhy
		}
		p.para(from, "source file: ", "  ")
	}
	p.para(fmt.Sprintf("%s of random bytes, %d timed run%s a row: the median, and min-max "+
		"(the fastest and the slowest run); ms = milliseconds; MB/s = 10^6 bytes a second; "+
		"CPU s = user and system seconds of the copying thread; syscalls = the copier's own; "+
		"--json gives every figure, a wider terminal more columns", formatSize(r.SizeBytes), r.Runs, plural(r.Runs)), "test file: ", "  ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// secs prints seconds with at least three decimals and at least three
// significant digits: 1.250, 0.472, 0.0472, 0.000472.
func secs(s float64) string {
	if s <= 0 {
		return "0"
	}
	decimals := max(3, 2-int(math.Floor(math.Log10(s))))
	return fmt.Sprintf("%.*f", min(decimals, 9), s)
}

func cpu(r *Row) string { return fmt.Sprintf("%.2f", r.UserS+r.SysS) }

func mbps(v float64) string { return fmt.Sprintf("%.0f", v) }

// sectionHead prints a section's title, what was timed and its note.
func (p *tablePrinter) sectionHead(s *Section) {
	p.lines("")
	p.para(fmt.Sprintf("%s, %s cache", s.Title, s.Cache), fmt.Sprintf("%d. ", s.Number), "   ")
	p.para(s.Timed, "   timed: ", "   ")
	if s.Note != "" {
		p.para(s.Note, "   ", "   ")
	}
}

// refusal is a refused row's span.
func refusal(r *Row) string { return "refused: " + r.Error }

// Section 1's columns.
const (
	s1Strategy = iota
	s1Copy
	s1CopyRange
	s1Disk
	s1DiskRange
	s1MBps
	s1Share
	s1CPU
	s1User
	s1Sys
	s1Syscalls
	s1Cached
	s1Calls
)

func (p *tablePrinter) section(s *Section) {
	p.sectionHead(s)
	switch s.Number {
	case 1:
		p.section1(s)
	case 2:
		p.section2(s)
	case 3:
		p.section3(s)
	}
}

func (p *tablePrinter) section1(s *Section) {
	t := &table{
		cols: []column{
			{"strategy", false}, {"copy ms", true}, {"copy min-max", true}, {"disk ms", true}, {"min-max", true},
			{"MB/s", true}, {"share", true}, {"CPU s", true}, {"user s", true}, {"sys s", true},
			{"syscalls", true}, {"cached", true}, {"calls by strategy (bytes)", false},
		},
		layouts: []layout{
			{s1Strategy, s1Copy, s1CopyRange, s1Disk, s1DiskRange, s1MBps, s1Share, s1User, s1Sys, s1Syscalls, s1Cached, s1Calls},
			{s1Strategy, s1Copy, s1CopyRange, s1Disk, s1DiskRange, s1MBps, s1Share, s1User, s1Sys, s1Syscalls, s1Cached},
			{s1Strategy, s1Copy, s1Disk, s1DiskRange, s1MBps, s1Share, s1CPU, s1Syscalls, s1Cached},
			{s1Strategy, s1Copy, s1Disk, s1DiskRange, s1MBps, s1Share, s1CPU, s1Syscalls},
			{s1Strategy, s1Copy, s1Disk, s1DiskRange, s1MBps, s1Share, s1CPU},
		},
	}
	var notes, chose []string
	for i := range s.Rows {
		r := &s.Rows[i]
		label := strategyLabel(r)
		if r.Refused {
			t.addSpan(label, refusal(r))
			continue
		}
		share := "-"
		if r.ShareOfLimit > 0 {
			share = fmt.Sprintf("%.0f%%", 100*r.ShareOfLimit)
		}
		if r.ShareNote != "" {
			share += "*"
			notes = append(notes, fmt.Sprintf("%s: %s", label, r.ShareNote))
		}
		if r.Strategy == copier.Auto.String() {
			chose = append(chose, fmt.Sprintf("%s chose %s", label, r.Chosen))
		}
		cells := make([]string, s1Calls+1)
		cells[s1Strategy] = label
		cells[s1Copy] = ms(r.MedianS)
		cells[s1CopyRange] = msRange(r.MinS, r.MaxS)
		cells[s1Disk] = ms(r.FlushedMedianS)
		cells[s1DiskRange] = msRange(r.FlushedMinS, r.FlushedMaxS)
		cells[s1MBps] = mbps(r.FlushedMBps)
		cells[s1Share] = share
		cells[s1CPU] = cpu(r)
		cells[s1User] = fmt.Sprintf("%.2f", r.UserS)
		cells[s1Sys] = fmt.Sprintf("%.2f", r.SysS)
		cells[s1Syscalls] = fmt.Sprint(r.Syscalls)
		cells[s1Cached] = fmt.Sprintf("%.1f%%", 100*r.Resident)
		cells[s1Calls] = describeCalls(r)
		t.add(cells...)
	}
	d := &s.DeviceLimit
	if d.LimitMBps > 0 {
		cells := make([]string, s1Calls+1)
		cells[s1Strategy] = "device limit"
		bytes := float64(d.ReadMBps) * d.ReadS // the source's size, in 10^6 bytes
		cells[s1Disk] = ms(bytes / d.LimitMBps)
		cells[s1DiskRange] = msRange(bytes/d.LimitMaxMBps, bytes/d.LimitMinMBps)
		cells[s1MBps] = mbps(d.LimitMBps)
		cells[s1Share] = "100%"
		cells[s1Cached] = fmt.Sprintf("%.1f%%", 100*d.ReadResident)
		cells[s1Calls] = fmt.Sprintf("%d pread64 and %d pwrite64 of %s in flight", d.Depth, d.Depth, formatSize(int64(d.BlockBytes)))
		t.add(cells...)
	}
	p.lines(t.lines(p.width)...)
	if len(chose) > 0 {
		p.para(strings.Join(chose, "; "), "   ", "   ")
	}
	if d.LimitMBps > 0 {
		p.para(fmt.Sprintf("O_DIRECT read of the source and write of a new file at once, %d requests of %s in flight a side, "+
			"in %s, flushed; read %s MB/s, write %s MB/s (medians of %d run%s)",
			d.Depth, formatSize(int64(d.BlockBytes)), d.Buffers, mbps(d.ReadMBps), mbps(d.WriteMBps), d.Runs, plural(d.Runs)),
			"   device limit: ", "   ")
	}
	for _, n := range notes {
		p.para(n, "   * ", "     ")
	}
}

// Section 2's columns.
const (
	s2Buffer = iota
	s2Loops
	s2Runs
	s2Time
	s2Range
	s2MBps
	s2CPU
	s2User
	s2Sys
	s2Syscalls
	s2Calls
)

func (p *tablePrinter) section2(s *Section) {
	t := &table{
		cols: []column{
			{"buffer", true}, {"loops", true}, {"runs", true}, {"ms", true}, {"min-max ms", true}, {"MB/s", true},
			{"CPU s", true}, {"user s", true}, {"sys s", true}, {"syscalls", true}, {"calls by strategy (bytes)", false},
		},
		layouts: []layout{
			{s2Buffer, s2Loops, s2Runs, s2Time, s2Range, s2MBps, s2User, s2Sys, s2Syscalls, s2Calls},
			{s2Buffer, s2Loops, s2Runs, s2Time, s2Range, s2MBps, s2User, s2Sys, s2Syscalls},
			{s2Buffer, s2Loops, s2Runs, s2Time, s2Range, s2MBps, s2CPU, s2Syscalls},
			{s2Buffer, s2Runs, s2Time, s2Range, s2MBps, s2CPU},
		},
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		loops := int64(0)
		if r.BufferSize > 0 {
			loops = (r.Bytes + int64(r.BufferSize) - 1) / int64(r.BufferSize)
		}
		t.add(formatSize(int64(r.BufferSize)), fmt.Sprint(loops), fmt.Sprint(r.Runs), ms(r.MedianS), msRange(r.MinS, r.MaxS),
			mbps(r.MBps), cpu(r), fmt.Sprintf("%.2f", r.UserS), fmt.Sprintf("%.2f", r.SysS), fmt.Sprint(r.Syscalls), describeCalls(r))
	}
	p.lines(t.lines(p.width)...)
}

// Section 3's columns.
const (
	s3Sync = iota
	s3Strategy
	s3Flags
	s3Runs
	s3Time
	s3Range
	s3MBps
	s3CPU
	s3User
	s3Sys
	s3Syscalls
	s3Flush
	s3Calls
)

func (p *tablePrinter) section3(s *Section) {
	t := &table{
		cols: []column{
			{"sync", false}, {"strategy", false}, {"open flags", false}, {"runs", true}, {"ms", true}, {"min-max ms", true},
			{"MB/s", true}, {"CPU s", true}, {"user s", true}, {"sys s", true}, {"syscalls", true}, {"flush ms", true},
			{"calls by strategy (bytes); durability", false},
		},
		layouts: []layout{
			{s3Sync, s3Strategy, s3Flags, s3Runs, s3Time, s3Range, s3MBps, s3User, s3Sys, s3Syscalls, s3Flush, s3Calls},
			{s3Sync, s3Strategy, s3Flags, s3Runs, s3Time, s3Range, s3MBps, s3User, s3Sys, s3Syscalls, s3Flush},
			{s3Sync, s3Strategy, s3Runs, s3Time, s3Range, s3MBps, s3CPU, s3Syscalls, s3Flush},
			{s3Sync, s3Strategy, s3Runs, s3Time, s3Range, s3MBps, s3CPU, s3Flush},
			{s3Sync, s3Strategy, s3Time, s3Range, s3MBps, s3Flush},
		},
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Refused {
			t.addSpan(r.Sync+"  "+strategyLabel(r), refusal(r))
			continue
		}
		flags := r.OpenFlags
		if flags == "" {
			flags = "-"
		}
		flush := "-"
		if r.Durability.Flush != "" {
			flush = ms(r.Durability.FlushS)
		}
		t.add(r.Sync, strategyLabel(r), flags, fmt.Sprint(r.Runs), ms(r.MedianS), msRange(r.MinS, r.MaxS), mbps(r.MBps),
			cpu(r), fmt.Sprintf("%.2f", r.UserS), fmt.Sprintf("%.2f", r.SysS), fmt.Sprint(r.Syscalls), flush, describeCalls(r))
	}
	p.lines(t.lines(p.width)...)
}

// autoSyncLabel is how section 1 names auto choosing as a --sync copy.
const autoSyncLabel = "auto --sync"

func strategyLabel(r *Row) string {
	switch {
	case r.Strategy == copier.RW.String():
		return fmt.Sprintf("rw (%s)", formatSize(int64(r.BufferSize)))
	case r.Strategy == copier.Auto.String() && r.Section == 1 && r.Sync != "none":
		return autoSyncLabel
	}
	return r.Strategy
}

// syscallCost prints section 4.
//
// Section 4 is the machine's own costs, beside which the copies' figures
// are read: further rows of that kind (a hashing rate) belong in this
// table.
func (p *tablePrinter) syscallCost(c *SyscallCost) {
	p.lines("")
	p.para(fmt.Sprintf("Cost of one system call against a function call (%d run%s, median)", c.Runs, plural(c.Runs)), "4. ", "   ")
	p.para(fmt.Sprintf("the calling thread's CPU time (%s), so waiting for a busy CPU does not count", c.Clock), "   timed: ", "   ")
	t := &table{
		cols: []column{{"call", false}, {"calls/run", true}, {"ns/call", true}, {"min-max ns", true}, {"user s", true}, {"sys s", true}},
	}
	t.add("getpid ("+c.SyscallMethod+")", fmt.Sprint(c.Syscalls), fmt.Sprintf("%.1f", c.SyscallNs),
		fmt.Sprintf("%.1f-%.1f", c.SyscallMinNs, c.SyscallMaxNs), fmt.Sprintf("%.2f", c.SyscallUserS), fmt.Sprintf("%.2f", c.SyscallSysS))
	t.add("function call (//go:noinline)", fmt.Sprint(c.FuncCalls), fmt.Sprintf("%.2f", c.FuncNs),
		fmt.Sprintf("%.2f-%.2f", c.FuncMinNs, c.FuncMaxNs), "", "")
	p.lines(t.lines(p.width)...)
	p.para(fmt.Sprintf("one system call costs as much as %.0f function calls", c.Ratio), "", "")
}

// hashRates is section 4's table of --checksum's algorithms, against
// section 1's device limit (limit MB/s, 0: unknown).
func (p *tablePrinter) hashRates(rates []HashRate, limit float64) {
	if len(rates) == 0 {
		return
	}
	t := &table{
		cols: []column{{"hash (--checksum)", false}, {"MB/s", true}, {"min-max", true}, {"vs device limit", false}},
	}
	var bound []string
	for _, r := range rates {
		vs := "-"
		if r.ShareOfLimit > 0 {
			vs = fmt.Sprintf("%.2fx", r.ShareOfLimit)
			who := "the device"
			if r.ShareOfLimit < 1 {
				who = "the CPU"
			}
			bound = append(bound, fmt.Sprintf("--checksum=%s: %s", r.Algorithm, who))
		}
		t.add(r.Algorithm, mbps(r.MBps), mbps(r.MinMBps)+"-"+mbps(r.MaxMBps), vs)
	}
	p.lines(t.lines(p.width)...)
	if len(bound) > 0 {
		p.para(fmt.Sprintf("one core hashing, against the device limit of %s MB/s; what bounds a checksummed copy here: %s",
			mbps(limit), strings.Join(bound, "; ")), "", "")
	} else {
		p.para("one core hashing; the device limit is unknown, so what bounds a checksummed copy cannot be told", "", "")
	}
}

// footer prints the notes and the verdict, which ends with what to do.
func (p *tablePrinter) footer(r *Report) {
	p.lines("")
	for _, n := range r.Notes {
		p.para(n, "note: ", "  ")
	}
	if r.Fastest == "" {
		p.para(fmt.Sprintf("no strategy worked on %s (%s)", r.Dir, r.DirFS), "", "")
		return
	}
	p.lines(verdictLines(&r.Verdict, p.width)...)
}
