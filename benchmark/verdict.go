// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"strings"
)

// The verdict says whether a strategy forced with --strategy would beat
// what auto chooses on this filesystem, and what to do about it. Runs on a
// shared or virtual machine vary from one to the next (the host's cache,
// its other guests, the page allocator: the same buffered copy can take
// several times as long, docs/measurements.md), so a strategy is named
// only when the difference is larger than that variation, as this
// benchmark measured it: the slowest run of the strategy beat the fastest
// run of auto's choice by more than the noise,
// the relative spread ((max - min) / median) of the median row at that end
// point, and by minMargin at least. Auto's runs for this are its own row's
// together with the forced row of the strategy it chose, which copy the
// same way: twice the runs, a truer spread. With fewer than minVerdictRuns
// runs a row there is no spread to judge, and nothing is named. On a quiet
// machine a difference of 15% is named; on a noisy one only a difference
// larger than the noise, so that three benchmarks of one disk give one
// verdict.
//
// Two end points are judged apart, because auto's choice depends on them
// (direct pays off when the copy waits for the device anyway): copies
// without --sync, by the time until the copy returned; copies with --sync,
// by the time until the data was on the device (the copy and its
// fdatasync), against the auto row that chose as a --sync copy does.

const (
	minMargin      = 0.10 // the least gap that names a strategy
	minVerdictRuns = 3
)

// verdictRule is the rule in words, for the report. A function, so that
// a copy that runs no benchmark does not format it at start.
func verdictRule() string {
	return fmt.Sprintf("a strategy is named only when its slowest run beat the fastest run of auto's choice "+
		"(auto's runs and those of the strategy it chose) by more than the runs' noise: "+
		"the spread (max-min against the median) of the median row, %.0f%% at least; "+
		"with fewer than %d runs a row, none is", 100*minMargin, minVerdictRuns)
}

// Verdict is the --json form of the verdict.
type Verdict struct {
	Rule   string    `json:"rule"`   // how the runs' noise is judged
	Plain  Judgement `json:"plain"`  // copies without --sync: until the copy returned
	Synced Judgement `json:"synced"` // copies with --sync: until the data was on the device
	// Advice is what to do: "" for nothing, else the option to set
	// ("--strategy=sendfile").
	Advice string `json:"advice"`
	Text   string `json:"text"` // the closing line of the tables
}

// Judgement compares auto's choice with the fastest forced strategy at one
// end point.
type Judgement struct {
	Auto       string  `json:"auto"` // the strategy auto chose ("" when unknown)
	AutoMedian float64 `json:"auto_median_s"`
	AutoMin    float64 `json:"auto_min_s"` // over auto's runs and its choice's forced runs
	AutoMax    float64 `json:"auto_max_s"`
	Best       string  `json:"best"` // the forced strategy with the smallest median
	BestMedian float64 `json:"best_median_s"`
	BestMin    float64 `json:"best_min_s"`
	BestMax    float64 `json:"best_max_s"`
	// Noise is the runs' variation at this end point: the relative
	// spread of the median row, at least the least margin (0.10).
	Noise float64 `json:"noise"`
	// Beats: Best's slowest run beat auto's fastest by more than Noise;
	// then Advice names it.
	Beats bool   `json:"beats"`
	Why   string `json:"why"` // the judgement in words
}

// timing is one row's figures at one end point: median, min and max over
// runs.
type timing struct {
	strategy         string
	runs             int
	median, min, max float64
}

// noise is the runs' variation at one end point: the relative spread
// ((max - min) / median) of the median row among those with two runs or
// more; 0 when there is none.
func noise(rows []timing) float64 {
	var spreads []float64
	for _, r := range rows {
		if r.runs >= 2 && r.median > 0 {
			spreads = append(spreads, (r.max-r.min)/r.median)
		}
	}
	return summarize(spreads).median
}

