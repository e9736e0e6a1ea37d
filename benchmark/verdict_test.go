// SPDX-License-Identifier: MIT

package benchmark

import (
	"strings"
	"testing"
)

// tm is a timing in milliseconds: strategy, runs, median, min, max.
func tm(s string, runs int, med, lo, hi float64) timing {
	return timing{strategy: s, runs: runs, median: med / 1000, min: lo / 1000, max: hi / 1000}
}

// TestJudge is the verdict's rule on tables of figures: a strategy is
// named only when every run of it beat every run of auto's choice (auto's
// own and its choice's forced ones) and its median by 10% or more.
func TestJudge(t *testing.T) {
	forced := func(extra ...timing) []timing {
		return append([]timing{
			tm("copy_file_range", 3, 480, 370, 540),
			tm("direct", 3, 360, 300, 580),
			tm("rw", 3, 400, 210, 1500),
			{strategy: "reflink"}, // refused
		}, extra...)
	}
	tests := []struct {
		name   string
		auto   timing
		forced []timing
		beats  bool
		best   string
		why    string
	}{
		{"auto chose the fastest", tm("direct", 3, 350, 340, 360), forced(), false, "direct", "auto chose direct, the fastest here"},
		{"overlapping runs", tm("copy_file_range", 3, 500, 380, 900), forced(), false, "direct", "overlap: within the runs' noise"},
		{"apart, by less than the noise", tm("copy_file_range", 3, 640, 288, 1014), forced(tm("splice", 3, 238, 165, 265)), false, "splice", "by 9%, within the runs' noise here (78%)"},
		{"apart by 40%, within a noise of 42%", tm("copy_file_range", 3, 900, 800, 1000), forced(tm("splice", 3, 238, 165, 265)), false, "splice", "by 40%, within the runs' noise here (42%)"},
		{"quiet machine, 15% apart", tm("copy_file_range", 3, 460, 455, 470), []timing{tm("copy_file_range", 3, 462, 458, 466), tm("direct", 3, 395, 390, 398), tm("rw", 3, 500, 490, 510)},
			true, "direct", "by 14%, beyond the runs' noise here (10%)"},
		{"quiet machine, 8% apart", tm("copy_file_range", 3, 430, 425, 435), []timing{tm("copy_file_range", 3, 430, 428, 433), tm("direct", 3, 395, 390, 398), tm("rw", 3, 500, 490, 510)},
			false, "direct", "by 7%, within the runs' noise here (10%)"},
		{"noisy machine, twice as fast", tm("rw", 3, 1000, 800, 1300), []timing{tm("rw", 3, 1000, 820, 1350), tm("direct", 3, 400, 380, 420), tm("splice", 3, 800, 600, 1100)},
			true, "direct", "by 90%, beyond the runs' noise here (52%)"},
		{"auto's own runs apart, its choice's forced runs not", tm("rw", 3, 900, 800, 1000), forced(tm("splice", 3, 238, 165, 265)), false, "splice", "(210-1500 ms) overlap"},
		{"too few runs", tm("copy_file_range", 2, 900, 800, 1000), forced(tm("splice", 2, 100, 90, 110)), false, "splice", "2 runs cannot tell it from noise"},
		{"one run", tm("copy_file_range", 1, 900, 900, 900), []timing{tm("splice", 1, 100, 100, 100)}, false, "splice", "1 run cannot tell"},
		{"auto refused", timing{}, forced(), false, "", "nothing to compare"},
		{"every forced row refused", tm("rw", 3, 100, 90, 110), []timing{{strategy: "reflink"}}, false, "", "nothing to compare"},
	}
	for _, tt := range tests {
		j := judge(tt.auto, tt.forced)
		if j.Beats != tt.beats || j.Best != tt.best || !strings.Contains(j.Why, tt.why) {
			t.Errorf("%s: beats %v, best %q, why %q; want %v, %q, a why with %q", tt.name, j.Beats, j.Best, j.Why, tt.beats, tt.best, tt.why)
		}
		if tt.auto.runs > 0 && (j.AutoMin > tt.auto.min || j.AutoMax < tt.auto.max) {
			t.Errorf("%s: auto's spread %v-%v does not cover its own runs", tt.name, j.AutoMin, j.AutoMax)
		}
	}
}

// TestVerdictStable: three benchmarks of one disk whose runs scatter as
// buffered copies do here (the same copy 0.2 s or 1 s) give one verdict.
func TestVerdictStable(t *testing.T) {
	runs := [][]timing{
		{tm("copy_file_range", 3, 342, 275, 576), tm("direct", 3, 207, 203, 218), tm("sendfile", 3, 203, 195, 222), tm("splice", 3, 284, 191, 788), tm("rw", 3, 255, 206, 285)},
		{tm("copy_file_range", 3, 479, 372, 538), tm("direct", 3, 358, 301, 579), tm("sendfile", 3, 645, 234, 1023), tm("splice", 3, 238, 165, 265), tm("rw", 3, 405, 212, 1527)},
		{tm("copy_file_range", 3, 300, 210, 800), tm("direct", 3, 250, 240, 600), tm("sendfile", 3, 280, 200, 900), tm("splice", 3, 260, 190, 500), tm("rw", 3, 270, 230, 700)},
	}
	autos := []timing{tm("copy_file_range", 3, 330, 250, 600), tm("copy_file_range", 3, 640, 288, 1014), tm("copy_file_range", 3, 310, 220, 700)}
	var texts []string
	for i := range runs {
		j := judge(autos[i], runs[i])
		_, text := advise(j, Judgement{}, "into /d")
		texts = append(texts, text)
	}
	for _, tx := range texts {
		if tx != texts[0] {
			t.Errorf("verdicts differ: %q", texts)
		}
	}
}

func TestAdvise(t *testing.T) {
	no := Judgement{}
	yes := func(s string) Judgement { return Judgement{Beats: true, Best: s} }
	tests := []struct {
		plain, synced Judgement
		advice, text  string
	}{
		{no, no, "", "what to do: nothing; auto is as good as the best strategy here"},
		{yes("splice"), no, "--strategy=splice without --sync", "what to do: add --strategy=splice to copies into /d without --sync; with --sync auto is as good as the best"},
		{no, yes("direct"), "--strategy=direct with --sync", "what to do: add --strategy=direct to copies into /d with --sync; without it auto is as good as the best"},
		{yes("splice"), yes("splice"), "--strategy=splice", "what to do: add --strategy=splice to copies into /d"},
		{yes("splice"), yes("direct"), "--strategy=splice without --sync, --strategy=direct with --sync",
			"what to do: add --strategy=splice to copies into /d without --sync, --strategy=direct to those with --sync"},
	}
	for _, tt := range tests {
		advice, text := advise(tt.plain, tt.synced, "into /d")
		if advice != tt.advice || text != tt.text {
			t.Errorf("advise(%v, %v) = %q, %q; want %q, %q", tt.plain.Beats, tt.synced.Beats, advice, text, tt.advice, tt.text)
		}
	}
}
