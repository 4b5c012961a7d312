// Package ticketview is the ticket graph's TUI extension (issue 37): what
// rewind's TUI shows of a support ticket beyond its channels' shape, its
// subtasks, approvals, fidelity badge and summary pin, through
// tui.Extension and the optional interfaces beside it. The ticket's
// graph registers it (cli/graphs.go); nothing in package tui names the
// ticket.
package ticketview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"rewind/engine"
	"rewind/engine/event"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/themes"
	"rewind/tui"
	"rewind/tui/draw"
	"rewind/tui/termtext"
)

// Extension is the ticket graph's: its state as the ticket's fields, its
// messages channel as the conversation under its summary. Each call
// gives one of its own (its drawn messages are cached in it).
func Extension() tui.Extension { return &extension{msgs: map[msgKey][]string{}} }

// extension keeps each message's lines, so scrubbing between neighbouring
// checkpoints (which share almost all messages) draws only what is new.
type extension struct {
	mu   sync.Mutex
	msgs map[msgKey][]string
}

// msgKey is a message drawn (message) in a theme at a width.
type msgKey struct {
	theme    *themes.Theme
	index    int
	hash     uint64
	width    int
	unfold   bool
	attached bool
	note     string
}

// The ticket has every optional feature.
var _ interface {
	tui.DraftReplier
	tui.InputOptioner
	tui.Quoter
	tui.Unfolder
	tui.Checker
	tui.Searcher
	tui.Caller
	tui.Gater
	tui.Narrator
} = (*extension)(nil)

func (*extension) InputHints() (string, string) {
	return "e.g. My order SO20260901 hasn't arrived: where is the parcel?", "e.g. s3://tickets/SO20260901/photo.jpg"
}

func (*extension) DraftReplies() bool { return true }

// InputOptions are the turn's attachments and draft (a grant's lifetime
// counts for a draft alone: the composer sets it on every turn), nil
// when none were given.
func (*extension) InputOptions(in tui.Input) any {
	if len(in.Attach) == 0 && !in.Draft {
		return nil
	}
	return ticket.TurnOptions{Attach: in.Attach, Draft: in.Draft, GrantTTL: in.AuthTTL}
}

func (*extension) Decode(v engine.Values) (any, error) {
	return ticket.Decode(v)
}

func (*extension) State(s tui.Shown) []string { return state(s) }

func (x *extension) Conversation(s tui.Shown) []string { return x.conversation(s) }

// Input is the newest user message (only the messages channel decoded:
// a thread list row reads it for every visible thread).
func (*extension) Input(v engine.Values) (string, bool, error) {
	s, err := ticket.Decode(v, "messages")
	if err != nil {
		return "", false, err
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == ticket.RoleUser {
			return s.Messages[i].Content, true, nil
		}
	}
	return "", false, nil
}

// stateOf is the ticket's reading of a checkpoint (zero when it has none:
// another graph's, or one that did not decode).
func stateOf(v any) ticket.State {
	s, _ := v.(ticket.State)
	return s
}

// parentStateOf is the ticket's reading of sh's parent: nil when sh has
// none or it did not decode.
func parentStateOf(sh tui.Shown) *ticket.State {
	s, ok := sh.ParentValue.(ticket.State)
	if !ok {
		return nil
	}
	return &s
}

// UnfoldsAtTop: z shows the summary it opened, above the tail.
func (*extension) UnfoldsAtTop(s tui.Shown) bool { return stateOf(s.Value).Summary != nil }

// Pins are the summary's one-line header and the question the current
// reply answers (Shown.Unfold: the summary is shown whole below).
func (*extension) Pins(sh tui.Shown) []string {
	th, w := sh.Theme, sh.Width
	s := stateOf(sh.Value)
	var out []string
	if sm := s.Summary; sm != nil {
		t := fmt.Sprintf("▤ summary #%d–#%d · %d msgs · history v%d", sm.From, sm.To, sm.Count, sm.HistoryVersion)
		if sh.Unfold {
			t += " · shown below · z folds"
		} else {
			t += " · z unfolds"
		}
		out = append(out, th.SummaryTitle.Render(draw.Cut(t, w)))
	}
	if r := s.Request; r != nil {
		text, where := r.Text, ""
		if inSummary(s, r.Index) {
			where = " (in the summary)"
			if q := sh.Quoted; q.Text != "" {
				text, where = q.Text, " (summary, @"+fmt.Sprint(q.At)+")"
				if q.At == 0 {
					text, where = q.Text, " (in the summary)"
				}
			}
		}
		label := fmt.Sprintf("? answering #%d%s: ", r.Index, where)
		words := termtext.Line(strings.Join(strings.Fields(text), " "))
		out = append(out, th.SpeakerUser.Render(label)+th.Text.Render(draw.Cut(words, max(w-draw.Width(label), 1))))
	}
	return out
}

