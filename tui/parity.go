package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// LangGraph Studio parity in the thread view: replay (replay.go), edit
// state (editstate.go), compare (compare.go) and the graph view
// (graphview.go).

// parity is those features as one component of the thread view. Its
// keys are the thread view's (threadKeyTable's helpParity rows, copied
// when the model is built, so a rebound key is its new name here too);
// the root routes them in a parKeyMsg, with what it knows of the cursor.
// Its Update opens their dialogs and takes their Cmds' answers, and
// returns a parOutcome: what the root is to show or do. Between keys it
// keeps the compare mark and the state edit under way.
type parity struct {
	sess   *session // read only: the chain open and how to reach the store
	keys   parityKeys
	window int // the models' context window, tokens (what the model saw)

	// mark is the checkpoint m marked on markThread ("": none).
	mark       string
	markThread string
	// edit is the state edit under way (editstate.go).
	edit *stateEdit
}

// parityKeys are the parity rows of threadKeyTable, as bound.
type parityKeys struct {
	Replay, EditState, Mark, Compare, Graph, Prompt key.Binding

	resume key.Binding // named in what a stored edit says (r resumes it)
	graph  graphKeys   // the graph view's, with the thread view's h/l
}

func newParity(s *session, tk threadKeys, window int) parity {
	return parity{sess: s, window: window, keys: parityKeys{
		Replay: tk.Replay, EditState: tk.EditState, Mark: tk.Mark, Compare: tk.Compare, Graph: tk.Graph, Prompt: tk.Prompt,
		resume: tk.Resume, graph: newGraphKeys(tk),
	}}
}

// parKeyMsg is a key of the thread view for the parity features, with
// what the root knows that they need.
type parKeyMsg struct {
	key    tea.KeyMsg
	cursor string  // the checkpoint under the cursor ("": none)
	cur    *detail // the checkpoint shown (loaded; may not be the cursor's yet)
	busy   bool    // a run is under way
}

// parOutcome is what the parity features ask of the root.
type parOutcome struct {
	handled bool     // the key was theirs
	open    dialog   // a dialog to show
	say     flashMsg // what the status line says now (text "": nothing)
	replay  bool     // p: ask to replay here (replay.go)
	stored  string   // an edit stored as this checkpoint of the chain open: go to it
}

// Update takes a parKeyMsg and the answers of the features' Cmds.
func (p *parity) Update(msg tea.Msg) (parOutcome, tea.Cmd) {
	switch msg := msg.(type) {
	case parKeyMsg:
		return p.onKey(msg)
	case editFileMsg, editedMsg, editStoredMsg, editDroppedMsg:
		return p.onEditMsg(msg)
	}
	return parOutcome{}, nil
}

func (p *parity) onKey(msg parKeyMsg) (parOutcome, tea.Cmd) {
	k := p.keys
	switch {
	case key.Matches(msg.key, k.Replay):
		return parOutcome{handled: true, replay: true}, nil
	case key.Matches(msg.key, k.EditState):
		return p.openEditState(msg), nil
	case key.Matches(msg.key, k.Mark):
		return p.toggleMark(msg.cursor), nil
	case key.Matches(msg.key, k.Compare):
		return p.openCompare(msg.cursor)
	case key.Matches(msg.key, k.Graph):
		return p.openGraph(msg), nil
	case key.Matches(msg.key, k.Prompt):
		return p.openSaw(msg.cursor)
	}
	return parOutcome{}, nil
}

// say is a handled key's outcome that says text.
func say(text string, isErr bool) parOutcome {
	return parOutcome{handled: true, say: flashMsg{text, isErr}}
}

// SetSize: the features draw in dialogs, which the root sizes; nothing
// of theirs is drawn in the thread view's room.
func (p *parity) SetSize(int, int) {}

// ShortHelp is the parity keys (the thread view's footer and ? list them
// from threadKeyTable, with the thread view's other keys).
func (p *parity) ShortHelp() []key.Binding {
	k := p.keys
	return []key.Binding{k.Replay, k.EditState, k.Mark, k.Compare, k.Graph, k.Prompt}
}

func (p *parity) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// editing is the state edit under way (nil: none, it ended).
func (p *parity) editing(ed *stateEdit) { p.edit = ed }

// statesMissing says a visible row has no state read for the current
// listing yet.
func (l *threadList) statesMissing() bool {
	if !l.loaded || l.err != nil {
		return false
	}
	for i := l.off; i < len(l.rows) && i < l.off+max(l.h, 1); i++ {
		if l.states[l.rows[i].id].gen != l.gen {
			return true
		}
	}
	return false
}

// splitRunes: Bubble Tea v1 may deliver fast-typed keys as one message
// ("jjj"); a list box takes each rune as its own key. It returns the keys
// one by one, or nil when msg is a single key.
func splitRunes(msg tea.Msg) []tea.KeyMsg {
	k, ok := msg.(tea.KeyMsg)
	if !ok || k.Type != tea.KeyRunes || len(k.Runes) < 2 || k.Paste {
		return nil
	}
	out := make([]tea.KeyMsg, len(k.Runes))
	for i, r := range k.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}
	}
	return out
}

// eachKey runs update on every key of a split message, stopping when the
// box closes.
func eachKey(keys []tea.KeyMsg, update func(tea.Msg) (bool, tea.Cmd)) (bool, tea.Cmd) {
	var cmds []tea.Cmd
	for _, k := range keys {
		done, cmd := update(k)
		cmds = append(cmds, cmd)
		if done {
			return true, tea.Batch(cmds...)
		}
	}
	return false, tea.Batch(cmds...)
}
