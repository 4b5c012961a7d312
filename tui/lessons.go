package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

// Lesson is a lesson as the TUI shows it: plain data, so tui links neither
// package demo nor the store backends a lesson's run opens.
type Lesson struct {
	Name, Title, Proves string
	// Thread is the thread the lesson opens once prepared.
	Thread string
	Steps  []LessonStep
	// KillsWorkers: the lesson kills real worker processes (marked in the
	// picker).
	KillsWorkers bool
}

// LessonStep is one line of a lesson's script.
type LessonStep struct{ Do, See string }

// LessonVerdict is how a lesson's headless run ended.
type LessonVerdict struct {
	Line   string
	Passed bool
	// At is the checkpoint the lesson opens on (0: the thread's newest).
	At int64
}

// PrepareFunc prepares lesson name in the lesson store (its headless run)
// and returns its verdict. say reports progress; it is called from the
// Cmd's goroutine, never from Update.
type PrepareFunc func(ctx context.Context, name string, say func(string)) (LessonVerdict, error)

// lessonKeys are the keys of the lesson picker.
type lessonKeys struct {
	Up, Down, Open, Threads, Log, Help, Quit key.Binding
}

var lessonKeyTable = keyTable[lessonKeys]{
	helpRow(0, []string{"up", "k"}, "up", func(k *lessonKeys) *key.Binding { return &k.Up }).inFooter(1, ""),
	helpRow(0, []string{"down", "j"}, "down", func(k *lessonKeys) *key.Binding { return &k.Down }).inFooter(2, ""),
	helpRow(0, []string{"enter", "o"}, "prepare and open", func(k *lessonKeys) *key.Binding { return &k.Open }).inFooterAs(3, "enter", "prepare & open"),
	helpRow(1, []string{"t"}, "threads", func(k *lessonKeys) *key.Binding { return &k.Threads }).inFooter(4, ""),
	helpRow(1, []string{"L"}, "status log", func(k *lessonKeys) *key.Binding { return &k.Log }),
	helpRow(1, []string{"?"}, "help", func(k *lessonKeys) *key.Binding { return &k.Help }).inFooter(6, ""),
	helpRow(1, []string{"q", "ctrl+c"}, "quit", func(k *lessonKeys) *key.Binding { return &k.Quit }).inFooter(5, "quit"),
}

func newLessonKeys() lessonKeys                { return lessonKeyTable.bind() }
func (k lessonKeys) ShortHelp() []key.Binding  { return lessonKeyTable.footer(k) }
func (k lessonKeys) FullHelp() [][]key.Binding { return lessonKeyTable.fullHelp(k, 2, nil) }

// lessonItem is a row of the picker.
type lessonItem struct{ l Lesson }

func (i lessonItem) FilterValue() string { return i.l.Name }

// lessonDelegate draws a row: name and title (kill lessons marked), and
// what the lesson proves, in the theme's styles.
type lessonDelegate struct{ th *themes.Theme }

func (d lessonDelegate) Height() int                         { return 2 }
func (d lessonDelegate) Spacing() int                        { return 1 }
func (d lessonDelegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }
func (d lessonDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	it, ok := item.(lessonItem)
	if !ok {
		return
	}
	th, l := d.th, it.l
	width := max(m.Width(), 10)
	cursor, name := "  ", th.Strong.Render(fmt.Sprintf("%-17s", termtext.Line(l.Name)))
	if index == m.Index() {
		cursor, name = th.Accent.Render("▸ "), th.Selected.Render(fmt.Sprintf("%-17s", termtext.Line(l.Name)))
	}
	head := cursor + name + " " + th.Text.Render(termtext.Line(l.Title))
	if l.KillsWorkers {
		head += th.Warning.Render(" ✝ kills workers")
	}
	proves := "  " + strings.Repeat(" ", 18) + th.Muted.Render(termtext.Line(l.Proves))
	fmt.Fprint(w, trunc(head, width)+"\n"+trunc(proves, width))
}

// lessonPicker is the screen `rewind demo` opens: the lessons, and the
// progress of the one being prepared.
type lessonPicker struct {
	lessons   []Lesson
	list      list.Model
	keys      lessonKeys
	preparing string   // the lesson whose run is under way
	progress  []string // its progress lines, newest last
	cancel    context.CancelFunc
	ended     chan struct{} // closed when the run under way returns
	w, h      int
	prepare   PrepareFunc // runs a lesson headless (Settings.Prepare)
	start     string      // the lesson to prepare at start (Settings.Lesson)
	ctx       context.Context
}

