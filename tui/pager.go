package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
)

// pager shows the help (?) or the status log (L) over the screen, scrolled
// by its own keys, until esc, q, ? or L (or ctrl+c) closes it: a key it
// does not bind (one of a burst held down) leaves it open. The root gives it the lines
// (helpLines, logLines: they name the current screen's keys and the
// status log).
type pager struct {
	help, log bool // which one is open (neither: closed)
	off       int  // the first line shown
	keys      pagerKeys
	h         int // the screen's height
}

func newPager() pager { return pager{keys: newPagerKeys()} }

// SetSize takes the screen's height: the box is as wide as what it shows
// (View).
func (p *pager) SetSize(_, h int) { p.h = h }

// shown is whether the help or the log is open.
func (p *pager) shown() bool { return p.help || p.log }

// room is how many lines of the help or the log fit on the screen.
func (p *pager) room() int { return max(p.h-2-3, 1) }

// open shows the help (help) or the status log, the log at its end (it has
// lines lines).
func (p *pager) open(help bool, lines int) {
	p.help, p.log, p.off = help, !help, 0
	if !help {
		p.off = max(lines-p.room(), 0)
	}
}

// pagerKeyMsg is a key for the pager, which shows lines lines (the root
// gives them at View).
type pagerKeyMsg struct {
	tea.KeyMsg
	lines int
}

// Update scrolls by a key; closed is whether the key closed the pager
// instead. Other keys do nothing.
func (p *pager) Update(m tea.Msg) (closed bool, cmd tea.Cmd) {
	pk, ok := m.(pagerKeyMsg)
	if !ok {
		return false, nil
	}
	msg, lines, k := pk.KeyMsg, pk.lines, p.keys
	maxOff := max(lines-p.room(), 0)
	page := max(p.room()-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		p.off--
	case key.Matches(msg, k.Down):
		p.off++
	case key.Matches(msg, k.PageUp):
		p.off -= page
	case key.Matches(msg, k.PageDown):
		p.off += page
	case key.Matches(msg, k.Top):
		p.off = 0
	case key.Matches(msg, k.Bottom):
		p.off = maxOff
	case key.Matches(msg, k.Close), msg.Type == tea.KeyCtrlC:
		p.help, p.log = false, false
		return true, nil
	}
	p.off = min(max(p.off, 0), maxOff)
	return false, nil
}

// wheel scrolls by the mouse wheel (View clamps it).
func (p *pager) wheel(n int) { p.off = max(p.off+n, 0) }

// View draws the box of title and lines, w wide, scrolled to off.
func (p *pager) View(th *themes.Theme, title string, lines []string, w int) string {
	room := p.room()
	if len(lines) > room {
		off := min(max(p.off, 0), len(lines)-room)
		title += fmt.Sprintf(" · %d–%d of %d · j/k scroll", off+1, off+room, len(lines))
		lines = lines[off : off+room]
	}
	return box(th, title, lines, w)
}

func (p *pager) ShortHelp() []key.Binding  { return p.keys.ShortHelp() }
func (p *pager) FullHelp() [][]key.Binding { return p.keys.FullHelp() }
