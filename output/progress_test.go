package output

import (
	"strings"
	"testing"
)

// The terminal line fits every width from 12 columns up, never reaching the
// last column, and keeps what matters most: the verb always, then the
// percentage, the name, the bar, the bytes, the rate, the time left.
func TestBarLineFits(t *testing.T) {
	names := []string{
		"'dst'",
		"'/srv/backups/2026/12/01/a-very-long-directory-name/and-a-longer-file-name-still.tar.zst'",
		"'日本語のファイル名はとても長いです日本語のファイル名はとても長いです.iso'",
	}
	for _, verb := range []string{"copying", "flushing"} {
		for _, name := range names {
			for _, total := range []int64{4 << 30, -1} {
				for _, rate := range []float64{0, 450e6, 12345e6} {
					for cols := 12; cols <= 200; cols++ {
						line := BarLine(cols, verb+" "+name, 1<<30, total, rate)
						if w := textWidth(line); w > cols-1 {
							t.Fatalf("%d columns: %d wide: %q", cols, w, line)
						}
						if !strings.HasPrefix(line, verb+" ") && !(line == verb && cols < 20) {
							t.Fatalf("%d columns: %q does not start with %q", cols, line, verb)
						}
						if strings.ContainsAny(line, "\r\n\x1b") {
							t.Fatalf("%d columns: control characters in %q", cols, line)
						}
					}
				}
			}
		}
	}
}

func TestBarLineWidths(t *testing.T) {
	const name = "'/srv/backups/2026/12/01/a-very-long-directory-name/disk.img'"
	for _, c := range []struct {
		cols int
		want []string
	}{
		// 60: the verb, the percentage, the end of the name, a bar, the bytes.
		{60, []string{"copying …", "disk.img'", " 25% [", "] 1.0 GiB/4.0 GiB"}},
		// 80: and the rate and the time left.
		{80, []string{"copying …", "disk.img'", " 25% [", "] 1.0 GiB/4.0 GiB 450 MB/s 7s left"}},
		// 120: the name in full up to 40 columns, a 30-column bar.
		{120, []string{" 25% [=======                     ] 1.0 GiB/4.0 GiB 450 MB/s 7s left"}},
	} {
		line := BarLine(c.cols, "copying "+name, 1<<30, 4<<30, 450e6)
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%d columns: %q lacks %q", c.cols, line, w)
			}
		}
		if w := textWidth(line); w > c.cols-1 {
			t.Errorf("%d columns: %d wide: %q", c.cols, w, line)
		}
		t.Logf("%3d: %s", c.cols, line)
	}
	// Flushing at 60 columns: the word stays, with the percentage.
	if line := BarLine(60, "flushing "+name, 4<<30, 4<<30, 450e6); !strings.HasPrefix(line, "flushing …") || !strings.Contains(line, "100% [") {
		t.Errorf("flushing at 60 columns: %q", line)
	}
	// Unknown total (a FIFO): no percentage, no bar, the bytes and the rate.
	if line := BarLine(80, "copying 'dst'", 8<<20, -1, 2e6); line != "copying 'dst' 8.0 MiB 2.0 MB/s" {
		t.Errorf("unknown total: %q", line)
	}
	// Too narrow for anything but the verb.
	if line := BarLine(12, "copying 'dst'", 1, 4, 1); line != "copying" {
		t.Errorf("12 columns: %q", line)
	}
}

func TestRateAndLeft(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want string
	}{{450e6, "450 MB/s"}, {2.25e6, "2.2 MB/s"}, {12345e6, "12345 MB/s"}} {
		if got := Rate(c.rate); got != c.want {
			t.Errorf("Rate(%g) = %q, want %q", c.rate, got, c.want)
		}
	}
	for _, c := range []struct {
		rest float64
		want string
	}{{7, "7s"}, {125, "2m05s"}, {3725, "1h02m"}} {
		if got := left(0, int64(c.rest*1e6), 1e6); got != c.want {
			t.Errorf("left(%gs) = %q, want %q", c.rest, got, c.want)
		}
	}
}
