// SPDX-License-Identifier: MIT

package copier

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain lets the heap grow to five times what is live, not twice
// (unless GOGC says otherwise): the tests allocate buffers of megabytes
// that live for one copy over a live heap of a few, so at GOGC's default
// the collector ran about 140 times a run and gave back memory (madvise)
// that the next test faulted in again. At 400 it runs about 20 times, and
// the package's tests take about a tenth less CPU (docs/development.md).
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
