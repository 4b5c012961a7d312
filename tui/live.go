package tui

// The live area: a strip between the panes and the composer that shows what
// a run is doing right now (the superstep's tasks, the model calls
// streaming their answers), and, between runs, what a crash drill needs:
// after a kill, the last checkpoint with its pending tasks and which of them
// already stored their writes; after a resume, which tasks were
// redispatched and which reused, with the resume phase's model calls; at an
// approval gate, the draft waiting for an answer.

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/themes"
	"rewind/tui/termtext"
)

// liveStrip is the live area as a component: it holds the run under way
// (its handle, kind, worker, kill point, progress and streams) and what the
// last one left (the head it reads, a kill, a resume phase, an approval
// answer), and renders them into lines when they change; View only joins
// them. The root routes run messages to Update and lays the strip out
// between the panes and the composer.
type liveStrip struct {
	theme  *themes.Theme
	w, h   int    // the screen's: the strip takes at most liveMax(h) rows
	thread string // the thread shown ("" off the thread view: nothing shows)
	keys   liveKeys
	// scrub is the timeline's keys (h/l scrub during a run and at a gate
	// too): the footer asks it for them.
	scrub   help.KeyMap
	canKill func() bool // runs happen in workers that can be killed

	// The run under way.
	run        RunHandle
	starting   bool
	kind       string // "run", "resume", "fork", "approve", "reject", "replay"
	pid        int    // its worker process, 0 in-process
	killAt     string // the kill point it carries
	killNotice string // the kill point it reached
	progress   *progress
	// ext is the graph's extension: a Narrator tells its own events.
	ext      Extension
	streams  *streams // model calls streaming in the run under way
	quitting bool     // quit once the run under way has stopped (runs.go)

	// Between runs.
	head        *headInfo // the thread's newest checkpoint
	headLoading int       // reads of it in flight
	// costsLoading: a read of the thread's costs is in flight (wantCosts,
	// live_head.go).
	costsLoading bool
	killed       *killInfo   // the last run ended by SIGKILL
	answer       *answerInfo // the approval answer under way or just given
	phase        *phase      // the resume phase under way or just ended

	lines []string // rendered by render, joined by View
}

func newLiveStrip(keys threadKeys, scrub help.KeyMap, canKill func() bool, ext Extension) liveStrip {
	return liveStrip{keys: newLiveKeys(keys), scrub: scrub, canKill: canKill, ext: ext}
}

// setTheme takes the theme the strip renders in (the root re-renders it).
func (s *liveStrip) setTheme(th *themes.Theme) { s.theme = th }

// SetSize takes the screen's size.
func (s *liveStrip) SetSize(w, h int) { s.w, s.h = w, h }

// Height is how many rows the strip takes now.
func (s *liveStrip) Height() int { return len(s.lines) }

