// SPDX-License-Identifier: MIT

package sysx

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		"/swap file": "/swap file", `/a\040b`: "/a b", `\134x`: `\x`, `/a\04`: `/a\04`, `/a\999b`: `/a\999b`, "": "",
	} {
		if got := UnescapeOctal(in); got != want {
			t.Errorf("UnescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}

// Umask reads the mask the process has, whatever it is. (Not parallel:
// it sets the process's umask.)
func TestUmask(t *testing.T) {
	old := unix.Umask(0o027)
	t.Cleanup(func() { unix.Umask(old) })
	for _, m := range []int{0o027, 0, 0o777, 0o002} {
		unix.Umask(m)
		if got := Umask(); got != uint32(m) {
			t.Errorf("Umask() = %#o, want %#o", got, m)
		}
	}
}

// Umask leaves the mask as it is while it reads it: files that another
// goroutine creates meanwhile all get the process's mask. (umask(2) set
// to 0 and back, as cp.Run read it, let some through with mode 0666 when
// tests beside each other ran copies.)
func TestUmaskLeavesTheMask(t *testing.T) {
	old := unix.Umask(0o022)
	t.Cleanup(func() { unix.Umask(old) })
	dir := t.TempDir()
	var stop atomic.Bool
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				if m := Umask(); m != 0o022 {
					t.Errorf("Umask() = %#o, want 022", m)
					return
				}
			}
		}()
	}
	bad := 0
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprint(i))
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode&0o777 != 0o644 {
			bad++
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	readers.Wait()
	if bad > 0 {
		t.Errorf("%d of 1000 files created while Umask ran did not get mode 0644", bad)
	}
}
