package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Edit state (e): choose a channel of the checkpoint under the cursor, edit
// its JSON in $VISUAL/$EDITOR, and store it with Engine.EditState as an
// update checkpoint that keeps the due tasks (r then resumes it). A value
// the channel or the graph refuses stores nothing and can be edited again.

// stateEditor is a Backend that edits state (Engine.EditState).
type stateEditor interface {
	EditState(ctx context.Context, thread string, id int64, channel string, value json.RawMessage, o engine.UpdateOptions) (engine.Checkpoint, error)
}

// parityMsg is a message of the parity features, routed by Update.
type parityMsg interface{ parityMsg() }

// stateEdit is one edit under way: which value, and the file it is in.
type stateEdit struct {
	thread  string
	gen     int
	id      int64
	channel string
	path    string
	orig    []byte
}

type (
	// editFileMsg: the value is in its temp file, ready for the editor.
	editFileMsg struct {
		ed  *stateEdit
		err error
	}
	// editedMsg: the editor closed.
	editedMsg struct {
		ed  *stateEdit
		err error
	}
	// editStoredMsg: EditState answered (unchanged: the file was not
	// changed, nothing was stored).
	editStoredMsg struct {
		ed        *stateEdit
		cp        engine.Checkpoint
		unchanged bool
		err       error
	}
)

func (editFileMsg) parityMsg()   {}
func (editedMsg) parityMsg()     {}
func (editStoredMsg) parityMsg() {}

// editorCommand is the user's editor: $VISUAL, then $EDITOR, then vi; it
// may carry arguments ("code -w").
func editorCommand(path string) *exec.Cmd {
	ed := strings.TrimSpace(os.Getenv("VISUAL"))
	if ed == "" {
		ed = strings.TrimSpace(os.Getenv("EDITOR"))
	}
	if ed == "" {
		ed = "vi"
	}
	f := strings.Fields(ed)
	return exec.Command(f[0], append(f[1:], path)...)
}

// openEditState lists the channels of the checkpoint under the cursor.
func (p *parity) openEditState(msg parKeyMsg) parOutcome {
	if _, ok := p.sess.deps.Backend.(stateEditor); !ok {
		return say("this store cannot be edited from here", true)
	}
	if msg.busy {
		return say("a run is under way: wait for it, or stop it with x", true)
	}
	if msg.cur == nil || msg.cur.id != msg.cursor {
		return say("the checkpoint under the cursor is still loading: press "+p.keys.EditState.Help().Key+" again in a moment", true)
	}
	cp := msg.cur.cp
	names := slices.Sorted(maps.Keys(cp.Values))
	if len(names) == 0 {
		return say(fmt.Sprintf("@%d holds no channel to edit", cp.ID), true)
	}
	rows := make([]chanRow, len(names))
	for i, n := range names {
		rows[i] = chanRow{name: termtext.Line(n), raw: n, size: len(cp.Values[n]), preview: termtext.Line(string(bytes.Join(bytes.Fields(cp.Values[n]), []byte(" "))))}
	}
	ed := &stateEdit{thread: p.sess.thread, gen: p.sess.gen, id: cp.ID}
	values := cp.Values
	return parOutcome{handled: true, open: &channelDialog{id: cp.ID, pending: len(cp.Tasks), rows: rows, keys: newChannelKeys(), onPick: func(name string) tea.Cmd {
		e := *ed
		e.channel = name
		return writeEditFile(&e, values[name])
	}}}
}

// writeEditFile puts the value, indented, in a temp file (a Cmd).
func writeEditFile(ed *stateEdit, value json.RawMessage) tea.Cmd {
	return func() tea.Msg {
		var buf bytes.Buffer
		if err := json.Indent(&buf, value, "", "  "); err != nil {
			buf.Reset()
			buf.Write(value)
		}
		buf.WriteByte('\n')
		if buf.Len() > termtext.MaxInput {
			return editFileMsg{ed: ed, err: fmt.Errorf("%s at @%d is %s as JSON, over the %s one edited value may hold, so it cannot be edited whole: nothing stored", termtext.Line(ed.channel), ed.id, termtext.Size(buf.Len()), termtext.Size(termtext.MaxInput))}
		}
		f, err := os.CreateTemp("", "rewind-edit-*.json")
		if err != nil {
			return editFileMsg{ed: ed, err: fmt.Errorf("make a file to edit %s in: %w", ed.channel, err)}
		}
		_, err = f.Write(buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(f.Name())
			return editFileMsg{ed: ed, err: fmt.Errorf("write %s to %s: %w", ed.channel, f.Name(), err)}
		}
		ed.path, ed.orig = f.Name(), buf.Bytes()
		return editFileMsg{ed: ed}
	}
}

