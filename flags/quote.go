package flags

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
func Quote(s string) string {
	plain := utf8.ValidString(s) && strings.IndexFunc(s, isControl) < 0
	if plain && !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	if plain && !strings.ContainsAny(s, "\"$`\\") {
		return "\"" + s + "\""
	}
	var b strings.Builder
	open := false
	setOpen := func(want bool) {
		if open != want {
			b.WriteByte('\'')
			open = want
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			setOpen(false)
			fmt.Fprintf(&b, "$'\\%03o'", s[i])
		case r == '\'':
			setOpen(false)
			b.WriteString(`\'`)
		case isControl(r):
			setOpen(false)
			b.WriteString("$'" + escapeControl(r) + "'")
		default:
			setOpen(true)
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	setOpen(false)
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
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