// Quote is the question the reply answers once it went into the summary.
func (*extension) Quote(sh tui.Shown) (int, string, bool) {
	s := stateOf(sh.Value)
	if s.Request == nil || !inSummary(s, s.Request.Index) {
		return 0, "", false
	}
	return s.Request.Index, s.Request.Text, true
}

// Quoted: the stored user message whose words are the request's.
func (*extension) Quoted(text string, body []byte) (string, bool) {
	var msg ticket.Message
	if json.Unmarshal(body, &msg) == nil && msg.Role == ticket.RoleUser && strings.TrimSpace(msg.Content) == strings.TrimSpace(text) {
		return msg.Content, true
	}
	return "", false
}

// inSummary: message index went into the summary (it is not in the tail).
func inSummary(s ticket.State, index int) bool {
	if s.Summary == nil {
		return false
	}
	for _, msg := range s.Messages {
		if msg.Index == index {
			return false
		}
	}
	return true
}

// Checks: a checkpoint with a summary is checked for its fidelity.
func (*extension) Checks(sh tui.Shown) (string, string, bool) {
	s := stateOf(sh.Value).Summary
	if s == nil {
		return "", "", false
	}
	if sh.Theme == nil {
		return "", "fidelity", true
	}
	return sh.Theme.Heading.Render("Summary") + sh.Theme.Muted.Render(fmt.Sprintf(" #%d–#%d", s.From, s.To)), "fidelity", true
}

// Check reads the summary's originals from the stored transcript and
// checks them (ticket.CheckFidelity, as `rewind check fidelity`).
func (*extension) Check(ctx context.Context, b tui.Backend, thread string, sh tui.Shown) (tui.Verdict, error) {
	st := stateOf(sh.Value)
	if st.Summary == nil {
		return tui.Verdict{}, errors.New("this checkpoint has no summary to check")
	}
	c, err := checkFidelity(ctx, b, thread, sh.Checkpoint.ID, st.Summary, st.Facts)
	if err != nil {
		return tui.Verdict{}, err
	}
	text, ok := badgeText(c)
	return tui.Verdict{Text: text, OK: ok, Hint: "rewind check fidelity"}, nil
}

// transcriptReader is a tui.Backend that reads the stored transcript.
type transcriptReader interface {
	Transcript(ctx context.Context, thread string, at, from, to int64) ([]engine.StoredMessage, error)
}

// fidelityCounts is what a badge says of a report.
type fidelityCounts struct {
	facts                              int
	kept, folded, moved, altered, lost int
}

func countsOf(r ticket.FidelityReport) fidelityCounts {
	c := r.Counts
	return fidelityCounts{facts: len(r.Facts), kept: c.Kept, folded: c.Folded, moved: c.Moved, altered: c.Altered, lost: c.Lost}
}

// checkFidelity reads the summary's originals as of checkpoint at and
// checks them.
func checkFidelity(ctx context.Context, b tui.Backend, thread string, at int64, s *ticket.Summary, facts []string) (fidelityCounts, error) {
	tr, ok := b.(transcriptReader)
	if !ok {
		return fidelityCounts{}, errors.New("this store cannot read the transcript")
	}
	stored, err := tr.Transcript(ctx, thread, at, int64(max(s.From, 1)), int64(s.To))
	if err != nil {
		return fidelityCounts{}, err
	}
	originals := make([]ticket.Message, 0, len(stored))
	for _, sm := range stored {
		var om ticket.Message
		if err := json.Unmarshal(sm.Body, &om); err != nil {
			return fidelityCounts{}, fmt.Errorf("message #%d of thread %s does not decode: %w", sm.Index, store.Name(thread), err)
		}
		originals = append(originals, om)
	}
	return countsOf(ticket.CheckFidelity(s, facts, originals)), nil
}

// badgeText is the badge's words and whether the check passed:
// "fidelity ✓ 13 kept · 50 folded", "fidelity ✗ 1 altered · 12 kept".
func badgeText(c fidelityCounts) (string, bool) {
	if c.facts == 0 {
		return "fidelity ✓ no pinned facts to keep", true
	}
	var bad []string
	for _, kv := range []struct {
		n    int
		what string
	}{{c.altered, "altered"}, {c.moved, "moved"}, {c.lost, "lost"}} {
		if kv.n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", kv.n, kv.what))
		}
	}
	good := []string{fmt.Sprintf("%d kept", c.kept)}
	if c.folded > 0 {
		good = append(good, fmt.Sprintf("%d folded", c.folded))
	}
	if len(bad) == 0 {
		return "fidelity ✓ " + strings.Join(good, " · "), true
	}
	return "fidelity ✗ " + strings.Join(append(bad, good...), " · "), false
}

// Said reads a stored message as the ticket's: its speaker, its content
// and the calls it does not spell out (a malformed call as written).
func (*extension) Said(body []byte) (string, string, bool) {
	m, ok := ticket.Said(body)
	return m.Speaker, m.Content, ok
}

