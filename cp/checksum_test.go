// SPDX-License-Identifier: MIT

package cp

import (
	"strings"
	"testing"
)

// tidyAll is tidy without its shortcut: every name split and joined.
func tidyAll(name string) string {
	parts := strings.Split(name, "/")
	kept := parts[:0]
	for i, p := range parts {
		if p == "." || p == "" && i > 0 {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 || len(kept) == 1 && kept[0] == "" {
		return name
	}
	return strings.Join(kept, "/")
}

// The manifest's names skip tidy's split when nothing is to drop: the
// names must come out as the split and join make them.
func TestTidyShortcutSameNames(t *testing.T) {
	for _, name := range []string{
		"", ".", "..", "/", "//", "a", "a/b", "/a/b", "a/./b", "./a", "a/.", "a/",
		"a//b", "/./a", "a/../b", "dst/.", ".a/b.", "a/.b/c", "x/ /y", "a\nb/c",
		"dir/./sub/../f", "///", "a/b/", "./", "/.",
	} {
		if got, want := tidy(name), tidyAll(name); got != want {
			t.Errorf("tidy(%q) = %q, want %q", name, got, want)
		}
		if tidied(name) && tidyAll(name) != name {
			t.Errorf("tidied(%q) but the split makes it %q", name, tidyAll(name))
		}
	}
}
