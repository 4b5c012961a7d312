package tui

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/themes"
	"rewind/tui/termtext"
)

// Follow mode: while a thread is open and this TUI is not running it, a
// run elsewhere (another terminal, a worker on another machine sharing the
// database) makes the timeline grow by itself. The store wakes a waiter on
// every committed checkpoint (Engine.Watch); the wait is a tea.Cmd that
// re-arms itself, and each wake-up reads the new listings (Model.sync),
// which keeps the cursor where the user put it unless it was at the head.
// The status bar says who is writing: the holder of the thread's writer
// lock (Engine.Writer).

// watcher is a Backend that can wait for a thread's changes and name the
// process running it.
type watcher interface {
	Watch(ctx context.Context, thread string) (<-chan struct{}, error)
	Writer(ctx context.Context, thread string) (string, error)
}

// writerEvery is how often, while someone is writing, the TUI asks whether
// they still are: the end of a run (the lock released) commits nothing.
const writerEvery = time.Second

// follower is the follow mode of the open thread (a component with no
// keys and no room: its marker is drawn in the status bar).
type follower struct {
	sess *session    // read only: the generation and the backend
	busy func() bool // this TUI runs a run itself: it follows that already

	gen    int // the thread view generation it follows
	thread string
	cancel context.CancelFunc
	c      <-chan struct{}
	on     bool   // watching
	writer string // who holds the thread's lock ("" nobody), when not this TUI
	wakes  int    // changes seen
	asking bool   // a writer query or its tick is under way
	// A flood of wake-ups (a NOTIFY per commit of a busy writer, or a
	// misbehaving one carrying this thread's id) costs one reload at a
	// time and a floor after each: the wait is armed again only once the
	// reload's answer came and reloadFloor passed (the store's channel
	// keeps a wake-up that comes meanwhile), so a wake-up is taken, and
	// the screen drawn for it, at most once per reload and floor. (Taking
	// every wake-up and reloading for each kept the TUI at 46% CPU;
	// taking every one and skipping the reload still cost a redraw each.)
	armed     bool // a wait for the next wake-up is under way
	reloading bool // a reload is in flight, or its floor
	again     bool // a reload was asked for during the one in flight
	reloads   int  // reloads issued
	// gone: another process deleted the thread (its reload found no
	// checkpoint); the watch goes on, and the thread written again under
	// the same id is opened from scratch.
	gone bool
}

// reloadFloor is the least time between a reload's answer and the next
// wake-up taken or reload made.
const reloadFloor = 150 * time.Millisecond

type (
	watchStartedMsg struct {
		gen    int
		thread string
		c      <-chan struct{}
		cancel context.CancelFunc
		err    error
	}
	watchWokeMsg struct {
		gen    int
		thread string
		closed bool
	}
	writerMsg struct {
		gen    int
		thread string
		who    string
		err    error
	}
	writerTickMsg struct {
		gen    int
		thread string
	}
	// followReloadedMsg is a follow reload's answer: the newest listings
	// and the head, read one after the other.
	followReloadedMsg struct {
		gen     int
		thread  string
		history tea.Msg
		head    tea.Msg
	}
	// followFloorMsg: the floor after a reload (or a wake-up during this
	// TUI's own run) passed.
	followFloorMsg struct {
		gen    int
		thread string
	}
)

// start begins following thread (generation gen), stopping any earlier
// watch. Nothing happens for a backend that cannot watch.
func (f *follower) start(ctx context.Context, b Backend, gen int, thread string) tea.Cmd {
	f.stop()
	w, ok := b.(watcher)
	if !ok {
		return nil
	}
	f.gen, f.thread = gen, thread
	return func() tea.Msg {
		wctx, cancel := context.WithCancel(ctx)
		c, err := w.Watch(wctx, thread)
		if err != nil {
			cancel()
		}
		return watchStartedMsg{gen: gen, thread: thread, c: c, cancel: cancel, err: err}
	}
}

// stop cancels the watch (the store closes its channel and the waiting Cmd
// ends).
func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
	}
	*f = follower{sess: f.sess, busy: f.busy}
}

