package tui

// The browser's threads screen: one row per chain, a thread's root graph
// and under it the runs of its subgraphs, with the checkpoint each runs
// from.

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

type threadsKeys struct {
	Up, Down, Open key.Binding
}

func (k threadsKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Down, k.Up, k.Open} }
func (k threadsKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// browseThreads lists the chains.
type browseThreads struct {
	theme  *themes.Theme
	keys   threadsKeys
	loaded bool
	ts     []browse.Thread
	status map[string]browse.Status // by thread, as SetThreads was given it
	rows   []browse.Chain
	cells  []threadCells
	row    int
	w, h   int
	cache  string
	dirty  bool
}

// threadCells is one row of the list, in columns: the chain's name, where
// it stands (a thread's status, a subgraph run's parent checkpoint), its
// checkpoints, when it was last written, and an error's text (last, cut
// to what fits).
type threadCells struct {
	name, state, detail string
	count               int
	updated             time.Time
}

func newBrowseThreads(th *themes.Theme) *browseThreads {
	return &browseThreads{theme: th, w: 80, h: 20, dirty: true, keys: threadsKeys{
		Up: bind("up", "up", "k"), Down: bind("down", "down", "j"), Open: bind("open", "enter", "right", "l"),
	}}
}

// KeyMap is the list's keys.
func (p *browseThreads) KeyMap() threadsKeys { return p.keys }

// SetSize sets the screen's size.
func (p *browseThreads) SetSize(w, h int) { p.w, p.h, p.dirty = max(1, w), max(1, h), true }

// SetThreads shows ts, each with its status (none when not in status).
// A thread counts the checkpoints of its root chain, each subgraph run
// its own (as `rewind threads` prints them).
func (p *browseThreads) SetThreads(ts []browse.Thread, status map[string]browse.Status) {
	p.loaded, p.ts, p.status, p.dirty = true, ts, status, true
	p.rows, p.cells = nil, nil
	for _, t := range ts {
		for _, ns := range t.Namespaces {
			c := threadCells{name: termtext.Name(t.ID), count: ns.Checkpoints, updated: ns.UpdatedAt}
			if ns.NS != "" {
				c.name = "  └ " + lgShortNS(ns.NS)
				if ns.ParentCheckpoint != "" {
					c.state = "from @" + lgShortID(ns.ParentCheckpoint)
				}
			} else if st, ok := status[t.ID]; ok {
				c.state, c.detail = p.statusCells(st)
			}
			p.rows, p.cells = append(p.rows, browse.Chain{Thread: t.ID, NS: ns.NS}), append(p.cells, c)
		}
	}
	p.row = max(0, min(p.row, len(p.rows)-1))
}

// statusCells is a thread's status, as `rewind threads` words it: idle,
// interrupted at (or before) its nodes, error at its node; detail is the
// error's first line.
func (p *browseThreads) statusCells(st browse.Status) (state, detail string) {
	text := termtext.Name(st.Text())
	switch st.State {
	case browse.StateError:
		line, _, _ := strings.Cut(st.Error, "\n")
		return p.theme.Error.Render(text), termtext.Line(line)
	case browse.StateInterrupted:
		return p.theme.Paused.Render(text), ""
	}
	return text, ""
}

// Namespaces are chain c's thread's namespaces.
func (p *browseThreads) Namespaces(thread string) []browse.Namespace {
	for _, t := range p.ts {
		if t.ID == thread {
			return t.Namespaces
		}
	}
	return nil
}

// Select puts the cursor on chain c; false when it is not listed.
func (p *browseThreads) Select(c browse.Chain) bool {
	for i, r := range p.rows {
		if r == c {
			p.row, p.dirty = i, true
			return true
		}
	}
	return false
}

// Update moves the cursor; open is the chain to open on enter.
func (p *browseThreads) Update(msg tea.Msg) (handled bool, open *browse.Chain) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, p.keys.Up):
		p.row = max(0, p.row-1)
	case key.Matches(k, p.keys.Down):
		p.row = max(0, min(len(p.rows)-1, p.row+1))
	case key.Matches(k, p.keys.Open):
		if p.row < len(p.rows) {
			c := p.rows[p.row]
			return true, &c
		}
	default:
		return false, nil
	}
	p.dirty = true
	return true, nil
}

// Forms of the count and date columns, the first that fits the screen:
// the date goes short, then goes, then the count is the number alone.
var threadForms = []struct{ count, date string }{
	{"%d checkpoints", "2006-01-02 15:04"}, {"%d checkpoints", "01-02 15:04"}, {"%d checkpoints", ""}, {"%d", ""},
}

// View draws the list in columns that fit the screen (threadForms); the
// error's text takes what is left.
func (p *browseThreads) View() string {
	if !p.dirty {
		return p.cache
	}
	p.dirty = false
	var out []string
	switch {
	case !p.loaded:
		out = []string{"  reading the threads…"}
	case len(p.rows) == 0:
		out = []string{"  no threads in this database"}
	}
	first := max(0, p.row-p.h+1)
	last := min(len(p.rows), first+p.h-len(out))
	// Columns as wide as their widest cell on screen (a name at most 40
	// cells: a longer one pushes its own row), by cells, not runes: an id
	// in CJK or emoji is two a character.
	var nameW, stateW, most int
	for _, c := range p.cells[first:last] {
		nameW = max(nameW, min(40, width(c.name)))
		stateW, most = max(stateW, width(c.state)), max(most, c.count)
	}
	room := p.w - 2
	form := threadForms[len(threadForms)-1]
	for _, f := range threadForms {
		need := nameW + 1 + stateW + 1 + len(fmt.Sprintf(f.count, most))
		if f.date != "" {
			need += 1 + len(f.date)
		}
		if need <= room {
			form = f
			break
		}
	}
	countW := len(fmt.Sprintf(form.count, most))
	cell := func(s string, w int) string { return s + strings.Repeat(" ", max(0, w-width(s))) }
	for i := first; i < last; i++ {
		c := p.cells[i]
		line := cell(c.name, nameW)
		if stateW > 0 {
			line += " " + cell(c.state, stateW)
		}
		line += " " + cell(fmt.Sprintf(form.count, c.count), countW)
		if form.date != "" {
			line += " " + c.updated.UTC().Format(form.date)
		}
		line = strings.TrimRight(line, " ")
		if c.detail != "" && room-width(line) >= 16 {
			line += " · " + ansi.Truncate(c.detail, room-width(line)-3, "…")
		}
		line = ansi.Truncate(line, room, "…")
		if i == p.row {
			out = append(out, p.theme.Cursor.Render("▸ "+line))
		} else {
			out = append(out, "  "+line)
		}
	}
	p.cache = strings.Join(out, "\n")
	return p.cache
}
