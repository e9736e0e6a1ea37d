// SPDX-License-Identifier: MIT

package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

type verdict int

const (
	info    verdict = iota // a number to read, no target
	met                    // MET
	missed                 // MISSED
	noData                 // a tool did not run
	atLimit                // LIMIT: out of reach (a yardstick of the same run misses it too), and a is close to that yardstick
)

func (v verdict) String() string {
	return [...]string{"-", "MET", "MISSED", "n/a", "LIMIT"}[v]
}

// A target is one line under a scenario's table: what is compared, the
// value measured and whether it meets the project's goal.
type target struct {
	desc string
	eval func(r *result) (value string, v verdict)
}

// both returns the two tools' results, or false when either has no runs.
func both(r *result, a, b string) (*toolResult, *toolResult, bool) {
	ta, tb := r.tool(a), r.tool(b)
	ok := ta != nil && tb != nil && len(ta.samples) > 0 && len(tb.samples) > 0
	return ta, tb, ok
}

func quotient(a, b time.Duration) float64 { return float64(a) / float64(b) }

// ratio shows a's median over b's, with no target.
func ratio(a, b string) target {
	return target{
		desc: fmt.Sprintf("%s / %s", a, b),
		eval: func(r *result) (string, verdict) {
			ta, tb, ok := both(r, a, b)
			if !ok {
				return "", noData
			}
			return fmt.Sprintf("%.2fx", quotient(ta.median(), tb.median())), info
		},
	}
}

// ratioAtMost: a's median is at most limit times b's.
func ratioAtMost(a, b string, limit float64) target {
	return target{
		desc: fmt.Sprintf("%s / %s <= %.2fx", a, b, limit),
		eval: func(r *result) (string, verdict) {
			ta, tb, ok := both(r, a, b)
			if !ok {
				return "", noData
			}
			q := quotient(ta.median(), tb.median())
			return fmt.Sprintf("%.2fx", q) + pairedNote(ta, tb), check(q <= limit)
		},
	}
}

// ratioAtMostOrLimit is ratioAtMost(a, b, limit), where the yardstick
// floor (a row of the same run that does only part of a's work, such as
// writing zeros into the destination without reading any source) shows
// whether the target can be reached on this machine at all. When floor
// itself takes more than limit times b, no copy can meet the target, and
// the verdict is LIMIT if a takes at most slack times floor, MISSED if
// not: a counts as at the kernel's limit only when it is close to it.
func ratioAtMostOrLimit(a, b string, limit float64, floor string, slack float64) target {
	plain := ratioAtMost(a, b, limit)
	return target{
		desc: fmt.Sprintf("%s / %s <= %.2fx (or within %.2fx of %s, when even that misses)", a, b, limit, slack, floor),
		eval: func(r *result) (string, verdict) {
			value, v := plain.eval(r)
			if v != missed {
				return value, v
			}
			ta, tb, _ := both(r, a, b)
			tf := r.tool(floor)
			if tf == nil || len(tf.samples) == 0 {
				return value, missed
			}
			fq := quotient(tf.median(), tb.median())
			aq := quotient(ta.median(), tf.median())
			value += fmt.Sprintf("; %s / %s %.2fx, %s / %s %.2fx", floor, b, fq, a, floor, aq)
			if fq > limit && aq <= slack {
				return value, atLimit
			}
			return value, missed
		},
	}
}

// ratioAtMostOrFloorRatio is ratioAtMost(a, b, limit), unless the same
// ratio of two yardsticks that make only the system calls a and b must
// make (fa for a, fb for b, in the same run) is above limit itself: then
// no copy can meet the target on this machine, and the verdict is LIMIT
// if a/b is at most slack times fa/fb, MISSED if not.
func ratioAtMostOrFloorRatio(a, b string, limit float64, fa, fb string, slack float64) target {
	plain := ratioAtMost(a, b, limit)
	return target{
		desc: fmt.Sprintf("%s / %s <= %.2fx (or within %.2fx of %s / %s, when even that misses)", a, b, limit, slack, fa, fb),
		eval: func(r *result) (string, verdict) {
			value, v := plain.eval(r)
			if v != missed {
				return value, v
			}
			ta, tb, _ := both(r, a, b)
			tfa, tfb, ok := both(r, fa, fb)
			if !ok {
				return value, missed
			}
			fq := quotient(tfa.median(), tfb.median())
			aq := quotient(ta.median(), tb.median())
			value += fmt.Sprintf("; the calls alone %.2fx", fq)
			if fq > limit && aq <= slack*fq {
				return value, atLimit
			}
			return value, missed
		},
	}
}

