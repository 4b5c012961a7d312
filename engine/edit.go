package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"rewind/engine/chainformat"
	"rewind/engine/internal/userpanic"
)

// ErrBadEdit is matched (errors.Is) by an edited value the channel or the
// graph cannot take. Nothing is stored.
var ErrBadEdit = errors.New("the edited value cannot be stored")

// StateCheck is a graph's check of a whole state after an edit (see
// Graph.CheckState): an error names what is wrong.
type StateCheck func(Values) error

// CheckState sets the check an edited state must pass (EditState).
func (g *Graph) CheckState(fn StateCheck) *Graph { g.stateCheck = fn; return g }

// ChannelCheck is a graph's check of the value an edit gives one channel
// (see Graph.CheckChannel): an error says what is wrong and what to give
// instead.
type ChannelCheck func(ctx context.Context, in ChannelEdit) error

// ChannelEdit is what a channel check sees: the state an edit would store.
type ChannelEdit struct {
	Thread string
	// Checkpoint is the checkpoint edited; Values its state with the edit
	// applied, Channel the channel the edit set.
	Checkpoint int64
	Channel    string
	Values     Values
	// Transcript reads the original transcript messages from..to as the
	// edited checkpoint's branch holds them (Engine.Transcript), those a
	// summary folded too.
	Transcript func(ctx context.Context, from, to int64) ([]StoredMessage, error)
}

// CheckChannel sets the check a value edited into channel must pass
// (EditState), after the channel's reducer took it and before the whole
// state's (CheckState): what a node of the graph would refuse to read or
// would never write (a summary that rewrites an id, a budget that is no number).
// A node's own writes are its own to check.
func (g *Graph) CheckChannel(channel string, fn ChannelCheck) *Graph {
	if !g.schema.HasChannel(channel) {
		return g.fail("CheckChannel: channel %q is not declared (declare it first)", channel)
	}
	if g.channelChecks == nil {
		g.channelChecks = map[string]ChannelCheck{}
	}
	g.channelChecks[channel] = fn
	return g
}

// MaxEditValue is the most one edited value may hold, in bytes, however it
// is given (--value, --value-file, $EDITOR in the CLI or the TUI): the
// limit of one message (termtext.MaxInput, 64 KB).
const MaxEditValue = 64 << 10

// EditState sets channel to value at checkpoint id, as a new update
// checkpoint whose parent is id (a new branch when id already has a
// continuation), keeping id's pending tasks: a resume of the new
// checkpoint (ResumeAt) runs them on the edited state. The write is chosen
// so the channel ends up holding exactly value through its own reducer (a
// list is replaced, a counter set, a map reset); a value the reducer cannot
// hold, or a state the graph's check refuses, is an error matching
// ErrBadEdit and stores nothing.
func (e *Engine) EditState(ctx context.Context, thread string, id int64, channel string, value json.RawMessage, o UpdateOptions) (Checkpoint, error) {
	if !e.graph.schema.HasChannel(channel) {
		return Checkpoint{}, fmt.Errorf("edit thread %q: %w: no channel %q (channels: %s)", threadName(thread), ErrBadEdit, clipName(channel), strings.Join(e.graph.schema.Channels(), ", "))
	}
	if len(value) > MaxEditValue {
		return Checkpoint{}, fmt.Errorf("edit %s of thread %q: %w: the value is %d bytes, over the %d (64 KB) an edited value may hold: shorten it", channel, threadName(thread), ErrBadEdit, len(value), MaxEditValue)
	}
	if !json.Valid(value) {
		return Checkpoint{}, fmt.Errorf("edit %s of thread %q: %w: the value is not JSON", channel, threadName(thread), ErrBadEdit)
	}
	base, err := e.Get(ctx, thread, id)
	if err != nil {
		return Checkpoint{}, err
	}
	w, out, err := e.graph.setWrite(base.Values, channel, value)
	if err == nil {
		err = e.checkEdit(ctx, thread, id, channel, out)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("edit %s at checkpoint %d of thread %q: %w", channel, id, threadName(thread), err)
	}
	return e.UpdateStateWith(ctx, thread, id, []Write{w}, "", o)
}

// checkEdit runs the graph's checks of state v, which an edit of channel
// at checkpoint id would store: the channel's own (CheckChannel), then the
// whole state's (CheckState).
func (e *Engine) checkEdit(ctx context.Context, thread string, id int64, channel string, v Values) error {
	// The channel's own check first: it says best what to give instead.
	if check := e.graph.channelChecks[channel]; check != nil {
		err := userpanic.Do("CheckChannel check of channel "+channel, func() error {
			return check(ctx, ChannelEdit{Thread: thread, Checkpoint: id, Channel: channel, Values: v,
				Transcript: func(ctx context.Context, from, to int64) ([]StoredMessage, error) {
					return e.Transcript(ctx, thread, id, from, to)
				}})
		})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadEdit, err)
		}
	}
	if e.graph.stateCheck != nil {
		if err := userpanic.Do("CheckState check", func() error { return e.graph.stateCheck(v) }); err != nil {
			return fmt.Errorf("%w: %w", ErrBadEdit, err)
		}
	}
	return nil
}

// setWrite finds the write that makes channel hold exactly value from v:
// the reducers differ in what replaces a value, so each form is tried and
// the one whose result is value wins.
func (g *Graph) setWrite(v Values, channel string, value json.RawMessage) (Write, Values, error) {
	forms := []Write{
		Replace(channel, json.RawMessage(value)),
		Put(channel, map[string]json.RawMessage{"set": value}),
		Put(channel, map[string]json.RawMessage{"$reset": value}),
		{Channel: channel, Value: value},
	}
	var last error
	for _, w := range forms {
		out, err := g.apply(v, []Write{w})
		if err != nil {
			last = err
			continue
		}
		if !chainformat.SameJSON(out[channel], value) {
			continue
		}
		return w, out, nil
	}
	if last != nil {
		return Write{}, nil, fmt.Errorf("%w: %v", ErrBadEdit, last)
	}
	return Write{}, nil, fmt.Errorf("%w: channel %q merges what is written into what it holds, so this value (which drops something it holds) cannot be set; change values, do not remove them", ErrBadEdit, channel)
}

func clipName(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}
