// Package stream carries a model call's text to a display while the model is
// still generating it. The finished answer still comes back whole from
// model.Model.Complete, and only finished answers reach checkpoints; deltas
// are for watching, never for state.
//
// A display attaches a listener to the run's context (WithListener); the
// engine passes that context down to every model call, so a provider that can
// stream (engine/model/openai) or replay (engine/model/replay) reports each
// call's text as it arrives.
package stream

import (
	"context"
	"sync/atomic"
)

// Delta is one piece of a call's answer, or the call's end.
type Delta struct {
	// Call tells apart calls that run at the same time (the executors of
	// one superstep stream in parallel).
	Call uint64 `json:"call"`
	// Role is the graph's role for the call: planner, executor, critic,
	// summarizer or reply.
	Role string `json:"role"`
	// Task is the engine task that made the call (its id), when known: it
	// labels parallel executors by their task rather than by arrival.
	Task string `json:"task,omitempty"`
	// Text is appended to what the call has shown so far.
	Text string `json:"text,omitempty"`
	// Reset says to drop what Call has shown so far: a retry starts over.
	Reset bool `json:"reset,omitempty"`
	// Done marks the call's end; Err is set when it failed.
	Done bool   `json:"done,omitempty"`
	Err  string `json:"err,omitempty"`
}

// Func receives deltas. It is called from the model call's goroutine,
// possibly from several calls at once, so it must be safe for concurrent
// use and must not block (hand the delta to a channel or a buffer).
type Func func(Delta)

type key struct{}

// WithListener returns a context whose model calls report deltas to f.
// A listener already on ctx keeps receiving them too.
func WithListener(ctx context.Context, f Func) context.Context {
	if f == nil {
		return ctx
	}
	if prev := Listener(ctx); prev != nil {
		inner := f
		f = func(d Delta) { prev(d); inner(d) }
	}
	return context.WithValue(ctx, key{}, f)
}

// Listener returns the context's listener, or nil when nobody watches (a
// provider then need not stream at all).
func Listener(ctx context.Context) Func {
	f, _ := ctx.Value(key{}).(Func)
	return f
}

var calls atomic.Uint64

// NewCall returns a call id unique within the process.
func NewCall() uint64 { return calls.Add(1) }

// WithTask stamps every delta reported through ctx with the task id.
func WithTask(ctx context.Context, task string) context.Context {
	prev := Listener(ctx)
	if prev == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, Func(func(d Delta) {
		if d.Task == "" {
			d.Task = task
		}
		prev(d)
	}))
}

// Without returns ctx with nobody listening, for a model that wraps another
// and streams the answer itself.
func Without(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, Func(nil))
}
