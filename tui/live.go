package tui

// The live area: a strip between the panes and the composer that shows what
// a run is doing right now (the superstep's tasks, the model calls
// streaming their answers), and, between runs, what a crash drill needs:
// after a kill, the last checkpoint with its pending tasks and which of them
// already stored their writes; after a resume, which tasks were
// redispatched and which reused, with the resume phase's model calls; at an
// approval gate, the draft waiting for an answer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/stream"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/tui/termtext"
)

// headInfo is the thread's newest checkpoint as a drill sees it: its
// pending tasks, which of them already stored their writes (finished before
// a crash: reused on resume; the engine's ResumePlan), and the approval gate
// it may wait at.
type headInfo struct {
	thread string
	cp     engine.Checkpoint
	// costs are the thread's tokens (nil when the backend cannot sum
	// them, or they did not read), loaded with the head.
	costs *engine.Costs
	state ticket.State
	plan  engine.ResumePlan
	gate  *gateInfo
	// drafts are the thread's rows in the drafts table (nil when the
	// backend cannot list them).
	drafts    []store.Draft
	canDrafts bool
}

// gateInfo is a draft waiting at the approval gate.
type gateInfo struct {
	checkpoint int64
	op         ticket.Operation
	auth       *ticket.Authorization
	// expired is whether the grant had expired when the head was read.
	expired bool
}

type headMsg struct {
	gen    int
	thread string
	head   *headInfo
	err    error
}

// coster is a Backend that sums a thread's tokens (Engine.Costs).
type coster interface {
	Costs(ctx context.Context, thread string) (engine.Costs, error)
}

// readHead reads the newest checkpoint and its stored writes. It runs in a
// tea.Cmd (or in a run's start Cmd, before the run can add writes).
func readHead(ctx context.Context, b Backend, thread string) (*headInfo, error) {
	return readHeadAt(ctx, b, thread, 0)
}

