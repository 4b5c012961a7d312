package worker

import (
	"context"
	"sync"

	"rewind/engine"
)

// Named is what the graph whose own kill points are Points (the ticket's)
// ties them to, and how it answers its approval gate. The worker names no
// graph: that graph's package registers it as it loads (engine/ticket),
// so a program that never links the ticket (a graph author's TUI) builds
// none of it.
type Named struct {
	// Graph builds the graph: its name, and its nodes for Parse.
	Graph func() *engine.Graph
	// Fanout is the node whose tasks mid-fanout holds; Summarizer, Draft
	// and Verify are the nodes whose commits fire after-compaction-commit,
	// after-side-effect-recorded and after-verify.
	Fanout, Summarizer, Draft, Verify string
	// Answer performs an approve or reject request on e: it records the
	// answer and carries the run on, with cfg (the request's, with its
	// kill point's hooks).
	Answer func(ctx context.Context, e *engine.Engine, req Request, cfg engine.RunConfig) (engine.Result, error)
}

var (
	namedMu    sync.Mutex
	named      *Named
	namedGraph func() *engine.Graph // named's Graph, built once at first use
)

// Register ties Points and the approve and reject ops to n's graph; the
// last registration wins. It builds nothing: the ticket registers as it
// loads, and building its graph then was half a millisecond of every
// rewind process's start, most of which never parse a kill point.
func Register(n Named) {
	namedMu.Lock()
	defer namedMu.Unlock()
	named, namedGraph = &n, sync.OnceValue(n.Graph)
}

// theNamed is the registered graph's ties and its graph (built once, on
// the first call), or nil and nil when no package registered one.
func theNamed() (*Named, *engine.Graph) {
	namedMu.Lock()
	n, g := named, namedGraph
	namedMu.Unlock()
	if n == nil {
		return nil, nil
	}
	// Built outside the lock: the graph's constructor is the
	// registering package's code.
	return n, g()
}

// registered is the ties of the graph called name, nil when it has none.
func registered(name string) *Named {
	n, g := theNamed()
	if n == nil || g.Name != name {
		return nil
	}
	return n
}

// isNamed says whether g is the graph whose own points are Points.
func isNamed(g *engine.Graph) bool { return g != nil && registered(g.Name) != nil }
