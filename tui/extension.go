package tui

import (
	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/themes"
)

// Extension is what a graph shows beyond its channels by shape (shape.go):
// its own reading of a checkpoint and the State and Conversation panes
// drawn from it. With none (Options.Extension nil) the panes show any
// graph by the shape of its channels. The ticket graph's is
// TicketExtension; a graph of one's own writes its own (ExampleExtension).
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
	// that adds a State pane keeps the shape's conversation.
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

	// r and d are the TUI's own drawing of the checkpoint: the shape's
	// fallback and the ticket's extension, in this package, draw with
	// them.
	r *renderer
	d *detail
}

// shown is d as an extension draws it.
func (r *renderer) shown(d *detail, w int, unfold bool) Shown {
	s := Shown{Checkpoint: d.cp, Value: d.value, Err: d.stateErr, Parent: d.parent, ParentValue: d.pvalue,
		Changed: map[string]bool{}, Theme: r.theme, Width: w, Unfold: unfold, r: r, d: d}
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

// TicketExtension is the ticket graph's: its state as the ticket's
// fields, its messages channel as the conversation under its summary.
func TicketExtension() Extension { return ticketExtension{} }

type ticketExtension struct{}

func (ticketExtension) InputHints() (string, string) {
	return "e.g. My order SO20260901 hasn't arrived: where is the parcel?", "e.g. s3://tickets/SO20260901/photo.jpg"
}

func (ticketExtension) DraftReplies() bool { return true }

func (ticketExtension) Decode(v engine.Values) (any, error) {
	return ticket.Decode(v)
}

func (ticketExtension) State(s Shown) []string { return s.r.ticketState(s.d, s.Width, s.Unfold) }

func (ticketExtension) Conversation(s Shown) []string {
	return s.r.ticketConversation(s.d, s.Width, s.Unfold)
}

// Input is the newest user message (only the messages channel decoded:
// a thread list row reads it for every visible thread).
func (ticketExtension) Input(v engine.Values) (string, bool, error) {
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
