package tui

// The run control (runControl): starting a run (a turn, a resume, a fork,
// a replay, an answer), taking its updates into the live strip (live.go),
// saying how it ended, stopping, killing or quitting during one, and the
// dialogs that start them (fork, discard, new thread, kill point,
// approval, breakpoints). It drives the live strip, which the root holds
// and lays out; what it asks of the root (open a dialog, re-render the
// strip, follow the run, read the thread again) is its runAsk.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/themes"
	"rewind/tui/termtext"
)

// cancelRun stops a run from a Cmd: for a worker it is a signal.
func cancelRun(r RunHandle) tea.Cmd {
	return func() tea.Msg {
		r.Cancel()
		return nil
	}
}

// nextRun is what the next run starts with: the breakpoints (b), the kill
// point armed for it (K), and how long a draft's authorization grant lasts.
type nextRun struct {
	breaks map[string]bool // "before:executor", on the open thread's graph
	// byGraph are the breakpoints of each graph the session left, by
	// name: a thread of it opened again takes them back.
	byGraph map[string]map[string]bool
	armed   string        // kill point for the next run only
	authTTL time.Duration // of a draft's authorization grant
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

// runControl starts and stops runs (the component; the file's doc).
type runControl struct {
	sess  *session   // read only: the chain a run starts on
	live  *liveStrip // the strip it drives (begin, a run's messages, dismiss)
	keys  threadKeys // its own keys are the thread view's (runKeys)
	theme *themes.Theme
	next  nextRun
}

func newRunControl(sess *session, live *liveStrip, keys threadKeys, s Settings) runControl {
	return runControl{sess: sess, live: live, keys: keys, next: newNextRun(s)}
}

func (c *runControl) setTheme(th *themes.Theme) { c.theme = th }

// SetSize: the run control draws nothing itself (its dialogs are sized by
// the root, the live strip is laid out by it).
func (c *runControl) SetSize(int, int) {}

// runKeys are the thread view's keys the run control takes, in
// threadKeyTable's order.
func (c *runControl) runKeys() []key.Binding {
	k := c.keys
	return []key.Binding{k.Fork, k.Resume, k.Stop, k.Kill, k.Drill, k.Dismiss, k.Discard, k.Approve, k.Breaks}
}

// ShortHelp: the thread view's footer lists these keys (threadKeys.footer).
func (c *runControl) ShortHelp() []key.Binding  { return c.runKeys() }
func (c *runControl) FullHelp() [][]key.Binding { return [][]key.Binding{c.runKeys()} }

// owns says whether k is one of the run control's keys.
func (c *runControl) owns(k tea.KeyMsg) bool { return key.Matches(k, c.runKeys()...) }

// runAsk is what the run control asks of the root.
type runAsk struct {
	say      string // the status line says it (sayErr: as an error)
	sayErr   bool
	clear    bool   // take the last status off the bar: a run starts
	dialog   dialog // open it
	relive   bool   // the live strip changed: re-render it
	spin     bool   // a run starts: the spinner turns
	started  bool   // a run started: the timeline follows it when shown
	shown    bool
	unfollow bool // the run wrote nothing: nothing to follow
	sync     bool // checkpoints were stored: read the listings again
	ended    bool // the run ended: its pending writes shown are stale, the head moved
	quit     bool // quit now
}

func sayErr(text string) runAsk { return runAsk{say: text, sayErr: true} }

// The messages the root routes to the run control: its keys with where
// the timeline is, the composer's text, and what its dialogs answered.
type (
	runKeyMsg struct {
		tea.KeyMsg
		at runAt
	}
	sendMsg struct {
		text  string
		draft bool
		at    runAt
	}
	replayAskMsg struct{ at runAt }
	askQuitMsg   struct{}
	// newThreadMsg: n (the new thread's form); taken says whether a name
	// is a thread already, n how many there are; on is the deps of the
	// graph it runs on (the one the TUI was started on).
	newThreadMsg struct {
		taken func(string) bool
		n     int
		on    Deps
	}
	// startRunMsg: a run to start (a new thread's first, once the root
	// opened the thread: newThreadStartMsg).
	startRunMsg struct {
		kind, from string
		in         Input
	}
	newThreadStartMsg struct {
		thread string
		in     Input
	}
	// runAskMsg is what a dialog's answer asks of the root, after the run
	// control did its part at once (reply).
	runAskMsg struct{ out runAsk }
)

// ask is a Cmd that brings msg back to the root.
func ask(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// reply is a dialog's answer: the run control changed its state when the
// dialog answered (a run begun, a quit under way), and what it asks of
// the root comes first, then cmd.
func reply(out runAsk, cmd tea.Cmd) tea.Cmd { return tea.Sequence(ask(runAskMsg{out}), cmd) }

// Update takes the run control's keys, requests and a run's messages.
func (c *runControl) Update(msg tea.Msg) (runAsk, tea.Cmd) {
	switch msg := msg.(type) {
	case runKeyMsg:
		return c.onKey(msg)
	case sendMsg:
		return c.send(msg)
	case replayAskMsg:
		return c.askReplay(msg.at)
	case askQuitMsg:
		if !c.busy() {
			return c.quit()
		}
		return runAsk{dialog: c.quitDialog()}, nil
	case newThreadMsg:
		return c.openNewThread(msg.taken, msg.n, msg.on)
	case startRunMsg:
		return c.startRun(msg.kind, msg.from, msg.in)
	case runStartedMsg:
		return c.started(msg)
	case runUpdatesMsg:
		return c.updates(msg)
	}
	return runAsk{}, nil
}

func (c *runControl) onKey(msg runKeyMsg) (runAsk, tea.Cmd) {
	k := c.keys
	switch {
	case key.Matches(msg.KeyMsg, k.Fork):
		return c.openFork(msg.at)
	case key.Matches(msg.KeyMsg, k.Resume):
		return c.resume(msg.at)
	case key.Matches(msg.KeyMsg, k.Stop):
		if c.live.run == nil {
			return runAsk{say: "no run is under way"}, nil
		}
		return runAsk{say: "stopping the run…"}, cancelRun(c.live.run)
	case key.Matches(msg.KeyMsg, k.Kill):
		return c.askKill()
	case key.Matches(msg.KeyMsg, k.Drill):
		return c.openDrill()
	case key.Matches(msg.KeyMsg, k.Dismiss):
		return runAsk{relive: c.live.dismiss()}, nil
	case key.Matches(msg.KeyMsg, k.Discard):
		return c.openDiscard(msg.at)
	case key.Matches(msg.KeyMsg, k.Approve):
		return c.openApproval()
	case key.Matches(msg.KeyMsg, k.Breaks):
		nodes := graphNodes(c.sess.graph())
		if len(nodes) == 0 {
			return sayErr("no nodes to pause at: this source does not carry the graph's declaration"), nil
		}
		return runAsk{dialog: &breakDialog{nodes: nodes, on: c.next.breaks, keys: newToggleKeys()}}, nil
	}
	return runAsk{}, nil
}

// settings are the next run's: its breakpoints and kill point.
func (c *runControl) settings() RunSettings {
	var rs RunSettings
	keys := slices.Sorted(maps.Keys(c.next.breaks))
	for _, k := range keys {
		when, node, _ := strings.Cut(k, ":")
		if when == "before" {
			rs.InterruptBefore = append(rs.InterruptBefore, node)
		} else {
			rs.InterruptAfter = append(rs.InterruptAfter, node)
		}
	}
	if c.canKill() {
		rs.KillAt = c.next.armed
	}
	return rs
}

// graphChanged sets graph to's breakpoints aside from's and takes to's
// back (each graph keeps its own: a thread of another graph opened and
// left costs none), and disarms the kill point, armed for one run on
// from's nodes. say is what changed ("": nothing).
func (c *runControl) graphChanged(from, to *engine.Graph) (say string) {
	if c.next.byGraph == nil {
		c.next.byGraph = map[string]map[string]bool{}
	}
	if from != nil {
		c.next.byGraph[from.Name] = c.next.breaks
	}
	had := len(c.next.breaks) > 0
	c.next.breaks = map[string]bool{}
	if to != nil {
		if kept := c.next.byGraph[to.Name]; kept != nil {
			c.next.breaks = kept
		}
	}
	var parts []string
	if had || len(c.next.breaks) > 0 {
		on := "none"
		if len(c.next.breaks) > 0 {
			on = strings.Join(slices.Sorted(maps.Keys(c.next.breaks)), ", ")
		}
		parts = append(parts, "breakpoints of graph "+termtext.Name(graphName(to))+": "+on)
		if had {
			parts[0] += " (graph " + termtext.Name(graphName(from)) + "'s come back on its threads)"
		}
	}
	if c.next.armed != "" {
		parts = append(parts, "kill point "+c.next.armed+" off: it was armed on graph "+termtext.Name(graphName(from)))
		c.next.armed = ""
	}
	return strings.Join(parts, "; ")
}

// graphName is g's name ("": none).
func graphName(g *engine.Graph) string {
	if g == nil {
		return ""
	}
	return g.Name
}

// armed is the kill point armed for the next run ("": none).
func (c *runControl) armed() string { return c.next.armed }

func (c *runControl) busy() bool { return c.live.busy() }

// startRun launches a run in a Cmd; kind is "run", "resume" or "fork".
func (c *runControl) startRun(kind, from string, in Input) (runAsk, tea.Cmd) {
	if c.busy() {
		return sayErr("a run is under way: wait for it, or stop it with x"), nil
	}
	c.live.begin(kind)
	ctx, runner, b, thread, rs, gen := c.sess.ctx, c.sess.deps.Runner, c.sess.deps.Backend, c.sess.thread, c.settings(), c.sess.gen
	if in.Text != "" {
		in.AuthTTL = c.next.authTTL
	}
	in.Extra = inputOptions(c.sess.deps.Extension, in)
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
	return runAsk{clear: true, relive: true, spin: true}, start
}

func (c *runControl) started(msg runStartedMsg) (runAsk, tea.Cmd) {
	msg.shown = msg.gen == c.sess.gen
	news, wait := c.live.Update(msg)
	if news.startErr != nil {
		return runAsk{relive: true, say: news.startErr.Error(), sayErr: true}, nil
	}
	c.next.ran(msg.rs.KillAt)
	return runAsk{started: true, shown: msg.shown, relive: true}, wait
}

func (c *runControl) updates(msg runUpdatesMsg) (runAsk, tea.Cmd) {
	news, wait := c.live.Update(msg)
	out := runAsk{sync: news.saved || news.finished}
	if !news.finished {
		out.relive = wait != nil
		return out, wait
	}
	final := news.final
	out.ended, out.relive = true, true
	out.unfollow = c.live.progress.checkpoints == 0 // nothing was written: there is nothing to follow
	out.say, out.sayErr = c.describeEnd(final), final.Err != nil && !errors.Is(final.Err, context.Canceled)
	out.quit = c.live.quitting
	return out, nil
}

func (c *runControl) describeEnd(u RunUpdate) string {
	res := u.Result
	var ke *KilledError
	if errors.As(u.Err, &ke) {
		return ke.Error() + ": the screen shows what is stored; r resumes in a new worker"
	}
	unreached := ""
	if c.live.killAt != "" {
		unreached = " · kill point " + c.live.killAt + " was not reached"
	}
	if u.Err != nil {
		if errors.Is(u.Err, context.Canceled) {
			return fmt.Sprintf("stopped at @%d%s: finished tasks are stored, r resumes the rest", res.Checkpoint, unreached)
		}
		var pe *engine.PendingError
		if errors.As(u.Err, &pe) {
			return fmt.Sprintf("@%d has %s (%s): r resumes them, f forks, D discards them", pe.Checkpoint, plural(len(pe.Tasks), "pending task", "pending tasks"), engine.DescribeTasks(pe.Tasks))
		}
		return "run failed" + unreached + ": " + u.Err.Error() + c.keys.fixes(u.Err)
	}
	if res.Status == engine.RunAwaitingApproval && res.Interrupt != nil {
		return fmt.Sprintf("waiting for approval at @%d: operation %s · %s%s", res.Checkpoint, res.Interrupt.Operation, c.gateAnswer(), unreached)
	}
	if res.Status == "interrupted" && res.Interrupt != nil {
		return fmt.Sprintf("paused %s %s at @%d with %s: r resumes%s", res.Interrupt.When, res.Interrupt.Node, res.Checkpoint, plural(len(res.Pending), "pending task", "pending tasks"), unreached)
	}
	verb := "done"
	switch c.live.kind {
	case "approve":
		verb = "approved, done"
	case "reject":
		verb = "rejected, done"
	}
	told := ""
	if p := c.live.progress; p != nil && p.told != nil {
		if t := p.told.Ended(); t != "" {
			told = " · " + t
		}
	}
	return fmt.Sprintf("%s at @%d%s%s%s", verb, res.Checkpoint, c.endCounts(res), unreached, told)
}

// endCounts are a finished run's model calls and message counts, each
// only where the graph has them: a graph whose nodes call no model, or
// that keeps no messages channel, gets no "0 model calls () · messages
// 0 → 0" (the engine counts the messages channel: Result.MessagesAfter).
func (c *runControl) endCounts(res engine.Result) string {
	calls := model.Counts(res.ModelCalls)
	out := ""
	if calls.Sum() > 0 {
		out += fmt.Sprintf(" · %s (%s)", plural(calls.Sum(), "model call", "model calls"), calls)
	}
	if g := c.sess.graph(); g == nil || slices.Contains(g.Channels(), "messages") {
		out += fmt.Sprintf(" · messages %d → %d", res.MessagesBefore, res.MessagesAfter)
	}
	return out
}

// send continues the current branch with a new message: on the thread's
// newest checkpoint that is a new turn; on an older branch it forks from the
// branch's end, so the message lands where the user is looking.
func (c *runControl) send(msg sendMsg) (runAsk, tea.Cmd) {
	if c.sess.thread == "" {
		return sayErr("open or create a thread first (t)"), nil
	}
	in := Input{Text: msg.text, Draft: msg.draft}
	at := msg.at
	if at.empty {
		return c.startRun("run", "", in)
	}
	leaf := at.leaf
	if leaf == nil || leaf.id == at.newest {
		return c.startRun("run", "", in)
	}
	if leaf.pending > 0 {
		return sayErr(fmt.Sprintf("this branch ends at @%s with pending tasks: f forks from it with new input (resume works on the newest checkpoint, @%s)", leaf.id, at.newest)), nil
	}
	return c.startRun("fork", leaf.id, in)
}

// quitDialog asks before quitting during a run.
func (c *runControl) quitDialog() dialog {
	q := "A run is under way. Quit now? The run is stopped: what it finished is stored, and the thread stays resumable (r here, or `rewind resume " + termtext.Name(c.sess.thread) + "`)."
	return &confirmDialog{title: "Quit during a run", question: q, keys: newQuitKeys(), onYes: func() tea.Cmd { return reply(c.quit()) }}
}

// quit stops a run under way first (its finished tasks stay stored).
func (c *runControl) quit() (runAsk, tea.Cmd) {
	if c.live.run == nil {
		return runAsk{quit: true}, nil
	}
	if c.live.stopping() {
		return runAsk{say: "stopping the run, then quitting…"}, tea.Batch(cancelRun(c.live.run),
			tea.Tick(3*time.Second, func(time.Time) tea.Msg { return quitMsg{} }))
	}
	return runAsk{quit: true}, nil
}

// shutdown stops a run under way and waits (up to timeout) for it to
// end, so the store is not closed under its feet.
func (c *runControl) shutdown(timeout time.Duration) {
	r := c.live.run
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

func (c *runControl) resume(at runAt) (runAsk, tea.Cmd) {
	if c.sess.thread == "" || at.empty {
		return sayErr("nothing to resume here"), nil
	}
	// What is on screen comes first: a paused checkpoint under the cursor
	// (say, one a fork branched from) or the paused end of the branch on
	// screen resumes where it stopped; the engine refuses one already
	// continued.
	for _, n := range []*timelineNode{at.cur, at.end} {
		if n != nil && n.id != at.newest && n.pending > 0 {
			return c.startRun("resume", n.id, Input{})
		}
	}
	if at.head == nil || at.head.pending == 0 {
		return sayErr(fmt.Sprintf("nothing to resume: the newest checkpoint @%s has no pending tasks", at.newest)), nil
	}
	return c.startRun("resume", "", Input{})
}

func (c *runControl) openFork(at runAt) (runAsk, tea.Cmd) {
	id := at.cursor
	if id == "" {
		return sayErr("no checkpoint under the cursor to fork from"), nil
	}
	if c.busy() {
		return sayErr("a run is under way: wait for it, or stop it with x"), nil
	}
	note := fmt.Sprintf("A new branch starts at @%s with this message; nothing is deleted, the old branch stays.", id)
	if n := at.cur; n != nil && n.pending > 0 {
		note += fmt.Sprintf(" Its %s (%s) %s superseded on the new branch.", plural(n.pending, "pending task", "pending tasks"), n.next, map[bool]string{true: "is", false: "are"}[n.pending == 1])
	}
	_, attachHint := inputHints(c.sess.deps.Extension)
	fields := []field{newField("Message", "", "the new input for this branch", true)}
	if attachHint != "" {
		fields = append(fields, newField("Attachment reference", "", attachHint, false))
	}
	f := newForm(c.theme, fmt.Sprintf("Fork at @%s", id), note, func(v []string) (tea.Cmd, error) {
		return reply(c.startRun("fork", id, Input{Text: v[0], Attach: attached(v, 1)})), nil
	}, fields...)
	return runAsk{dialog: f}, f.fields[0].input.Focus()
}

func (msg discardedMsg) say() (string, bool) {
	if msg.err != nil {
		return msg.err.Error(), true
	}
	return fmt.Sprintf("discarded %s at @%d", plural(len(msg.cp.Metadata.Discarded), "pending task", "pending tasks"), msg.cp.ParentID), false
}

func (c *runControl) openDiscard(at runAt) (runAsk, tea.Cmd) {
	latest := at.head
	if latest == nil || latest.pending == 0 {
		return sayErr("the newest checkpoint has no pending tasks to discard"), nil
	}
	if c.busy() {
		return sayErr("a run is under way"), nil
	}
	ctx, b, thread, gen := c.sess.ctx, c.sess.deps.Backend, c.sess.thread, c.sess.gen
	return runAsk{dialog: &confirmDialog{title: "Discard pending tasks",
		question: fmt.Sprintf("Drop the %s of @%s (%s)? This writes an update checkpoint; nothing is deleted.", plural(latest.pending, "pending task", "pending tasks"), latest.id, latest.next),
		keys:     newConfirmKeys(),
		onYes: func() tea.Cmd {
			return func() tea.Msg {
				cp, err := b.DiscardPending(ctx, thread)
				return discardedMsg{gen: gen, thread: thread, cp: cp, err: err}
			}
		}}}, nil
}

// openNewThread asks for a new thread's name and first message; taken
// says whether a name is a thread already, n how many there are, on the
// deps of the graph it runs on, which the dialog names.
func (c *runControl) openNewThread(taken func(string) bool, n int, on Deps) (runAsk, tea.Cmd) {
	if c.busy() {
		return sayErr("a run is under way: wait for it first"), nil
	}
	// A new thread is named for its graph: ticket-3 on the ticket graph.
	prefix, name, note := "thread", "", "The first message starts the thread: the graph runs at once."
	if g := graphOf(on); g != nil && g.Name != "" && !strings.ContainsFunc(g.Name, termtext.Unsafe) {
		prefix = g.Name
		note = "The first message starts the thread on graph " + g.Name + ", the one this TUI was started on: it runs at once."
	}
	for i := n + 1; ; i++ {
		name = fmt.Sprintf("%s-%d", prefix, i)
		if !taken(name) {
			break
		}
	}
	msgHint, attachHint := inputHints(on.Extension)
	fields := []field{newField("Thread name", name, prefix+"-1", true), newField("First message", "", msgHint, true)}
	if attachHint != "" {
		fields = append(fields, newField("Attachment reference", "", attachHint, false))
	}
	f := newForm(c.theme, "New thread", note, func(v []string) (tea.Cmd, error) {
		if strings.ContainsFunc(v[0], termtext.Unsafe) {
			return nil, errors.New("the thread name has control or invisible characters (escapes, bidi marks): type it again without them")
		}
		if taken(v[0]) {
			return nil, fmt.Errorf("thread %s exists: open it from the list", v[0])
		}
		return ask(newThreadStartMsg{thread: v[0], in: Input{Text: v[1], Attach: attached(v, 2)}}), nil
	}, fields...)
	return runAsk{dialog: f}, f.fields[0].input.Focus()
}

// attached is the attachment reference a form's field i holds, if the
// form has that field and it is filled.
func attached(v []string, i int) []string {
	if i >= len(v) || v[i] == "" {
		return nil
	}
	return []string{v[i]}
}

// gateAnswer says how a person answers a gate: the dialog (a) of an
// extension that has one (Gater, as openApproval asks), or the state its
// gate reads, edited (e) and resumed (r): the engine has no other way to
// hand a node a value.
func (c *runControl) gateAnswer() string {
	if _, ok := c.sess.deps.Extension.(Gater); ok {
		return c.keys.Approve.Help().Key + " answers"
	}
	return fmt.Sprintf("the graph reads the answer from its state: %s edits it, then %s resumes", c.keys.EditState.Help().Key, c.keys.Resume.Help().Key)
}