// cpuFloor shows the least wall time the CPU leaves a: the user time of
// the yardstick work (work, which a must do too: its hashes) and the
// system time of base (whose calls a makes as well), medians, spread over
// every CPU of the machine, against base's median wall time. A limit on
// a / base below it is out of reach whatever a does.
func cpuFloor(work, base string, cpus int) target {
	return target{
		desc: fmt.Sprintf("CPU floor: (%s user + %s sys) / %d CPUs, against %s", work, base, cpus, base),
		eval: func(r *result) (string, verdict) {
			tw, tb, ok := both(r, work, base)
			if !ok {
				return "", noData
			}
			floor := (tw.medianUser() + tb.medianSys()) / time.Duration(cpus)
			return fmt.Sprintf("%.2fx (%s)", quotient(floor, tb.median()), fmtDur(floor)), info
		},
	}
}

// userOver shows the user time of the yardstick work (medians), which
// one core must spend whatever runs beside it (one hash: a stream that
// no second core can share), against base's median wall time.
func userOver(work, base string) target {
	return target{
		desc: fmt.Sprintf("%s user time / %s", work, base),
		eval: func(r *result) (string, verdict) {
			tw, tb, ok := both(r, work, base)
			if !ok {
				return "", noData
			}
			u := tw.medianUser()
			return fmt.Sprintf("%.2fx (%s)", quotient(u, tb.median()), fmtDur(u)), info
		},
	}
}

// floorPlusWork: a's median is at most factor times floor's plus peer's
// own work, that is peer's median less peerFloor's. For one invocation a
// file: floor is a Go program that does nothing (the runtime's start and
// exit), peer is cp and peerFloor a C program that does nothing, so a is
// held to the Go runtime's start plus cp's copy, whatever exec and the
// runtime cost on this machine.
func floorPlusWork(a, floor, peer, peerFloor string, factor float64) target {
	return target{
		desc: fmt.Sprintf("%s / (%s + %s - %s) <= %.2fx", a, floor, peer, peerFloor, factor),
		eval: func(r *result) (string, verdict) {
			ta, tf, ok := both(r, a, floor)
			tp, tq, ok2 := both(r, peer, peerFloor)
			if !ok || !ok2 {
				return "", noData
			}
			work := tp.median() - tq.median()
			bound := tf.median() + max(work, 0)
			q := quotient(ta.median(), bound)
			return fmt.Sprintf("%.2fx (%s %s, %s's own work %s)", q, floor, fmtDur(tf.median()), peer, fmtDur(work)), check(q <= factor)
		},
	}
}

// pairedNote describes the ratios of the two tools' runs round by round
// (the tools take turns, so the runs of one round saw the same machine):
// their median and quartiles show how far noise moves the ratio of the
// medians, which alone decides the verdict.
func pairedNote(a, b *toolResult) string {
	n := min(len(a.samples), len(b.samples))
	if n < 3 {
		return ""
	}
	qs := make([]float64, n)
	for i := range n {
		qs[i] = quotient(a.samples[i].wall, b.samples[i].wall)
	}
	slices.Sort(qs)
	return fmt.Sprintf(" (round by round: median %.2fx, quartiles %.2f-%.2fx)", qs[n/2], qs[n/4], qs[(3*n)/4])
}

// speedupAtLeast: a is at least factor times faster than b (median).
func speedupAtLeast(a, b string, factor float64) target {
	return target{
		desc: fmt.Sprintf("%s / %s >= %gx (%s %gx faster)", b, a, factor, a, factor),
		eval: func(r *result) (string, verdict) {
			ta, tb, ok := both(r, a, b)
			if !ok {
				return "", noData
			}
			q := quotient(tb.median(), ta.median())
			return fmt.Sprintf("%.1fx", q), check(q >= factor)
		},
	}
}

// medianUnder: a's median wall time is below limit.
func medianUnder(a string, limit time.Duration) target {
	return target{
		desc: fmt.Sprintf("%s median < %v", a, limit),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 {
				return "", noData
			}
			return fmtDur(ta.median()), check(ta.median() < limit)
		},
	}
}

// peakRSSAtMost: a's peak RSS over all its runs is at most limit bytes.
func peakRSSAtMost(a string, limit int64) target {
	return target{
		desc: fmt.Sprintf("%s peak RSS <= %s", a, humanSize(limit)),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 {
				return "", noData
			}
			return fmtRSS(ta.peakRSS(), r.rssFloor), check(ta.peakRSS() <= limit)
		},
	}
}

// blocksAtMostSource: a's copy takes no more space than the source.
func blocksAtMostSource(a string) target {
	return target{
		desc: fmt.Sprintf("%s copy st_blocks <= source's", a),
		eval: func(r *result) (string, verdict) {
			ta := r.tool(a)
			if ta == nil || len(ta.samples) == 0 {
				return "", noData
			}
			return fmt.Sprintf("%d <= %d", ta.dstBlocks, r.srcBlocks), check(ta.dstBlocks <= r.srcBlocks)
		},
	}
}

func check(ok bool) verdict {
	if ok {
		return met
	}
	return missed
}

