// SPDX-License-Identifier: MIT

package testdata

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// ReadsAs finds the first byte that differs, past either end included,
// whatever the parts and the sizes of the reads.
func TestReadsAs(t *testing.T) {
	t.Parallel()
	data := Bytes(3<<20+5, 7)
	flipped := bytes.Clone(data)
	flipped[2<<20+3] ^= 1
	parts := [][]byte{data[:1], nil, data[1 : 1<<20], data[1<<20:]}
	for _, tt := range []struct {
		name string
		got  []byte
		want [][]byte
		diff int
	}{
		{"same", data, [][]byte{data}, -1},
		{"same in parts", data, parts, -1},
		{"a byte flipped", flipped, parts, 2<<20 + 3},
		{"shorter", data[:len(data)-1], parts, len(data) - 1},
		{"longer", append(bytes.Clone(data), 0), parts, len(data)},
		{"empty against data", nil, parts, 0},
		{"empty against nothing", nil, nil, -1},
	} {
		// Reads of a whole buffer, and of half of one, cross the parts'
		// ends at different places.
		for _, r := range []io.Reader{bytes.NewReader(tt.got), iotest.HalfReader(bytes.NewReader(tt.got))} {
			n, diff, err := ReadsAs(r, tt.want...)
			if err != nil || n != len(tt.got) || diff != tt.diff {
				t.Errorf("%s: n %d diff %d err %v, want %d, %d, nil", tt.name, n, diff, err, len(tt.got), tt.diff)
			}
		}
	}
	boom := errors.New("boom")
	if _, _, err := ReadsAs(iotest.ErrReader(boom), data); err != boom {
		t.Errorf("a read error came back as %v", err)
	}
}