func newFollower(sess *session, busy func() bool) follower {
	return follower{sess: sess, busy: busy}
}

// SetSize: the follow mode has no room of its own (the status bar gives
// its marker the room left, marker).
func (f *follower) SetSize(int, int) {}

// ShortHelp and FullHelp: it takes no keys (a run elsewhere is followed
// while the thread is open).
func (f *follower) ShortHelp() []key.Binding  { return nil }
func (f *follower) FullHelp() [][]key.Binding { return nil }

// wait is the Cmd that waits for the next change.
func (f *follower) wait() tea.Cmd {
	f.armed = true
	c, gen, thread := f.c, f.gen, f.thread
	return func() tea.Msg {
		_, ok := <-c
		return watchWokeMsg{gen: gen, thread: thread, closed: !ok}
	}
}

// floor is the Cmd that lets reloadFloor pass, keeping later reloads
// back, before the next reload or wait (followFloorMsg).
func (f *follower) floor() tea.Cmd {
	f.reloading = true
	gen, thread := f.gen, f.thread
	return tea.Tick(reloadFloor, func(time.Time) tea.Msg { return followFloorMsg{gen: gen, thread: thread} })
}

// askWriter reads who holds the thread's lock.
func (f *follower) askWriter(ctx context.Context, b Backend) tea.Cmd {
	w, ok := b.(watcher)
	if !ok || f.asking {
		return nil
	}
	f.asking = true
	gen, thread := f.gen, f.thread
	return func() tea.Msg {
		who, err := w.Writer(ctx, thread)
		return writerMsg{gen: gen, thread: thread, who: who, err: err}
	}
}

func (f *follower) current(gen int, thread string) bool {
	return f.gen == gen && f.thread == thread
}

// followNews is what a follow message asks of the root.
type followNews struct {
	reload   bool               // read the newest listings and head again (reloadWith)
	err      error              // the watch did not start: say so
	reloaded *followReloadedMsg // a reload's answers, for the history and the head
}

// Update takes the follow mode's messages for the open thread view; who
// writes the thread it asks itself.
func (f *follower) Update(msg tea.Msg) (followNews, tea.Cmd) {
	news, cmd := f.update(msg, f.sess.gen, f.busy())
	if news.reload && !f.reload() {
		news.reload = false // once more after the reload under way
	}
	if news.writer {
		cmd = tea.Batch(cmd, f.askWriter(f.sess.ctx, f.sess.deps.Backend))
	}
	return news.followNews, cmd
}

// followAsk is a follow message's news, with whether to ask who writes.
type followAsk struct {
	followNews
	writer bool
}

func (f *follower) update(msg tea.Msg, gen int, busy bool) (followAsk, tea.Cmd) {
	switch msg := msg.(type) {
	case watchStartedMsg:
		return f.started(msg, gen)
	case watchWokeMsg:
		if !f.current(msg.gen, msg.thread) || !f.on {
			return followAsk{}, nil
		}
		f.armed = false
		if msg.closed {
			f.on = false
			return followAsk{}, nil
		}
		f.wakes++
		if busy {
			// This TUI's own run: it follows it already.
			return followAsk{}, f.floor()
		}
		return followAsk{followNews{reload: true}, true}, nil
	case followReloadedMsg:
		if !f.current(msg.gen, msg.thread) {
			return followAsk{}, nil
		}
		return followAsk{followNews: followNews{reloaded: &msg}}, nil
	case followFloorMsg:
		if !f.current(msg.gen, msg.thread) {
			return followAsk{}, nil
		}
		f.reloading = false
		if f.again {
			return followAsk{followNews: followNews{reload: true}}, nil
		}
		if !f.armed && f.on {
			return followAsk{}, f.wait()
		}
	case writerMsg:
		return f.gotWriter(msg, busy)
	case writerTickMsg:
		if !f.current(msg.gen, msg.thread) {
			return followAsk{}, nil
		}
		f.asking = false
		return followAsk{writer: true}, nil
	}
	return followAsk{}, nil
}

