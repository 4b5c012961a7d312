package tui

// Runs, for the root model: starting one (a turn, a resume, a fork, an
// answer), following its updates into the live strip (live.go), saying how
// it ended, and stopping or quitting during one. The dialogs that start
// them (fork, discard, new thread) are here too.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/tui/termtext"
)

// cancelRun stops a run from a Cmd: for a worker it is a signal.
func cancelRun(r RunHandle) tea.Cmd {
	return func() tea.Msg {
		r.Cancel()
		return nil
	}
}

// liveThread is the thread the live strip shows: none off the thread view.
func (m *Model) liveThread() string {
	if m.screen != screenThread {
		return ""
	}
	return m.sess.thread
}

// refreshLive re-renders the live strip and relays out when its height
// changed.
func (m *Model) refreshLive() {
	before := m.live.Height()
	m.live.render(m.liveThread())
	if m.live.Height() != before {
		m.relayout()
	}
}

// nextRun is what the next run starts with: the breakpoints (b), the kill
// point armed for it (K), and how long a draft's authorization grant lasts.
type nextRun struct {
	breaks  map[string]bool // "before:executor"
	armed   string          // kill point for the next run only
	authTTL time.Duration   // of a draft's authorization grant
}

// arm arms the kill point name for the next run ("": none).
func (n *nextRun) arm(name string) { n.armed = name }

// ran is a run started with kill point killAt: a kill point is armed for
// one run.
func (n *nextRun) ran(killAt string) {
	if killAt != "" && killAt == n.armed {
		n.armed = ""
	}
}

func newNextRun(s Settings) nextRun {
	n := nextRun{breaks: map[string]bool{}, authTTL: s.AuthTTL}
	if n.authTTL <= 0 {
		n.authTTL = time.Hour
	}
	for _, node := range s.InterruptBefore {
		n.breaks["before:"+node] = true
	}
	for _, node := range s.InterruptAfter {
		n.breaks["after:"+node] = true
	}
	return n
}

func (m *Model) runSettings() RunSettings {
	var rs RunSettings
	keys := slices.Sorted(maps.Keys(m.next.breaks))
	for _, k := range keys {
		when, node, _ := strings.Cut(k, ":")
		if when == "before" {
			rs.InterruptBefore = append(rs.InterruptBefore, node)
		} else {
			rs.InterruptAfter = append(rs.InterruptAfter, node)
		}
	}
	if m.canKill() {
		rs.KillAt = m.next.armed
	}
	return rs
}

func (m *Model) busy() bool { return m.live.run != nil || m.live.starting }

// startRun launches a run in a Cmd; kind is "run", "resume" or "fork".
func (m *Model) startRun(kind, from string, in Input) tea.Cmd {
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	m.live.begin(kind)
	m.clearFlash()
	ctx, runner, b, thread, rs, gen := m.sess.ctx, m.sess.deps.Runner, m.sess.deps.Backend, m.sess.thread, m.runSettings(), m.sess.gen
	if in.Text != "" {
		in.AuthTTL = m.next.authTTL
	}
	m.refreshLive()
	start := func() tea.Msg {
		var r RunHandle
		var err error
		var head *headInfo
		switch kind {
		case "resume":
			// What is stored before the resume starts tells which tasks it
			// will reuse and which it redispatches.
			rs.At = num(from)
			head, _ = readHeadAt(ctx, b, thread, rs.At)
			r, err = runner.Resume(ctx, thread, rs)
		case "fork":
			r, err = runner.Fork(ctx, thread, num(from), in, rs)
		default:
			r, err = runner.Start(ctx, thread, in, rs)
		}
		return runStartedMsg{gen: gen, thread: thread, kind: kind, run: r, err: err, rs: rs, head: head}
	}
	return tea.Batch(start, m.spin.Tick)
}

