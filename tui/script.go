package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/themes"
	"rewind/tui/termtext"
)

// scriptPanel is a lesson's script beside the thread view: the steps (what
// to press, what to look at) and the verdict line at the bottom. On a
// screen wide enough it takes a column of its own and the panes shrink;
// below that it is drawn over the right of the panes. s turns its pages of
// steps, then hides it, then shows it again.
type scriptPanel struct {
	lesson  Lesson
	verdict LessonVerdict
	hidden  bool
	// page is the page of steps shown, of pages (steps that do not fit
	// the panel's rows go on further pages).
	page, pages int
	theme       *themes.Theme
	w, h        int
	lines       []string // the framed panel, rendered once per size and theme
	// turn is its key, the thread view's (s): threadKeys.Script.
	turn key.Binding
}

func newScriptPanel(l Lesson, v LessonVerdict, turn key.Binding) *scriptPanel {
	return &scriptPanel{lesson: l, verdict: v, turn: turn}
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
	p.render(p.theme)
}

// render draws the panel's lines for its size and theme.
func (p *scriptPanel) render(th *themes.Theme) {
	p.theme = th
	if th == nil || p.w < 4 || p.h < 3 {
		p.lines = nil
		return
	}
	inner := p.w - 2
	wrapped := func(text, indent string, st styleT) []string {
		var out []string
		for _, l := range wrap(termtext.Line(text), max(inner-width(indent), 8)) {
			out = append(out, indent+st.Render(l))
		}
		return out
	}
	l := p.lesson
	head := append(wrapped(l.Title, "", th.Heading), wrapped(l.Proves, "", th.Muted)...)
	// A step is a block: what to press, then what to look at.
	var steps [][]string
	for i, s := range l.Steps {
		var b []string
		for j, line := range wrap(termtext.Line(s.Do), max(inner-3, 8)) {
			lead := "   "
			if j == 0 {
				lead = th.Accent.Render(fmt.Sprintf("%d. ", i+1))
			}
			b = append(b, lead+th.Strong.Render(line))
		}
		steps = append(steps, append(b, wrapped("→ "+s.See, "   ", th.Text)...))
	}
	vst := th.Success
	if !p.verdict.Passed {
		vst = th.Error
	}
	foot := wrapped(p.verdict.Line, "", vst)
	room := p.h - 2
	// A long verdict (the kill lesson's names every kill point) keeps a
	// third of the panel; the status log (L) holds it whole.
	if most := max(room/3, 2); len(foot) > most {
		foot = append(foot[:most-1], th.Muted.Render("… the whole verdict: L"))
	}
	space := max(room-len(foot)-1, 1) // a blank row above the verdict
	// The steps come first: the title and what the lesson proves go when
	// all does not fit. Steps that do not fit go on further pages, whole
	// when they can: s turns the pages, then hides the panel.
	var pages [][]string
	cur := []string{}
	all := len(head)
	for _, b := range steps {
		all += 1 + len(b)
	}
	if all <= space {
		cur = append(cur, head...)
	}
	size := space
	if all > space {
		size = max(space-1, 1) // a row for the hint
	}
	for _, b := range steps {
		if len(cur) > 0 && len(cur)+1+len(b) > size {
			pages, cur = append(pages, cur), []string{}
		}
		if len(cur) > 0 {
			cur = append(cur, "")
		}
		for len(cur)+len(b) > size { // a step longer than a page
			n := size - len(cur)
			cur = append(cur, b[:n]...)
			pages, cur, b = append(pages, cur), []string{}, b[n:]
		}
		cur = append(cur, b...)
	}
	pages = append(pages, cur)
	p.pages = len(pages)
	p.page = min(p.page, p.pages-1)
	body := pages[p.page]
	title := "Lesson " + termtext.Line(l.Name)
	switch {
	case p.pages == 1:
		title += " · s hides"
	case p.page < p.pages-1:
		title += fmt.Sprintf(" %d/%d", p.page+1, p.pages)
		body = append(body, th.Muted.Render("… s: the next steps"))
	default:
		title += fmt.Sprintf(" %d/%d", p.page+1, p.pages)
		if len(body) < room-len(foot)-1 {
			body = append(body, "", th.Muted.Render("s hides this panel"))
		}
	}
	for len(body) < room-len(foot) {
		body = append(body, "")
	}
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

// toggle turns the panel's next page of steps, or hides it after the last,
// or shows it again; relayout says whether its column came or went.
func (p *scriptPanel) toggle() (relayout bool) {
	switch {
	case p.hidden:
		p.hidden, p.page = false, 0
	case p.page < p.pages-1:
		p.page++
		p.render(p.theme)
		return false
	default:
		p.hidden = true
	}
	return true
}

// Update takes its key: the next page of steps, or hide, or show again;
// relayout says whether its column came or went. With no lesson (a nil
// panel) the status line says there is no script here.
func (p *scriptPanel) Update(msg tea.Msg) (relayout bool, cmd tea.Cmd) {
	if p == nil {
		return false, flash("no lesson script here: rewind demo opens a lesson with its script", false)
	}
	if k, ok := msg.(tea.KeyMsg); !ok || !key.Matches(k, p.turn) {
		return false, nil
	}
	return p.toggle(), nil
}

// ShortHelp and FullHelp: its key (none with no lesson).
func (p *scriptPanel) ShortHelp() []key.Binding {
	if p == nil {
		return nil
	}
	return []key.Binding{p.turn}
}

func (p *scriptPanel) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }
