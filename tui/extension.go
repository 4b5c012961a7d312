package tui

import (
	"context"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/themes"
)

// Extension is what a graph shows beyond its channels by shape (shape.go):
// its own reading of a checkpoint and the State and Conversation panes
// drawn from it. With none (Options.Extension nil) the panes show any
// graph by the shape of its channels. The ticket graph's is
// rewind/tui/ticketview's; a graph of one's own writes its own
// (ExampleExtension), drawing with rewind/tui/draw.
//
// What only some graphs have is a small interface of its own beside this
// one (DraftReplier), which the TUI asks for by type assertion, as io
// asks a Writer for io.WriterTo: an extension implements what its graph
// has and nothing else.
type Extension interface {
	// Decode reads a checkpoint's values into the extension's own value,
	// which the TUI keeps with the checkpoint (Shown.Value) and hands back
	// to the other methods: a checkpoint never changes, so scrubbing the
	// timeline decodes each one once. An error is shown in place of the
	// panes, never read as zeros.
	Decode(v engine.Values) (any, error)
	// State and Conversation are the panes' lines for the checkpoint
	// under the cursor, at most s.Width cells each (the TUI cuts a longer
	// one). nil draws that pane by the channels' shape, so an extension
	// that adds a State pane keeps the shape's conversation. The lines
	// are printed as they are: what comes from stored or model text goes
	// through rewind/tui/termtext first (Line, Text), as the TUI's own
	// panes do, so no escape sequence in a value reaches the terminal.
	State(s Shown) []string
	Conversation(s Shown) []string
	// Input is the newest input message of v: a turn row's words and the
	// threads list's last input (ok false when v holds none). It is read
	// for every visible thread, so it decodes no more than it needs.
	Input(v engine.Values) (text string, ok bool, err error)
	// InputHints are the new-thread and fork forms' examples: a first
	// message's, and an attachment reference's ("": the form asks for
	// none).
	InputHints() (message, attachment string)
}

// DraftReplier is an Extension whose graph's input takes a draft reply
// (the composer's ctrl+d, the ticket's --draft).
type DraftReplier interface {
	DraftReplies() bool
}

// InputOptioner is an Extension whose graph's input takes options beyond
// its text (engine.Input.Extra; the ticket's: attachments, a draft reply
// and its grant's lifetime, ticket.TurnOptions): the TUI has it make them
// of what the forms and the composer gathered as a run starts.
type InputOptioner interface {
	// InputOptions are in's options as the graph's input reads them
	// (nil: none given).
	InputOptions(in Input) any
}

// Pinner is an Extension with lines pinned over the Conversation pane,
// in view however far it scrolls (the ticket's: its summary's one-line
// header and the question the newest reply answers). The TUI draws a
// rule under them.
type Pinner interface {
	Pins(s Shown) []string
}

// Quoter is a Pinner whose pins quote a message the checkpoint no longer
// holds (the ticket's question, compacted into the summary): the TUI
// reads the thread's stored messages of that index in the background and
// gives Pins the one Quoted accepts, as Shown.Quoted.
type Quoter interface {
	// Quote is the quoted message's index and its text as s quotes it;
	// ok false: s holds what its pins quote.
	Quote(s Shown) (index int, text string, ok bool)
	// Quoted says whether a stored message's body is the one quoted as
	// text (branches may store different messages at one index), and
	// the words to pin.
	Quoted(text string, body []byte) (words string, ok bool)
}

// Unfolder is an Extension whose conversation z (unfold) opens at its
// top, where the unfolding showed something (the ticket's summary, drawn
// whole above the tail), rather than at its newest message.
type Unfolder interface {
	UnfoldsAtTop(s Shown) bool
}

// Checker is an Extension with a check of a checkpoint against what the
// store keeps beyond its values (the ticket's: does its summary keep
// every pinned fact of the messages it replaced?). The TUI runs it in the
// background, once per checkpoint and only while the State pane shows
// it (a check may read thousands of messages), and heads the State pane
// with the verdict.
type Checker interface {
	// Checks is the State pane's heading for s's check (drawn in
	// s.Theme) and the check's name, said while it runs or when it
	// cannot ("fidelity …"); ok false: s has nothing to check.
	Checks(s Shown) (heading, name string, ok bool)
	// Check runs the check, off the UI's goroutine; b is the store as
	// the TUI reads it (a Backend may implement more, as the engine's
	// does: the ticket's check asks it for the stored transcript).
	Check(ctx context.Context, b Backend, thread string, s Shown) (Verdict, error)
}

// Verdict is a Checker's answer.
type Verdict struct {
	// Text is the badge's words ("fidelity ✓ 13 kept"); OK whether the
	// check passed (its colour).
	Text string
	OK   bool
	// Hint is said after a failed verdict: where to read more.
	Hint string
}

// Searcher is an Extension whose graph's stored messages a search (/)
// reads in the graph's own words (the ticket's: its speaker, a malformed
// call's text as written). Without one a message is read by its shape,
// as the Conversation pane reads a message list.
type Searcher interface {
	// Said is who said a stored message (its body, as the store keeps
	// it) and what it says, as a hit shows and matches it; ok false: the
	// body is not one of the graph's messages (read by its shape then).
	Said(body []byte) (speaker, text string, ok bool)
}

// Caller is an Extension that builds its graph's model requests again
// from a checkpoint's parent, as the model saw them (P). Without one, P
// lists what the engine stores of each call (its role, the hash of what
// was sent, the tokens counted, the answer when kept) and says the
// requests are not built again.
type Caller interface {
	// Calls are the model calls of the tasks that made checkpoint id, in
	// order (none for an input or an update); b is the store as the TUI
	// reads it.
	Calls(ctx context.Context, b Backend, thread string, id int64) ([]Call, error)
}