func (m *Model) onRunStarted(msg runStartedMsg) tea.Cmd {
	msg.shown = msg.gen == m.sess.gen
	news, wait := m.live.Update(msg)
	if news.startErr != nil {
		m.refreshLive()
		return m.setFlash(news.startErr.Error(), true)
	}
	m.timeline.followNextRun(msg.gen == m.sess.gen)
	m.next.ran(msg.rs.KillAt)
	m.refreshLive()
	return wait
}

func (m *Model) onRunUpdates(msg runUpdatesMsg) tea.Cmd {
	news, wait := m.live.Update(msg)
	var cmds []tea.Cmd
	if news.saved || news.finished {
		cmds = append(cmds, m.sync(false))
	}
	if !news.finished {
		if wait != nil {
			m.refreshLive()
		}
		return tea.Batch(append(cmds, wait)...)
	}
	final := news.final
	if c, ok := m.dialog.(*confirmDialog); ok && c.ofRun {
		m.dialog = nil // the run it asked about is over: nothing left to kill
		m.logStatus("the run ended before the kill was confirmed: no worker is left to kill", false)
	}
	if m.live.progress.checkpoints == 0 {
		m.timeline.followNextRun(false) // nothing was written: there is nothing to follow
	}
	// The run stored writes for checkpoints it did not finish (a kill, a
	// failure): what was shown of them is out of date.
	m.cache.dropPending(m.sess.thread)
	if m.cur != nil && len(m.cur.cp.Tasks) > 0 {
		m.cur = nil // "loading…" rather than writes that may be out of date
		cmds = append(cmds, m.cursorMoved())
	}
	m.refreshLive()
	cmds = append(cmds, m.reloadHead())
	cmds = append(cmds, m.setFlash(m.describeEnd(final), final.Err != nil && !errors.Is(final.Err, context.Canceled)))
	if m.live.quitting {
		cmds = append(cmds, tea.Quit)
	}
	return tea.Batch(cmds...)
}

func (m *Model) describeEnd(u RunUpdate) string {
	res := u.Result
	calls := model.Counts(res.ModelCalls)
	var ke *KilledError
	if errors.As(u.Err, &ke) {
		return ke.Error() + ": the screen shows what is stored; r resumes in a new worker"
	}
	unreached := ""
	if m.live.killAt != "" {
		unreached = " · kill point " + m.live.killAt + " was not reached"
	}
	if u.Err != nil {
		if errors.Is(u.Err, context.Canceled) {
			return fmt.Sprintf("stopped at @%d: finished tasks are stored, r resumes the rest", res.Checkpoint)
		}
		var pe *engine.PendingError
		if errors.As(u.Err, &pe) {
			return fmt.Sprintf("@%d has %s (%s): r resumes them, f forks, D discards them", pe.Checkpoint, plural(len(pe.Tasks), "pending task", "pending tasks"), engine.DescribeTasks(pe.Tasks))
		}
		return "run failed: " + u.Err.Error() + m.keys.fixes(u.Err)
	}
	if res.Status == engine.RunAwaitingApproval && res.Interrupt != nil {
		return fmt.Sprintf("waiting for approval at @%d: operation %s · a answers%s", res.Checkpoint, res.Interrupt.Operation, unreached)
	}
	if res.Status == "interrupted" && res.Interrupt != nil {
		return fmt.Sprintf("paused %s %s at @%d with %s: r resumes%s", res.Interrupt.When, res.Interrupt.Node, res.Checkpoint, plural(len(res.Pending), "pending task", "pending tasks"), unreached)
	}
	verb := "done"
	switch m.live.kind {
	case "approve":
		verb = "approved, done"
	case "reject":
		verb = "rejected, done"
	}
	refused := ""
	if p := m.live.progress; p != nil && p.refused != "" && !p.extractive {
		refused = " · ! summary refused: " + p.refused
	} else if p != nil && p.extractive {
		refused = " · compacted by rewind (the model's summaries were refused twice)"
	}
	return fmt.Sprintf("%s at @%d · %s (%s) · messages %d → %d%s%s", verb, res.Checkpoint, plural(calls.Sum(), "model call", "model calls"), calls, res.MessagesBefore, res.MessagesAfter, unreached, refused)
}