// View is the strip's lines, each ending in a newline (none when empty).
func (s *liveStrip) View() string {
	var b strings.Builder
	for _, l := range s.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// render re-renders the lines for thread ("" when the thread view is not
// shown).
func (s *liveStrip) render(thread string) {
	s.thread = thread
	s.lines = s.buildLive()
}

func (s *liveStrip) busy() bool { return s.run != nil || s.starting }

// readingHead counts a read of the head sent.
func (s *liveStrip) readingHead() { s.headLoading++ }

// headRead takes a read of the head that came back: h is kept when the
// read is of the thread shown (current) and did not fail.
func (s *liveStrip) headRead(h *headInfo, current bool) {
	s.headLoading = max(s.headLoading-1, 0)
	if current {
		s.head = h
	}
}

// wantsCosts says whether the head's costs are still to be read (and none
// are being read); it marks them as being read.
func (s *liveStrip) wantsCosts() bool {
	if s.head == nil || s.head.costsRead || s.costsLoading {
		return false
	}
	s.costsLoading = true
	return true
}

// costsRead takes a read of the costs of head that came back (as
// headRead, current says it is of the thread shown): kept is false when it
// is not, or the head moved on meanwhile (they are read again for the new
// one).
func (s *liveStrip) costsRead(head int64, costs *engine.Costs, current bool) (kept bool) {
	s.costsLoading = false
	if !current || s.head == nil || s.head.cp.ID != head {
		return false
	}
	s.head.costs, s.head.costsRead = costs, true
	return true
}

// begin marks a run of kind as starting (its start Cmd is in flight).
func (s *liveStrip) begin(kind string) { s.starting, s.kind = true, kind }

// useExtension takes the extension of the graph now run (a Narrator
// tells its events).
func (s *liveStrip) useExtension(x Extension) { s.ext = x }

// forget drops what the last run left: another thread is being opened.
func (s *liveStrip) forget() { s.head, s.killed, s.phase, s.answer = nil, nil, nil, nil }

// stopping marks the run under way as stopping for a quit; first says
// whether it was not already.
func (s *liveStrip) stopping() (first bool) {
	first, s.quitting = !s.quitting, true
	return first
}

// runNews is what a run message changed that the root acts on.
type runNews struct {
	startErr error // the run did not start
	saved    bool  // a checkpoint was stored
	finished bool  // the run ended, with final
	final    RunUpdate
	// The head's costs came (costs: the inspector's header shows them),
	// or came for a head since moved on (costsAgain: read them again).
	costs, costsAgain bool
}

// Update takes the messages of the run under way: its start and batches
// of its updates (the Cmd waits for the next batch); and the head's costs.
func (s *liveStrip) Update(msg tea.Msg) (runNews, tea.Cmd) {
	switch msg := msg.(type) {
	case runStartedMsg:
		s.starting = false
		if msg.err != nil {
			return runNews{startErr: msg.err}, nil
		}
		s.start(msg, msg.shown)
		return runNews{}, waitRun(msg.run)
	case runUpdatesMsg:
		if msg.run != s.run || s.run == nil {
			return runNews{}, nil
		}
		var n runNews
		n.saved, n.finished, n.final = s.apply(msg.updates)
		if !n.finished {
			return n, waitRun(s.run)
		}
		s.end(n.final)
		return n, nil
	case costsMsg:
		if s.costsRead(msg.head, msg.costs, msg.current) {
			return runNews{costs: true}, nil
		}
		return runNews{costsAgain: msg.current}, nil
	}
	return runNews{}, nil
}

// headOf is the head when it is the thread's.
func (s *liveStrip) headOf(thread string) *headInfo {
	if s.head != nil && s.head.thread != thread {
		return nil
	}
	return s.head
}

// liveKeys are the thread view's keys the live strip puts in the footer
// (newLiveKeys copies them, as rebound).
type liveKeys struct {
	Pane, Log, Fork, Stop, Kill, Approve, Discard, Resume, Quit, Help, Drill, Dismiss key.Binding
}

// liveScrubAt is the first footer place after the timeline's keys (h/l),
// which the strip's footer puts between the keys to look around and
// those that act on the run.
const liveScrubAt = 4

// liveKeyTable: every binding is the thread view's; the table gives
// their columns and their places and words in the footer.
var liveKeyTable = keyTable[liveKeys]{
	helpRow(0, nil, "", func(k *liveKeys) *key.Binding { return &k.Stop }).inFooter(4, "stop"),
	helpRow(0, nil, "", func(k *liveKeys) *key.Binding { return &k.Kill }).inFooter(5, "kill worker"),
	helpRow(0, nil, "", func(k *liveKeys) *key.Binding { return &k.Drill }),
	helpRow(0, nil, "", func(k *liveKeys) *key.Binding { return &k.Pane }).inFooter(1, "pane"),
	helpRow(0, nil, "", func(k *liveKeys) *key.Binding { return &k.Log }).inFooter(2, "log"),
	helpRow(1, nil, "", func(k *liveKeys) *key.Binding { return &k.Resume }).inFooter(8, "resume"),
	helpRow(1, nil, "", func(k *liveKeys) *key.Binding { return &k.Discard }).inFooter(7, "discard"),
	helpRow(1, nil, "", func(k *liveKeys) *key.Binding { return &k.Approve }).inFooter(6, "approve/reject"),
	helpRow(1, nil, "", func(k *liveKeys) *key.Binding { return &k.Dismiss }),
	helpRow(1, nil, "", func(k *liveKeys) *key.Binding { return &k.Fork }).inFooter(3, "fork"),
	helpRow(2, nil, "", func(k *liveKeys) *key.Binding { return &k.Quit }).inFooter(9, "quit"),
	helpRow(2, nil, "", func(k *liveKeys) *key.Binding { return &k.Help }).inFooter(10, ""),
}

func newLiveKeys(k threadKeys) liveKeys {
	return liveKeys{Pane: k.FocusNext, Log: k.Log, Fork: k.Fork, Stop: k.Stop, Kill: k.Kill, Approve: k.Approve,
		Discard: k.Discard, Resume: k.Resume, Quit: k.Quit, Help: k.Help, Drill: k.Drill, Dismiss: k.Dismiss}
}

// FullHelp lists the keys that act on what the strip shows, and those
// its footer shows.
func (k liveKeys) FullHelp() [][]key.Binding { return liveKeyTable.fullHelp(k, 3, nil) }

// ShortHelp puts the keys that matter now first: kill during a run, resume
// after a kill, the answer at an approval gate; nil when nothing is
// particular (the thread view's own keys then).
func (s *liveStrip) ShortHelp() []key.Binding {
	on, ok := s.footerKeys()
	if !ok {
		return nil
	}
	shown := func(before bool) func(keyRow[liveKeys]) bool {
		return func(r keyRow[liveKeys]) bool {
			return len(r.field(&on).Keys()) > 0 && (r.foot.at < liveScrubAt) == before
		}
	}
	// The timeline's keys (h/l) between them: they scrub from any focus.
	bs := liveKeyTable.footerOf(on, shown(true))
	if s.scrub != nil {
		bs = append(bs, s.scrub.ShortHelp()...)
	}
	return append(bs, liveKeyTable.footerOf(on, shown(false))...)
}

// footerKeys are the strip's keys the footer shows now (the others left
// unbound); false when nothing is particular.
func (s *liveStrip) footerKeys() (liveKeys, bool) {
	k, on := s.keys, liveKeys{Quit: s.keys.Quit, Help: s.keys.Help}
	head := s.headOf(s.thread)
	switch {
	case s.busy() && s.canKill():
		on.Pane, on.Log, on.Stop, on.Kill = k.Pane, k.Log, k.Stop, k.Kill
	case s.busy():
		on.Pane, on.Log, on.Stop = k.Pane, k.Log, k.Stop
	case head != nil && head.gate != nil:
		on.Fork, on.Approve = k.Fork, k.Approve
	case head != nil && len(head.cp.Tasks) > 0:
		on.Fork, on.Discard, on.Resume = k.Fork, k.Discard, k.Resume
	default:
		return liveKeys{}, false
	}
	return on, true
}

// FullHelp lists the strip's keys (liveKeyTable).
func (s *liveStrip) FullHelp() [][]key.Binding { return s.keys.FullHelp() }

// start takes a run that started.
func (s *liveStrip) start(msg runStartedMsg, current bool) {
	s.run = msg.run
	s.progress = newProgress(msg.kind)
	if n, ok := s.ext.(Narrator); ok {
		s.progress.told = n.Narrate()
	}
	s.kind, s.killAt, s.killNotice, s.pid = msg.kind, msg.rs.KillAt, "", 0
	if k, ok := msg.run.(Killer); ok {
		s.pid = k.Pid()
	}
	s.killed, s.phase, s.answer = nil, nil, nil
	if (msg.kind == "approve" || msg.kind == "reject") && msg.answer != nil {
		s.answer = msg.answer
	}
	if msg.kind == "resume" && msg.head != nil && current && len(msg.head.cp.Tasks) > 0 {
		s.phase = newPhase(msg.head, s.pid)
	}
	s.streams = newStreams()
}

// apply takes a batch of the run's updates: saved is whether a checkpoint
// was stored, finished whether the run ended (with final).
func (s *liveStrip) apply(updates []RunUpdate) (saved, finished bool, final RunUpdate) {
	for _, u := range updates {
		if u.Event != nil {
			s.progress.apply(*u.Event)
			if s.phase != nil {
				s.phase.apply(*u.Event)
			}
			if u.Event.Type == engine.EventCheckpointSaved {
				saved = true
			}
		}
		if u.Delta != nil && s.streams != nil {
			s.streams.apply(*u.Delta)
		}
		if u.Kill != "" {
			s.killNotice = u.Kill
		}
		if u.Done {
			finished, final = true, u
		}
	}
	return saved, finished, final
}

// end takes the run's last update: what ended it stays shown.
func (s *liveStrip) end(final RunUpdate) {
	s.run = nil
	var ke *KilledError
	if errors.As(final.Err, &ke) {
		s.killed = &killInfo{pid: ke.Pid, point: ke.Point}
		s.phase = nil // the kill report shows where the resume stopped
	}
	if s.phase != nil {
		s.phase.finish(final.Result, final.Err)
	}
	if s.answer != nil {
		s.answer.ended = s.killed == nil
	}
	s.streams = nil
	s.head = nil // read again: the run moved it
}

// dismiss hides what the last run left; false when nothing was shown.
func (s *liveStrip) dismiss() bool {
	if s.killed == nil && s.phase == nil && s.answer == nil {
		return false
	}
	s.killed, s.phase, s.answer = nil, nil, nil
	return true
}

// --- rendering ---

// liveMax is the most rows the live area takes: two fifths of the body.
func liveMax(h int) int { return max((h-3)*2/5, 2) }

// buildLive renders the live area for the current state; render calls it
// when something it shows changed.
func (s *liveStrip) buildLive() []string {
	if s.thread == "" || s.w < minWidth || s.h < minHeight {
		return nil
	}
	head := s.headOf(s.thread)
	limit := liveMax(s.h)
	var title string
	var body []string
	var tail []string // shown last, trimmed first (streams)
	switch {
	case s.busy():
		title, body, tail = s.liveRun()
	case s.killed != nil:
		title, body = s.liveKilled(head)
	case s.phase != nil && s.phase.figure != nil:
		title, body = s.livePhase()
	case s.answer != nil && s.answer.ended && head != nil:
		title, body = s.liveAnswer(head)
	case head != nil && head.gate != nil:
		title, body = s.liveGate(head.gate)
	case head != nil && len(head.cp.Tasks) > 0:
		title, body = s.livePending(head)
	default:
		return nil
	}
	room := limit - 1
	if len(body)+len(tail) > room {
		// Keep the newest streams that fit beside the body (at least one),
		// then fold what is left of the body into a "more" line.
		keepTail := min(len(tail), max(room-len(body), 1))
		tail = tail[len(tail)-keepTail:]
		if over := len(body) + len(tail) - room; over > 0 {
			keepBody := max(len(body)-over-1, 0)
			hidden := len(body) - keepBody
			body = append(body[:keepBody:keepBody], s.theme.Fold.Render(fmt.Sprintf("  … %d more line(s): the inspector (3) lists every pending task", hidden)))
		}
	}
	lines := append(body, tail...)
	if len(lines) > room {
		lines = lines[:room]
	}
	out := make([]string, 0, 1+len(lines))
	out = append(out, rule(s.theme, title, s.w))
	for _, l := range lines {
		out = append(out, fit(l, s.w))
	}
	return out
}

func (s *liveStrip) kindWord() string {
	switch s.kind {
	case "approve":
		return "approve and resume"
	case "reject":
		return "reject and resume"
	case "":
		return "run"
	}
	return s.kind
}

// liveRun: the run under way.
func (s *liveStrip) liveRun() (string, []string, []string) {
	th := s.theme
	title := "live · " + s.kindWord()
	switch {
	case s.starting:
		title += " · starting…"
	case s.pid > 0:
		title += fmt.Sprintf(" · worker pid %d · %s kills it", s.pid, s.keys.Kill.Help().Key)
	default:
		title += " · in-process"
	}
	if s.killAt != "" {
		title += " · ✝ dies at " + s.killAt
	}
	var body []string
	if s.killNotice != "" {
		body = append(body, th.Error.Render("  ✝ kill point "+termtext.Line(s.killNotice)+" reached: the worker kills itself (SIGKILL)"))
	}
	if p := s.phase; p != nil {
		if p.over {
			f := phaseFigure{calls: p.calls, reused: len(p.plan.Reused()), redispatched: p.toRun()}
			body = append(body, th.StatusDone.Render("  ✓ "+f.String()))
		} else {
			body = append(body, th.Strong.Render(fmt.Sprintf("  resume from @%d: %d to redispatch, %d reused · %s so far", p.from, p.toRun(), len(p.tasks)-p.toRun(), plural(p.calls, "model call", "model calls"))))
			for _, t := range p.tasks {
				body = append(body, s.phaseRow(t, true))
			}
		}
	}
	if s.phase == nil || s.phase.over {
		body = append(body, s.stepRows()...)
	}
	var tail []string
	if s.streams != nil {
		for _, c := range s.streams.calls {
			tail = append(tail, s.streamRow(c))
		}
	}
	return title, body, tail
}

func (s *liveStrip) phaseRow(t *phaseTask, live bool) string {
	th := s.theme
	label := fmt.Sprintf("%-24s", t.label) + " " + th.Muted.Render(shortID(t.id))
	calls := ""
	if t.calls > 0 {
		calls = " · " + plural(t.calls, "model call", "model calls")
	}
	switch t.state {
	case taskReused:
		return "  " + th.StatusRedo.Render("↺ ") + th.Text.Render(label) + th.Muted.Render("  skipped: its writes were stored before, reused, not run again")
	case taskRunning:
		return "  " + th.StatusRun.Render("● ") + th.Text.Render(label) + th.Accent.Render("  redispatched · running") + th.Muted.Render(calls)
	case taskDone:
		return "  " + th.StatusDone.Render("✓ ") + th.Text.Render(label) + th.StatusDone.Render("  redispatched · done") + th.Muted.Render(calls)
	case taskStopped:
		return "  " + th.StatusPending.Render("⏸ ") + th.Text.Render(label) + th.Muted.Render("  redispatched · "+t.why) + th.Muted.Render(calls)
	}
	if live {
		return "  " + th.StatusPending.Render("○ ") + th.Text.Render(label) + th.Muted.Render("  to redispatch")
	}
	return "  " + th.StatusPending.Render("○ ") + th.Text.Render(label) + th.Muted.Render("  not run (the run stopped first)")
}

// stepRows lists the current superstep's tasks from the run's events.
func (s *liveStrip) stepRows() []string {
	p := s.progress
	if p == nil {
		return nil
	}
	th := s.theme
	var rows []string
	order := append([]string(nil), p.order...)
	sort.SliceStable(order, func(i, j int) bool { return p.labels[order[i]] < p.labels[order[j]] })
	for _, id := range order {
		label := fmt.Sprintf("%-24s", p.labels[id]) + " " + th.Muted.Render(shortID(id))
		calls := ""
		if n := p.taskCalls[id]; n > 0 {
			calls = " · " + plural(n, "model call", "model calls")
		}
		switch {
		case p.reused[id]:
			rows = append(rows, "  "+th.StatusRedo.Render("↺ ")+th.Text.Render(label)+th.Muted.Render("  reused: writes stored before"))
		case p.done[id]:
			rows = append(rows, "  "+th.StatusDone.Render("✓ ")+th.Text.Render(label)+th.StatusDone.Render("  done")+th.Muted.Render(calls))
		default:
			rows = append(rows, "  "+th.StatusRun.Render("● ")+th.Text.Render(label)+th.Accent.Render("  running")+th.Muted.Render(calls))
		}
	}
	if waiting := p.toRun - len(p.order); waiting > 0 && len(p.order) > 0 {
		rows = append(rows, th.Muted.Render(fmt.Sprintf("  … %d more task(s) of this superstep not started yet", waiting)))
	}
	return rows
}

func (s *liveStrip) roleStyle(role string) lipgloss.Style {
	switch role {
	case model.RoleExecutor:
		return s.theme.SpeakerExecutor
	case model.RoleCritic:
		return s.theme.SpeakerCritic
	case model.RoleReply:
		return s.theme.SpeakerReply
	}
	return s.theme.SpeakerOther
}

// streamRow shows a call's label and the tail of what it has said so far.
func (s *liveStrip) streamRow(c *callStream) string {
	th := s.theme
	mark := th.Accent.Render(" ▍")
	switch {
	case c.err != "":
		mark = th.Error.Render(" ✗ " + trunc(termtext.Error(c.err), 40))
	case c.done:
		mark = th.StatusDone.Render(" ✓")
	}
	head := "  " + s.roleStyle(c.role).Render(c.label) + th.Muted.Render(" › ")
	room := s.w - width(head) - width(mark) - 1
	text := strings.Join(strings.Fields(strings.ReplaceAll(termtext.Text(c.text), "\n", " ")), " ")
	if text == "" {
		text = th.Muted.Render("…")
	} else {
		text = th.Text.Render(tailFit(text, room))
	}
	return head + text + mark
}

// tailFit keeps the end of (plain) s within n cells.
func tailFit(s string, n int) string {
	if n <= 1 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w <= n {
		return s
	}
	return "…" + ansi.TruncateLeft(s, w-(n-1), "")
}

// liveKilled: the run's worker died by SIGKILL; show where it left the
// thread.
func (s *liveStrip) liveKilled(head *headInfo) (string, []string) {
	k := s.killed
	title := fmt.Sprintf("✝ killed · worker pid %d · SIGKILL", k.pid)
	if k.point != "" {
		title += " at kill point " + termtext.Line(k.point)
	}
	if head == nil && s.headLoading > 0 {
		return title, []string{s.theme.Muted.Render("  reading the last checkpoint…")}
	}
	if head == nil { // killed before its first commit
		return title + " · esc hides", []string{s.theme.Muted.Render("  nothing was committed before the kill: the thread has no checkpoint to resume; i writes its first message again")}
	}
	if len(head.cp.Tasks) > 0 && head.gate == nil {
		title += " · r resumes in a new worker"
	}
	title += " · esc hides"
	return title, s.pendingRows(head)
}

// livePending: the newest checkpoint has tasks that never ran (a pause, a
// stop, or a crash in another process).
func (s *liveStrip) livePending(head *headInfo) (string, []string) {
	title := fmt.Sprintf("@%d has %s", head.cp.ID, plural(len(head.cp.Tasks), "pending task", "pending tasks"))
	if in := head.cp.Metadata.Interrupt; in != nil {
		title += " · paused " + termtext.Line(in.When+" "+in.Node)
	}
	title += " · r resumes · f forks · D discards"
	return title, s.pendingRows(head)
}

// pendingRows: the checkpoint, then each pending task with whether its
// writes are stored (finished: reused) or not (redispatched on resume).
func (s *liveStrip) pendingRows(head *headInfo) []string {
	th := s.theme
	cp := head.cp
	by := strings.Join(cp.Metadata.Nodes, ",")
	if by == "" {
		by = "(" + cp.Source + ")"
	}
	line := fmt.Sprintf("  last checkpoint @%d · step %d · %s · written by %s", cp.ID, cp.Step, cp.Source, by)
	if len(cp.Tasks) == 0 {
		rows := []string{th.Text.Render(termtext.Line(line) + " · nothing pending")}
		if head.gate != nil {
			rows = append(rows, s.gateRows(head.gate)...)
		}
		return rows
	}
	done := len(head.plan.Reused())
	rows := []string{th.Text.Render(termtext.Line(line)), th.Strong.Render(fmt.Sprintf("  %s: %d finished (writes stored), %d to redispatch",
		plural(len(cp.Tasks), "pending task", "pending tasks"), done, len(head.plan.Redispatched())))}
	if rc := head.plan.Recheck; rc != nil {
		rows = append(rows, th.Warning.Render(termtext.Line("  on resume: "+rc.Reason)))
	}
	if head.plan.Refused != "" {
		rows = append(rows, th.Warning.Render(termtext.Line("  a resume is refused: "+head.plan.Refused)))
	}
	for _, t := range head.plan.Tasks {
		label := fmt.Sprintf("%-24s", taskLabel(t.Node, t.Args)) + " " + th.Muted.Render(shortID(t.ID))
		if t.Dropped {
			rows = append(rows, "  "+th.StatusPending.Render("✗ ")+th.Text.Render(label)+th.Warning.Render("  dropped on resume: the recheck replaces it"))
			continue
		}
		if t.Stored && !t.Reuse() {
			rows = append(rows, "  "+th.StatusPending.Render("○ ")+th.Text.Render(label)+th.Warning.Render("  finished, but run again on resume")+th.Muted.Render(termtext.Line(" · "+t.Rerun)))
			continue
		}
		if t.Stored {
			note := " · stored writes: " + strings.Join(t.Channels, ", ")
			if n := t.ModelCalls; n > 0 {
				note += " · " + plural(n, "model call", "model calls")
			}
			rows = append(rows, "  "+th.StatusDone.Render("✓ ")+th.Text.Render(label)+th.StatusDone.Render("  finished → reused, not run again")+th.Muted.Render(termtext.Line(note)))
		} else {
			rows = append(rows, "  "+th.StatusPending.Render("○ ")+th.Text.Render(label)+th.Warning.Render("  not finished → redispatched on resume")+th.Muted.Render(" · no writes stored"))
		}
	}
	if rc := head.plan.Recheck; rc != nil {
		for _, t := range rc.Next {
			label := fmt.Sprintf("%-24s", taskLabel(t.Node, t.Args)) + " " + th.Muted.Render(shortID(t.ID))
			rows = append(rows, "  "+th.StatusPending.Render("→ ")+th.Text.Render(label)+th.Warning.Render("  run on resume instead"))
		}
	}
	if head.gate != nil {
		rows = append(rows, s.gateRows(head.gate)...)
	}
	return rows
}

// livePhase: the resume that just ended, with its phase's figure.
func (s *liveStrip) livePhase() (string, []string) {
	th := s.theme
	p := s.phase
	title := fmt.Sprintf("resumed from @%d", p.from)
	if p.pid > 0 {
		title += fmt.Sprintf(" · worker pid %d", p.pid)
	}
	title += " · esc hides"
	f := *p.figure
	line := "  " + f.String()
	st := th.StatusDone
	if !f.complete {
		line += " (the resume stopped before its first superstep committed)"
		st = th.Warning
	} else if p.endAt != 0 {
		line += fmt.Sprintf(" · then %s up to @%d", plural(p.later, "more model call", "more model calls"), p.endAt)
		if p.endState != "" && p.endState != "done" {
			line += " (" + termtext.Line(p.endState) + ")"
		}
	}
	rows := []string{st.Render(termtext.Line(line))}
	for _, t := range p.tasks {
		rows = append(rows, s.phaseRow(t, false))
	}
	for _, e := range p.effects {
		if e.bad != "" {
			rows = append(rows, "  "+th.Warning.Render("! "+termtext.Line(e.bad)))
			continue
		}
		if e.reused {
			rows = append(rows, "  "+th.StatusRedo.Render("↺ ")+th.Text.Render("operation "+termtext.Line(e.op))+th.Muted.Render("  reused: found done by its id (the draft written before the kill), not written again"))
		} else {
			rows = append(rows, "  "+th.StatusDone.Render("✓ ")+th.Text.Render("operation "+termtext.Line(e.op))+th.Muted.Render("  done"))
		}
	}
	return title, rows
}

// liveAnswer: what the approval answer led to: the operation's outcome and
// the drafts table's rows (exactly one on approval, none on rejection).
func (s *liveStrip) liveAnswer(head *headInfo) (string, []string) {
	th := s.theme
	a := s.answer
	verb := "approved"
	if !a.approve {
		verb = "rejected"
	}
	title := verb + " " + termtext.Line(a.op) + " · esc hides"
	var rows []string
	if g, ok := s.ext.(Gater); ok {
		for _, l := range g.Answered(head.value, a.op) {
			st := th.Text
			switch l.Status {
			case GateDone:
				st = th.StatusDone
			case GateBlocked:
				st = th.StatusBlocked
			case GatePending:
				st = th.StatusPending
			}
			rows = append(rows, st.Render(termtext.Line(l.Text)))
		}
	}
	if head.canDrafts {
		ids := make([]string, 0, len(head.drafts))
		mine := 0
		for _, d := range head.drafts {
			ids = append(ids, d.OperationID)
			if d.OperationID == a.op {
				mine++
			}
		}
		line := fmt.Sprintf("  drafts table: %s for this thread", plural(len(head.drafts), "row", "rows"))
		if len(ids) > 0 {
			line += " (" + strings.Join(ids, ", ") + ")"
		}
		line += fmt.Sprintf(" · %s for %s", plural(mine, "row", "rows"), a.op)
		rows = append(rows, th.Text.Render(termtext.Line(line)))
	}
	return title, rows
}

// liveGate: a draft waits for a person's answer.
func (s *liveStrip) liveGate(g *Gate) (string, []string) {
	return fmt.Sprintf("⏸ @%d waits for approval · a answers", g.Checkpoint), s.gateRows(g)
}

func (s *liveStrip) gateRows(g *Gate) []string {
	th := s.theme
	line := "  " + g.Op.Kind + " " + g.Op.ID + " · "
	st := th.StatusApproval
	switch {
	case g.Grant == nil:
		line += "no authorization attached"
	case g.Problem != "":
		line += "BLOCKED: " + g.Problem + "; approving records the decision, but the draft will be blocked"
		st = th.Error
	default:
		line += fmt.Sprintf("authorization %s expires %s", g.Grant.Ref, expiry(g.Grant.ExpiresAt))
	}
	draft := strings.Join(strings.Fields(g.Op.Payload), " ")
	return []string{st.Render(termtext.Line(line)), th.Muted.Render("  draft: ") + th.Text.Render(trunc(termtext.Line(draft), max(s.w-12, 8)))}
}
