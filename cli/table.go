package cli

import (
	"bytes"
	"io"

	"github.com/charmbracelet/x/ansi"
)

// table lays out tab-separated lines in columns, as text/tabwriter did
// (two spaces between columns, the last cell of a line unpadded), but
// by terminal cells: tabwriter counts runes, so a thread id in CJK or
// emoji (two cells a character) pushed its row's later columns right.
// Write everything, then Flush; or Flush a part at a time (a stream):
// the columns keep the widest cell of every part so far.
type table struct {
	out    io.Writer
	buf    bytes.Buffer
	widths []int
	// cells and line are Flush's, kept for the next part of a stream.
	cells []tableCell
	line  []byte
}

// tableCell is a cell and its width; width -1 marks a line's last cell.
type tableCell struct {
	text  []byte
	width int
}

func newTable(out io.Writer) *table { return &table{out: out} }

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the lines, their columns as wide as their widest cell.
func (t *table) Flush() error {
	text := bytes.TrimSuffix(t.buf.Bytes(), []byte("\n"))
	if len(text) == 0 {
		t.buf.Reset()
		return nil
	}
	cells := t.cells[:0]
	widths := t.widths
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		for i := 0; ; i++ {
			c, rest, more := bytes.Cut(line, []byte("\t"))
			if !more {
				cells = append(cells, tableCell{c, -1})
				break
			}
			if i == len(widths) {
				widths = append(widths, 0)
			}
			w := cellWidth(c)
			widths[i] = max(widths[i], w)
			cells = append(cells, tableCell{c, w})
			line = rest
		}
	}
	t.widths = widths
	out := t.line[:0]
	col := 0
	for _, c := range cells {
		out = append(out, c.text...)
		if c.width < 0 {
			out, col = append(out, '\n'), 0
			continue
		}
		for range widths[col] - c.width + 2 {
			out = append(out, ' ')
		}
		col++
	}
	t.cells, t.line = cells[:0], out
	t.buf.Reset()
	_, err := t.out.Write(out)
	return err
}

// cellWidth is a cell's width in terminal cells: its length when it is
// printable ASCII (most cells, counted without ansi's parser), else as
// ansi counts it.
func cellWidth(c []byte) int {
	for _, b := range c {
		if b < 0x20 || b >= 0x7f {
			return ansi.StringWidth(string(c))
		}
	}
	return len(c)
}
