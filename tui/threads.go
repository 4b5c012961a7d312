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
	// rows are what the list shows: each thread, then its subgraph
	// chains (a LangGraph thread's namespaces), each under its parent.
	rows   []listRow
	loaded bool
	err    error
	sel    int
	off    int
	w, h   int
	// states are the rows' run status and last input, read lazily
	// (threadstate.go) for listing gen.
	states   map[string]threadState
	gen      int
	read     int // the newest read applied (threadsMsg.read)
	inFlight int // reads of states under way
	// readOnly: a source rewind cannot write (a LangGraph database), so
	// the empty list does not offer n.
	readOnly bool
}

// listRow is one row: thread t's root chain (sub nil) or its subgraph
// chain sub.
type listRow struct {
	t   int
	id  string
	sub *browse.Namespace
}

// chain is the chain the row opens.
func (r listRow) chain() browse.Chain {
	if r.sub == nil {
		return browse.Chain{Thread: r.id}
	}
	return browse.Chain{Thread: r.id, NS: r.sub.NS}
}

// name is the row's first cell: the thread's name, or the subgraph's
// namespace under it.
func (r listRow) name() string {
	if r.sub == nil {
		return termtext.Name(r.id)
	}
	return "  └ " + lgShortNS(r.sub.NS)
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
	listLoaded // a threadsMsg: the list is read again
)

