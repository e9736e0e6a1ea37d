// SPDX-License-Identifier: MIT

package main

import (
	"strings"
	"testing"
	"time"
)

// resultOf is a result whose tools each ran once, in the given wall times.
func resultOf(walls map[string]time.Duration) *result {
	r := &result{}
	for name, d := range walls {
		r.tools = append(r.tools, &toolResult{tool: tool{name: name}, samples: []sample{{wall: d}}})
	}
	return r
}

func TestRatioAtMostOrLimit(t *testing.T) {
	ms := time.Millisecond
	tg := ratioAtMostOrLimit("fastcp", "cp", 0.6, "tmpfs write", 1.25)
	for _, c := range []struct {
		name  string
		walls map[string]time.Duration
		want  verdict
	}{
		{"met outright", map[string]time.Duration{"fastcp": 240 * ms, "cp": 400 * ms, "tmpfs write": 200 * ms}, met},
		{"met without the yardstick", map[string]time.Duration{"fastcp": 240 * ms, "cp": 400 * ms}, met},
		// The yardstick reaches the target, so fastcp could: missed.
		{"reachable, missed", map[string]time.Duration{"fastcp": 300 * ms, "cp": 400 * ms, "tmpfs write": 200 * ms}, missed},
		// Even the write alone takes 0.8x cp's time; fastcp within 1.25x of it.
		{"out of reach, close to the floor", map[string]time.Duration{"fastcp": 360 * ms, "cp": 400 * ms, "tmpfs write": 320 * ms}, atLimit},
		{"out of reach, far from the floor", map[string]time.Duration{"fastcp": 420 * ms, "cp": 400 * ms, "tmpfs write": 320 * ms}, missed},
		{"no yardstick row", map[string]time.Duration{"fastcp": 360 * ms, "cp": 400 * ms}, missed},
		{"a tool did not run", map[string]time.Duration{"cp": 400 * ms}, noData},
	} {
		v, got := tg.eval(resultOf(c.walls))
		if got != c.want {
			t.Errorf("%s: verdict %v (%s), want %v", c.name, got, v, c.want)
		}
	}
}

func TestFloorPlusWork(t *testing.T) {
	ms := time.Millisecond
	tg := floorPlusWork("fastcp", "go empty", "cp", "true", 1.3)
	for _, c := range []struct {
		name  string
		walls map[string]time.Duration
		want  verdict
	}{
		// The bound is 300 + (250 - 150) = 400 ms: 1.3x is 520 ms.
		{"within", map[string]time.Duration{"fastcp": 500 * ms, "go empty": 300 * ms, "cp": 250 * ms, "true": 150 * ms}, met},
		{"beyond", map[string]time.Duration{"fastcp": 540 * ms, "go empty": 300 * ms, "cp": 250 * ms, "true": 150 * ms}, missed},
		// cp's work is never taken as less than nothing: the bound is
		// 300 ms, not 290 (380 ms would be 1.31x of that).
		{"noise below the C floor", map[string]time.Duration{"fastcp": 380 * ms, "go empty": 300 * ms, "cp": 140 * ms, "true": 150 * ms}, met},
		{"no floor row", map[string]time.Duration{"fastcp": 500 * ms, "cp": 250 * ms, "true": 150 * ms}, noData},
		{"no C floor row", map[string]time.Duration{"fastcp": 500 * ms, "go empty": 300 * ms, "cp": 250 * ms}, noData},
	} {
		v, got := tg.eval(resultOf(c.walls))
		if got != c.want {
			t.Errorf("%s: verdict %v (%s), want %v", c.name, got, v, c.want)
		}
	}
}

