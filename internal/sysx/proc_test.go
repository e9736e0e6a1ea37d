// SPDX-License-Identifier: MIT

package sysx

import "testing"

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		"/swap file": "/swap file", `/a\040b`: "/a b", `\134x`: `\x`, `/a\04`: `/a\04`, `/a\999b`: `/a\999b`, "": "",
	} {
		if got := UnescapeOctal(in); got != want {
			t.Errorf("UnescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}
