package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

// dialog is a modal box over the screen, a component like the panes:
// Update takes every message while it is open and returns done when it
// should close, and a command to run; SetSize gives it the room it may
// take (the root's openDialog when it opens, relayout on a resize); View
// draws it within that room; its keys are a help.KeyMap (the box shows
// them). The dialogs: formDialog,
// confirmDialog, breakDialog (here), pointDialog and approvalDialog
// (drill.go), compareDialog (compare.go), channelDialog (editstate.go),
// graphDialog (graphview.go), searchDialog (search.go), traceDialog
// (trace.go).
type dialog interface {
	component[bool] // Update: done; SetSize: the most room it may take
	View(th *themes.Theme, h help.Model) string
}

// cursorFollower is a dialog that shows the checkpoint under the cursor
// (the graph view): the root passes it in whenever the cursor or the
// checkpoint shown changes.
type cursorFollower interface {
	followCursor(cur *detail, cursor string)
}

// dialogSize is a dialog's room, embedded in every dialog.
type dialogSize struct{ maxW, maxH int }

func (s *dialogSize) SetSize(maxW, maxH int) { s.maxW, s.maxH = maxW, maxH }

// dialogRoom is the room a dialog gets on a w×h screen.
func dialogRoom(w, h int) (int, int) { return w - 4, h - 2 }

// The dialogs' key maps, in one place.

func (f *formDialog) ShortHelp() []key.Binding      { return f.keys.ShortHelp() }
func (f *formDialog) FullHelp() [][]key.Binding     { return f.keys.FullHelp() }
func (c *confirmDialog) ShortHelp() []key.Binding   { return c.keys.ShortHelp() }
func (c *confirmDialog) FullHelp() [][]key.Binding  { return c.keys.FullHelp() }
func (b *breakDialog) ShortHelp() []key.Binding     { return b.keys.ShortHelp() }
func (b *breakDialog) FullHelp() [][]key.Binding    { return b.keys.FullHelp() }
func (d *pointDialog) ShortHelp() []key.Binding     { return d.keys.ShortHelp() }
func (d *pointDialog) FullHelp() [][]key.Binding    { return d.keys.FullHelp() }
func (a *approvalDialog) ShortHelp() []key.Binding  { return a.keys.ShortHelp() }
func (a *approvalDialog) FullHelp() [][]key.Binding { return a.keys.FullHelp() }
func (d *compareDialog) ShortHelp() []key.Binding   { return d.keys.ShortHelp() }
func (d *compareDialog) FullHelp() [][]key.Binding  { return d.keys.FullHelp() }
func (d *channelDialog) ShortHelp() []key.Binding   { return d.keys.ShortHelp() }
func (d *channelDialog) FullHelp() [][]key.Binding  { return d.keys.FullHelp() }
func (g *graphDialog) ShortHelp() []key.Binding     { return g.keys.ShortHelp() }
func (g *graphDialog) FullHelp() [][]key.Binding    { return g.keys.FullHelp() }
func (d *searchDialog) ShortHelp() []key.Binding    { return d.keys.ShortHelp() }
func (d *searchDialog) FullHelp() [][]key.Binding   { return d.keys.FullHelp() }
func (d *traceDialog) ShortHelp() []key.Binding     { return d.keys.ShortHelp() }
func (d *traceDialog) FullHelp() [][]key.Binding    { return d.keys.FullHelp() }

// field is one text input of a form.
type field struct {
	label    string
	required bool
	input    textinput.Model
	// suggested: the value is a suggestion (the new thread's ticket-N),
	// shown selected: the first typed text replaces it, backspace clears
	// it, a move or leaving the field keeps it to edit.
	suggested bool
}

// formDialog asks for a few text fields (fork input, new thread).
type formDialog struct {
	dialogSize // SetSize: the room the root gives it
	title      string
	note       string
	fields     []field
	focus      int
	err        string
	keys       formKeys
	onSubmit   func(values []string) (tea.Cmd, error)
}

