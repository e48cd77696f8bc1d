package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// tableGap is the space between two columns.
const tableGap = 2

// table writes rows (the first is the header) in aligned columns that fit
// width: when they do not, the columns in shrink give way first, in
// order, down to a minimum; then the widest of shrinkWidest, one column at
// a time. A cell cut short ends (or, for the columns in keepEnd, starts)
// with "…".
type table struct {
	rows         [][]string
	width        int
	shrink       []int
	shrinkWidest []int
	keepEnd      map[int]bool
}

// tableMinWidth is as narrow as a column gets, unless its header is wider.
const tableMinWidth = 10

func (t table) write(w io.Writer) {
	widths := t.widths()
	for _, row := range t.rows {
		var line strings.Builder
		for i, cell := range row {
			cell = t.fit(i, cell, widths[i])
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+tableGap))
			}
		}
		io.WriteString(w, strings.TrimRight(line.String(), " ")+"\n")
	}
}

// widths returns each column's width: its widest cell, narrowed until the
// row fits.
func (t table) widths() []int {
	var widths, mins []int
	for _, row := range t.rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
				mins = append(mins, max(tableMinWidth, utf8.RuneCountInString(t.rows[0][i])))
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	over := tableGap*(len(widths)-1) - t.width
	for _, n := range widths {
		over += n
	}
	for _, i := range t.shrink {
		cut := min(over, widths[i]-mins[i])
		if cut > 0 {
			widths[i] -= cut
			over -= cut
		}
	}
	for over > 0 {
		widest := -1
		for _, i := range t.shrinkWidest {
			if widths[i] > mins[i] && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break // as narrow as it gets
		}
		widths[widest]--
		over--
	}
	return widths
}

// fit cuts cell to width runes, marking the cut with "…".
func (t table) fit(column int, cell string, width int) string {
	runes := []rune(cell)
	if len(runes) <= width {
		return cell
	}
	if t.keepEnd[column] {
		return "…" + string(runes[len(runes)-width+1:])
	}
	return string(runes[:width-1]) + "…"
}
