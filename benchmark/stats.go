// SPDX-License-Identifier: MIT

package benchmark

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// summary is the median, minimum and maximum of a set of measurements.
type summary struct {
	median, min, max float64
}

// summarize returns the median (the mean of the two middle values for an
// even count), minimum and maximum of xs; all zero for no values.
func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return summary{median: med, min: s[0], max: s[n-1]}
}

// mbPerSec is the throughput of bytes in seconds, in decimal megabytes (10^6
// bytes) per second, as dd and fio print MB/s; 0 when the time is 0.
func mbPerSec(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / seconds
}

// cpuTimes is the CPU time a thread has used so far.
type cpuTimes struct{ user, sys time.Duration }

// threadCPU reads the calling thread's CPU times (RUSAGE_THREAD): the caller
// must hold runtime.LockOSThread so that the thread is the one doing the
// work, and no other goroutine's time is counted.
func threadCPU() cpuTimes {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return cpuTimes{}
	}
	return cpuTimes{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
}

func (c cpuTimes) sub(d cpuTimes) cpuTimes {
	return cpuTimes{user: c.user - d.user, sys: c.sys - d.sys}
}
