// SPDX-License-Identifier: MIT

package output

import "testing"

func TestQuote(t *testing.T) {
	tests := map[string]string{
		"a":        "'a'",
		"a b":      "'a b'",
		"it's":     `"it's"`,
		"a\nb":     `'a'$'\n''b'`,
		"it's\t$x": `'it'\''s'$'\t''$x'`,
		"\xff":     `''$'\377'`,
		"":         "''",
		"-rf":      "'-rf'",
		"é":        "'é'",
		// Checked against GNU ls --quoting-style=shell-escape-always
		// (gnulib's quoting, as cp's messages) under LC_ALL=C.UTF-8.
		"\xff\xfe":   `''$'\377\376'`,
		"\n\n":       `''$'\n\n'`,
		"a\n\xffb":   `'a'$'\n\377''b'`,
		"'\n":        `''\'''$'\n'`,
		"'a":         `"'a"`,
		"a\"b'c":     `'a"b'\''c'`,
		"it's#1":     `'it'\''s#1'`,
		"#it's":      `"#it's"`,
		"x\xc2\x80y": `'x'$'\302\200''y'`,
		"é\x80":      `'é'$'\200'`,
		"\x7f":       `''$'\177'`,
		`\`:          `'\'`,
	}
	for in, want := range tests {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
