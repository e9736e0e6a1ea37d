// SPDX-License-Identifier: MIT

//go:build race

package durability

// raceEnabled: the race detector drops a quarter of what sync.Pool is
// given, so a pool is reused less.
const raceEnabled = true
