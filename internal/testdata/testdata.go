// SPDX-License-Identifier: MIT

// Package testdata makes the bytes tests copy: without a pattern that a
// copy at a wrong offset could match, and cheap (splitmix64: a test's
// data is no secret, and crypto/rand was most of some tests' CPU), and
// compares a copy with them a piece at a time (ReadsAs). Only tests import
// it.
package testdata

import "encoding/binary"

// Bytes returns n bytes of splitmix64 from seed: the same seed, the same
// bytes.
func Bytes(n int, seed uint64) []byte {
	b := make([]byte, n+7)
	x := seed
	for i := 0; i < n; i += 8 {
		x += 0x9e3779b97f4a7c15
		z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		binary.LittleEndian.PutUint64(b[i:], z^z>>31)
	}
	return b[:n:n]
}