// send continues the current branch with a new message: on the thread's
// newest checkpoint that is a new turn; on an older branch it forks from the
// branch's end, so the message lands where the user is looking.
func (m *Model) send(text string) tea.Cmd {
	if m.sess.thread == "" {
		return m.setFlash("open or create a thread first (t)", true)
	}
	in := Input{Text: text, Draft: m.composer.draft}
	if m.timeline.tree.len() == 0 {
		return m.startRun("run", "", in)
	}
	leaf := m.timeline.tree.nodes[m.timeline.leaf]
	if leaf == nil || leaf.id == m.timeline.tree.maxID {
		return m.startRun("run", "", in)
	}
	if leaf.pending > 0 {
		return m.setFlash(fmt.Sprintf("this branch ends at @%s with pending tasks: f forks from it with new input (resume works on the newest checkpoint, @%s)", leaf.id, m.timeline.tree.maxID), true)
	}
	return m.startRun("fork", leaf.id, in)
}

func (m *Model) onDeleted(msg deletedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFlash(msg.err.Error(), true)
	}
	cmds := []tea.Cmd{m.setFlash("deleted thread "+msg.thread, false), loadThreads(m.sess.ctx, m.sess.deps.Source)}
	if msg.thread == m.sess.thread {
		m.sess.thread = ""
		m.follow.stop()
		m.sess.gen++
		m.timeline.reset("")
		m.cur = nil
		m.cache.drop(msg.thread)
		m.afterTreeChange()
		m.syncPanes()
	}
	return tea.Batch(cmds...)
}

// askQuit quits at once when no run is under way; during one it asks
// first, saying the run stays resumable.
func (m *Model) askQuit() tea.Cmd {
	if !m.busy() {
		return m.quit()
	}
	m.openDialog(m.quitDialog())
	return nil
}

// quitDialog asks before quitting during a run.
func (m *Model) quitDialog() dialog {
	q := "A run is under way. Quit now? The run is stopped: what it finished is stored, and the thread stays resumable (r here, or `rewind resume " + termtext.Name(m.sess.thread) + "`)."
	return &confirmDialog{title: "Quit during a run", question: q, keys: newQuitKeys(), onYes: m.quit}
}

// quit stops a run under way first (its finished tasks stay stored).
func (m *Model) quit() tea.Cmd {
	if m.live.run == nil {
		return tea.Quit
	}
	if m.live.stopping() {
		return tea.Batch(cancelRun(m.live.run), m.setFlash("stopping the run, then quitting…", false),
			tea.Tick(3*time.Second, func(time.Time) tea.Msg { return quitMsg{} }))
	}
	return tea.Quit
}