// judge compares auto (its row) and the forced rows at one end point.
func judge(auto timing, forced []timing) Judgement {
	j := Judgement{Auto: auto.strategy, AutoMedian: auto.median, AutoMin: auto.min, AutoMax: auto.max}
	var best *timing
	for i := range forced {
		f := &forced[i]
		if f.runs == 0 {
			continue
		}
		if f.strategy == auto.strategy {
			j.AutoMin, j.AutoMax = min(j.AutoMin, f.min), max(j.AutoMax, f.max)
		}
		if best == nil || f.median < best.median {
			best = f
		}
	}
	if best == nil || auto.runs == 0 {
		j.Why = "nothing to compare"
		return j
	}
	j.Best, j.BestMedian, j.BestMin, j.BestMax = best.strategy, best.median, best.min, best.max
	j.Noise = max(noise(append([]timing{auto}, forced...)), minMargin)
	gap := j.AutoMin/best.max - 1
	switch {
	case best.strategy == auto.strategy:
		j.Why = fmt.Sprintf("auto chose %s, the fastest here", auto.strategy)
	case auto.runs < minVerdictRuns || best.runs < minVerdictRuns:
		n := min(auto.runs, best.runs)
		j.Why = fmt.Sprintf("%s was faster than auto's %s, but %d run%s cannot tell it from noise", best.strategy, auto.strategy, n, plural(n))
	case gap <= 0:
		j.Why = fmt.Sprintf("%s (%s ms) and auto's %s (%s ms) overlap: within the runs' noise",
			best.strategy, msRange(best.min, best.max), auto.strategy, msRange(j.AutoMin, j.AutoMax))
	case gap <= j.Noise:
		j.Why = fmt.Sprintf("%s (%s ms) beat auto's %s (%s ms) in every run, by %.0f%%, within the runs' noise here (%.0f%%)",
			best.strategy, msRange(best.min, best.max), auto.strategy, msRange(j.AutoMin, j.AutoMax), 100*gap, 100*j.Noise)
	default:
		j.Beats = true
		j.Why = fmt.Sprintf("%s (%s ms) beat auto's %s (%s ms) in every run, by %.0f%%, beyond the runs' noise here (%.0f%%)",
			best.strategy, msRange(best.min, best.max), auto.strategy, msRange(j.AutoMin, j.AutoMax), 100*gap, 100*j.Noise)
	}
	return j
}

// advise turns the two judgements into what to do, for copies into where.
func advise(plain, synced Judgement, where string) (advice, text string) {
	switch {
	case plain.Beats && synced.Beats && plain.Best == synced.Best:
		advice = "--strategy=" + plain.Best
		return advice, fmt.Sprintf("what to do: add %s to copies %s", advice, where)
	case plain.Beats && synced.Beats:
		advice = fmt.Sprintf("--strategy=%s without --sync, --strategy=%s with --sync", plain.Best, synced.Best)
		return advice, fmt.Sprintf("what to do: add --strategy=%s to copies %s without --sync, --strategy=%s to those with --sync", plain.Best, where, synced.Best)
	case plain.Beats:
		advice = "--strategy=" + plain.Best + " without --sync"
		return advice, fmt.Sprintf("what to do: add --strategy=%s to copies %s without --sync; with --sync auto is as good as the best", plain.Best, where)
	case synced.Beats:
		advice = "--strategy=" + synced.Best + " with --sync"
		return advice, fmt.Sprintf("what to do: add --strategy=%s to copies %s with --sync; without it auto is as good as the best", synced.Best, where)
	}
	return "", "what to do: nothing; auto is as good as the best strategy here"
}

// verdictLines are the verdict in the tables: each judgement, then what to
// do.
func verdictLines(v *Verdict, width int) []string {
	var out []string
	out = append(out, wrap(v.Rule, "verdict: ", "  ", width)...)
	out = append(out, wrap(v.Plain.Why, "  without --sync (until the copy returns): ", "    ", width)...)
	out = append(out, wrap(v.Synced.Why, "  with --sync (until the data is on the device): ", "    ", width)...)
	out = append(out, wrap(strings.TrimPrefix(v.Text, "what to do: "), "what to do: ", "  ", width)...)
	return out
}