func newForm(th *themes.Theme, title, note string, onSubmit func([]string) (tea.Cmd, error), fields ...field) *formDialog {
	f := &formDialog{title: title, note: note, fields: fields, keys: newFormKeys(), onSubmit: onSubmit}
	for i := range f.fields {
		in := &f.fields[i].input
		in.Prompt = "› "
		in.PromptStyle = th.Prompt
		in.TextStyle = th.Text
		in.PlaceholderStyle = th.Placeholder
		in.Cursor.Style = th.Accent
		if i == 0 {
			in.Focus()
		} else {
			in.Blur()
		}
	}
	return f
}

func newField(label, value, placeholder string, required bool) field {
	in := newInput()
	in.SetValue(value)
	in.Placeholder = placeholder
	return field{label: label, required: required, input: in, suggested: value != ""}
}

// take is what a key does to a suggested value before the input gets it:
// text replaces it, backspace or delete clears it (and is done), any other
// key keeps it to edit.
func (fl *field) take(k tea.KeyMsg) (done bool) {
	if !fl.suggested {
		return false
	}
	fl.suggested = false
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		fl.input.SetValue("")
	case tea.KeyBackspace, tea.KeyDelete:
		fl.input.SetValue("")
		return true
	}
	return false
}

func (f *formDialog) setFocus(i int) tea.Cmd {
	n := len(f.fields)
	f.focus = ((i % n) + n) % n
	var cmd tea.Cmd
	for j := range f.fields {
		if j == f.focus {
			cmd = f.fields[j].input.Focus()
		} else {
			f.fields[j].input.Blur()
			f.fields[j].suggested = false // left: the suggestion is kept
		}
	}
	return cmd
}

func (f *formDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, f.keys.Cancel):
			return true, nil
		case key.Matches(k, f.keys.Next):
			return false, f.setFocus(f.focus + 1)
		case key.Matches(k, f.keys.Prev):
			return false, f.setFocus(f.focus - 1)
		case key.Matches(k, f.keys.Submit):
			values := make([]string, len(f.fields))
			for i, fl := range f.fields {
				values[i] = strings.TrimSpace(fl.input.Value())
				if fl.required && values[i] == "" {
					f.err = fl.label + " is required"
					return false, f.setFocus(i)
				}
			}
			cmd, err := f.onSubmit(values)
			if err != nil {
				f.err = err.Error()
				return false, nil
			}
			return true, cmd
		}
	}
	if k, ok := msg.(tea.KeyMsg); ok {
		if f.fields[f.focus].take(k) {
			return false, nil
		}
		if why := admit(f.fields[f.focus].input, k); why != "" {
			f.err = why
			return false, nil
		}
	}
	var cmd tea.Cmd
	f.fields[f.focus].input, cmd = f.fields[f.focus].input.Update(msg)
	return false, cmd
}

func (f *formDialog) View(th *themes.Theme, h help.Model) string {
	w := min(f.maxW, 76)
	inner := w - 4
	var lines []string
	if f.note != "" {
		for _, l := range wrap(f.note, inner) {
			lines = append(lines, th.Muted.Render(l))
		}
		lines = append(lines, "")
	}
	for i, fl := range f.fields {
		label := fl.label
		if !fl.required {
			label += " (optional)"
		}
		st := th.Muted
		if i == f.focus {
			st = th.Strong
		}
		lines = append(lines, st.Render(label))
		fl.input.Width = inner - 3
		if fl.suggested && i == f.focus {
			fl.input.TextStyle = th.Selected // typing replaces it
		}
		lines = append(lines, fl.input.View())
		lines = append(lines, "")
	}
	if f.err != "" {
		lines = append(lines, th.Error.Render(trunc(termtext.Error(f.err), inner)))
	}
	h.Width = inner
	lines = append(lines, h.View(f.keys))
	return box(th, f.title, lines, w)
}

