// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestVersionAndHelp(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run("fastcp", args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run("--version")
	if code != 0 || !strings.HasPrefix(out, "fastcp ") {
		t.Errorf("--version: %d %q", code, out)
	}
	code, out, _ = run("--help")
	if code != 0 || !strings.HasPrefix(out, "Usage: fastcp [OPTION]... SOURCE DEST\n") {
		t.Errorf("--help: %d %q", code, out)
	}
	code, out, errs := run("--frobnicate")
	if code != 1 || out != "" || errs != "fastcp: unrecognized option '--frobnicate'\nTry 'fastcp --help' for more information.\n" {
		t.Errorf("usage error: %d %q %q", code, out, errs)
	}
}

// TestHelpExitStatus holds --help's exit status paragraph to what a usage
// error and a failed copy really exit with.
func TestHelpExitStatus(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run("fastcp", []string{"--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	_, para, ok := strings.Cut(out.String(), "\nExit status: ")
	if !ok {
		t.Fatalf("--help has no exit status paragraph:\n%s", out.String())
	}
	para, _, _ = strings.Cut(para, "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	said := func(what string) string {
		m := regexp.MustCompile(`(\d+) [^;]*` + what).FindStringSubmatch(para)
		if m == nil {
			t.Fatalf("--help's exit status paragraph does not name %q: %q", what, para)
		}
		return m[1]
	}
	errb.Reset()
	code := run("fastcp", []string{"--frobnicate"}, strings.NewReader(""), &out, &errb)
	if got := said("usage error"); got != fmt.Sprint(code) {
		t.Errorf("--help says a usage error exits %s, it exits %d: %q", got, code, para)
	}
	errb.Reset()
	code = run("fastcp", []string{t.TempDir() + "/missing", t.TempDir() + "/dest"}, strings.NewReader(""), &out, &errb)
	if got := said("some file failed"); got != fmt.Sprint(code) || code == 0 {
		t.Errorf("--help says a failed copy exits %s, it exits %d (%q): %q", got, code, errb.String(), para)
	}
	if !strings.Contains(para, "as cp") {
		t.Errorf("--help should say usage errors exit as cp's do: %q", para)
	}
}
