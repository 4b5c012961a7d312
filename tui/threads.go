package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

// threadList is the threads screen: the store's threads to open, create and
// delete. It owns its rows, selection and keys; what a key asks of the
// root (open, delete, a new thread) comes back from Update as a listAction.
type threadList struct {
	keys    threadListKeys
	threads []browse.Thread
	loaded  bool
	err     error
	sel     int
	off     int
	w, h    int
	// states are the rows' run status and last input, read lazily
	// (threadstate.go) for listing gen.
	states   map[string]threadState
	gen      int
	inFlight int // reads of states under way
}

func newThreadList() threadList { return threadList{keys: newThreadListKeys()} }

// listAction is what a key on the threads screen asks of the root.
type listAction int

const (
	listNone listAction = iota
	listQuit
	listHelp
	listLog
	listRefresh
	listBack
	listOpen
	listNew
	listDelete
)

// Update takes a key: it moves the selection itself and returns what the
// root must do (listOpen and listDelete concern selected()).
func (l *threadList) Update(m tea.Msg) (listAction, tea.Cmd) {
	msg, ok := m.(tea.KeyMsg)
	if !ok {
		return listNone, nil
	}
	k := l.keys
	switch {
	case key.Matches(msg, k.Quit):
		return listQuit, nil
	case key.Matches(msg, k.Help):
		return listHelp, nil
	case key.Matches(msg, k.Log):
		return listLog, nil
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.Refresh):
		return listRefresh, nil
	case key.Matches(msg, k.Back):
		return listBack, nil
	case key.Matches(msg, k.Open):
		return listOpen, nil
	case key.Matches(msg, k.New):
		return listNew, nil
	case key.Matches(msg, k.Delete):
		return listDelete, nil
	}
	return listNone, nil
}

// View frames the list (the screen but its status bar and key line);
// current is the thread open in the thread view, label the store's.
func (l *threadList) View(th *themes.Theme, current, label string, w, h int) string {
	title := fmt.Sprintf("Threads · %s", termtext.Line(label))
	if n := len(l.threads); n > 0 {
		title += fmt.Sprintf(" · %d", n)
	}
	return frame(title, l.lines(th, current), w, h, true, th.BorderFocused, th.PaneTitleFocused)
}

func (l *threadList) ShortHelp() []key.Binding  { return l.keys.ShortHelp() }
func (l *threadList) FullHelp() [][]key.Binding { return l.keys.FullHelp() }

func (l *threadList) SetSize(w, h int) {
	l.w, l.h = w, h
	l.clamp()
}

func (l *threadList) set(ts []browse.Thread, err error, current string) {
	l.loaded, l.err = true, err
	l.gen++ // the states shown stay until they are read again
	if err != nil {
		return
	}
	prev := ""
	if l.sel < len(l.threads) {
		prev = l.threads[l.sel].ID
	}
	l.threads = ts
	l.sel = 0
	for i, t := range ts {
		if t.ID == prev || (prev == "" && t.ID == current) {
			l.sel = i
		}
	}
	l.clamp()
}

func (l *threadList) move(d int) {
	l.sel += d
	l.clamp()
}

func (l *threadList) clamp() {
	l.sel = min(max(l.sel, 0), max(len(l.threads)-1, 0))
	rows := max(l.h, 1)
	if l.sel < l.off {
		l.off = l.sel
	}
	if l.sel >= l.off+rows {
		l.off = l.sel - rows + 1
	}
	l.off = min(max(l.off, 0), max(len(l.threads)-rows, 0))
}

func (l *threadList) selected() (browse.Thread, bool) {
	if l.sel < len(l.threads) {
		return l.threads[l.sel], true
	}
	return browse.Thread{}, false
}

func (l *threadList) find(id string) bool {
	for _, t := range l.threads {
		if t.ID == id {
			return true
		}
	}
	return false
}

// lines renders the visible rows.
func (l *threadList) lines(th *themes.Theme, current string) []string {
	switch {
	case !l.loaded:
		return []string{th.Muted.Render("loading threads…")}
	case l.err != nil:
		return append([]string{th.Error.Render("cannot list threads:")}, wrap(l.err.Error(), l.w)...)
	case len(l.threads) == 0:
		return []string{
			th.Text.Render("No threads yet."),
			"",
			th.Muted.Render("Press n to start one: give it a name, the customer's first"),
			th.Muted.Render("message and, if you like, an attachment reference."),
		}
	}
	idW := 12
	for _, t := range l.threads {
		idW = max(idW, min(width(termtext.Name(t.ID)), l.w/2))
	}
	stW := 1
	for _, t := range l.threads {
		stW = max(stW, width(l.states[t.ID].text()))
	}
	// The last input keeps room to be read (issue 33: a long thread name
	// left it two characters): the latest checkpoint and the date go
	// first, then long names are cut, down to 12 cells.
	const minInput, fixed, latestW = 24, 26, 33
	latest := l.w >= 110
	if latest && l.w-fixed-idW-stW-latestW < minInput {
		latest = false
	}
	idW = max(min(idW, l.w-fixed-stW-minInput), 12)
	var out []string
	for i := l.off; i < len(l.threads) && i < l.off+l.h; i++ {
		t := l.threads[i]
		mark := "  "
		if t.ID == current {
			mark = "● "
		}
		when := ""
		if !t.UpdatedAt.IsZero() {
			when = t.UpdatedAt.Local().Format("2006-01-02 15:04")
		}
		st := l.states[t.ID]
		row := fmt.Sprintf("%s%s  %s %5d checkpoints", mark, fit(termtext.Name(t.ID), idW), fit(st.text(), stW), t.Checkpoints)
		if latest {
			row += fmt.Sprintf(" · latest @%-5s %s", termtext.Line(t.Latest), when)
		}
		row += "  " + quoteInput(st.lastInput)
		row = strings.TrimRight(row, " ")
		if i == l.sel {
			out = append(out, th.Selected.Render(fit("▶ "+row, l.w)))
		} else {
			out = append(out, th.Text.Render(trunc("  "+row, l.w)))
		}
	}
	return out
}