func TestSummaryCountsLimits(t *testing.T) {
	ms := time.Millisecond
	r := resultOf(map[string]time.Duration{"fastcp": 360 * ms, "cp": 400 * ms, "tmpfs write": 320 * ms})
	r.sc = &scenario{id: "s", targets: []target{
		ratioAtMost("fastcp", "cp", 0.92),
		ratioAtMostOrLimit("fastcp", "cp", 0.6, "tmpfs write", 1.25),
		ratioAtMost("fastcp", "cp", 0.5),
	}}
	var b strings.Builder
	printSummary(&b, []*result{r})
	if !strings.Contains(b.String(), "1 targets met, 1 missed, 1 out of reach") {
		t.Errorf("summary:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "LIMIT") {
		t.Errorf("summary has no LIMIT line:\n%s", b.String())
	}
}

func TestAddBaseline(t *testing.T) {
	sc := &scenario{tools: []tool{loopTool("fastcp", "{fastcp}"), loopTool("cp", "{cp}")}}
	addBaseline(sc)
	if len(sc.tools) != 3 || sc.tools[2].name != "baseline" {
		t.Fatalf("tools after addBaseline: %+v", sc.tools)
	}
	if got := strings.Join(sc.tools[2].argv, " "); strings.Contains(got, "{fastcp}") || !strings.Contains(got, "{baseline}") {
		t.Errorf("baseline argv %q", got)
	}
	if got := strings.Join(sc.tools[0].argv, " "); !strings.Contains(got, "{fastcp}") {
		t.Errorf("fastcp's own argv changed: %q", got)
	}
	if len(sc.targets) != 1 || !strings.Contains(sc.targets[0].desc, "fastcp / baseline") {
		t.Errorf("targets after addBaseline: %d", len(sc.targets))
	}
	// A scenario without a plain fastcp row gets nothing.
	cold := &scenario{tools: []tool{fastcpTool("--sync=data"), cpTool}}
	addBaseline(cold)
	if len(cold.tools) != 2 || len(cold.targets) != 0 {
		t.Errorf("addBaseline changed a scenario without a fastcp row")
	}
}

func TestRatioAtMostOrFloorRatio(t *testing.T) {
	ms := time.Millisecond
	tg := ratioAtMostOrFloorRatio("fan", "two", 0.7, "calls fan", "calls two", 1.2)
	for _, c := range []struct {
		name  string
		walls map[string]time.Duration
		want  verdict
	}{
		{"met outright", map[string]time.Duration{"fan": 600 * ms, "two": 1000 * ms, "calls fan": 800 * ms, "calls two": 1000 * ms}, met},
		// The calls alone make 0.6x: 0.7x is within reach.
		{"reachable, missed", map[string]time.Duration{"fan": 800 * ms, "two": 1000 * ms, "calls fan": 600 * ms, "calls two": 1000 * ms}, missed},
		// The calls alone make 0.75x; 0.86x is within 1.2x of it.
		{"out of reach, close to the floor", map[string]time.Duration{"fan": 860 * ms, "two": 1000 * ms, "calls fan": 750 * ms, "calls two": 1000 * ms}, atLimit},
		{"out of reach, far from the floor", map[string]time.Duration{"fan": 950 * ms, "two": 1000 * ms, "calls fan": 750 * ms, "calls two": 1000 * ms}, missed},
		{"no yardstick rows", map[string]time.Duration{"fan": 860 * ms, "two": 1000 * ms}, missed},
		{"a tool did not run", map[string]time.Duration{"two": 1000 * ms}, noData},
	} {
		v, got := tg.eval(resultOf(c.walls))
		if got != c.want {
			t.Errorf("%s: verdict %v (%s), want %v", c.name, got, v, c.want)
		}
	}
}

func TestCPUFloor(t *testing.T) {
	r := &result{tools: []*toolResult{
		{tool: tool{name: "hashes"}, samples: []sample{{wall: 1400 * time.Millisecond, user: 1300 * time.Millisecond, sys: 100 * time.Millisecond}}},
		{tool: tool{name: "verify"}, samples: []sample{{wall: 1000 * time.Millisecond, user: 150 * time.Millisecond, sys: 500 * time.Millisecond}}},
	}}
	// (1.3 s + 0.5 s) / 2 CPUs = 0.9 s, 0.90x of verify's 1 s.
	v, got := cpuFloor("hashes", "verify", 2).eval(r)
	if got != info || !strings.HasPrefix(v, "0.90x") {
		t.Errorf("got %q (%v), want 0.90x, info", v, got)
	}
	if _, got := cpuFloor("hashes", "nothing", 2).eval(r); got != noData {
		t.Errorf("without the base: %v, want noData", got)
	}
}

func TestUserOver(t *testing.T) {
	r := &result{tools: []*toolResult{
		{tool: tool{name: "hash"}, samples: []sample{{wall: 3 * time.Second, user: 2600 * time.Millisecond}}},
		{tool: tool{name: "copy"}, samples: []sample{{wall: 2 * time.Second, user: 100 * time.Millisecond}}},
	}}
	v, got := userOver("hash", "copy").eval(r)
	if got != info || !strings.HasPrefix(v, "1.30x") {
		t.Errorf("got %q (%v), want 1.30x, info", v, got)
	}
}
