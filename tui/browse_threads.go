package tui

// The browser's threads screen: one row per chain, a thread's root graph
// and under it the runs of its subgraphs, with the checkpoint each runs
// from.

import (
	"fmt"
	"strings"

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
	rows   []browse.Chain
	info   []string
	row    int
	w, h   int
	cache  string
	dirty  bool
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

// SetThreads shows ts.
func (p *browseThreads) SetThreads(ts []browse.Thread) {
	p.loaded, p.ts, p.dirty = true, ts, true
	p.rows, p.info = nil, nil
	for _, t := range ts {
		for _, ns := range t.Namespaces {
			info := fmt.Sprintf("%d checkpoints · %s", ns.Checkpoints, ns.UpdatedAt.UTC().Format("2006-01-02 15:04"))
			if ns.NS != "" {
				info += " · runs from @" + lgShortID(ns.ParentCheckpoint)
			}
			p.rows, p.info = append(p.rows, browse.Chain{Thread: t.ID, NS: ns.NS}), append(p.info, info)
		}
	}
	p.row = max(0, min(p.row, len(p.rows)-1))
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

// View draws the list.
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
	for i := first; i < len(p.rows) && len(out) < p.h; i++ {
		c := p.rows[i]
		name := termtext.Name(c.Thread)
		if c.NS != "" {
			name = "  └ " + termtext.Name(c.NS)
		}
		// Padded by cells, not runes: an id in CJK or emoji is two a character.
		pad := strings.Repeat(" ", max(0, 40-width(name)))
		line := ansi.Truncate(name+pad+" "+p.info[i], p.w-2, "…")
		if i == p.row {
			out = append(out, p.theme.Cursor.Render("▸ "+line))
		} else {
			out = append(out, "  "+line)
		}
	}
	p.cache = strings.Join(out, "\n")
	return p.cache
}
