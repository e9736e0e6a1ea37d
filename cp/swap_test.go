// SPDX-License-Identifier: MIT

package cp

import (
	"os"
	"strings"
	"testing"
)

// TestNoSwapAgreesWithProcSwaps: the shortcut that skips reading
// /proc/swaps says "no swap" exactly when /proc/swaps lists no area. A
// swap file the test made active is found either way (integration_test
// TestSwapFileDest).
func TestNoSwapAgreesWithProcSwaps(t *testing.T) {
	for range 3 {
		before, err := os.ReadFile("/proc/swaps")
		if err != nil {
			t.Skipf("no /proc/swaps: %v", err)
		}
		none := noSwap()
		after, _ := os.ReadFile("/proc/swaps")
		if string(before) != string(after) {
			continue // a swapon or swapoff ran meanwhile: look again
		}
		areas := len(strings.Split(strings.TrimSpace(string(before)), "\n")) - 1
		if none != (areas == 0) {
			t.Fatalf("noSwap() = %v, /proc/swaps lists %d areas:\n%s", none, areas, before)
		}
		if none && readSwapFiles() != nil {
			t.Fatal("no swap in use, yet swap files were found")
		}
		return
	}
	t.Skip("the swap areas kept changing")
}
