// SPDX-License-Identifier: MIT

//go:build !race

package durability

// raceEnabled: see race_on_test.go.
const raceEnabled = false
