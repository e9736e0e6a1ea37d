// SPDX-License-Identifier: MIT

package benchmark

import (
	"runtime"
	"time"

	"fastcp/checksum"
)

// HashRate is section 4's row for one --checksum algorithm: how fast one
// core of this machine hashes, beside which section 1's device limit says
// whether the CPU or the disk bounds a checksummed copy (its hash runs on
// one core beside the copy; see CHECKSUMS in the manual).
type HashRate struct {
	Algorithm   string  `json:"algorithm"`     // "sha256", "sha512"
	Runs        int     `json:"runs"`          // timed loops
	BytesPerRun int64   `json:"bytes_per_run"` // hashed per loop, in 1 MiB writes
	MBps        float64 `json:"mb_per_s"`      // median, of the thread's CPU time
	MinMBps     float64 `json:"min_mb_per_s"`
	MaxMBps     float64 `json:"max_mb_per_s"`
	// ShareOfLimit is MBps against section 1's device limit (0 when the
	// limit is unknown): below 1 the hash, not the device, bounds a
	// checksummed copy on this filesystem.
	ShareOfLimit float64 `json:"share_of_limit"`
}

// hashChunk is the size of one write to the hash, as the copier's buffers
// give it.
const hashChunk = 1 << 20

// timeHash hashes n chunks of buf with a's hash, on the thread's CPU clock.
func timeHash(a checksum.Algorithm, buf []byte, n int64) time.Duration {
	h := a.New()
	t := threadClock()
	for range n {
		h.Write(buf)
	}
	d := threadClock() - t
	h.Sum(nil)
	return d
}

// measureHashRates times every --checksum algorithm: runs loops of about
// syscostTarget each, of 1 MiB writes (non-zero bytes: the hash does not
// care, but nothing is left to chance), on the thread's CPU clock, so a
// busy machine does not make the hash look slower than it is. limit is
// section 1's device limit in MB/s (0: unknown).
func measureHashRates(runs int, limit float64, progress func(alg string, run int)) []HashRate {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, hashChunk)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	var rates []HashRate
	for _, name := range checksum.Names[1:] {
		a := checksum.Algorithm(len(rates) + 1)
		n := calibrate(func(n int64) time.Duration { return timeHash(a, buf, n) }, 1)
		var mbs []float64
		for i := range runs {
			progress(name, i+1)
			d := timeHash(a, buf, n)
			mbs = append(mbs, mbPerSec(n*hashChunk, d.Seconds()))
		}
		s := summarize(mbs)
		r := HashRate{Algorithm: name, Runs: runs, BytesPerRun: n * hashChunk, MBps: s.median, MinMBps: s.min, MaxMBps: s.max}
		if limit > 0 {
			r.ShareOfLimit = r.MBps / limit
		}
		rates = append(rates, r)
	}
	return rates
}
