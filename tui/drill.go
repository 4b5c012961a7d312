package tui

// Crash drills and approval gates: the kill-point menu (K), the approval
// dialog (a), and the keys and commands behind k, K, a and esc.

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/worker"
	"rewind/themes"
)

// pointDialog picks the kill point armed for the next run.
type pointDialog struct {
	dialogSize // SetSize: the room the root gives it
	points     []worker.Point
	sel        int // 0 is "off", i is points[i-1]
	armed      string
	keys       pickKeys
	onPick     func(name string) tea.Cmd
}

// newPointDialog lists points (the ticket's own, or another graph's
// generic ones: worker.GraphPoints).
func newPointDialog(points []worker.Point, armed string, onPick func(string) tea.Cmd) *pointDialog {
	d := &pointDialog{points: points, armed: armed, keys: newPickKeys(), onPick: onPick}
	for i, p := range d.points {
		if string(p.Name) == armed {
			d.sel = i + 1
		}
	}
	return d
}

func (d *pointDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if keys := splitRunes(msg); keys != nil { // a burst of keys, one by one
		return eachKey(keys, d.Update)
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, d.keys.Up):
		d.sel = max(d.sel-1, 0)
	case key.Matches(k, d.keys.Down):
		d.sel = min(d.sel+1, len(d.points))
	case key.Matches(k, d.keys.Pick):
		name := ""
		if d.sel > 0 {
			name = string(d.points[d.sel-1].Name)
		}
		return true, d.onPick(name)
	case key.Matches(k, d.keys.Cancel):
		return true, nil
	}
	return false, nil
}

func (d *pointDialog) View(th *themes.Theme, h help.Model) string {
	w := min(d.maxW, 84)
	inner := w - 4
	var top []string
	for _, l := range wrap("The next run's worker kills itself with SIGKILL at the chosen moment, exactly like `kill -9`; r then resumes the thread in a new worker. Armed for one run (a send, fork, resume or approval answer).", inner) {
		top = append(top, th.Muted.Render(l))
	}
	top = append(top, "")
	desc := "Runs are not killed."
	if d.sel > 0 {
		p := d.points[d.sel-1]
		desc = string(p.Name) + ": " + p.Desc + "."
		if p.Name == worker.MidTransaction {
			desc += " Needs sqlite or postgres."
		}
	}
	var bottom []string
	bottom = append(bottom, "")
	for _, l := range wrap(desc, inner) {
		bottom = append(bottom, th.Text.Render(l))
	}
	bottom = append(bottom, "")
	h.Width = inner
	bottom = append(bottom, h.View(d.keys))

	rows := make([]string, 0, len(d.points)+1)
	nameW := 0
	for _, p := range d.points {
		nameW = max(nameW, width(string(p.Name)))
	}
	for i := 0; i <= len(d.points); i++ {
		name, text := "off", "no kill point"
		if i > 0 {
			name, text = string(d.points[i-1].Name), d.points[i-1].Desc
		}
		mark := "  "
		if name == d.armed || (name == "off" && d.armed == "") {
			mark = "● "
		}
		row := mark + name + strings.Repeat(" ", nameW-width(name)) + "  " + text
		if i == d.sel {
			rows = append(rows, th.Selected.Render(fit("▶ "+row, inner)))
		} else {
			rows = append(rows, th.Text.Render(trunc("  "+row, inner)))
		}
	}
	// On a short screen the explanation goes first, then the list is
	// shown as a window around the selection.
	if len(top)+len(bottom)+len(rows)+3 > d.maxH {
		top = nil
	}
	room := max(d.maxH-len(top)-len(bottom)-3, 3)
	if len(rows) > room {
		start := min(max(d.sel-room/2, 0), len(rows)-room)
		rows = rows[start : start+room]
	}
	lines := append(append(top, rows...), bottom...)
	return box(th, "Crash drill · kill point for the next run", lines, w)
}

// approvalDialog shows the draft at the approval gate and takes the
// answer: approve, or reject with a reason.
type approvalDialog struct {
	dialogSize // SetSize: the room the root gives it
	gate       *Gate
	asking     bool // reject: asking for the reason
	reason     textinput.Model
	err        string
	keys       approvalKeys
	onAnswer   func(approve bool, reason string) tea.Cmd
	// grantTTL, for a draft written under no grant, is how long the grant
	// an approval gives it lasts (the session's --auth-ttl); 0: none.
	grantTTL time.Duration

	// The draft wrapped for the last width (View stays cheap).
	wrapW   int
	wrapped []string

	// edited is the draft as the user edited it (e), when edited is set.
	edited   string
	isEdited bool
}

// payload is the draft as it will be approved.
func (a *approvalDialog) payload() string {
	if a.isEdited {
		return a.edited
	}
	return a.gate.Op.Payload
}

// setEdited keeps an edited draft; the dialog shows it.
func (a *approvalDialog) setEdited(text string) {
	a.edited, a.isEdited, a.wrapped = text, true, nil
}

func newApprovalDialog(th *themes.Theme, g *Gate, onAnswer func(bool, string) tea.Cmd) *approvalDialog {
	in := textinput.New()
	in.Prompt = "› "
	in.PromptStyle = th.Prompt
	in.TextStyle = th.Text
	in.PlaceholderStyle = th.Placeholder
	in.Cursor.Style = th.Accent
	in.CharLimit = 2000
	in.Placeholder = "why the draft must not be created"
	return &approvalDialog{gate: g, reason: in, keys: newApprovalKeys(), onAnswer: onAnswer}
}

func (a *approvalDialog) Update(msg tea.Msg) (bool, tea.Cmd) {
	if d, ok := msg.(draftMsg); ok && d.of() == a {
		return false, a.onDraft(d)
	}
	k, isKey := msg.(tea.KeyMsg)
	if !a.asking && isKey && k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		// Fast typing arrives as one message ("nwrong tone"): the first key
		// chooses, the rest is the reason.
		done, cmd := a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[:1]})
		if done || !a.asking {
			return done, cmd
		}
		_, more := a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: k.Runes[1:]})
		return false, tea.Batch(cmd, more)
	}
	if !a.asking {
		if !isKey {
			return false, nil
		}
		switch {
		case key.Matches(k, a.keys.Approve):
			return true, a.onAnswer(true, "")
		case key.Matches(k, a.keys.Edit):
			return false, editDraft(a)
		case key.Matches(k, a.keys.Reject):
			a.asking = true
			a.err = ""
			return false, a.reason.Focus()
		case key.Matches(k, a.keys.Cancel):
			return true, nil
		}
		return false, nil
	}
	if isKey {
		switch {
		case key.Matches(k, a.keys.Back):
			a.asking = false
			a.reason.Blur()
			return false, nil
		case key.Matches(k, a.keys.Submit):
			r := strings.TrimSpace(a.reason.Value())
			if r == "" {
				a.err = "a rejection needs a reason"
				return false, nil
			}
			return true, a.onAnswer(false, r)
		}
	}
	var cmd tea.Cmd
	a.reason, cmd = a.reason.Update(msg)
	return false, cmd
}

func (a *approvalDialog) View(th *themes.Theme, h help.Model) string {
	w := min(a.maxW, 84)
	inner := w - 4
	g := a.gate
	kv := func(k, v string, st styleT) []string {
		var out []string
		for i, l := range wrap(v, max(inner-15, 8)) {
			label := strings.Repeat(" ", 15)
			if i == 0 {
				label = fmt.Sprintf("%-15s", k)
			}
			out = append(out, th.Muted.Render(label)+st.Render(l))
		}
		return out
	}
	var head []string
	head = append(head, kv("operation", g.Op.Kind+" "+g.Op.ID, th.Strong)...)
	head = append(head, kv("question", g.Question, th.Text)...)
	switch {
	case g.NoGrant && a.grantTTL > 0:
		head = append(head, kv("authorization", fmt.Sprintf("none attached: y gives it %s, expiring %s after the approval (the session's --auth-ttl), recorded in the decision", g.GrantRef, a.grantTTL), th.Warning)...)
	case g.NoGrant:
		head = append(head, kv("authorization", "none attached", th.Muted)...)
	case g.Problem != "":
		head = append(head, kv("authorization", fmt.Sprintf("BLOCKED: %s; approving records the decision, but %s will be blocked and write nothing", g.Problem, g.Blocked), th.Error)...)
	default:
		head = append(head, kv("authorization", fmt.Sprintf("%s · expires %s", g.Grant.Ref, expiry(g.Grant.ExpiresAt)), th.Text)...)
	}
	if a.isEdited {
		head = append(head, "", th.Heading.Render(g.DraftTitle)+th.Warning.Render(" · EDITED (y approves it as edited)"))
	} else {
		head = append(head, "", th.Heading.Render(g.DraftTitle))
	}

	var foot []string
	if a.maxH >= 22 {
		foot = append(foot, "")
		for _, l := range wrap("The answer is recorded as a decision in the next checkpoint, never as a conversation message.", inner) {
			foot = append(foot, th.Muted.Render(l))
		}
	}
	foot = append(foot, "")
	h.Width = inner
	if a.asking {
		foot = append(foot, th.Strong.Render("Reason for rejecting (required)"))
		a.reason.Width = inner - 3
		foot = append(foot, a.reason.View())
		if a.err != "" {
			foot = append(foot, th.Error.Render(a.err))
		}
		foot = append(foot, "", h.View(reasonHelp{a.keys}))
	} else {
		foot = append(foot, h.View(a.keys))
	}

	if a.wrapW != inner-2 || a.wrapped == nil {
		a.wrapW = inner - 2
		text, _ := clipRunes(a.payload(), maxRunesFolded)
		a.wrapped = nil
		for _, l := range wrap(text, inner-2) {
			a.wrapped = append(a.wrapped, "  "+th.Text.Render(l))
		}
	}
	body := a.wrapped
	room := max(a.maxH-len(head)-len(foot)-3, 2)
	if len(body) > room {
		hidden := len(body) - (room - 1)
		body = append(body[:room-1:room-1], th.Fold.Render(fmt.Sprintf("  … %d more line(s) (the state pane (2) shows the operation)", hidden)))
	}
	lines := append(append(append([]string{}, head...), body...), foot...)
	return box(th, fmt.Sprintf("Approval · @%d", g.Checkpoint), lines, w)
}

