package tui

// The browser's writes pane: what the superstep from the checkpoint under
// the cursor stored, grouped by task; LangGraph's special writes named
// (error, scheduled, interrupt, resume), an error's text and the values a
// task interrupted with shown under it.

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// browseWrites draws one checkpoint's writes.
type browseWrites struct {
	theme  *themes.Theme
	pane   linePane
	ws     []browse.TaskWrites
	read   bool
	drawnW int
}

func newBrowseWrites(th *themes.Theme) *browseWrites {
	return &browseWrites{theme: th, pane: newLinePane()}
}

// KeyMap is the pane's scrolling keys.
func (p *browseWrites) KeyMap() paneKeys { return p.pane.keys }

// SetSize sets the pane's size and redraws for the width.
func (p *browseWrites) SetSize(w, h int) {
	p.pane.SetSize(w, h)
	if w != p.drawnW {
		p.draw(true)
	}
}

// SetWrites shows ws; read false: not read yet.
func (p *browseWrites) SetWrites(ws []browse.TaskWrites, read bool) {
	p.ws, p.read = ws, read
	p.draw(false)
}

// Update scrolls.
func (p *browseWrites) Update(msg tea.Msg) bool {
	if k, ok := msg.(tea.KeyMsg); ok {
		return p.pane.Update(k)
	}
	return false
}

// View is the visible part.
func (p *browseWrites) View() string { return p.pane.View() }

func (p *browseWrites) draw(keep bool) {
	p.drawnW = p.pane.w
	if !p.read {
		p.pane.setLines([]string{p.theme.Muted.Render("reading…")}, false)
		return
	}
	p.pane.setLines(writesLines(p.theme, p.ws, p.pane.w), keep)
}

// writesLines draws ws at width w.
func writesLines(th *themes.Theme, ws []browse.TaskWrites, w int) []string {
	if len(ws) == 0 {
		return []string{th.Muted.Render("no writes stored for the superstep from this checkpoint")}
	}
	var out []string
	for _, tw := range ws {
		who := termtext.Name(tw.Who())
		head := th.Strong.Render(who) + th.Muted.Render(" task "+lgShortID(tw.Task)+fmt.Sprintf(" · %d write(s)", len(tw.Writes)))
		switch {
		case tw.Error != "":
			head = th.Error.Render("✗ ") + head
		case len(tw.Interrupts) > 0:
			head = th.Paused.Render("⏸ ") + head
		default:
			head = th.Success.Render("✓ ") + head
		}
		out = append(out, head)
		for _, wr := range tw.Writes {
			ch := termtext.Line(wr.Channel)
			if wr.Kind != "" {
				ch = th.Warning.Render("["+termtext.Line(wr.Kind)+"]") + " " + ch
			}
			out = append(out, fmt.Sprintf("  %3d %s = %s", wr.Idx, ch, oneLine(wr.Value)))
		}
		if tw.Error != "" {
			out = append(out, wrapText(th.Error.Render("error: ")+termtext.Line(tw.Error), w, "    ")...)
		}
		for _, in := range tw.Interrupts {
			out = append(out, "    "+th.Paused.Render("interrupt")+" "+th.Muted.Render(lgShortID(in.ID))+": "+oneLine(in.Value))
		}
	}
	return out
}
