// SPDX-License-Identifier: MIT

package cp

import "testing"

// The manifest's names skip tidy's split when nothing is to drop: the
// names must come out as the split and join make them.
func TestTidyShortcutSameNames(t *testing.T) {
	for _, name := range []string{
		"", ".", "..", "/", "//", "a", "a/b", "/a/b", "a/./b", "./a", "a/.", "a/",
		"a//b", "/./a", "a/../b", "dst/.", ".a/b.", "a/.b/c", "x/ /y", "a\nb/c",
		"dir/./sub/../f", "///", "a/b/", "./", "/.",
	} {
		if got, want := tidy(name), tidySplit(name); got != want {
			t.Errorf("tidy(%q) = %q, want %q", name, got, want)
		}
		if tidied(name) && tidySplit(name) != name {
			t.Errorf("tidied(%q) but the split makes it %q", name, tidySplit(name))
		}
	}
}
