// SPDX-License-Identifier: MIT

package sysx

import (
	"bytes"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Umask returns the process's file mode creation mask without changing
// it, from /proc/self/status (Linux 4.7 on), where it is the second line.
// umask(2) reads the mask only by setting another: for that instant every
// file that another thread creates, and every child forked, gets the other
// mask. Without /proc it falls back to umask(2), set and set back at once.
func Umask() uint32 {
	if fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		var buf [512]byte
		n, err := unix.Read(fd, buf[:])
		unix.Close(fd)
		if err == nil && n > 0 {
			for line := range bytes.Lines(buf[:n]) {
				if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
					if m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32); err == nil && m <= 0o777 {
						return uint32(m)
					}
					break
				}
			}
		}
	}
	m := unix.Umask(0)
	unix.Umask(m)
	return uint32(m)
}

// UnescapeOctal undoes the \NNN escapes with which /proc files (swaps,
// mounts, mountinfo) write blanks and backslashes in names.
func UnescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