// Call is one model call that made a checkpoint, as P shows it.
type Call struct {
	Node, Task, Role string
	// Round counts the task's calls of Role, from 1.
	Round int
	// Built: Request is the request built again from the parent
	// checkpoint (Caller), Rebuilt its hash and Exact whether it is the
	// stored Hash of the request sent ("" when stored before requests
	// were hashed); Parts its estimated tokens by part (model.Part…).
	Built   bool
	Request model.Request
	Hash    string
	Rebuilt string
	Exact   bool
	Parts   map[string]int
	// Reported is what the server counted.
	Reported model.Usage
	// Answer is what the model answered, and its tool calls.
	Answer    string
	ToolCalls []model.ToolCall
	Error     string
}

// Gater is an Extension whose graph waits at an approval gate for a
// person's answer (the ticket's: a draft to the customer): the live strip
// shows it, a opens its dialog and the answer goes to the Runner
// (Approver) with what the dialog showed.
type Gater interface {
	// Gate is the gate the thread's head waits at, unanswered, judged at
	// now (v: Decode's reading of head); ok false: none.
	Gate(head engine.Checkpoint, v any, now time.Time) (Gate, bool)
	// Answered are the lines that say what the answer to operation op
	// recorded in v (the head after it), for the live strip.
	Answered(v any, op string) []GateLine
}

// Gate is an approval gate a checkpoint waits at.
type Gate struct {
	Checkpoint int64
	// Op is the operation that waits; Question what the dialog asks of
	// it, DraftTitle the heading over its payload.
	Op         GateOp
	Question   string
	DraftTitle string
	// Grant is the authorization the operation is written under (nil:
	// none attached; NoGrant also when it is empty), Problem why it would
	// not let the operation write now ("": it would), Blocked what
	// writes nothing then ("create_draft"), and GrantRef the grant an
	// approval of an operation under none gives it.
	Grant    *Grant
	NoGrant  bool
	Problem  string
	Blocked  string
	GrantRef string
	// Seen is what the dialog shows, sent with the answer: one to a gate
	// that changed since is refused.
	Seen Seen
}

// GateOp is the operation at a gate.
type GateOp struct{ Kind, ID, Payload string }

// Grant is an authorization an operation is written under.
type Grant struct{ Ref, ExpiresAt string }

// Seen is the head, the operation and the hash of its payload a person
// answered at the gate.
type Seen struct {
	Head        int64
	Operation   string
	PayloadHash string
}

// GateLine is a line Answered says, in the colour of its status.
type GateLine struct {
	Text   string
	Status GateStatus
}

// GateStatus picks a GateLine's colour.
type GateStatus int

// The GateStatus values: said plainly, done, blocked, still pending.
const (
	GateNote GateStatus = iota
	GateDone
	GateBlocked
	GatePending
)

// Narrator is an Extension whose graph emits events of its own that the
// status bar tells while a run goes and when it ends (the ticket's: its
// context compacted, a summary refused).
type Narrator interface {
	// Narrate starts the telling of one run.
	Narrate() Narration
}

// Narration is one run's telling (Narrator). It takes each of the run's
// events the TUI does not tell itself, once each, in order.
type Narration interface {
	// Event takes one event; an error (its data did not decode) is said
	// in the status bar.
	Event(ev engine.Event) error
	// Now are the words the status bar adds while the run goes (none:
	// nil); Ended the words after the run's end ("": none).
	Now() []string
	Ended() string
}

// Quoted is a stored message a Quoter asked for: zero until it is read,
// or when no stored message was the one quoted.
type Quoted struct {
	Text string
	// At is the checkpoint that stored it first.
	At int64
}

// Shown is one checkpoint as an Extension draws it.
type Shown struct {
	Checkpoint engine.Checkpoint
	// Value and Err are Decode's reading of Checkpoint.
	Value any
	Err   error
	// Parent is the checkpoint's parent (nil for a thread's first) and
	// ParentValue its Decode (nil when it did not decode): what a pane
	// marks as changed.
	Parent      *engine.Checkpoint
	ParentValue any
	// Changed are the channels whose value differs from the parent's.
	Changed map[string]bool
	// Theme is the TUI's: its styles keep an extension's lines in the
	// colours of the rest.
	Theme *themes.Theme
	// Width is the pane's, in cells; Unfold is z: long values shown
	// whole rather than folded.
	Width  int
	Unfold bool
	// Quoted is the message a Quoter's pins quote, as read (Pins only).
	Quoted Quoted
}

// shown is d as an extension draws it.
func (r *renderer) shown(d *detail, w int, unfold bool) Shown {
	s := Shown{Checkpoint: d.cp, Value: d.value, Err: d.stateErr, Parent: d.parent, ParentValue: d.pvalue,
		Changed: map[string]bool{}, Theme: r.theme, Width: w, Unfold: unfold}
	for _, cd := range d.diff {
		s.Changed[cd.Channel] = true
	}
	return s
}

// draftReplies: the composer offers a draft reply (ctrl+d) only for a
// graph whose extension takes one.
func draftReplies(x Extension) bool {
	dr, ok := x.(DraftReplier)
	return ok && dr.DraftReplies()
}

// inputHints are the forms' examples for a graph with an extension or
// without one (any graph's typed input: no attachments).
func inputHints(x Extension) (message, attachment string) {
	if x == nil {
		return "the text this graph's input takes", ""
	}
	return x.InputHints()
}

// unfoldsAtTop: z opens d's conversation at its top (Unfolder).
func unfoldsAtTop(d *detail) bool {
	u, ok := d.ext.(Unfolder)
	return ok && u.UnfoldsAtTop(Shown{Checkpoint: d.cp, Value: d.value})
}