// Shutdown stops a run under way and waits (up to timeout) for it to end,
// so the store is not closed under its feet.
func (m *Model) Shutdown(timeout time.Duration) {
	m.lessons.stop(timeout)
	m.follow.stop()
	r := m.live.run
	if r == nil {
		return
	}
	r.Cancel()
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-r.Updates():
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

func (m *Model) resume() tea.Cmd {
	if m.sess.thread == "" || m.timeline.tree.len() == 0 {
		return m.setFlash("nothing to resume here", true)
	}
	// What is on screen comes first: a paused checkpoint under the cursor
	// (say, one a fork branched from) or the paused end of the branch on
	// screen resumes where it stopped; the engine refuses one already
	// continued.
	for _, id := range []string{m.timeline.tree.cursor, m.timeline.tree.leaf()} {
		if n := m.timeline.tree.nodes[id]; n != nil && id != m.timeline.tree.maxID && n.pending > 0 {
			return m.startRun("resume", id, Input{})
		}
	}
	latest := m.timeline.tree.nodes[m.timeline.tree.maxID]
	if latest == nil || latest.pending == 0 {
		return m.setFlash(fmt.Sprintf("nothing to resume: the newest checkpoint @%s has no pending tasks", m.timeline.tree.maxID), true)
	}
	return m.startRun("resume", "", Input{})
}

func (m *Model) openFork() tea.Cmd {
	id := m.timeline.tree.cursor
	if id == "" {
		return m.setFlash("no checkpoint under the cursor to fork from", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	note := fmt.Sprintf("A new branch starts at @%s with this message; nothing is deleted, the old branch stays.", id)
	if n := m.timeline.tree.nodes[id]; n != nil && n.pending > 0 {
		note += fmt.Sprintf(" Its %s (%s) are superseded on the new branch.", plural(n.pending, "pending task", "pending tasks"), n.next)
	}
	f := newForm(m.theme, fmt.Sprintf("Fork at @%s", id), note, func(v []string) (tea.Cmd, error) {
		var attach []string
		if v[1] != "" {
			attach = []string{v[1]}
		}
		return m.startRun("fork", id, Input{Text: v[0], Attach: attach}), nil
	}, newField("Message", "", "the new input for this branch", true), newField("Attachment reference", "", "e.g. s3://tickets/photo.jpg", false))
	m.openDialog(f)
	return f.fields[0].input.Focus()
}

func (msg discardedMsg) say() (string, bool) {
	if msg.err != nil {
		return msg.err.Error(), true
	}
	return fmt.Sprintf("discarded %s at @%d", plural(len(msg.cp.Metadata.Discarded), "pending task", "pending tasks"), msg.cp.ParentID), false
}

// onDiscarded: the status line says what was discarded; the timeline and
// the head read the thread again for the update checkpoint.
func (m *Model) onDiscarded(msg discardedMsg) tea.Cmd {
	if msg.err != nil {
		return m.status.say(msg)
	}
	return tea.Batch(m.status.say(msg), m.sync(true), m.reloadHead())
}

func (m *Model) openDiscard() tea.Cmd {
	latest := m.timeline.tree.nodes[m.timeline.tree.maxID]
	if latest == nil || latest.pending == 0 {
		return m.setFlash("the newest checkpoint has no pending tasks to discard", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way", true)
	}
	ctx, b, thread, gen := m.sess.ctx, m.sess.deps.Backend, m.sess.thread, m.sess.gen
	m.openDialog(&confirmDialog{title: "Discard pending tasks",
		question: fmt.Sprintf("Drop the %s of @%s (%s)? This writes an update checkpoint; nothing is deleted.", plural(latest.pending, "pending task", "pending tasks"), latest.id, latest.next),
		keys:     newConfirmKeys(),
		onYes: func() tea.Cmd {
			return func() tea.Msg {
				cp, err := b.DiscardPending(ctx, thread)
				return discardedMsg{gen: gen, thread: thread, cp: cp, err: err}
			}
		}})
	return nil
}

func (m *Model) openNewThread() tea.Cmd {
	if m.busy() {
		return m.setFlash("a run is under way: wait for it first", true)
	}
	name := ""
	for i := len(m.threads.threads) + 1; ; i++ {
		name = fmt.Sprintf("ticket-%d", i)
		if !m.threads.find(name) {
			break
		}
	}
	f := newForm(m.theme, "New thread", "The first message starts the thread: the graph runs at once.", func(v []string) (tea.Cmd, error) {
		if strings.ContainsFunc(v[0], termtext.Unsafe) {
			return nil, errors.New("the thread name has control or invisible characters (escapes, bidi marks): type it again without them")
		}
		if m.threads.find(v[0]) {
			return nil, fmt.Errorf("thread %s exists: open it from the list", v[0])
		}
		var attach []string
		if v[2] != "" {
			attach = []string{v[2]}
		}
		open := m.openThread(v[0])
		return tea.Sequence(open, m.startRun("run", "", Input{Text: v[1], Attach: attach})), nil
	}, newField("Thread name", name, "ticket-1", true),
		newField("First message", "", "e.g. My order SO20260901 hasn't arrived: where is the parcel?", true),
		newField("Attachment reference", "", "e.g. s3://tickets/SO20260901/photo.jpg", false))
	m.openDialog(f)
	return f.fields[0].input.Focus()
}
