// SPDX-License-Identifier: MIT

// Command testsum runs go test commands given -json and says what they do:
// a line per package when it ends, what a test prints on its own stdout,
// every failed test with its output,
// every skipped one with its reason, a line every 20 seconds while a
// package runs, and a closing count alone on its last line:
//
//	N passed, N failed, N skipped
//
// followed, when a whole suite was not run, by ", N suites skipped".
//
// Usage: testsum [-skipped-suite 'WHAT: WHY']... CMD ARG... [';' CMD ARG...].
// A -skipped-suite is a suite the caller did not run (its tests cannot
// even be listed): it is shown with the skipped tests' reasons and
// counted on the closing line. testsum exits non-zero when a command did
// (a build failure counts no test but fails), or a test failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// event is one line of go test -json (test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// pkg is what is known of one package while it runs.
type pkg struct {
	start                  time.Time
	passed, failed, skiped int
	running                map[string]bool
	showing                map[string]bool     // tests whose last output piece was shown (own)
	output                 map[string][]string // test ("" for the package) -> its output lines
}

type summary struct {
	w                      io.Writer
	pkgs                   map[string]*pkg
	passed, failed, skiped int
	skips                  map[string][]string // reason -> tests
	skippedSuites          []string            // "what: why" of each suite not run
	failedPkgs             []string
}

func main() {
	s := &summary{w: os.Stdout, pkgs: map[string]*pkg{}, skips: map[string][]string{}}
	var cmds [][]string
	s.skippedSuites, cmds = parseArgs(os.Args[1:])
	ok := true
	for _, c := range cmds {
		if len(c) == 0 {
			fmt.Fprintln(os.Stderr, "usage: testsum CMD ARG... [';' CMD ARG...]")
			os.Exit(2)
		}
		if !s.run(c) {
			ok = false
		}
	}
	s.close()
	if !ok || s.failed > 0 {
		os.Exit(1)
	}
}

// parseArgs splits testsum's arguments into the suites not run (the
// leading -skipped-suite options) and the commands, separated by ';'.
func parseArgs(args []string) (skipped []string, cmds [][]string) {
	for len(args) >= 2 && args[0] == "-skipped-suite" {
		skipped = append(skipped, args[1])
		args = args[2:]
	}
	cur := []string{}
	for _, a := range args {
		if a == ";" {
			cmds = append(cmds, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, a)
	}
	return skipped, append(cmds, cur)
}

// run runs one go test command and reads its events; it reports whether
// the command succeeded.
func (s *summary) run(argv []string) bool {
	fmt.Fprintf(s.w, "%s\n", strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return false
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		return false
	}
	events := make(chan event)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var e event
			if line := sc.Bytes(); len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
				// Not an event (go's own messages): passed on, in order,
				// by the loop below, which alone writes.
				e = event{Action: "raw", Output: sc.Text() + "\n"}
			}
			events <- e
		}
	}()
	tick := time.NewTicker(20 * time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case e, ok := <-events:
			if !ok {
				done = true
				break
			}
			s.event(e)
		case <-tick.C:
			s.heartbeat()
		}
	}
	err = cmd.Wait()
	// A package still open (its binary died without a last event) failed.
	for name := range s.pkgs {
		s.endPackage(name, "fail", 0)
	}
	if err != nil {
		fmt.Fprintf(s.w, "%s: %v\n", argv[0], err)
		return false
	}
	return true
}

func (s *summary) pkg(name string) *pkg {
	p := s.pkgs[name]
	if p == nil {
		p = &pkg{start: time.Now(), running: map[string]bool{}, showing: map[string]bool{}, output: map[string][]string{}}
		s.pkgs[name] = p
	}
	return p
}

