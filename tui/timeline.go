package tui

import (
	"fmt"
	"strings"

	"rewind/themes"
)

// timelinePane draws the checkpoint tree: a window of display rows kept
// around the cursor. Rows are cached (see rowKey), so a scrub step renders
// only the rows whose look changed.
type timelinePane struct {
	off, w, h int
	rows      map[rowKey]string
}

// rowKey is everything a row's look depends on.
type rowKey struct {
	n                            *tlNode
	w, theme, nest, pending      int
	cursor, onBranch, head, fork bool
	source, writer, interrupt    string
}

func (p *timelinePane) SetSize(w, h int) { p.w, p.h = max(w, 1), max(h, 0) }

func (p *timelinePane) reset() { p.off, p.rows = 0, nil }

// ensureVisible scrolls so the cursor's row is on screen.
func (p *timelinePane) ensureVisible(t *tree) {
	n := t.nodes[t.cursor]
	if n == nil || p.h <= 0 {
		return
	}
	if n.row < p.off {
		p.off = n.row
	}
	if n.row >= p.off+p.h {
		p.off = n.row - p.h + 1
	}
	p.scroll(t, 0)
}

func (p *timelinePane) scroll(t *tree, n int) {
	p.off = min(max(p.off+n, 0), max(len(t.rows)-p.h, 0))
}

// at is the checkpoint on inner row y, if any.
func (p *timelinePane) at(t *tree, y int) (int64, bool) {
	r := p.off + y
	if y < 0 || y >= p.h || r >= len(t.rows) {
		return 0, false
	}
	return t.rows[r], true
}

// lines renders the visible rows; leaf is the current branch's end.
func (p *timelinePane) lines(t *tree, th *themes.Theme, theme int) []string {
	leaf := t.leaf()
	out := make([]string, 0, p.h)
	if len(p.rows) > 8192 {
		p.rows = nil
	}
	if p.rows == nil {
		p.rows = map[rowKey]string{}
	}
	for r := p.off; r < len(t.rows) && len(out) < p.h; r++ {
		n := t.nodes[t.rows[r]]
		k := rowKey{n: n, w: p.w, theme: theme, cursor: n.id == t.cursor, onBranch: t.isAncestor(n.id, leaf), head: n.id == t.maxID,
			nest: n.nest, fork: n.fork, pending: n.pending, source: n.source, writer: n.writer, interrupt: n.interrupt}
		row, ok := p.rows[k]
		if !ok {
			row = renderRow(th, k)
			p.rows[k] = row
		}
		out = append(out, row)
	}
	return out
}

// renderRow draws one checkpoint: fork rails, a marker (▶ cursor, ● on the
// current branch, ○ off it), id, source, the nodes that wrote it, a pause
// mark, and the time when there is room.
func renderRow(th *themes.Theme, k rowKey) string {
	n, w := k.n, k.w
	var rail strings.Builder
	nest := k.nest
	if nest > 6 {
		rail.WriteString("┆")
		nest = 6
	}
	for i := 0; i < nest; i++ {
		if i == nest-1 && k.fork {
			rail.WriteString("├─")
		} else {
			rail.WriteString("│ ")
		}
	}
	marker := "○"
	if k.onBranch {
		marker = "●"
	}
	if k.cursor {
		marker = "▶"
	}
	src := trunc(k.source, 6)
	railS := rail.String()
	avail := max(w-width(railS), 1)
	right := ""
	if !n.at.IsZero() && avail >= 34 {
		right = " " + n.at.Local().Format("15:04:05")
	}
	writer := k.writer
	if k.interrupt != "" {
		writer += " ⏸"
	} else if k.pending > 0 && k.head {
		writer += " …"
	}
	idPart := fmt.Sprintf("%s %-4s ", marker, fmt.Sprintf("@%d", n.id))
	srcPart := src + strings.Repeat(" ", max(6-width(src), 0)) + " "
	if right != "" {
		writer = fit(writer, max(avail-width(idPart)-width(srcPart)-width(right), 1))
	}
	plain := idPart + srcPart + writer + right
	switch {
	case k.cursor:
		return th.Rail.Render(railS) + th.Cursor.Render(fit(plain, avail))
	case !k.onBranch:
		return th.Rail.Render(railS) + th.OffBranch.Render(trunc(plain, avail))
	}
	srcStyle := th.SourceLoop
	switch k.source {
	case "input":
		srcStyle = th.SourceInput
	case "fork", "replay":
		srcStyle = th.SourceFork
	case "update":
		srcStyle = th.SourceUpdate
	}
	body := th.OnBranch.Render(idPart) + srcStyle.Render(srcPart)
	if strings.HasSuffix(writer, "⏸") {
		body += th.OnBranch.Render(strings.TrimSuffix(writer, "⏸")) + th.Paused.Render("⏸")
	} else {
		body += th.OnBranch.Render(writer)
	}
	body += th.Muted.Render(right)
	return th.Rail.Render(railS) + trunc(body, avail)
}

// timelineContent is the timeline pane's lines, or what to say instead.
func (m *Model) timelineContent() []string {
	th := m.th
	switch {
	case m.thread == "":
		return []string{th.Muted.Render("No thread open."), th.Muted.Render("t lists threads.")}
	case m.tree.len() == 0 && m.loading:
		return []string{th.Muted.Render("loading…")}
	case m.tree.len() == 0:
		return append([]string{th.Text.Render("No checkpoints yet.")}, wrapStyled(th.Muted, "Press i and type the customer's message to start this thread.", m.tl.w)...)
	}
	return m.tl.lines(m.tree, th, m.themeGen)
}