// print writes the scenario's table, fastcp's decisions, the notes and the
// targets.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n== %s: %s (load average %s -> %s)\n", r.sc.id, r.sc.title, r.loadBefore, r.loadAfter)
	var best time.Duration
	for _, tr := range r.tools {
		if m := tr.median(); len(tr.samples) > 0 && (best == 0 || m < best) {
			best = m
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tool\tmedian\tmin-max\tx best\tuser\tsys\tcpu\tpeak RSS\truns")
	for _, tr := range r.tools {
		if len(tr.samples) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t0\n", tr.tool.name)
			continue
		}
		walls := tr.walls()
		var users, syss, cpus []time.Duration
		for _, s := range tr.samples {
			users = append(users, s.user)
			syss = append(syss, s.sys)
			cpus = append(cpus, s.user+s.sys)
		}
		// cpu (user+sys) beside the wall time: a busy host stretches
		// the wall time, not the work done.
		fmt.Fprintf(tw, "%s\t%s\t%s-%s\t%.2f\t%s\t%s\t%s\t%s\t%d\n",
			tr.tool.name, fmtDur(median(walls)), fmtDur(minDur(walls)), fmtDur(maxDur(walls)),
			quotient(median(walls), best), fmtDur(median(users)), fmtDur(median(syss)), fmtDur(median(cpus)),
			fmtRSS(tr.peakRSS(), r.rssFloor), len(tr.samples))
	}
	tw.Flush()
	for _, tr := range r.tools {
		for _, line := range tr.debug {
			fmt.Fprintf(w, "  %s --debug: %s\n", tr.tool.name, line)
		}
	}
	if busy(r.loadBefore) || busy(r.loadAfter) {
		fmt.Fprintf(w, "  note: other work was running (load average >= %.1f, this run counts about 1): these numbers are noisy\n", busyLoad)
	}
	if r.rssFloor > 0 {
		fmt.Fprintf(w, "  peak RSS floor %s: a child of the launcher reports at least that (vfork), so <= floor means at most that\n", fmtMiB(r.rssFloor))
	}
	if r.sc.showBlocks {
		parts := []string{fmt.Sprintf("source %d", r.srcBlocks)}
		for _, tr := range r.tools {
			if len(tr.samples) > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", tr.tool.name, tr.dstBlocks))
			}
		}
		fmt.Fprintf(w, "  st_blocks (512 B): %s\n", strings.Join(parts, ", "))
	}
	if r.sc.notes != nil && r.err == nil {
		for _, n := range r.sc.notes(r) {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if r.err != nil {
		word := "FAILED"
		if errors.Is(r.err, errSkipped) {
			word = "SKIPPED"
		}
		fmt.Fprintf(w, "  %s: %v\n", word, r.err)
	}
	if len(r.sc.targets) > 0 && r.err == nil {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  target\tvalue\tresult")
		for _, t := range r.sc.targets {
			v, res := t.eval(r)
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.desc, v, res)
		}
		tw.Flush()
	}
}

// printSummary lists every target with a verdict, and every failure (whose
// targets are not judged on partial numbers).
func printSummary(w io.Writer, results []*result) {
	fmt.Fprintf(w, "\n== summary\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	nmet, nmissed, nlimit := 0, 0, 0
	for _, r := range results {
		if r.err != nil {
			continue
		}
		for _, t := range r.sc.targets {
			v, res := t.eval(r)
			if res == info {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.sc.id, t.desc, v, res)
			switch res {
			case met:
				nmet++
			case missed:
				nmissed++
			case atLimit:
				nlimit++
			}
		}
	}
	tw.Flush()
	if nmet+nmissed+nlimit > 0 {
		fmt.Fprintf(w, "%d targets met, %d missed", nmet, nmissed)
		if nlimit > 0 {
			fmt.Fprintf(w, ", %d out of reach on this machine (LIMIT: a yardstick of the same run misses them too)", nlimit)
		}
		fmt.Fprintln(w)
	}
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, errSkipped) {
			fmt.Fprintf(w, "FAILED %s: %v\n", r.sc.id, r.err)
		}
	}
}

// busyLoad is the 1-minute load average above which a report warns that
// other work was competing for the CPUs.
const busyLoad = 1.5

func busy(load string) bool {
	l, err := strconv.ParseFloat(load, 64)
	return err == nil && l >= busyLoad
}

func minDur(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxDur(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// fmtDur prints a duration with about four significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func fmtMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// fmtRSS prints a peak RSS, as "<= floor" when it does not exceed the floor
// (see launch.go).
func fmtRSS(b, floor int64) string {
	if b <= floor {
		return "<= " + fmtMiB(floor)
	}
	return fmtMiB(b)
}

// humanSize prints a byte count with the largest binary unit that divides it.
func humanSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// parseSize reads 1G, 512M, 64K (powers of 1024) or a byte count.
func parseSize(s string) (int64, error) {
	shift := 0
	switch {
	case strings.HasSuffix(s, "K"):
		shift = 10
	case strings.HasSuffix(s, "M"):
		shift = 20
	case strings.HasSuffix(s, "G"):
		shift = 30
	}
	if shift > 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)>>shift {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n << shift, nil
}