func (s *summary) event(e event) {
	switch e.Action {
	case "raw", "build-output":
		fmt.Fprint(s.w, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.output[""] = append(p.output[""], e.Output)
		case "pass", "fail", "skip":
			s.endPackage(e.Package, e.Action, e.Elapsed)
		}
		return
	}
	switch e.Action {
	case "run":
		p.running[e.Test] = true
	case "output":
		// test2json cuts long lines: a piece after one without its
		// newline continues that line, and is shown with it or not at all.
		prev := p.output[e.Test]
		continued := len(prev) > 0 && !strings.HasSuffix(prev[len(prev)-1], "\n")
		p.output[e.Test] = append(prev, e.Output)
		if continued && p.showing[e.Test] || !continued && own(e.Output) {
			fmt.Fprint(s.w, e.Output)
			p.showing[e.Test] = true
		} else {
			delete(p.showing, e.Test)
		}
	case "pass":
		p.passed++
		s.passed++
		s.endTest(p, e.Test)
	case "skip":
		p.skiped++
		s.skiped++
		reason := skipReason(p.output[e.Test])
		s.skips[reason] = append(s.skips[reason], e.Test)
		s.endTest(p, e.Test)
	case "fail":
		p.failed++
		s.failed++
		fmt.Fprintf(s.w, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
		for _, l := range p.output[e.Test] {
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(strings.TrimSpace(l), "--- FAIL:") {
				fmt.Fprint(s.w, l)
			}
		}
		s.endTest(p, e.Test)
	}
}

func (s *summary) endTest(p *pkg, test string) {
	delete(p.running, test)
	delete(p.showing, test)
	delete(p.output, test)
}

// own reports whether a test's output line is its own stdout (a report it
// prints, "power-cut: 312 crash points..."), not go test's framing or t.Log's
// indented lines, which are shown only when the test fails.
func own(line string) bool {
	if line == "" || line[0] == ' ' || line[0] == '\t' || line == "\n" {
		return false
	}
	for _, p := range []string{"=== ", "--- ", "PASS\n", "FAIL\n", "ok  ", "FAIL\t"} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	return true
}

// skipReason is the message of t.Skip: the output line before "--- SKIP".
func skipReason(lines []string) string {
	reason := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: needs root": the message without its place.
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		reason = t
	}
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

func (s *summary) endPackage(name, action string, elapsed float64) {
	p := s.pkgs[name]
	if p == nil {
		return
	}
	delete(s.pkgs, name)
	status := "ok  "
	if action == "fail" {
		status = "FAIL"
		s.failedPkgs = append(s.failedPkgs, name)
		// What the package printed outside any test (a panic, TestMain).
		for _, l := range p.output[""] {
			if t := strings.TrimSpace(l); t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "ok ") && !strings.HasPrefix(t, "FAIL\t") {
				fmt.Fprint(s.w, l)
			}
		}
		for test, lines := range p.output {
			if test != "" {
				fmt.Fprintf(s.w, "--- unfinished: %s %s\n", name, test)
				for _, l := range lines {
					fmt.Fprint(s.w, l)
				}
			}
		}
	}
	if p.passed+p.failed+p.skiped == 0 && action != "fail" {
		return // no test files
	}
	fmt.Fprintf(s.w, "%s %-32s %d passed, %d failed, %d skipped (%.1fs)\n", status, name, p.passed, p.failed, p.skiped, elapsed)
}

func (s *summary) heartbeat() {
	names := make([]string, 0, len(s.pkgs))
	for n, p := range s.pkgs {
		if len(p.running) > 0 || p.passed+p.failed+p.skiped > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := s.pkgs[n]
		var running []string
		for t := range p.running {
			if !strings.Contains(t, "/") {
				running = append(running, t)
			}
		}
		sort.Strings(running)
		if len(running) > 3 {
			running = append(running[:3], "...")
		}
		what := "running " + strings.Join(running, " ")
		if len(running) == 0 {
			what = "between tests"
		}
		fmt.Fprintf(s.w, "     %s: %d passed, %d failed, %d skipped so far (%.0fs), %s\n",
			n, p.passed, p.failed, p.skiped, time.Since(p.start).Seconds(), what)
	}
}

func (s *summary) close() {
	if len(s.skips) > 0 {
		reasons := make([]string, 0, len(s.skips))
		for r := range s.skips {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool {
			if len(s.skips[reasons[i]]) != len(s.skips[reasons[j]]) {
				return len(s.skips[reasons[i]]) > len(s.skips[reasons[j]])
			}
			return reasons[i] < reasons[j]
		})
		fmt.Fprintln(s.w, "skipped, by reason:")
		for _, r := range reasons {
			tests := s.skips[r]
			sort.Strings(tests)
			list := strings.Join(tests, " ")
			if len(tests) > 4 {
				list = strings.Join(tests[:4], " ") + fmt.Sprintf(" and %d more", len(tests)-4)
			}
			fmt.Fprintf(s.w, "  %4d  %s: %s\n", len(tests), r, list)
		}
	}
	if len(s.skippedSuites) > 0 {
		fmt.Fprintln(s.w, "suites not run:")
		for _, w := range s.skippedSuites {
			fmt.Fprintf(s.w, "  %s\n", w)
		}
	}
	if len(s.failedPkgs) > 0 {
		fmt.Fprintf(s.w, "failed: %s\n", strings.Join(s.failedPkgs, " "))
	}
	suites := ""
	switch n := len(s.skippedSuites); n {
	case 0:
	case 1:
		suites = ", 1 suite skipped"
	default:
		suites = fmt.Sprintf(", %d suites skipped", n)
	}
	fmt.Fprintf(s.w, "%d passed, %d failed, %d skipped%s\n", s.passed, s.failed, s.skiped, suites)
}
