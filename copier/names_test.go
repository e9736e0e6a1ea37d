// SPDX-License-Identifier: MIT

package copier

import "testing"

// A mode out of its names' range prints as TYPE(N) instead of panicking.
func TestNamesOutOfRange(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		ReflinkMode(3).String(): "ReflinkMode(3)",
		SparseMode(-1).String(): "SparseMode(-1)",
		Strategy(99).String():   "Strategy(99)",
		ReflinkAlways.String():  "always",
		SparseNever.String():    "never",
		CopyFileRange.String():  "copy_file_range",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
