package tui

import (
	"rewind/engine"
	"rewind/engine/ticket"
)

// Extension is what a graph shows beyond its channels by shape: the
// ticket graph's turn fields, attachments, subtasks, approvals and the
// summary pinned over its conversation. With none (Deps.Extension nil)
// the panes show any graph by the shape of its channels (shape.go); the
// app sets TicketExtension when it opens the ticket graph.
type Extension interface {
	// read decodes a checkpoint's values for the panes that show the
	// ticket's fields (the State pane, the summary pin, the fidelity
	// badge, the live strip's gate).
	read(v engine.Values) (ticket.State, error)
	// state and conversation are the State and Conversation panes' lines.
	state(r *renderer, d *detail, w int, unfold bool) []string
	conversation(r *renderer, d *detail, w int, unfold bool) []string
	// input is the newest input message of v (a turn row's words, a
	// thread's last input); ok false when v holds none.
	input(v engine.Values) (text string, ok bool, err error)
	// inputHints are the new-thread and fork forms' examples: a first
	// message's, and an attachment reference's ("": the form asks for
	// none).
	inputHints() (message, attachment string)
	// draftReplies: the graph's input takes a draft reply (the
	// composer's ctrl+d).
	draftReplies() bool
}

// draftReplies: the composer offers a draft reply (ctrl+d) only for a
// graph whose extension takes one.
func draftReplies(x Extension) bool { return x != nil && x.draftReplies() }

// inputHints are the forms' examples for a graph with an extension or
// without one (any graph's typed input: no attachments).
func inputHints(x Extension) (message, attachment string) {
	if x == nil {
		return "the text this graph's input takes", ""
	}
	return x.inputHints()
}

// TicketExtension is the ticket graph's: its state as the ticket's
// fields, its messages channel as the conversation under its summary.
func TicketExtension() Extension { return ticketExtension{} }

type ticketExtension struct{}

func (ticketExtension) inputHints() (string, string) {
	return "e.g. My order SO20260901 hasn't arrived: where is the parcel?", "e.g. s3://tickets/SO20260901/photo.jpg"
}

func (ticketExtension) draftReplies() bool { return true }

func (ticketExtension) read(v engine.Values) (ticket.State, error) { return ticket.Decode(v) }

func (ticketExtension) state(r *renderer, d *detail, w int, unfold bool) []string {
	return r.ticketState(d, w, unfold)
}

func (ticketExtension) conversation(r *renderer, d *detail, w int, unfold bool) []string {
	return r.ticketConversation(d, w, unfold)
}

// input is the newest user message (only the messages channel decoded:
// a thread list row reads it for every visible thread).
func (ticketExtension) input(v engine.Values) (string, bool, error) {
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
