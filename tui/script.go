package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/themes"
	"rewind/tui/termtext"
)

// scriptPanel is a lesson's script beside the thread view: the steps (what
// to press, what to look at) and the verdict line at the bottom. On a
// screen wide enough it takes a column of its own and the panes shrink;
// below that it is drawn over the right of the panes. s toggles it.
type scriptPanel struct {
	lesson  Lesson
	verdict LessonVerdict
	hidden  bool
	th      *themes.Theme
	w, h    int
	lines   []string // the framed panel, rendered once per size and theme
}

func newScriptPanel(l Lesson, v LessonVerdict) *scriptPanel {
	return &scriptPanel{lesson: l, verdict: v}
}

// panelWidth is the panel's width on a screen w wide.
func panelWidth(w int) int { return min(max(w*30/100, 28), 44) }

// shrinks says whether the panel takes a column of its own (else it
// overlays the panes) on a screen w wide.
func (p *scriptPanel) shrinks(w int) bool { return w-panelWidth(w) >= minWidth }

// shown says whether the panel is drawn.
func (p *scriptPanel) shown() bool { return p != nil && !p.hidden }

// shrinkBy is how much narrower the panes are laid out on a screen w wide.
func (p *scriptPanel) shrinkBy(w int) int {
	if p.shown() && p.shrinks(w) {
		return panelWidth(w)
	}
	return 0
}

// SetSize sizes the panel for a screen w wide and a body h rows high.
func (p *scriptPanel) SetSize(w, h int) {
	if p == nil {
		return
	}
	p.w, p.h = panelWidth(w), h
	p.render(p.th)
}

// render draws the panel's lines for its size and theme.
func (p *scriptPanel) render(th *themes.Theme) {
	p.th = th
	if th == nil || p.w < 4 || p.h < 3 {
		p.lines = nil
		return
	}
	inner := p.w - 2
	var head, body []string
	add := func(to *[]string, text, indent string, st styleT) {
		for _, l := range wrap(termtext.Line(text), max(inner-width(indent), 8)) {
			*to = append(*to, indent+st.Render(l))
		}
	}
	l := p.lesson
	add(&head, l.Title, "", th.Heading)
	add(&head, l.Proves, "", th.Muted)
	for i, s := range l.Steps {
		body = append(body, "")
		num := fmt.Sprintf("%d. ", i+1)
		first := true
		for _, line := range wrap(termtext.Line(s.Do), max(inner-3, 8)) {
			lead := "   "
			if first {
				lead, first = th.Accent.Render(num), false
			}
			body = append(body, lead+th.Strong.Render(line))
		}
		add(&body, "→ "+s.See, "   ", th.Text)
	}
	vst := th.Success
	if !p.verdict.Passed {
		vst = th.Error
	}
	var foot []string
	for _, line := range wrap(termtext.Line(p.verdict.Line), max(inner, 8)) {
		foot = append(foot, vst.Render(line))
	}
	room := p.h - 2
	// A long verdict (the kill lesson's names every kill point) keeps a
	// third of the panel; the status log (L) holds it whole.
	if most := max(room/3, 2); len(foot) > most {
		foot = append(foot[:most-1], th.Muted.Render("… the whole verdict: L"))
	}
	// The steps come first: the title and what the lesson proves go when
	// the panel is short of rows.
	if space := room - len(foot) - 1; len(head)+len(body) <= space {
		body = append(head, body...)
	} else if len(body) > 0 {
		body = body[1:] // the blank line before the first step
	}
	if space := room - len(foot) - 1; len(body) > space {
		body = append(body[:max(space-1, 0)], th.Muted.Render("… s hides this panel"))
	}
	for len(body) < room-len(foot) {
		body = append(body, "")
	}
	title := "Lesson " + termtext.Line(l.Name) + " · s hides"
	p.lines = strings.Split(frame(title, append(body, foot...), p.w, p.h, false, th.Border, th.PaneTitle), "\n")
}

// draw puts the panel beside (shrink) or over (overlay) the body rows of a
// screen w wide.
func (p *scriptPanel) draw(rows []string, w int) []string {
	if !p.shown() || len(p.lines) == 0 {
		return rows
	}
	if p.shrinks(w) {
		for i := range rows {
			if i < len(p.lines) {
				rows[i] += p.lines[i]
			}
		}
		return rows
	}
	x := max(w-p.w, 0)
	for i := range rows {
		if i < len(p.lines) {
			reset := ""
			if strings.Contains(rows[i], "\x1b") {
				reset = "\x1b[0m" // a cut may leave the row's style open
			}
			rows[i] = fit(ansi.Truncate(rows[i], x, ""), x) + reset + p.lines[i]
		}
	}
	return rows
}

// toggleScript shows or hides the lesson's script panel.
func (m *Model) toggleScript() tea.Cmd {
	if m.script == nil {
		return m.setFlash("no lesson script here: rewind demo opens a lesson with its script", false)
	}
	m.script.hidden = !m.script.hidden
	m.relayout()
	return nil
}