// --- keys of the drill dialogs ---

type pickKeys struct{ Up, Down, Pick, Cancel key.Binding }

var pickKeyTable = keyTable[pickKeys]{
	helpRow(0, []string{"up", "k"}, "up", func(k *pickKeys) *key.Binding { return &k.Up }).labelled("↑").inFooter(1, ""),
	helpRow(0, []string{"down", "j"}, "down", func(k *pickKeys) *key.Binding { return &k.Down }).labelled("↓").inFooter(2, ""),
	helpRow(0, []string{"enter", " "}, "arm for the next run", func(k *pickKeys) *key.Binding { return &k.Pick }).labelled("enter").inFooter(3, ""),
	helpRow(0, []string{"esc", "q", "K"}, "cancel", func(k *pickKeys) *key.Binding { return &k.Cancel }).labelled("esc").inFooter(4, ""),
}

func newPickKeys() pickKeys                  { return pickKeyTable.bind() }
func (k pickKeys) ShortHelp() []key.Binding  { return pickKeyTable.footer(k) }
func (k pickKeys) FullHelp() [][]key.Binding { return pickKeyTable.fullHelp(k, 1, nil) }

type approvalKeys struct{ Approve, Reject, Edit, Cancel, Submit, Back key.Binding }

// approvalKeyTable: the answer's keys (the footer), then, in the second
// column, those while typing the reason (reasonHelp).
var approvalKeyTable = keyTable[approvalKeys]{
	helpRow(0, []string{"y"}, "approve", func(k *approvalKeys) *key.Binding { return &k.Approve }).inFooter(1, ""),
	helpRow(0, []string{"n"}, "reject (why)", func(k *approvalKeys) *key.Binding { return &k.Reject }).inFooter(2, ""),
	helpRow(0, []string{"e"}, "edit", func(k *approvalKeys) *key.Binding { return &k.Edit }).inFooter(3, ""),
	helpRow(0, []string{"esc", "q"}, "answer later", func(k *approvalKeys) *key.Binding { return &k.Cancel }).labelled("esc").inFooter(4, ""),
	helpRow(1, []string{"enter"}, "reject", func(k *approvalKeys) *key.Binding { return &k.Submit }),
	helpRow(1, []string{"esc"}, "back", func(k *approvalKeys) *key.Binding { return &k.Back }),
}

func newApprovalKeys() approvalKeys              { return approvalKeyTable.bind() }
func (k approvalKeys) ShortHelp() []key.Binding  { return approvalKeyTable.footer(k) }
func (k approvalKeys) FullHelp() [][]key.Binding { return approvalKeyTable.fullHelp(k, 2, nil) }

// reasonHelp is the help line while typing the reason.
type reasonHelp struct{ k approvalKeys }

func (r reasonHelp) ShortHelp() []key.Binding  { return r.k.FullHelp()[1] }
func (r reasonHelp) FullHelp() [][]key.Binding { return [][]key.Binding{r.ShortHelp()} }

// --- the run control's side ---

// canKill: runs happen in worker processes that k can kill.
func canKill(r Runner) bool {
	k, ok := r.(Killable)
	return ok && k.CanKill()
}

func (c *runControl) canKill() bool { return canKill(c.sess.deps.Runner) }

type killSentMsg struct {
	pid int
	err error
}

// say: a kill that went out says nothing more (the run's end tells).
func (msg killSentMsg) say() (string, bool) {
	if msg.err != nil {
		return fmt.Sprintf("kill worker pid %d: %v", msg.pid, msg.err), true
	}
	return "", false
}