// Update takes a key or the list read again: it moves the selection
// itself and returns what the root must do (listOpen and listDelete
// concern selected()).
func (l *threadList) Update(m tea.Msg) (listAction, tea.Cmd) {
	switch ts := m.(type) {
	case threadsMsg:
		if ts.read < l.read {
			return listNone, nil // an older read ended after a newer one
		}
		l.read = ts.read
		l.set(ts.threads, ts.err, ts.current)
		return listLoaded, nil
	case threadStateMsg:
		l.takeStates(ts.states)
		return listNone, nil
	}
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
	case key.Matches(msg, k.Top):
		l.move(-len(l.rows))
	case key.Matches(msg, k.Bottom):
		l.move(len(l.rows))
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
// current is the chain open in the thread view, label the store's.
func (l *threadList) View(th *themes.Theme, current browse.Chain, label string, w, h int) string {
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

// thread is the listing of thread id (zero when it is not listed).
func (l *threadList) thread(id string) browse.Thread {
	for _, t := range l.threads {
		if t.ID == id {
			return t
		}
	}
	return browse.Thread{ID: id}
}

func (l *threadList) set(ts []browse.Thread, err error, current browse.Chain) {
	l.loaded, l.err = true, err
	l.gen++ // the states shown stay until they are read again
	if err != nil {
		return
	}
	prev, had := browse.Chain{}, l.sel < len(l.rows)
	if had {
		prev = l.rows[l.sel].chain()
	}
	l.threads, l.rows = ts, nil
	for i, t := range ts {
		l.rows = append(l.rows, listRow{t: i, id: t.ID})
		for j := range t.Namespaces {
			if t.Namespaces[j].NS != "" {
				l.rows = append(l.rows, listRow{t: i, id: t.ID, sub: &t.Namespaces[j]})
			}
		}
	}
	l.sel = 0
	for i, r := range l.rows {
		if c := r.chain(); c == prev || (!had && c == current) {
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
	l.sel = min(max(l.sel, 0), max(len(l.rows)-1, 0))
	rows := max(l.h, 1)
	if l.sel < l.off {
		l.off = l.sel
	}
	if l.sel >= l.off+rows {
		l.off = l.sel - rows + 1
	}
	l.off = min(max(l.off, 0), max(len(l.rows)-rows, 0))
}

// selected is the selected row's thread and the chain the row opens.
func (l *threadList) selected() (browse.Thread, browse.Chain, bool) {
	if l.sel < len(l.rows) {
		r := l.rows[l.sel]
		return l.threads[r.t], r.chain(), true
	}
	return browse.Thread{}, browse.Chain{}, false
}

// checkpoints is how many checkpoints chain c holds (a thread's root
// chain's, as `rewind threads` counts them; a subgraph's its own).
func (l *threadList) checkpoints(c browse.Chain) (int, bool) {
	for _, r := range l.rows {
		switch {
		case r.chain() != c:
		case r.sub != nil:
			return r.sub.Checkpoints, true
		default:
			return rootCheckpoints(l.threads[r.t]), true
		}
	}
	return 0, false
}

// rootCheckpoints is how many checkpoints t's root chain holds: each
// subgraph run's are counted on its own row (Checkpoints counts every
// namespace's).
func rootCheckpoints(t browse.Thread) int {
	if len(t.Namespaces) > 0 && t.Namespaces[0].NS == "" {
		return t.Namespaces[0].Checkpoints
	}
	return t.Checkpoints
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
func (l *threadList) lines(th *themes.Theme, current browse.Chain) []string {
	switch {
	case !l.loaded:
		return []string{th.Muted.Render("loading threads…")}
	case l.err != nil:
		return append([]string{th.Error.Render("cannot list threads:")}, wrap(l.err.Error(), l.w)...)
	case len(l.threads) == 0 && l.readOnly:
		return []string{
			th.Text.Render("No threads in this database."),
			"",
			th.Muted.Render("It is opened read-only: rewind shows the threads another"),
			th.Muted.Render("program wrote here and never starts one."),
		}
	case len(l.threads) == 0:
		return []string{
			th.Text.Render("No threads yet."),
			"",
			th.Muted.Render("Press n to start one: give it a name and its first message."),
		}
	}
	idW := 12
	for _, r := range l.rows {
		idW = max(idW, min(width(r.name()), l.w/2))
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
	for i := l.off; i < len(l.rows) && i < l.off+l.h; i++ {
		r := l.rows[i]
		mark := "  "
		if r.chain() == current {
			mark = "● "
		}
		row := mark + l.rowText(r, idW, stW, latest)
		if i == l.sel {
			out = append(out, th.Selected.Render(fit("▶ "+row, l.w)))
		} else {
			out = append(out, th.Text.Render(trunc("  "+row, l.w)))
		}
	}
	return out
}

// rowText is row r's cells: a thread's name, state, checkpoints, latest
// and last input; a subgraph chain's namespace, its checkpoints and the
// parent's checkpoint it ran from.
func (l *threadList) rowText(r listRow, idW, stW int, latest bool) string {
	if ns := r.sub; ns != nil {
		// No state of its own: its name may take the state's cells too.
		row := fmt.Sprintf("%s %5d checkpoints", fit(r.name(), idW+2+stW), ns.Checkpoints)
		if ns.ParentCheckpoint != "" {
			row += " · from @" + lgShortID(ns.ParentCheckpoint)
		}
		return row
	}
	t := l.threads[r.t]
	when := ""
	if !t.UpdatedAt.IsZero() {
		when = t.UpdatedAt.Local().Format("2006-01-02 15:04")
	}
	st := l.states[t.ID]
	row := fmt.Sprintf("%s  %s %5d checkpoints", fit(r.name(), idW), fit(st.text(), stW), rootCheckpoints(t))
	if latest {
		row += fmt.Sprintf(" · latest @%-5s %s", lgShortID(t.Latest), when)
	}
	row += "  " + quoteInput(st.lastInput)
	return strings.TrimRight(row, " ")
}

// lgShortNS is a namespace as the list shows it: each "node:task" with the
// task's id cut as lgShortID cuts a checkpoint's ("review:43a3a66f…ecc4"),
// a form the CLI's --ns takes back (browse.Match).
func lgShortNS(ns string) string {
	parts := strings.Split(ns, "|")
	for i, part := range parts {
		if node, task, ok := strings.Cut(part, ":"); ok && len(task) > 16 {
			parts[i] = node + ":" + task[:8] + browse.Ellipsis + task[len(task)-4:]
		}
	}
	return termtext.Name(strings.Join(parts, "|"))
}
