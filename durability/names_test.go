// SPDX-License-Identifier: MIT

package durability

import "testing"

// A --sync mode out of range prints as SyncMode(N) instead of panicking.
func TestSyncModeOutOfRange(t *testing.T) {
	t.Parallel()
	if got := SyncMode(42).String(); got != "SyncMode(42)" {
		t.Errorf("got %q", got)
	}
	if got := SyncMode(-1).String(); got != "SyncMode(-1)" {
		t.Errorf("got %q", got)
	}
}
