package langgraph

import "rewind/store/browse"

// The interface and its types are package browse's, which the TUI and the
// engine may import without linking this reader; the aliases keep this
// package's names for its callers.
type (
	Source     = browse.Source
	About      = browse.About
	Chain      = browse.Chain
	Thread     = browse.Thread
	Namespace  = browse.Namespace
	Listing    = browse.Listing
	Counts     = browse.Counts
	Task       = browse.Task
	Checkpoint = browse.Checkpoint
	Channel    = browse.Channel
	TaskWrites = browse.TaskWrites
	Write      = browse.Write
	Interrupt  = browse.Interrupt
)

// ErrNotFound is matched (errors.Is) by a missing thread or checkpoint.
var ErrNotFound = browse.ErrNotFound

// Checkpoint sources (LangGraph's metadata "source", rewind's Source).
const (
	SourceInput  = browse.SourceInput
	SourceLoop   = browse.SourceLoop
	SourceUpdate = browse.SourceUpdate
	SourceFork   = browse.SourceFork
)

// Messages are LangChain messages made plain (package browse's, which the
// TUI reads too).
type (
	Message  = browse.Message
	ToolCall = browse.ToolCall
)

// Messages reads a list of LangChain messages (browse.Messages).
func Messages(v any) ([]Message, bool) { return browse.Messages(v) }

// CheckpointMessages reads the checkpoint's "messages" channel.
func CheckpointMessages(c Checkpoint) []Message { return c.Messages() }
