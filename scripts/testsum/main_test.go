// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stream writes go test -json lines for a package with a passing, a
// skipped and a failing test (a subtest too) into a script that prints
// them and exits with code.
func script(t *testing.T, events string, code string) []string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "events")
	if err := os.WriteFile(data, []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"sh", "-c", `cat "$0"; exit "$1"`, data, code}
}

const events = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:5: a log line\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:6: a long log line cut "}
{"Action":"output","Package":"p","Test":"TestA","Output":"in two by test2json\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"report: 3 "}
{"Action":"output","Package":"p","Test":"TestA","Output":"points\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.10s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:12: needs root\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"run","Package":"p","Test":"TestC/sub"}
{"Action":"output","Package":"p","Test":"TestC/sub","Output":"    c_test.go:3: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestC/sub","Elapsed":0}
{"Action":"fail","Package":"p","Test":"TestC","Elapsed":0}
not an event
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"fail","Package":"p","Elapsed":1.5}
`

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	s := &summary{w: &out, pkgs: map[string]*pkg{}, skips: map[string][]string{}}
	if s.run(script(t, events, "1")) {
		t.Error("a command that exited 1 counted as a success")
	}
	s.close()
	got := out.String()
	if strings.Contains(got, "a log line") || strings.Contains(got, "PASS: TestA") || strings.Contains(got, "by test2json") {
		t.Errorf("a passing test's log or framing lines were shown:\n%s", got)
	}
	for _, want := range []string{
		"report: 3 points\n",
		"--- FAIL: p TestC/sub (0.00s)\n    c_test.go:3: got 1, want 2\n",
		"not an event\n",
		"FAIL p                                1 passed, 2 failed, 1 skipped (1.5s)\n",
		"     1  needs root: TestB\n",
		"failed: p\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\n1 passed, 2 failed, 1 skipped\n") {
		t.Errorf("the summary does not end with the count alone on a line:\n%s", got)
	}
}

// A command that fails without a failed test (a build failure) fails the
// run; one whose package never ended counts as a failed package.
func TestSummaryCommandFailure(t *testing.T) {
	var out bytes.Buffer
	s := &summary{w: &out, pkgs: map[string]*pkg{}, skips: map[string][]string{}}
	ok := s.run(script(t, `{"Action":"run","Package":"q","Test":"TestX"}
{"Action":"output","Package":"q","Test":"TestX","Output":"panic: boom\n"}
`, "2"))
	s.close()
	if ok {
		t.Error("a command that exited 2 counted as a success")
	}
	got := out.String()
	for _, want := range []string{"--- unfinished: q TestX\npanic: boom\n", "FAIL q ", "failed: q\n", "\n0 passed, 0 failed, 0 skipped\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	var out2 bytes.Buffer
	s = &summary{w: &out2, pkgs: map[string]*pkg{}, skips: map[string][]string{}}
	if !s.run(script(t, `{"Action":"pass","Package":"r","Test":"TestY"}
{"Action":"pass","Package":"r"}
`, "0")) {
		t.Errorf("a passing command counted as a failure:\n%s", out2.String())
	}
}

// A suite the caller did not run is listed with its reason and counted on
// the closing line, which then says so; without one the line is the plain
// count.
func TestSummarySkippedSuite(t *testing.T) {
	skipped, cmds := parseArgs([]string{"-skipped-suite", "power-cut tests: no go-fuse",
		"go", "test", "-json", "./a", ";", "go", "test", "./b"})
	if len(skipped) != 1 || skipped[0] != "power-cut tests: no go-fuse" {
		t.Errorf("skipped suites %q", skipped)
	}
	if len(cmds) != 2 || strings.Join(cmds[0], " ") != "go test -json ./a" || strings.Join(cmds[1], " ") != "go test ./b" {
		t.Errorf("commands %q", cmds)
	}
	var out bytes.Buffer
	s := &summary{w: &out, pkgs: map[string]*pkg{}, skips: map[string][]string{}, skippedSuites: skipped}
	if !s.run(script(t, `{"Action":"pass","Package":"r","Test":"TestY"}
{"Action":"pass","Package":"r"}
`, "0")) {
		t.Errorf("a passing command counted as a failure:\n%s", out.String())
	}
	s.close()
	got := out.String()
	if !strings.Contains(got, "suites not run:\n  power-cut tests: no go-fuse\n") {
		t.Errorf("the summary does not name the suite not run:\n%s", got)
	}
	if !strings.HasSuffix(got, "\n1 passed, 0 failed, 0 skipped, 1 suite skipped\n") {
		t.Errorf("the closing line does not count the suite not run:\n%s", got)
	}
	if _, cmds := parseArgs([]string{"go", "test"}); len(cmds) != 1 || len(cmds[0]) != 2 {
		t.Errorf("without -skipped-suite: %q", cmds)
	}
}
