// SPDX-License-Identifier: MIT

//go:build fastcp_sweep

package copier

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The sweep behind Direct's ring sizes, a measurement rather than a test, so
// it is built only with its tag: go test -tags fastcp_sweep ./copier -run
// TestDirectSweep -direct.sweep=DIR [-direct.size=1073741824]
// [-direct.rounds=3] (as root: caches are dropped before every run). It
// copies a cold file in DIR with every combination and prints the medians,
// each combination's place rotating from round to round.
var (
	sweepDir    = flag.String("direct.sweep", "", "directory for TestDirectSweep (empty: skip)")
	sweepSize   = flag.Int64("direct.size", 1<<30, "TestDirectSweep's file size")
	sweepRounds = flag.Int("direct.rounds", 3, "TestDirectSweep's rounds")
	sweepNoHuge = flag.Bool("direct.nohuge", false, "TestDirectSweep without MADV_HUGEPAGE")
	sweepCombos = flag.String("direct.combos", "", "TestDirectSweep's combinations, as MiBxBUFSxDEPTH,... (empty: the grid)")
)

func TestDirectSweep(t *testing.T) {
	if *sweepDir == "" {
		t.Skip("no -direct.sweep directory")
	}
	src := filepath.Join(*sweepDir, "sweep-src")
	if fi, err := os.Stat(src); err != nil || fi.Size() != *sweepSize {
		writeRandom(t, src, *sweepSize)
	}
	type combo struct{ buf, n, depth int }
	var combos []combo
	for _, f := range strings.FieldsFunc(*sweepCombos, func(r rune) bool { return r == ',' }) {
		var c combo
		if _, err := fmt.Sscanf(f, "%dx%dx%d", &c.buf, &c.n, &c.depth); err != nil {
			t.Fatalf("-direct.combos: %q: %v", f, err)
		}
		c.buf <<= 20
		combos = append(combos, c)
	}
	for _, buf := range []int{1 << 20, 2 << 20, 4 << 20, 8 << 20} {
		if len(combos) > 0 {
			break
		}
		for _, n := range []int{2, 4, 8, 16} {
			// A depth as large as the ring is fixed; a smaller one grows.
			combos = append(combos, combo{buf, n, n})
		}
	}
	if *sweepNoHuge {
		inject(t, &directHugePages, false)
	}
	times := make([][]float64, len(combos))
	saved := [3]int{directBufBytes, directBufs, directDepth}
	defer func() { directBufBytes, directBufs, directDepth = saved[0], saved[1], saved[2] }()
	for round := range *sweepRounds {
		for k := range combos {
			i := (k + round) % len(combos)
			c := combos[i]
			directBufBytes, directBufs, directDepth = c.buf, c.n, c.depth
			dst := filepath.Join(*sweepDir, "sweep-dst")
			unix.Sync()
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
				t.Skipf("cannot drop caches: %v", err)
			}
			s, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			d, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = Copy(d, s, Options{Strategy: Direct})
			if err == nil {
				err = d.Sync()
			}
			el := time.Since(start).Seconds()
			s.Close()
			d.Close()
			if err != nil {
				t.Fatal(err)
			}
			times[i] = append(times[i], el)
			os.Remove(dst)
			unix.Sync()
		}
	}
	for i, c := range combos {
		slices.Sort(times[i])
		fmt.Printf("buffer %d MiB x %d, depth %d at first: median %.3f s (min %.3f, max %.3f), %.0f MB/s\n",
			c.buf>>20, c.n, c.depth, times[i][len(times[i])/2], times[i][0], times[i][len(times[i])-1],
			float64(*sweepSize)/times[i][len(times[i])/2]/1e6)
	}
}

func writeRandom(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	x := uint64(0x9e3779b97f4a7c15)
	for off := int64(0); off < size; off += int64(len(buf)) {
		for i := 0; i+8 <= len(buf); i += 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			buf[i], buf[i+1], buf[i+2], buf[i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
			buf[i+4], buf[i+5], buf[i+6], buf[i+7] = byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56)
		}
		n := min(int64(len(buf)), size-off)
		if _, err := f.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