// runEditor hands the terminal to the editor on the edit's file.
func runEditor(ed *stateEdit) tea.Cmd {
	return tea.ExecProcess(editorCommand(ed.path), func(err error) tea.Msg { return editedMsg{ed: ed, err: err} })
}

// storeEdit reads the edited file and stores it (a Cmd).
func storeEdit(ctx context.Context, b Backend, ed *stateEdit) tea.Cmd {
	return func() tea.Msg {
		data, err := readEdited(ed.path)
		if errors.Is(err, engine.ErrBadEdit) {
			return editStoredMsg{ed: ed, err: fmt.Errorf("%w: the edited %s is longer than the %s one value may hold; shorten it", err, termtext.Line(ed.channel), termtext.Size(termtext.MaxInput))}
		}
		if err != nil {
			return editStoredMsg{ed: ed, err: fmt.Errorf("read the edited %s from %s: %w", ed.channel, ed.path, err)}
		}
		if bytes.Equal(bytes.TrimSpace(data), bytes.TrimSpace(ed.orig)) {
			return editStoredMsg{ed: ed, unchanged: true}
		}
		se, ok := b.(stateEditor)
		if !ok {
			return editStoredMsg{ed: ed, err: errors.New("this store cannot be edited from here")}
		}
		cp, err := se.EditState(ctx, ed.thread, ed.id, ed.channel, json.RawMessage(data), engine.UpdateOptions{})
		return editStoredMsg{ed: ed, cp: cp, err: err}
	}
}

// readEdited reads the edited file, if it holds at most termtext.MaxInput
// bytes (the CLI's limit on a value too); past it, an ErrBadEdit, having
// read no more than that (an editor may have saved gigabytes).
func readEdited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, termtext.MaxInput+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > termtext.MaxInput:
		return nil, engine.ErrBadEdit
	}
	return b, nil
}

// removeEditFile deletes the edit's file (a Cmd).
func removeEditFile(ed *stateEdit) tea.Cmd {
	if ed == nil || ed.path == "" {
		return nil
	}
	path := ed.path
	return func() tea.Msg { _ = os.Remove(path); return nil }
}

// editDroppedMsg: n in the refused edit's dialog drops it.
type editDroppedMsg struct{ ed *stateEdit }

func (editDroppedMsg) parityMsg() {}

// onEditMsg takes what the edit's Cmds answer.
func (p *parity) onEditMsg(msg tea.Msg) (parOutcome, tea.Cmd) {
	switch msg := msg.(type) {
	case editFileMsg:
		if msg.err != nil {
			return parOutcome{say: flashMsg{msg.err.Error(), true}}, nil
		}
		p.editing(msg.ed)
		return parOutcome{}, runEditor(msg.ed)
	case editedMsg:
		if msg.err != nil {
			return parOutcome{say: flashMsg{fmt.Sprintf("the editor failed (%v): nothing stored; set $EDITOR to an editor that waits until you close the file", msg.err), true}}, removeEditFile(msg.ed)
		}
		return parOutcome{}, storeEdit(p.sess.ctx, p.sess.deps.Backend, msg.ed)
	case editStoredMsg:
		return p.onEditStored(msg)
	case editDroppedMsg:
		ed := msg.ed
		p.editing(nil)
		return parOutcome{say: flashMsg{fmt.Sprintf("edit of %s at @%d dropped: nothing stored", termtext.Line(ed.channel), ed.id), false}}, removeEditFile(ed)
	}
	return parOutcome{}, nil
}

