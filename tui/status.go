package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

// statusLine is the message at the right of the status bar and the status
// log (L) that keeps every one in full: a status line is never the only
// copy.
type statusLine struct {
	text  string // shown until it expires (empty: none)
	isErr bool
	id    int // of the text shown: an older expiry leaves a newer text
	log   []logEntry
}

// logEntry is one status line, kept in full for the status log (L).
type logEntry struct {
	text  string
	isErr bool
}

// maxLog status lines are kept; older ones go first.
const maxLog = 500

type flashExpiredMsg struct{ id int }

// set shows text for a while (errors longer) and logs it; the Cmd expires
// it.
func (s *statusLine) set(text string, isErr bool) tea.Cmd {
	s.id++
	s.text, s.isErr = termtext.Error(text), isErr
	s.add(s.text, isErr)
	id := s.id
	d := 6 * time.Second
	if isErr {
		d = 12 * time.Second
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return flashExpiredMsg{id} })
}

// outcome is a Cmd's answer that the status line reports (a kill sent, a
// theme saved, pending tasks discarded): what it says, "" for nothing.
type outcome interface {
	say() (text string, isErr bool)
}

// flashMsg asks the status line to show text: how a component, which
// holds no root, says something from its Update (flash makes the Cmd).
type flashMsg struct {
	text  string
	isErr bool
}

func (f flashMsg) say() (string, bool) { return f.text, f.isErr }

// flash is a Cmd asking the status line to show text.
func flash(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return flashMsg{text, isErr} }
}

// Update takes the expiry of a status line, or an outcome to show; it
// asks nothing of the root.
func (s *statusLine) Update(msg tea.Msg) (struct{}, tea.Cmd) {
	switch msg := msg.(type) {
	case flashExpiredMsg:
		if msg.id == s.id {
			s.text = ""
		}
	case outcome:
		return struct{}{}, s.say(msg)
	}
	return struct{}{}, nil
}

// say shows what o says, if anything; the Cmd expires it.
func (s *statusLine) say(o outcome) tea.Cmd {
	if text, isErr := o.say(); text != "" {
		return s.set(text, isErr)
	}
	return nil
}

// SetSize: the status bar lays the line out (view.go: it cuts a long
// one to the room beside the bar's left side and names L, which shows
// the log in full in the pager).
func (s *statusLine) SetSize(int, int) {}

// ShortHelp: the status line takes no keys. L, which shows its log, is
// the thread view's and the threads list's key: their screens open the
// pager over it.
func (s *statusLine) ShortHelp() []key.Binding { return nil }

// FullHelp: no keys (ShortHelp).
func (s *statusLine) FullHelp() [][]key.Binding { return nil }

// View is the line shown in th's style ("" when none).
func (s *statusLine) View(th *themes.Theme) string {
	if s.text == "" {
		return ""
	}
	if s.isErr {
		return th.Error.Render(s.text)
	}
	return th.StatusValue.Render(s.text)
}

// add adds a line to the status log only.
func (s *statusLine) add(text string, isErr bool) {
	if len(s.log) >= maxLog {
		s.log = append(s.log[:0:0], s.log[len(s.log)-maxLog+1:]...)
	}
	s.log = append(s.log, logEntry{text: text, isErr: isErr})
}

// clear takes the line off the bar (a new run starts): the log still has
// it.
func (s *statusLine) clear() {
	s.id++
	s.text, s.isErr = "", false
}