// askKill asks before the kill, unless the run is a drill (it carries a
// kill point): the user armed it to see a worker die.
func (c *runControl) askKill() (runAsk, tea.Cmd) {
	k, ok := c.live.run.(Killer)
	if !ok || !c.canKill() || c.live.killAt != "" {
		return c.kill()
	}
	return runAsk{dialog: c.killDialog(k.Pid())}, nil
}

// killDialog asks before SIGKILL goes to worker pid.
func (c *runControl) killDialog(pid int) dialog {
	return &confirmDialog{title: "Kill the worker",
		question: fmt.Sprintf("Send SIGKILL to worker pid %d, like `kill -9`? The tasks it finished stay stored; r resumes the rest in a new worker.", pid),
		keys:     newConfirmKeys(),
		onYes:    func() tea.Cmd { return reply(c.kill()) },
		ofRun:    true}
}

// kill sends SIGKILL to the running worker (in a Cmd: it is a syscall).
func (c *runControl) kill() (runAsk, tea.Cmd) {
	if !c.canKill() {
		return sayErr("runs are in-process here (a memory: store cannot cross processes), so there is no worker to kill: x stops a run"), nil
	}
	if c.live.run == nil {
		if c.live.starting {
			return sayErr("the worker is still starting: press " + c.keys.Kill.Help().Key + " again in a moment"), nil
		}
		return sayErr("no run is under way: " + c.keys.Kill.Help().Key + " kills a running worker (K arms a kill point instead)"), nil
	}
	k, ok := c.live.run.(Killer)
	if !ok {
		return sayErr("this run is in-process (a memory: store cannot cross processes), so there is no worker to kill: x stops it"), nil
	}
	pid := k.Pid()
	return runAsk{say: fmt.Sprintf("sending SIGKILL to worker pid %d…", pid)},
		func() tea.Msg { return killSentMsg{pid: pid, err: k.Kill()} }
}

// openDrill opens the kill-point menu; the point picked is armed at once.
func (c *runControl) openDrill() (runAsk, tea.Cmd) {
	if !c.canKill() {
		return sayErr("kill points need worker processes; this memory: store runs in-process (use --store sqlite:PATH)"), nil
	}
	return runAsk{dialog: newPointDialog(worker.MenuPoints(c.sess.graph()), c.next.armed, func(name string) tea.Cmd {
		c.next.arm(name)
		if name == "" {
			return flash("no kill point armed", false)
		}
		return flash("armed: the next run's worker dies at "+name, false)
	})}, nil
}

// openApproval shows the draft waiting at the gate and takes the answer.
func (c *runControl) openApproval() (runAsk, tea.Cmd) {
	if _, ok := c.sess.deps.Runner.(Approver); !ok {
		return sayErr("this runner has no approval gates to answer"), nil
	}
	if c.busy() {
		return sayErr("a run is under way: answer when it has paused"), nil
	}
	h := c.live.head
	if _, ok := c.sess.deps.Extension.(Gater); !ok {
		return sayErr("this graph has no approval dialog: " + c.gateAnswer()), nil
	}
	if h == nil || h.thread != c.sess.thread || h.gate == nil {
		return sayErr("nothing waits for approval here (a draft turn asks for one: ctrl+d while writing)"), nil
	}
	// What the dialog shows, fixed when it opens: the answer is refused
	// if the draft or the head is no longer this when the worker records
	// it (a redraft, another answer, an edit meanwhile).
	gate := *h.gate
	seen := gate.Seen
	var grantTTL time.Duration
	if gate.NoGrant {
		grantTTL = c.next.authTTL
	}
	var dlg *approvalDialog
	dlg = newApprovalDialog(c.theme, &gate, func(approve bool, reason string) tea.Cmd {
		kind := "approve"
		if !approve {
			kind = "reject"
		}
		a := Answer{Approve: approve, Reason: reason, Edited: dlg.isEdited && approve, Payload: dlg.payload(), Seen: seen}
		if approve {
			a.AuthTTL = grantTTL
		}
		return reply(c.answer(kind, a, &answerInfo{approve: approve, op: gate.Op.ID, reason: reason}))
	})
	dlg.grantTTL = grantTTL
	return runAsk{dialog: dlg}, nil
}

// answer starts the run that records an approval's answer.
func (c *runControl) answer(kind string, a Answer, info *answerInfo) (runAsk, tea.Cmd) {
	ap, _ := c.sess.deps.Runner.(Approver) // openApproval checked it
	ctx, thread, gen, rs := c.sess.ctx, c.sess.thread, c.sess.gen, c.settings()
	c.live.begin(kind)
	start := func() tea.Msg {
		r, err := ap.Answer(ctx, thread, a, rs)
		return runStartedMsg{gen: gen, thread: thread, kind: kind, run: r, err: err, rs: rs, answer: info}
	}
	return runAsk{clear: true, relive: true, spin: true}, start
}
