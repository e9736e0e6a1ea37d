// SPDX-License-Identifier: MIT

package sysx

import (
	"strconv"
	"strings"
)

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