// Calls are the ticket's model calls, each request built again from the
// parent checkpoint (ticket.Calls).
func (*extension) Calls(ctx context.Context, b tui.Backend, thread string, id int64) ([]tui.Call, error) {
	tcs, err := ticket.Calls(ctx, b, thread, id)
	out := make([]tui.Call, len(tcs))
	for i, c := range tcs {
		out[i] = tui.Call{Node: c.Node, Task: c.Task, Role: c.Role, Round: c.Round, Built: true, Request: c.Request,
			Hash: c.Hash, Rebuilt: c.Rebuilt, Exact: c.Exact, Parts: c.Parts, Reported: c.Reported,
			Answer: c.Answer, ToolCalls: c.ToolCalls, Error: c.Error}
	}
	return out, err
}

// A tui.Backend is what ticket.Calls reads.
var _ ticket.CallReader = tui.Backend(nil)

// Gate is the draft waiting at the ticket's approval gate, its grant
// judged at now (ticket.WaitingDraft).
func (*extension) Gate(head engine.Checkpoint, v any, now time.Time) (tui.Gate, bool) {
	g, ok := ticket.WaitingDraft(head, stateOf(v), now)
	if !ok {
		return tui.Gate{}, false
	}
	out := tui.Gate{Checkpoint: g.Checkpoint, Op: tui.GateOp{Kind: g.Op.Kind, ID: g.Op.ID, Payload: g.Op.Payload},
		Question: "create this reply as an outgoing draft to the customer?", DraftTitle: "Draft to the customer",
		NoGrant: g.Grant == nil || *g.Grant == (ticket.Authorization{}), Problem: g.Problem, Blocked: "create_draft", GrantRef: ticket.GrantRef,
		Seen: tui.Seen{Head: g.Checkpoint, Operation: g.Op.ID, PayloadHash: ticket.PayloadHash(g.Op.Payload)}}
	if g.Grant != nil {
		out.Grant = &tui.Grant{Ref: g.Grant.Ref, ExpiresAt: g.Grant.ExpiresAt}
	}
	return out, true
}

// Answered says the decision recorded in state and the operation's
// outcome.
func (*extension) Answered(v any, op string) []tui.GateLine {
	s := stateOf(v)
	var out []tui.GateLine
	if d, ok := s.Approvals[op]; ok {
		line := "  decision recorded in state (not the conversation): " + map[bool]string{true: "approved", false: "rejected"}[d.Approved]
		if d.Reason != "" {
			line += ": " + d.Reason
		}
		if d.By != "" {
			line += " · by " + d.By
		}
		if d.Grant.Ref != "" {
			line += " · gave it grant " + d.Grant.Ref + ", expires " + d.Grant.ExpiresAt
		}
		out = append(out, tui.GateLine{Text: line})
	}
	if o, ok := s.Operations[op]; ok {
		st := tui.GateDone
		switch o.Status {
		case ticket.OpRejected, ticket.OpBlocked:
			st = tui.GateBlocked
		case ticket.OpAwaitingApproval, ticket.OpApproved:
			st = tui.GatePending
		}
		line := fmt.Sprintf("  operation %s %s: %s", o.Kind, o.ID, o.Status)
		if o.Result != "" {
			line += " · " + o.Result
		}
		if o.Reused {
			line += " (reused: it already existed)"
		}
		out = append(out, tui.GateLine{Text: line, Status: st})
	}
	return out
}

// Narrate tells the run's compactions and refused summaries.
func (*extension) Narrate() tui.Narration { return &compactions{} }

// compactions are a run's context compactions, as the status bar says
// them.
type compactions struct {
	compacted  int
	refused    string // the last refused summary's first failure
	extractive bool   // rewind wrote the summary itself
}

func (c *compactions) Event(ev engine.Event) error {
	switch ev.Type {
	case ticket.EventContextCompacted:
		c.compacted++
		d, err := event.Decode[event.ContextCompacted](ev.Type, ev.Data)
		if d.Strategy == ticket.ExtractiveStrategy {
			c.extractive = true
		}
		return err
	case ticket.EventCompactionRejected:
		d, err := event.Decode[event.CompactionRejected](ev.Type, ev.Data)
		if err != nil {
			return err
		}
		c.refused = ticket.RefusalLine(d)
	}
	return nil
}

func (c *compactions) Now() []string {
	var parts []string
	if c.compacted > 0 {
		t := "compacted"
		if c.extractive {
			t += " (by rewind: the model's summaries were refused twice)"
		}
		parts = append(parts, t)
	}
	if c.refused != "" && !c.extractive {
		parts = append(parts, "! summary refused: "+c.refused)
	}
	return parts
}

func (c *compactions) Ended() string {
	switch {
	case c.refused != "" && !c.extractive:
		return "! summary refused: " + c.refused
	case c.extractive:
		return "compacted by rewind (the model's summaries were refused twice)"
	}
	return ""
}

// The TUI hands an answer's Seen to the worker field by field (it names no
// ticket type): this conversion stops the build when the two differ.
var _ = ticket.Seen(tui.Seen{})