// newLessonPicker lists ls; prepare runs one headless (under ctx), start
// names the one to prepare at start ("" for none).
func newLessonPicker(ctx context.Context, th *themes.Theme, ls []Lesson, prepare PrepareFunc, start string) *lessonPicker {
	items := make([]list.Item, len(ls))
	for i, l := range ls {
		items[i] = lessonItem{l}
	}
	p := &lessonPicker{lessons: ls, keys: newLessonKeys(), prepare: prepare, start: start, ctx: ctx}
	p.list = list.New(items, lessonDelegate{th}, 0, 0)
	p.list.SetShowTitle(false)
	p.list.SetShowHelp(false)
	p.list.SetShowStatusBar(false)
	p.list.SetFilteringEnabled(false)
	p.list.SetShowPagination(true)
	p.list.DisableQuitKeybindings()
	return p
}

func (p *lessonPicker) setTheme(th *themes.Theme) { p.list.SetDelegate(lessonDelegate{th}) }

func (p *lessonPicker) ShortHelp() []key.Binding  { return p.keys.ShortHelp() }
func (p *lessonPicker) FullHelp() [][]key.Binding { return p.keys.FullHelp() }

// begin marks l as being prepared under parent: the Cmd prepares it (nil
// with why not, when another is under way or there is no lesson store).
func (p *lessonPicker) begin(parent context.Context, l Lesson) (tea.Cmd, string) {
	if p.preparing != "" {
		return nil, "lesson " + p.preparing + " is being prepared: wait for it"
	}
	if p.prepare == nil {
		return nil, "no lesson store: run rewind demo to prepare lessons"
	}
	p.preparing, p.progress = l.Name, nil
	ctx, cancel := context.WithCancel(parent)
	p.cancel, p.ended = cancel, make(chan struct{})
	return prepareLesson(ctx, p.prepare, l, p.ended), ""
}

// progressed takes a progress line of the preparation under way.
func (p *lessonPicker) progressed(line string) { p.progress = append(p.progress, line) }

// prepared ends the preparation under way.
func (p *lessonPicker) prepared() {
	p.preparing = ""
	p.cancel()
}

// progressRows is how many rows the progress box below the list takes.
const progressRows = 5

// SetSize gives the picker the screen minus the status bar and key line.
func (p *lessonPicker) SetSize(w, h int) {
	p.w, p.h = w, h
	p.list.SetSize(max(w-2, 10), max(h-2-progressRows, 2))
}

// find looks a lesson up by name.
func (p *lessonPicker) find(name string) (Lesson, bool) {
	for _, l := range p.lessons {
		if l.Name == name {
			return l, true
		}
	}
	return Lesson{}, false
}

// lessonAsk is what the picker asks of the root.
type lessonAsk struct {
	say    string // the status line says it (an error)
	log    string // the status log keeps it (logErr: as an error)
	logErr bool
	// preparing: a lesson is being prepared, the picker shows it.
	preparing bool
	// ready: a lesson prepared; its thread opens with its script beside.
	ready                          *lessonDoneMsg
	quit, help, statusLog, threads bool // its keys for the root's screens
}

// Update takes its keys (a lesson chosen is prepared) and the
// preparation's messages.
func (p *lessonPicker) Update(m tea.Msg) (lessonAsk, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := m.(type) {
	case lessonProgressMsg:
		p.progressed(msg.line)
		return lessonAsk{}, msg.next
	case lessonDoneMsg:
		p.prepared()
		if msg.err != nil {
			return lessonAsk{say: fmt.Sprintf("lesson %s: %v", msg.lesson.Name, msg.err)}, nil
		}
		return lessonAsk{ready: &msg, log: fmt.Sprintf("lesson %s: %s", msg.lesson.Name, msg.verdict.Line), logErr: !msg.verdict.Passed}, nil
	case tea.KeyMsg:
		k := p.keys
		switch {
		case key.Matches(msg, k.Quit):
			return lessonAsk{quit: true}, nil
		case key.Matches(msg, k.Help):
			return lessonAsk{help: true}, nil
		case key.Matches(msg, k.Log):
			return lessonAsk{statusLog: true}, nil
		case key.Matches(msg, k.Threads):
			return lessonAsk{threads: true}, nil
		case key.Matches(msg, k.Open):
			it, ok := p.list.SelectedItem().(lessonItem)
			if !ok {
				return lessonAsk{}, nil
			}
			return p.choose(it.l)
		case key.Matches(msg, k.Up):
			p.list.CursorUp()
		case key.Matches(msg, k.Down):
			p.list.CursorDown()
		default:
			p.list, cmd = p.list.Update(msg)
		}
		return lessonAsk{}, cmd
	}
	p.list, cmd = p.list.Update(m)
	return lessonAsk{}, cmd
}