func (p *parity) onEditStored(msg editStoredMsg) (parOutcome, tea.Cmd) {
	ed := msg.ed
	switch {
	case msg.unchanged:
		p.editing(nil)
		return parOutcome{say: flashMsg{fmt.Sprintf("%s at @%d unchanged: nothing stored", termtext.Line(ed.channel), ed.id), false}}, removeEditFile(ed)
	case errors.Is(msg.err, engine.ErrBadEdit):
		// Refused: nothing is stored; the file keeps the text to fix.
		return parOutcome{say: flashMsg{msg.err.Error(), true}, open: &confirmDialog{title: "Edit refused · nothing stored",
			question: termtext.Error(msg.err.Error()) + "\n\nEdit it again? (n drops the edit)",
			keys:     newConfirmKeys(),
			onYes:    func() tea.Cmd { return runEditor(ed) },
			onNo:     func() tea.Cmd { return func() tea.Msg { return editDroppedMsg{ed} } },
		}}, nil
	case msg.err != nil:
		p.editing(nil)
		return parOutcome{say: flashMsg{msg.err.Error(), true}}, removeEditFile(ed)
	}
	p.editing(nil)
	what := fmt.Sprintf("edited %s at @%d, stored as update @%d", termtext.Line(ed.channel), ed.id, msg.cp.ID)
	if n := len(msg.cp.Tasks); n > 0 {
		what += fmt.Sprintf(" with %d task(s) due (%s): %s resumes it on the edited state", n, termtext.Line(engine.DescribeTasks(msg.cp.Tasks)), p.keys.resume.Help().Key)
	} else {
		what += ": no task is due there; write a message (i) to continue from it"
	}
	out := parOutcome{say: flashMsg{what, false}}
	if ed.thread == p.sess.thread && ed.gen == p.sess.gen {
		out.stored = idOf(msg.cp.ID)
	}
	return out, removeEditFile(ed)
}

// --- the channel list ---

type chanRow struct {
	name, raw, preview string
	size               int
}

type channelKeys struct{ Up, Down, Pick, Cancel key.Binding }

var channelKeyTable = keyTable[channelKeys]{
	helpRow(0, []string{"up", "k"}, "up", func(k *channelKeys) *key.Binding { return &k.Up }).inFooter(1, ""),
	helpRow(0, []string{"down", "j"}, "down", func(k *channelKeys) *key.Binding { return &k.Down }).inFooter(2, ""),
	helpRow(0, []string{"enter", "e"}, "edit in $EDITOR", func(k *channelKeys) *key.Binding { return &k.Pick }).inFooter(3, ""),
	helpRow(0, []string{"esc", "q"}, "cancel", func(k *channelKeys) *key.Binding { return &k.Cancel }).inFooter(4, ""),
}

func newChannelKeys() channelKeys               { return channelKeyTable.bind() }
func (k channelKeys) ShortHelp() []key.Binding  { return channelKeyTable.footer(k) }
func (k channelKeys) FullHelp() [][]key.Binding { return channelKeyTable.fullHelp(k, 1, nil) }

// channelDialog chooses the channel to edit.
type channelDialog struct {
	dialogSize // SetSize: the room the root gives it
	id         int64
	pending    int
	rows       []chanRow
	sel        int
	keys       channelKeys
	onPick     func(channel string) tea.Cmd
}

func (d *channelDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil {
		return eachKey(keys, d.Update)
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, d.keys.Cancel):
		return true, nil
	case key.Matches(k, d.keys.Up):
		d.sel = max(d.sel-1, 0)
	case key.Matches(k, d.keys.Down):
		d.sel = min(d.sel+1, len(d.rows)-1)
	case key.Matches(k, d.keys.Pick):
		return true, d.onPick(d.rows[d.sel].raw)
	}
	return false, nil
}

func (d *channelDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 76)
	inner := w - 4
	note := fmt.Sprintf("The value opens in $EDITOR as JSON. Saving stores it as a new update checkpoint after @%d (the old branch stays)", d.id)
	if d.pending > 0 {
		note += " that keeps its " + plural(d.pending, "due task", "due tasks") + ": r then runs them on the edited state."
	} else {
		note += "."
	}
	top := append(wrapStyled(th.Muted, note, inner), "")
	nameW := 10
	for _, r := range d.rows {
		nameW = max(nameW, min(width(r.name), 24))
	}
	var rows []string
	for i, r := range d.rows {
		row := fmt.Sprintf("%s %8s  %s", fit(r.name, nameW), sizeText(r.size), r.preview)
		if i == d.sel {
			rows = append(rows, th.Selected.Render(fit("▶ "+row, inner)))
		} else {
			rows = append(rows, th.Text.Render(trunc("  "+row, inner)))
		}
	}
	h.Width = inner
	bottom := []string{"", h.View(d.keys)}
	if len(top)+len(bottom)+len(rows)+3 > d.maxH {
		top = nil
	}
	room := max(d.maxH-len(top)-len(bottom)-3, 3)
	if len(rows) > room {
		start := min(max(d.sel-room/2, 0), len(rows)-room)
		rows = rows[start : start+room]
	}
	lines := append(append(top, rows...), bottom...)
	return box(th, fmt.Sprintf("Edit state at @%d · which channel?", d.id), lines, w)
}
