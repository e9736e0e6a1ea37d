// SPDX-License-Identifier: MIT

package benchmark

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The report fits the terminal: every line at most Config.Width columns,
// MinWidth (80) unless the terminal is wider. Prose is wrapped at word
// boundaries; a table takes the widest of its layouts that fits, the
// narrowest one always fitting MinWidth; what a narrow table leaves out is
// in --json.

// MinWidth is the width the report always fits.
const MinWidth = 80

// Width is the width of the report written to stdout: the COLUMNS
// environment variable when it is a number (as ls and the shells use it),
// else the terminal's width when stdout is one; never less than MinWidth.
// lookup is os.LookupEnv.
func Width(stdout io.Writer, lookup func(string) (string, bool)) int {
	w := 0
	if v, ok := lookup("COLUMNS"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			w = n
		}
	}
	if w == 0 {
		if f, ok := stdout.(*os.File); ok {
			if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
				w = int(ws.Col)
			}
		}
	}
	return max(w, MinWidth)
}

// wrap breaks text into lines of at most width columns at spaces; the
// first line starts with first, the others with rest (a hanging indent). A
// word longer than a line (a long path) is cut after a '/' where it can
// be, else at the width, and goes on on the next line.
func wrap(text, first, rest string, width int) []string {
	var lines []string
	line := first
	empty := true // nothing but the indent on line yet
	for _, w := range strings.Fields(text) {
		if !empty && textWidth(line)+1+textWidth(w) > width {
			lines = append(lines, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		for textWidth(line)+textWidth(w) > width {
			// Too long for a line of its own: cut it.
			room := max(width-textWidth(line), 1)
			r := []rune(w)
			cut := room
			if i := strings.LastIndex(string(r[:room]), "/"); i > 0 {
				cut = len([]rune(string(r[:room])[:i+1]))
			}
			lines = append(lines, line+string(r[:cut]))
			line, w = rest, string(r[cut:])
		}
		line += w
		empty = false
	}
	if !empty {
		lines = append(lines, line)
	}
	return lines
}

// column is one column of a table.
type column struct {
	head  string
	right bool // numbers
}

// layout is a choice of a table's columns, by index.
type layout []int

// table is rows of cells under a header, printed in the widest of its
// layouts that fits the width (layouts are given widest first). A row
// whose span is set prints its first cell, then span, wrapped, across the
// remaining columns (a refusal and its reason).
type table struct {
	cols    []column
	layouts []layout
	rows    []tableRow
}

type tableRow struct {
	cells []string // one per column
	span  string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, tableRow{cells: cells}) }

func (t *table) addSpan(first, span string) {
	t.rows = append(t.rows, tableRow{cells: []string{first}, span: span})
}

// lines renders the table in the widest layout that fits width.
func (t *table) lines(width int) []string {
	layouts := t.layouts
	if len(layouts) == 0 {
		all := make(layout, len(t.cols))
		for i := range all {
			all[i] = i
		}
		layouts = []layout{all}
	}
	var out []string
	for i, l := range layouts {
		out = t.render(l, width)
		if i == len(layouts)-1 || fits(out, width) {
			break
		}
	}
	return out
}

func fits(lines []string, width int) bool {
	for _, l := range lines {
		if textWidth(l) > width {
			return false
		}
	}
	return true
}

// textWidth counts a line's columns: its runes (the report's text is
// ASCII but for file names).
func textWidth(s string) int { return len([]rune(s)) }

func (t *table) render(l layout, width int) []string {
	widths := make([]int, len(l))
	for j, c := range l {
		widths[j] = textWidth(t.cols[c].head)
	}
	for _, r := range t.rows {
		if r.span != "" {
			widths[0] = max(widths[0], textWidth(cell(r.cells, l[0])))
			continue
		}
		for j, c := range l {
			widths[j] = max(widths[j], textWidth(cell(r.cells, c)))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for j, c := range l {
			if j > 0 {
				b.WriteString("  ")
			}
			v := cell(cells, c)
			pad := strings.Repeat(" ", max(0, widths[j]-textWidth(v)))
			if t.cols[c].right {
				b.WriteString(pad + v)
			} else {
				b.WriteString(v + pad)
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	heads := make([]string, len(t.cols))
	for i, c := range t.cols {
		heads[i] = c.head
	}
	out := []string{line(heads)}
	for _, r := range t.rows {
		if r.span == "" {
			out = append(out, line(r.cells))
			continue
		}
		first := cell(r.cells, l[0])
		indent := strings.Repeat(" ", max(widths[0], textWidth(first))+2)
		lead := first + strings.Repeat(" ", len(indent)-textWidth(first))
		out = append(out, wrap(r.span, lead, indent, width)...)
	}
	return out
}

func cell(cells []string, i int) string {
	if i < len(cells) {
		return cells[i]
	}
	return ""
}

// ms prints seconds as milliseconds with three significant digits, never
// in exponent form: 342, 47.2, 4.72, 0.472, 1234.
func ms(s float64) string {
	v := s * 1000
	switch {
	case v <= 0:
		return "0"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	decimals := min(2-int(math.Floor(math.Log10(v))), 6)
	return fmt.Sprintf("%.*f", decimals, v)
}

// msRange is "min-max" in milliseconds.
func msRange(lo, hi float64) string { return ms(lo) + "-" + ms(hi) }
