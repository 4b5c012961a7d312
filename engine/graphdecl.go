package engine

import (
	"fmt"
	"rewind/engine/internal/userpanic"
	"time"
)

// Input is what a person typed to start a turn: the text, and Extra, the
// graph's own options beyond it, nil when none were given (the ticket
// graph's are a ticket.TurnOptions: attachments, a draft, its grant).
type Input struct {
	Text  string
	Extra any
}

// InputFunc makes a turn's writes from typed input; now is the turn's start.
type InputFunc func(in Input, now time.Time) ([]Write, error)

// Input declares what typed input becomes; without it, writes start a turn.
func (g *Graph) Input(fn InputFunc) *Graph { g.input = userpanic.GuardOpt("Input func", fn); return g }

// TurnInput is the graph's InputFunc, nil when it declared none.
func (g *Graph) TurnInput() InputFunc { return g.input }

// Link is a declared edge: static, or a router's declared target (Routed;
// Send: a task per packet); a router that declared none has To "".
type Link struct {
	From, To     string
	Routed, Send bool
}

// Links are the declared edges: first From "" (a new turn) to the entry,
// then by from node, each node's as declared.
func (g *Graph) Links() []Link {
	out := []Link{{To: g.entry}}
	for _, from := range g.Nodes() {
		for _, to := range g.edges[from] {
			out = append(out, Link{From: from, To: to})
		}
		if g.routers[from] != nil && len(g.paths[from]) == 0 {
			out = append(out, Link{From: from, Routed: true})
		}
		for _, t := range g.paths[from] {
			out = append(out, Link{From: from, To: t.Node, Routed: true, Send: t.send})
		}
	}
	return out
}

// picked is why the router after node may not pick t: a Send that does
// not encode, no such node, or not a target its Route declared.
func (g *Graph) picked(node string, t Target) error {
	if t.err != nil {
		return fmt.Errorf("route after %s: %w", node, t.err)
	}
	if _, ok := g.nodes[t.Node]; !ok && t.Node != End {
		return fmt.Errorf("route after %s: unknown node %q", node, t.Node)
	}
	var names []string
	for _, p := range g.paths[node] {
		if p.Node == t.Node && p.send == t.send {
			return nil
		}
		names = append(names, fmt.Sprintf("%s%s", map[bool]string{true: "Send "}[p.send], p.Node))
	}
	if names == nil { // nothing declared: any target
		return nil
	}
	return fmt.Errorf("route after %s picked %s%s, which its Route does not declare (%v): add %s to the Route's targets", node, map[bool]string{true: "Send "}[t.send], t.Node, names, map[bool]string{true: fmt.Sprintf("engine.Send(%q, nil)", t.Node), false: fmt.Sprintf("engine.Goto(%q)", t.Node)}[t.send])
}