// reload says whether a reload may start now: while one or its floor is
// under way, it is asked for once more after it (again).
func (f *follower) reload() bool {
	if f.reloading {
		f.again = true
		return false
	}
	f.reloading, f.again = true, false
	f.reloads++
	return true
}

// deleted is the thread found deleted by another process: first is
// whether it was not known yet.
func (f *follower) deleted() (first bool) {
	if f.gone {
		return false
	}
	f.gone = true
	return true
}

// reloadWith is a reload's Cmd: the history and head reads the root
// made, one after the other, as one followReloadedMsg.
func (f *follower) reloadWith(history, head tea.Cmd) tea.Cmd {
	gen, thread := f.gen, f.thread
	return func() tea.Msg {
		r := followReloadedMsg{gen: gen, thread: thread}
		if history != nil {
			r.history = history()
		}
		if head != nil {
			r.head = head()
		}
		return r
	}
}

// applied: the root took a reload's answers; while the thread is still
// followed, the floor passes before the next.
func (f *follower) applied(gen int, thread string) tea.Cmd {
	if !f.current(gen, thread) {
		return nil
	}
	return f.floor() // still reloading until it passed
}

// marker is the status bar's follow segment: who is writing the open
// thread, in the longest form that fits in room columns, or that it is
// followed; "" when it is not.
func (f *follower) marker(th *themes.Theme, room int) (live, following string) {
	if !f.on || f.busy() {
		return "", ""
	}
	if f.gone {
		return th.StatusRun.Render("✗ deleted elsewhere"), ""
	}
	if f.writer == "" {
		return "", th.StatusLabel.Render("following")
	}
	who := termtext.Line(f.writer)
	forms := []string{"● live: written by " + who, "● live: " + who}
	if pid, ok := strings.CutPrefix(who, "pid "); ok {
		forms = append(forms, "● pid "+pid)
	}
	forms = append(forms, "● live")
	for _, s := range forms[:len(forms)-1] {
		if width(s) <= room {
			return th.StatusRun.Render(s), ""
		}
	}
	return th.StatusRun.Render(forms[len(forms)-1]), ""
}

// started takes the watch's start: on, and one reload for what was
// committed before it.
func (f *follower) started(msg watchStartedMsg, gen int) (followAsk, tea.Cmd) {
	if !f.current(msg.gen, msg.thread) || msg.gen != gen {
		if msg.cancel != nil {
			msg.cancel() // a thread closed since
		}
		return followAsk{}, nil
	}
	if msg.err != nil {
		if errors.Is(msg.err, engine.ErrNoWatch) {
			return followAsk{}, nil
		}
		return followAsk{followNews: followNews{err: msg.err}}, nil
	}
	f.c, f.cancel, f.on = msg.c, msg.cancel, true
	// What was committed between the open's read and the watch's
	// start woke nobody: one reload reads it (a thread opened again
	// while another process runs it showed its first checkpoints
	// only, until its next turn).
	return followAsk{followNews{reload: true}, true}, f.wait()
}

// gotWriter takes the answer to who writes the thread, and asks again
// while someone does.
func (f *follower) gotWriter(msg writerMsg, busy bool) (followAsk, tea.Cmd) {
	if !f.current(msg.gen, msg.thread) {
		return followAsk{}, nil
	}
	f.asking = false
	if msg.err != nil {
		return followAsk{}, nil // the marker stays as it was; the next wake-up asks again
	}
	was := f.writer
	f.writer = msg.who
	if busy {
		f.writer = ""
	}
	var cmd tea.Cmd
	if f.writer != "" {
		f.asking = true
		gen, thread := f.gen, f.thread
		cmd = tea.Tick(writerEvery, func(time.Time) tea.Msg { return writerTickMsg{gen: gen, thread: thread} })
	}
	// The run elsewhere ended: its last status (done, paused, …).
	return followAsk{followNews: followNews{reload: was != "" && f.writer == "" && !busy}}, cmd
}