// confirmDialog asks a yes/no question.
type confirmDialog struct {
	dialogSize      // SetSize: the room the root gives it
	title, question string
	keys            confirmKeys
	onYes           func() tea.Cmd
	onNo            func() tea.Cmd // may be nil
	// ofRun: the question is about the run under way (kill its worker),
	// so the dialog closes itself when the run ends.
	ofRun bool
}

func (c *confirmDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil { // a burst of keys, one by one
		return eachKey(keys, c.Update)
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, c.keys.Yes):
		return true, c.onYes()
	case key.Matches(k, c.keys.No):
		if c.onNo != nil {
			return true, c.onNo()
		}
		return true, nil
	}
	return false, nil
}

func (c *confirmDialog) View(th *themes.Theme, h help.Model) string {
	w := min(c.maxW, 64)
	var lines []string
	for _, l := range wrap(c.question, w-4) {
		lines = append(lines, th.Text.Render(l))
	}
	lines = append(lines, "")
	h.Width = w - 4
	lines = append(lines, h.View(c.keys))
	return box(th, c.title, lines, w)
}

// breakDialog toggles interrupts before/after each node for the next runs.
type breakDialog struct {
	dialogSize // SetSize: the room the root gives it
	nodes      []string
	on         map[string]bool // "before:executor"
	sel        int
	keys       toggleKeys
}

func (b *breakDialog) items() []string {
	var out []string
	for _, n := range b.nodes {
		out = append(out, "before:"+n, "after:"+n)
	}
	return out
}

func (b *breakDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil { // a burst of keys, one by one
		return eachKey(keys, b.Update)
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	items := b.items()
	switch {
	case key.Matches(k, b.keys.Up):
		b.sel = max(b.sel-1, 0)
	case key.Matches(k, b.keys.Down):
		b.sel = min(b.sel+1, len(items)-1)
	case key.Matches(k, b.keys.Toggle):
		it := items[b.sel]
		b.on[it] = !b.on[it]
		if !b.on[it] {
			delete(b.on, it)
		}
	case key.Matches(k, b.keys.Close):
		return true, nil
	}
	return false, nil
}

func (b *breakDialog) View(th *themes.Theme, h help.Model) string {
	w := min(b.maxW, 56)
	lines := []string{th.Muted.Render("Pause runs before or after a node; r resumes."), ""}
	items := b.items()
	// A graph of many nodes scrolls: a window of rows around the cursor,
	// in the room the box leaves (its frame, the note, the help).
	from, to := 0, len(items)
	if room := b.maxH - 7; b.maxH > 0 && room > 0 && len(items) > room {
		from = min(max(b.sel-room/2, 0), len(items)-room)
		to = from + room
	}
	for i := from; i < to; i++ {
		it := items[i]
		when, node, _ := strings.Cut(it, ":")
		box := "[ ]"
		if b.on[it] {
			box = "[x]"
		}
		row := fmt.Sprintf("%s %-6s %s", box, when, node)
		if i == b.sel {
			row = th.Selected.Render(fit("▶ "+row, w-4))
		} else {
			row = th.Text.Render("  " + row)
		}
		lines = append(lines, row)
	}
	more := ""
	if to-from < len(items) {
		more = th.Muted.Render(fmt.Sprintf("rows %d–%d of %d: ↑/↓ scroll", from+1, to, len(items)))
	}
	lines = append(lines, more)
	h.Width = w - 4
	lines = append(lines, h.View(b.keys))
	return box(th, "Breakpoints", lines, w)
}

// box frames dialog lines with the dialog style.
func box(th *themes.Theme, title string, lines []string, w int) string {
	padded := make([]string, 0, len(lines)+2)
	padded = append(padded, "")
	for _, l := range lines {
		padded = append(padded, " "+l)
	}
	return frame(title, padded, w, len(padded)+2, true, th.DialogBorder, th.DialogTitle)
}