// choose starts preparing l, from the picker or at start.
func (p *lessonPicker) choose(l Lesson) (lessonAsk, tea.Cmd) {
	cmd, refused := p.begin(p.ctx, l)
	if refused != "" {
		return lessonAsk{say: refused}, nil
	}
	return lessonAsk{preparing: true, log: "preparing lesson " + l.Name}, cmd
}

// View is the picker's body: the list framed, then the progress box.
func (p *lessonPicker) View(th *themes.Theme, store string) string {
	title := fmt.Sprintf("Lessons · %d · store %s", len(p.lessons), termtext.Line(store))
	body := frame(title, strings.Split(p.list.View(), "\n"), p.w, p.h-progressRows, true, th.BorderFocused, th.PaneTitleFocused)
	var lines []string
	switch {
	case p.preparing != "":
		lines = append(lines, th.StatusRun.Render("preparing "+termtext.Line(p.preparing)+"…"))
		from := max(len(p.progress)-(progressRows-3), 0)
		for _, l := range p.progress[from:] {
			lines = append(lines, th.Muted.Render(termtext.Line(l)))
		}
	default:
		lines = append(lines, th.Muted.Render("enter prepares the lesson in its own store (offline), then opens its thread with the script beside it"))
	}
	return body + "\n" + frame("", lines, p.w, progressRows, false, th.Border, th.PaneTitle)
}

// Messages of a lesson's preparation.
type (
	lessonProgressMsg struct {
		name, line string
		next       tea.Cmd
	}
	lessonDoneMsg struct {
		lesson  Lesson
		verdict LessonVerdict
		err     error
	}
)

// prepareLesson runs prepare in a Cmd; its progress lines arrive one
// lessonProgressMsg at a time, each carrying the Cmd that waits for the
// next, and lessonDoneMsg ends it.
func prepareLesson(ctx context.Context, prepare PrepareFunc, l Lesson, ended chan struct{}) tea.Cmd {
	lines := make(chan string, 64)
	done := make(chan lessonDoneMsg, 1)
	go func() {
		defer close(ended)
		v, err := prepare(ctx, l.Name, func(s string) {
			select {
			case lines <- s:
			default: // a slow screen drops progress lines, never the run
			}
		})
		done <- lessonDoneMsg{lesson: l, verdict: v, err: err}
		close(lines)
	}()
	var wait tea.Cmd
	wait = func() tea.Msg {
		if s, ok := <-lines; ok {
			return lessonProgressMsg{name: l.Name, line: s, next: wait}
		}
		return <-done
	}
	return wait
}

// LessonKeys are the keys a lesson's script may tell a person to press, by
// what they do: the thread view's (by their config names) and the
// composer's. cli's test holds the lessons' steps to them.
func LessonKeys() map[string][]string {
	k := newThreadKeys()
	out := map[string][]string{}
	for _, n := range k.keyNames() {
		out[n.name] = n.b.Keys()
	}
	c := newComposerKeys()
	out["draft"] = c.Draft.Keys()
	return out
}

// wheel moves the picker's cursor by n rows (the mouse wheel).
func (p *lessonPicker) wheel(n int) {
	for ; n < 0; n++ {
		p.list.CursorUp()
	}
	for ; n > 0; n-- {
		p.list.CursorDown()
	}
}

// stop cancels a lesson being prepared (the program is ending) and waits
// up to timeout for its run to return: a lesson's workers are not left
// running behind the TUI.
func (p *lessonPicker) stop(timeout time.Duration) {
	if p == nil || p.cancel == nil {
		return
	}
	p.cancel()
	select {
	case <-p.ended:
	case <-time.After(timeout):
	}
}