// readHeadAt reads checkpoint at (0: the newest) the same way.
func readHeadAt(ctx context.Context, b Backend, thread string, at int64) (*headInfo, error) {
	var cps []engine.Checkpoint
	var err error
	if at == 0 {
		// The listing names the head; Get reads it whole.
		if cps, err = b.History(ctx, thread, 0, 1); err == nil && len(cps) == 1 {
			at = cps[0].ID
		}
	}
	if at != 0 {
		var cp engine.Checkpoint
		if cp, err = b.Get(ctx, thread, at); err == nil {
			cps = []engine.Checkpoint{cp}
		}
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(cps) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cp := cps[0]
	h := &headInfo{thread: thread, cp: cp}
	var ws []engine.TaskWrites
	if len(cp.Tasks) > 0 {
		if ws, err = b.PendingWrites(ctx, thread, cp.ID); err != nil {
			return nil, err
		}
	}
	h.plan = engine.PlanFrom(cp, ws)
	if s, err := ticket.Decode(cp.Values); err == nil {
		h.state = s
		h.gate = gateOf(cp, s, time.Now())
	}
	if dl, ok := b.(draftLister); ok {
		if ds, err := dl.ListDrafts(ctx, thread); err == nil {
			h.drafts, h.canDrafts = ds, true
		}
	}
	return h, nil
}

func loadHead(ctx context.Context, b Backend, gen int, thread string) tea.Cmd {
	return func() tea.Msg {
		h, err := readHead(ctx, b, thread)
		if c, ok := b.(coster); ok && h != nil && err == nil {
			// From the listings; a thread whose costs do not read still
			// shows its head.
			if costs, cerr := c.Costs(ctx, thread); cerr == nil {
				h.costs = &costs
			}
		}
		return headMsg{gen: gen, thread: thread, head: h, err: err}
	}
}

// gateOf finds an unanswered draft at the approval gate.
func gateOf(cp engine.Checkpoint, s ticket.State, now time.Time) *gateInfo {
	atGate := false
	for _, t := range cp.Tasks {
		atGate = atGate || t.Node == ticket.NodeApproval
	}
	op, ok := ticket.PendingDraft(s)
	if !atGate || !ok {
		return nil
	}
	if _, answered := s.Approvals[op.ID]; answered {
		return nil
	}
	g := &gateInfo{checkpoint: cp.ID, op: op, auth: s.Authorization}
	if a := s.Authorization; a != nil {
		exp, err := time.Parse(time.RFC3339, a.ExpiresAt)
		g.expired = err != nil || !now.Before(exp)
	}
	return g
}

// expiry prints an authorization's RFC 3339 expiry for people (UTC).
func expiry(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s + " (unreadable)"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// taskLabel names a task for people: its node and, for an executor, the
// subtask it works on.
func taskLabel(node string, args json.RawMessage) string {
	var a struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	label := node
	if len(args) > 0 && json.Unmarshal(args, &a) == nil && a.Task.ID != "" {
		label += " " + a.Task.ID
	}
	return termtext.Line(label)
}

func shortID(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	return termtext.Name(id)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// answerInfo is an approval answer given from the TUI.
type answerInfo struct {
	approve bool
	op      string
	reason  string
	ended   bool
}

// killInfo is a run that ended by SIGKILL.
type killInfo struct {
	pid   int
	point string
}

// Task states in the live area.
const (
	taskPending = iota
	taskRunning
	taskDone
	taskReused
)

// phase follows the first superstep of a resume: the head's pending tasks,
// those with stored writes reused, the others redispatched, and the model
// calls the redispatched ones make. That is the drill's figure: a resume
// after a kill makes exactly as many calls as there were unfinished tasks.
type phase struct {
	from  int64
	plan  engine.ResumePlan
	pid   int
	tasks []*phaseTask
	byID  map[string]*phaseTask
	calls int
	// over is set once the phase's superstep committed its checkpoint.
	over bool
	// After the run: the figure from the result (complete) or, when the run
	// did not get through the phase, what was seen.
	figure   *phaseFigure
	later    int   // model calls after the phase
	endAt    int64 // checkpoint the run ended at
	endState string
}

type phaseTask struct {
	id, node, label string
	stored          bool
	state           int
	calls           int
}

type phaseFigure struct {
	redispatched, reused, calls int
	complete                    bool
}

func (f phaseFigure) String() string {
	return fmt.Sprintf("resume: %d redispatched, %d reused, %s", f.redispatched, f.reused, plural(f.calls, "model call", "model calls"))
}

func newPhase(h *headInfo, pid int) *phase {
	p := &phase{from: h.cp.ID, plan: h.plan, pid: pid, byID: map[string]*phaseTask{}}
	for _, t := range h.plan.Tasks {
		pt := &phaseTask{id: t.ID, node: t.Node, label: taskLabel(t.Node, t.Args), stored: t.Stored}
		if t.Stored {
			pt.state = taskReused
		}
		p.tasks = append(p.tasks, pt)
		p.byID[t.ID] = pt
	}
	return p
}

func (p *phase) toRun() int { return len(p.plan.Redispatched()) }

func (p *phase) apply(ev engine.Event) {
	if p.over {
		return
	}
	t := p.byID[ev.Task]
	switch ev.Type {
	case engine.EventNodeStarted:
		if t != nil && t.state == taskPending {
			t.state = taskRunning
		}
	case engine.EventNodeFinished:
		if t != nil {
			t.state = taskDone
		}
	case engine.EventModelCalled:
		if t != nil {
			t.calls++
			p.calls++
		}
	case engine.EventTaskReused:
		if t != nil {
			t.state = taskReused
		}
	case engine.EventCheckpointSaved:
		p.over = true
	}
}

// finish fixes the figure from the run's result: its first superstep, when
// it started from the resumed checkpoint, is the resume phase.
func (p *phase) finish(res engine.Result, runErr error) {
	p.endAt = res.Checkpoint
	p.endState = res.Status
	if o := p.plan.Outcome(res); o.Complete {
		f := &phaseFigure{redispatched: len(o.Redispatched), reused: len(o.Reused), calls: o.ModelCalls, complete: true}
		p.figure = f
		p.later = max(model.Counts(res.ModelCalls).Sum()-f.calls, 0)
		ran := map[string]bool{}
		for _, t := range o.Redispatched {
			ran[t.ID] = true
		}
		for _, t := range p.tasks {
			switch {
			case ran[t.id]:
				t.state = taskDone
			case t.stored:
				t.state = taskReused
			}
		}
		return
	}
	f := &phaseFigure{calls: p.calls}
	for _, t := range p.tasks {
		if t.stored {
			f.reused++
		} else if t.state != taskPending {
			f.redispatched++
		}
	}
	p.figure = f
	if runErr != nil {
		p.endState = "stopped"
	}
}

// streams keeps what each model call has shown so far, in the order the
// calls started. Parallel executors stream at the same time; each call gets
// a label (its role and a number) so their pieces can be told apart.
type streams struct {
	calls  []*callStream
	byID   map[uint64]*callStream
	counts map[string]int
}

type callStream struct {
	id    uint64
	role  string
	label string
	text  string
	done  bool
	err   string
}

// Limits: a call keeps the tail of its text; a run keeps its latest calls.
const (
	streamTail  = 4096
	streamCalls = 32
)

func newStreams() *streams {
	return &streams{byID: map[uint64]*callStream{}, counts: map[string]int{}}
}

func (s *streams) apply(d stream.Delta) {
	c := s.byID[d.Call]
	if c == nil {
		s.counts[d.Role]++
		label := fmt.Sprintf("%s·%d", termtext.Line(d.Role), s.counts[d.Role])
		if len(d.Task) >= 8 {
			// The same short task id the task rows show.
			label = termtext.Line(d.Role) + " " + termtext.Line(d.Task[:8])
		}
		c = &callStream{id: d.Call, role: d.Role, label: label}
		s.byID[d.Call] = c
		s.calls = append(s.calls, c)
		if len(s.calls) > streamCalls {
			// Drop the oldest finished call (or the oldest one).
			drop := 0
			for i, x := range s.calls {
				if x.done {
					drop = i
					break
				}
			}
			delete(s.byID, s.calls[drop].id)
			s.calls = append(s.calls[:drop], s.calls[drop+1:]...)
		}
	}
	if d.Reset {
		c.text = ""
	}
	if d.Text != "" {
		c.text += d.Text
		if len(c.text) > streamTail {
			cut := len(c.text) - streamTail
			for cut < len(c.text) && (c.text[cut]&0xC0) == 0x80 {
				cut++ // keep whole UTF-8 sequences
			}
			c.text = c.text[cut:]
		}
	}
	if d.Done {
		c.done = true
		c.err = d.Err
	}
}

// --- rendering ---

// liveMax is the most rows the live area takes: two fifths of the body.
func liveMax(h int) int { return max((h-3)*2/5, 2) }

// buildLive renders the live area for the current state; it is called from
// Update when something it shows changed, and View only joins its lines.
func (m *Model) buildLive() []string {
	if m.screen != screenThread || m.thread == "" || m.w < minWidth || m.h < minHeight {
		return nil
	}
	head := m.head
	if head != nil && head.thread != m.thread {
		head = nil
	}
	limit := liveMax(m.h)
	var title string
	var body []string
	var tail []string // shown last, trimmed first (streams)
	switch {
	case m.busy():
		title, body, tail = m.liveRun()
	case m.killed != nil:
		title, body = m.liveKilled(head)
	case m.phase != nil && m.phase.figure != nil:
		title, body = m.livePhase()
	case m.answer != nil && m.answer.ended && head != nil:
		title, body = m.liveAnswer(head)
	case head != nil && head.gate != nil:
		title, body = m.liveGate(head.gate)
	case head != nil && len(head.cp.Tasks) > 0:
		title, body = m.livePending(head)
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
			body = append(body[:keepBody:keepBody], m.th.Fold.Render(fmt.Sprintf("  … %d more line(s): the inspector (3) lists every pending task", hidden)))
		}
	}
	lines := append(body, tail...)
	if len(lines) > room {
		lines = lines[:room]
	}
	out := make([]string, 0, 1+len(lines))
	out = append(out, rule(m.th, title, m.w))
	for _, l := range lines {
		out = append(out, fit(l, m.w))
	}
	return out
}

// refreshLive re-renders the live area and relays out when its height
// changed.
func (m *Model) refreshLive() {
	before := len(m.live)
	m.live = m.buildLive()
	if len(m.live) != before {
		m.relayout()
	}
}

func (m *Model) kindWord() string {
	switch m.runKind {
	case "approve":
		return "approve and resume"
	case "reject":
		return "reject and resume"
	case "":
		return "run"
	}
	return m.runKind
}

// liveRun: the run under way.
func (m *Model) liveRun() (string, []string, []string) {
	th := m.th
	title := "live · " + m.kindWord()
	switch {
	case m.starting:
		title += " · starting…"
	case m.runPid > 0:
		title += fmt.Sprintf(" · worker pid %d · %s kills it", m.runPid, m.keys.Kill.Help().Key)
	default:
		title += " · in-process"
	}
	if m.runKill != "" {
		title += " · ✝ dies at " + m.runKill
	}
	var body []string
	if m.killNotice != "" {
		body = append(body, th.Error.Render("  ✝ kill point "+termtext.Line(m.killNotice)+" reached: the worker kills itself (SIGKILL)"))
	}
	if p := m.phase; p != nil {
		if p.over {
			f := phaseFigure{calls: p.calls, reused: len(p.plan.Reused()), redispatched: p.toRun()}
			body = append(body, th.StatusDone.Render("  ✓ "+f.String()))
		} else {
			body = append(body, th.Strong.Render(fmt.Sprintf("  resume from @%d: %d to redispatch, %d reused · %s so far", p.from, p.toRun(), len(p.tasks)-p.toRun(), plural(p.calls, "model call", "model calls"))))
			for _, t := range p.tasks {
				body = append(body, m.phaseRow(t, true))
			}
		}
	}
	if m.phase == nil || m.phase.over {
		body = append(body, m.stepRows()...)
	}
	var tail []string
	if m.streams != nil {
		for _, c := range m.streams.calls {
			tail = append(tail, m.streamRow(c))
		}
	}
	return title, body, tail
}

func (m *Model) phaseRow(t *phaseTask, live bool) string {
	th := m.th
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
	}
	if live {
		return "  " + th.StatusPending.Render("○ ") + th.Text.Render(label) + th.Muted.Render("  to redispatch")
	}
	return "  " + th.StatusPending.Render("○ ") + th.Text.Render(label) + th.Muted.Render("  not run (the run stopped first)")
}

// stepRows lists the current superstep's tasks from the run's events.
func (m *Model) stepRows() []string {
	p := m.prog
	if p == nil {
		return nil
	}
	th := m.th
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

func (m *Model) roleStyle(role string) lipgloss.Style {
	switch role {
	case model.RoleExecutor:
		return m.th.SpeakerExecutor
	case model.RoleCritic:
		return m.th.SpeakerCritic
	case model.RoleReply:
		return m.th.SpeakerReply
	}
	return m.th.SpeakerOther
}

// streamRow shows a call's label and the tail of what it has said so far.
func (m *Model) streamRow(c *callStream) string {
	th := m.th
	mark := th.Accent.Render(" ▍")
	switch {
	case c.err != "":
		mark = th.Error.Render(" ✗ " + trunc(termtext.Error(c.err), 40))
	case c.done:
		mark = th.StatusDone.Render(" ✓")
	}
	head := "  " + m.roleStyle(c.role).Render(c.label) + th.Muted.Render(" › ")
	room := m.w - width(head) - width(mark) - 1
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
func (m *Model) liveKilled(head *headInfo) (string, []string) {
	k := m.killed
	title := fmt.Sprintf("✝ killed · worker pid %d · SIGKILL", k.pid)
	if k.point != "" {
		title += " at kill point " + termtext.Line(k.point)
	}
	if head == nil {
		return title, []string{m.th.Muted.Render("  reading the last checkpoint…")}
	}
	if len(head.cp.Tasks) > 0 && head.gate == nil {
		title += " · r resumes in a new worker"
	}
	title += " · esc hides"
	return title, m.pendingRows(head)
}

// livePending: the newest checkpoint has tasks that never ran (a pause, a
// stop, or a crash in another process).
func (m *Model) livePending(head *headInfo) (string, []string) {
	title := fmt.Sprintf("@%d has %s", head.cp.ID, plural(len(head.cp.Tasks), "pending task", "pending tasks"))
	if in := head.cp.Metadata.Interrupt; in != nil {
		title += " · paused " + termtext.Line(in.When+" "+in.Node)
	}
	title += " · r resumes · f forks · D discards"
	return title, m.pendingRows(head)
}

// pendingRows: the checkpoint, then each pending task with whether its
// writes are stored (finished: reused) or not (redispatched on resume).
func (m *Model) pendingRows(head *headInfo) []string {
	th := m.th
	cp := head.cp
	by := strings.Join(cp.Metadata.Nodes, ",")
	if by == "" {
		by = "(" + cp.Source + ")"
	}
	line := fmt.Sprintf("  last checkpoint @%d · step %d · %s · written by %s", cp.ID, cp.Step, cp.Source, by)
	if len(cp.Tasks) == 0 {
		rows := []string{th.Text.Render(termtext.Line(line) + " · nothing pending")}
		if head.gate != nil {
			rows = append(rows, m.gateRows(head.gate)...)
		}
		return rows
	}
	done := len(head.plan.Reused())
	rows := []string{th.Text.Render(termtext.Line(line)), th.Strong.Render(fmt.Sprintf("  %s: %d finished (writes stored), %d to redispatch",
		plural(len(cp.Tasks), "pending task", "pending tasks"), done, len(cp.Tasks)-done))}
	for _, t := range head.plan.Tasks {
		label := fmt.Sprintf("%-24s", taskLabel(t.Node, t.Args)) + " " + th.Muted.Render(shortID(t.ID))
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
	if head.gate != nil {
		rows = append(rows, m.gateRows(head.gate)...)
	}
	return rows
}

// livePhase: the resume that just ended, with its phase's figure.
func (m *Model) livePhase() (string, []string) {
	th := m.th
	p := m.phase
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
		rows = append(rows, m.phaseRow(t, false))
	}
	return title, rows
}

// liveAnswer: what the approval answer led to: the operation's outcome and
// the drafts table's rows (exactly one on approval, none on rejection).
func (m *Model) liveAnswer(head *headInfo) (string, []string) {
	th := m.th
	a := m.answer
	verb := "approved"
	if !a.approve {
		verb = "rejected"
	}
	title := verb + " " + termtext.Line(a.op) + " · esc hides"
	var rows []string
	if d, ok := head.state.Approvals[a.op]; ok {
		line := "  decision recorded in state (not the conversation): " + map[bool]string{true: "approved", false: "rejected"}[d.Approved]
		if d.Reason != "" {
			line += ": " + d.Reason
		}
		if d.By != "" {
			line += " · by " + d.By
		}
		rows = append(rows, th.Text.Render(termtext.Line(line)))
	}
	if op, ok := head.state.Operations[a.op]; ok {
		st := th.StatusDone
		switch op.Status {
		case ticket.OpRejected, ticket.OpBlocked:
			st = th.StatusBlocked
		case ticket.OpAwaitingApproval, ticket.OpApproved:
			st = th.StatusPending
		}
		line := fmt.Sprintf("  operation %s %s: %s", op.Kind, op.ID, op.Status)
		if op.Result != "" {
			line += " · " + op.Result
		}
		if op.Reused {
			line += " (reused: it already existed)"
		}
		rows = append(rows, st.Render(termtext.Line(line)))
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
func (m *Model) liveGate(g *gateInfo) (string, []string) {
	return fmt.Sprintf("⏸ @%d waits for approval · a answers", g.checkpoint), m.gateRows(g)
}

func (m *Model) gateRows(g *gateInfo) []string {
	th := m.th
	line := "  " + g.op.Kind + " " + g.op.ID + " · "
	st := th.StatusApproval
	switch {
	case g.auth == nil:
		line += "no authorization attached"
	case g.expired:
		line += fmt.Sprintf("authorization %s EXPIRED at %s: approving records the decision, but the draft will be blocked", g.auth.Ref, expiry(g.auth.ExpiresAt))
		st = th.Error
	default:
		line += fmt.Sprintf("authorization %s expires %s", g.auth.Ref, expiry(g.auth.ExpiresAt))
	}
	draft := strings.Join(strings.Fields(g.op.Payload), " ")
	return []string{st.Render(termtext.Line(line)), th.Muted.Render("  draft: ") + th.Text.Render(trunc(termtext.Line(draft), max(m.w-12, 8)))}
}
