// SPDX-License-Identifier: MIT

package testdata

import (
	"bytes"
	"io"
	"sync"
)

// ReadsAs reads r to its end and compares what it gives with want, the
// parts one after the other, a piece at a time through a reused buffer
// (a whole-file buffer per check was much of some packages' test time).
// It returns the bytes read, the offset of the first that differs from
// want (past its end included) or -1, and the read error other than
// io.EOF. It calls no testing method, so that a test's goroutine may.
func ReadsAs(r io.Reader, want ...[]byte) (n, diff int, err error) {
	buf := bufs.Get().(*[]byte)
	defer bufs.Put(buf)
	total := 0
	for _, p := range want {
		total += len(p)
	}
	diff = -1
	pi, po := 0, 0 // the part the next byte read is compared with, and where in it
	for {
		m, rerr := r.Read(*buf)
		got := (*buf)[:m]
		for i := 0; i < m && diff < 0; {
			if pi == len(want) {
				diff = n + i // longer than want
				break
			}
			p := want[pi][po:]
			k := min(m-i, len(p))
			if !bytes.Equal(got[i:i+k], p[:k]) {
				j := 0
				for got[i+j] == p[j] {
					j++
				}
				diff = n + i + j
				break
			}
			i, po = i+k, po+k
			if po == len(want[pi]) {
				pi, po = pi+1, 0
			}
		}
		n += m
		if rerr != nil {
			if diff < 0 && n != total {
				diff = min(n, total) // shorter than want
			}
			if rerr == io.EOF {
				rerr = nil
			}
			return n, diff, rerr
		}
	}
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
