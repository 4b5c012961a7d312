package cli

import (
	"bytes"
	"io"
	"strings"

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
}

func newTable(out io.Writer) *table { return &table{out: out} }

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the lines, their columns as wide as their widest cell.
func (t *table) Flush() error {
	text := strings.TrimSuffix(t.buf.String(), "\n")
	t.buf.Reset()
	if text == "" {
		return nil
	}
	var rows [][]string
	widths := t.widths
	for line := range strings.SplitSeq(text, "\n") {
		cells := strings.Split(line, "\t")
		for i, c := range cells[:len(cells)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
		rows = append(rows, cells)
	}
	t.widths = widths
	var b strings.Builder
	for _, cells := range rows {
		for i, c := range cells[:len(cells)-1] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
		}
		b.WriteString(cells[len(cells)-1])
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.out, b.String())
	return err
}
