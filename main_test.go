// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
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
