// SPDX-License-Identifier: MIT

package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Quote quotes a file name the way GNU cp does in its messages (gnulib's
// shell-escape-always style), so every name printed can be pasted back into
// a shell:
//
//	name        -> 'name'
//	it's        -> "it's"
//	a<newline>b -> 'a'$'\n''b'   (control characters, bytes that are not UTF-8)
//	<tab><tab>  -> ''$'\t\t'     (a run of them shares one $'...')
//
// Names are taken as UTF-8 whatever the locale. One gnulib quirk is not
// copied: for a name with a single quote that ends in an escaped byte, its
// second pass starts with a stale $'...' still open and prints two extra
// single quotes.
func Quote(s string) string {
	escape := !utf8.ValidString(s) || strings.IndexFunc(s, isControl) >= 0
	if !escape && !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	if !escape && doubleQuotable(s) {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('\'')
	inEscape := false // inside $'...'
	startEscape := func() {
		if !inEscape {
			b.WriteString(`'$'`)
			inEscape = true
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			startEscape()
			fmt.Fprintf(&b, `\%03o`, s[i])
		case isControl(r):
			startEscape()
			b.WriteString(escapeControl(r))
		case r == '\'':
			// Its first quote closes a $'...' as well as a '...'.
			b.WriteString(`'\''`)
			inEscape = false
		default:
			if inEscape {
				b.WriteString(`''`)
				inEscape = false
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// doubleQuotable reports whether s, printable and holding a single quote,
// is one gnulib puts in double quotes: only letters, digits, blanks,
// %+,-./:@]_' and printable non-ASCII characters, and # or ~ first.
func doubleQuotable(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r >= 0x80:
		case strings.ContainsRune(" %+,-./:@]_'", r):
		case (r == '#' || r == '~') && i == 0:
		default:
			return false
		}
	}
	return true
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func escapeControl(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\%03o`, r)
	}
	var buf [4]byte
	n := utf8.EncodeRune(buf[:], r)
	var b strings.Builder
	for _, c := range buf[:n] {
		fmt.Fprintf(&b, `\%03o`, c)
	}
	return b.String()
}

// Quotef is gnulib's quotef: the name as it is when it needs no quoting
// for a shell, else quoted.
func Quotef(name string) string {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("%+,-./:=@_^", c)) {
			return Quote(name)
		}
	}
	if name == "" {
		return Quote(name)
	}
	return name
}
