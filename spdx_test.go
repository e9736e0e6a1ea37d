// SPDX-License-Identifier: MIT

package main

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// spdxLine is the licence line every source file starts with.
const spdxLine = "SPDX-License-Identifier: MIT"

// Every source file (Go, the man page, the Makefile, shell scripts, the
// completions) names its licence on its first line, in its own comment
// syntax, or on its second after a "#!" or "#compdef" line; LICENSE holds
// the MIT licence's text. scripts/spdx adds a missing line.
func TestSourceFilesNameTheLicence(t *testing.T) {
	lic, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(lic), "MIT License\n") || !strings.Contains(string(lic), "Copyright (c) 2026 The fastcp authors\n") {
		t.Errorf("LICENSE does not begin with the MIT licence and The fastcp authors' copyright:\n%.200s", lic)
	}
	files := sourceFiles(t)
	if len(files) < 50 {
		t.Fatalf("only %d source files found: %v", len(files), files)
	}
	for _, f := range files {
		prefix, ok := spdxComment(f)
		if !ok {
			continue
		}
		first, second := firstLines(t, f)
		want := prefix + spdxLine
		if first == want || (strings.HasPrefix(first, "#!") || strings.HasPrefix(first, "#compdef")) && second == want {
			continue
		}
		t.Errorf("%s does not begin with %q (scripts/spdx adds it)", f, want)
	}
}

// spdxComment returns the comment prefix of f's licence line, and false
// for a file that is not source (documentation, go.mod, test data).
func spdxComment(f string) (string, bool) {
	switch {
	case strings.Contains("/"+f, "/vendor/") || strings.Contains(f, "/testdata/"):
		return "", false
	case strings.HasSuffix(f, ".go"):
		return "// ", true
	case strings.HasPrefix(f, "man/") && strings.HasSuffix(f, ".1"):
		return `.\" `, true
	case filepath.Base(f) == "Makefile" || strings.HasSuffix(f, ".sh"),
		strings.HasPrefix(f, "completions/"), strings.HasPrefix(f, ".ci/"), strings.HasPrefix(f, "scripts/"):
		return "# ", true
	}
	b := make([]byte, 2)
	if fh, err := os.Open(f); err == nil {
		n, _ := fh.Read(b)
		fh.Close()
		if n == 2 && string(b) == "#!" {
			return "# ", true
		}
	}
	return "", false
}

// sourceFiles lists git's tracked files, or in a tarball (no git work tree)
// every file but the vendored modules and what the build writes.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	if out, err := exec.Command("git", "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if _, err := os.Lstat(f); f != "" && err == nil {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == ".git" || p == ".cache" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && p != "fastcp" && p != "fastcp.1" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// firstLines returns the first two lines of the file f.
func firstLines(t *testing.T, f string) (string, string) {
	t.Helper()
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	var l [2]string
	for i := 0; i < 2 && sc.Scan(); i++ {
		l[i] = sc.Text()
	}
	return l[0], l[1]
}
