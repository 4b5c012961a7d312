package tui

import "rewind/engine"

// scroller shows a window of pre-rendered lines: setting content is O(1)
// and a view is O(height), so no keypress re-measures a whole transcript.
type scroller struct {
	lines []string
	off   int
	h     int
}

func (s *scroller) set(lines []string, off int) {
	s.lines = lines
	s.off = off
	s.clamp()
}

func (s *scroller) maxOff() int { return max(len(s.lines)-s.h, 0) }

func (s *scroller) clamp() { s.off = min(max(s.off, 0), s.maxOff()) }

func (s *scroller) by(n int) {
	s.off += n
	s.clamp()
}

func (s *scroller) atBottom() bool { return s.off >= s.maxOff() }

func (s *scroller) view() []string {
	end := min(s.off+s.h, len(s.lines))
	if s.off >= end {
		return nil
	}
	return s.lines[s.off:end]
}

// contentPane is one of the conversation, state and inspector panes: a
// scroller plus the key of what its lines were rendered from, so they are
// re-rendered only when the checkpoint, width, folding or theme changes.
type contentPane struct {
	scroll scroller
	w, h   int
	key    paneKey
}

type paneKey struct {
	d      *detail
	w      int
	unfold bool
	theme  int
	costs  *engine.Costs
}

func (p *contentPane) SetSize(w, h int) {
	p.w, p.h = max(w, 1), max(h, 0)
	p.scroll.h = p.h
	p.scroll.clamp()
}
