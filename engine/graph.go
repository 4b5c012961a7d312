package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"rewind/engine/event"
	"slices"

	"rewind/engine/model"
)

// End is the edge target that finishes a run.
const End = "__end__"

// NodeFunc is one node of a graph. It reads the state as of the superstep's
// checkpoint and returns its writes; it never mutates shared state.
type NodeFunc func(ctx context.Context, nc *NodeContext) ([]Write, error)

// Router picks the targets of a conditional edge from the state after the
// superstep's writes were applied.
type Router func(v Values) ([]Target, error)

// Target is where an edge leads: a node (one task however many edges point
// at it) or a Send packet (one task per packet, carrying its arguments).
type Target struct {
	Node string
	Args json.RawMessage
	send bool
	// err is why Send could not encode the arguments; the router's caller
	// reports it, so a bad packet never becomes a task.
	err error
}

// Goto targets a node.
func Goto(node string) Target { return Target{Node: node} }

// Send targets a node with its own arguments: fan-out, one task per packet.
// Args must be plain JSON data: they are stored in the checkpoint. Args
// that json cannot encode, or would not encode faithfully (a struct with
// no exported field, such as a *sql.DB or a connection, stored as {}),
// make the route fail with an error naming the node and the field (see
// Target.Err), never a task with null or empty arguments.
func Send(node string, args any) Target {
	b, err := json.Marshal(args)
	if err != nil {
		return Target{Node: node, send: true, err: &SendError{Node: node, Field: unencodable(args), Err: err}}
	}
	if path, why, bad := lossy(args, b); bad {
		return Target{Node: node, send: true, err: &SendError{Node: node, Field: path, Err: errors.New(why)}}
	}
	return Target{Node: node, Args: b, send: true}
}

// Err is why the target cannot become a task (a Send whose arguments do
// not encode), or nil.
func (t Target) Err() error { return t.err }

// SendError is a Send whose arguments cannot be stored as JSON.
type SendError struct {
	Node string
	// Field is the path of the value that does not encode ("task.result",
	// "items[2]"); empty when it is the argument itself.
	Field string
	Err   error
}

func (e *SendError) Error() string {
	what := "its argument"
	if e.Field != "" {
		what = "argument field " + e.Field
	}
	return fmt.Sprintf("Send to %s: %s cannot be stored as JSON (%v): a Send packet is stored in the checkpoint, so it must be plain data", e.Node, what, e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// Migration turns a checkpoint document of version N into version N+1. It
// may only fill defaults and rename: if it could fail, a thread could never
// be restored.
type Migration func(doc map[string]any) error

type channelSpec struct {
	reducer Reducer
	initial json.RawMessage
	// kind is which of the engine's own reducers it is, if any: a replay
	// skips the writes a newer one replaces whole (see resets).
	kind reducerKind
}

// Graph is a compiled set of channels, nodes and edges.
type Graph struct {
	Name string
	// SchemaVersion is the checkpoint document version this graph writes.
	SchemaVersion int
	// Migrations[n] upgrades a version-n document to n+1.
	Migrations map[int]Migration

	channels map[string]channelSpec
	chanList []string
	nodes    map[string]NodeFunc
	entry    string
	edges    map[string][]string
	routers  map[string]Router
	err      error
	// transcript is the channel whose items are stored once each.
	transcript, transcriptIndex string
	// keyed maps channels of keyed items to their key field.
	keyed map[string]string
	// objects are LastValue channels of objects, stored as field patches.
	objects map[string]bool
	// gates are the nodes that may pause for a person (see Gate).
	gates map[string]bool
	// resumeCheck is the graph's own check before a resume (see OnResume).
	resumeCheck ResumeCheck
	// stateCheck is the graph's check of an edited state (see CheckState).
	stateCheck StateCheck
	// channelChecks are the graph's checks of one edited channel (see
	// CheckChannel).
	channelChecks map[string]ChannelCheck
	// maxSends caps the Send packets of one superstep (see MaxSends).
	maxSends int
	// onCancel is what the graph writes when a run is cancelled (see
	// OnCancel).
	onCancel CancelWrites
}

// DefaultMaxSends is how many Send packets one superstep may fan out to
// unless the graph says otherwise (Graph.MaxSends): every packet is a task
// running at once, with its own goroutine, model call and writes, so a
// route that fans out without a bound (a list edited to 10,000 items) would
// take the process down. 256 is far more than a graph here fans out to and
// far less than fills memory.
const DefaultMaxSends = 256

// MaxSends sets how many Send packets one superstep may fan out to (n > 0;
// default DefaultMaxSends): past it the route fails, naming the node, the
// count and the cap, and nothing is committed.
func (g *Graph) MaxSends(n int) *Graph {
	if n <= 0 {
		return g.fail("MaxSends(%d): the cap must be 1 or more", n)
	}
	g.maxSends = n
	return g
}

// SendCap is the most Send packets one superstep may fan out to.
func (g *Graph) SendCap() int {
	if g.maxSends > 0 {
		return g.maxSends
	}
	return DefaultMaxSends
}

// ErrTooManySends is matched by errors.Is when a route fans out to more
// Send packets in one superstep than the graph's cap (Graph.MaxSends).
var ErrTooManySends = errors.New("too many Sends in one superstep")

// NewGraph starts an empty graph with the given schema version.
func NewGraph(name string, schemaVersion int) *Graph {
	return &Graph{
		Name:          name,
		SchemaVersion: schemaVersion,
		Migrations:    map[int]Migration{},
		channels:      map[string]channelSpec{},
		nodes:         map[string]NodeFunc{},
		edges:         map[string][]string{},
		routers:       map[string]Router{},
	}
}

func (g *Graph) fail(format string, a ...any) *Graph {
	if g.err == nil {
		g.err = fmt.Errorf("graph %s: "+format, append([]any{g.Name}, a...)...)
	}
	return g
}

// Channel declares a state channel with its reducer and initial value.
func (g *Graph) Channel(name string, r Reducer, initial any) *Graph {
	if _, dup := g.channels[name]; dup {
		return g.fail("channel %q declared twice", name)
	}
	b, err := json.Marshal(initial)
	if err != nil {
		return g.fail("channel %q: initial value: %v", name, err)
	}
	g.channels[name] = channelSpec{reducer: r, initial: b, kind: kindOf(r)}
	g.chanList = append(g.chanList, name)
	return g
}

// Node adds a node.
func (g *Graph) Node(name string, fn NodeFunc) *Graph {
	if name == End || name == "" {
		return g.fail("node name %q is reserved", name)
	}
	if _, dup := g.nodes[name]; dup {
		return g.fail("node %q declared twice", name)
	}
	g.nodes[name] = fn
	return g
}

// Entry sets the node every new turn starts at.
func (g *Graph) Entry(node string) *Graph { g.entry = node; return g }

// Edge adds a static edge.
func (g *Graph) Edge(from, to string) *Graph {
	g.edges[from] = append(g.edges[from], to)
	return g
}

// Route adds a conditional edge: after from runs, r picks the targets.
func (g *Graph) Route(from string, r Router) *Graph {
	if _, dup := g.routers[from]; dup {
		return g.fail("node %q has two routers", from)
	}
	g.routers[from] = r
	return g
}

// Validate reports the first wiring mistake.
func (g *Graph) Validate() error {
	if g.err != nil {
		return g.err
	}
	if _, ok := g.nodes[g.entry]; !ok {
		return fmt.Errorf("graph %s: entry node %q is not declared", g.Name, g.entry)
	}
	for from, tos := range g.edges {
		if _, ok := g.nodes[from]; !ok {
			return fmt.Errorf("graph %s: edge from unknown node %q", g.Name, from)
		}
		for _, to := range tos {
			if _, ok := g.nodes[to]; !ok && to != End {
				return fmt.Errorf("graph %s: edge %s → unknown node %q", g.Name, from, to)
			}
		}
	}
	for from := range g.routers {
		if _, ok := g.nodes[from]; !ok {
			return fmt.Errorf("graph %s: router on unknown node %q", g.Name, from)
		}
	}
	if g.SchemaVersion < 1 {
		return fmt.Errorf("graph %s: schema version must be ≥ 1", g.Name)
	}
	for v := 1; v < g.SchemaVersion; v++ {
		if g.Migrations[v] == nil {
			return fmt.Errorf("graph %s: no migration from schema v%d to v%d", g.Name, v, v+1)
		}
	}
	return nil
}

// Nodes lists the node names, sorted.
func (g *Graph) Nodes() []string {
	return slices.Sorted(maps.Keys(g.nodes))
}

// HasNode reports whether the graph declares node.
func (g *Graph) HasNode(node string) bool { _, ok := g.nodes[node]; return ok }

// initialValues is the state of a brand-new thread.
func (g *Graph) initialValues() Values {
	v := Values{}
	for _, name := range g.chanList {
		v[name] = append(json.RawMessage(nil), g.channels[name].initial...)
	}
	return v
}

// apply folds writes into a copy of v, channel by channel in write order.
// Values are never mutated in place (reducers return new bytes), so the
// copy shares the channels it does not write.
func (g *Graph) apply(v Values, writes []Write) (Values, error) {
	out := make(Values, len(v))
	for k, b := range v {
		out[k] = b
	}
	for _, w := range writes {
		spec, ok := g.channels[w.Channel]
		if !ok {
			return nil, fmt.Errorf("write to unknown channel %q", w.Channel)
		}
		if len(w.Value) == 0 {
			return nil, fmt.Errorf("empty write to channel %q", w.Channel)
		}
		nv, err := spec.reducer(out[w.Channel], w.Value)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", w.Channel, err)
		}
		out[w.Channel] = nv
	}
	return out, nil
}

// applyTo folds one write into v itself (a replay's own values).
func (g *Graph) applyTo(v Values, channel string, write json.RawMessage) error {
	spec, ok := g.channels[channel]
	if !ok {
		return fmt.Errorf("write to unknown channel %q", channel)
	}
	if len(write) == 0 {
		return fmt.Errorf("empty write to channel %q", channel)
	}
	nv, err := spec.reducer(v[channel], write)
	if err != nil {
		return fmt.Errorf("channel %q: %w", channel, err)
	}
	v[channel] = nv
	return nil
}

// next evaluates the outgoing edges of the nodes that ran, in order, and
// returns the targets: one per distinct plain node, one per Send packet.
func (g *Graph) next(ran []string, v Values) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	done := map[string]bool{}
	sends, limit := 0, g.SendCap()
	add := func(t Target) {
		if t.Node == End {
			return
		}
		if !t.send {
			if seen[t.Node] {
				return
			}
			seen[t.Node] = true
		}
		out = append(out, t)
	}
	for _, node := range ran {
		if done[node] {
			continue
		}
		done[node] = true
		for _, to := range g.edges[node] {
			add(Goto(to))
		}
		if r := g.routers[node]; r != nil {
			ts, err := r(v)
			if err != nil {
				return nil, fmt.Errorf("route after %s: %w", node, err)
			}
			n := 0
			for _, t := range ts {
				if t.send && t.Node != End {
					n++
				}
			}
			if sends += n; sends > limit {
				return nil, tooManySends(node, ts, n, sends, limit)
			}
			for _, t := range ts {
				if t.err != nil {
					return nil, fmt.Errorf("route after %s: %w", node, t.err)
				}
				if _, ok := g.nodes[t.Node]; !ok && t.Node != End {
					return nil, fmt.Errorf("route after %s: unknown node %q", node, t.Node)
				}
				add(t)
			}
		}
	}
	return out, nil
}

// tooManySends is the error of a route (after node, whose targets are ts,
// n of them Sends) that took the superstep's Sends to sends, past limit.
func tooManySends(node string, ts []Target, n, sends, limit int) error {
	to := ""
	for _, t := range ts {
		switch {
		case !t.send:
		case to == "":
			to = t.Node
		case to != t.Node:
			to = "several nodes"
		}
	}
	count := fmt.Sprintf("%d Sends to %s", n, to)
	if sends != n {
		count += fmt.Sprintf(" (%d in the superstep)", sends)
	}
	return fmt.Errorf("route after %s: %w: %s, over the cap of %d tasks at once, so none was started: route fewer (edit the list it fans out from to at most %d items, at a checkpoint before the route), or raise the graph's cap (Graph.MaxSends)",
		node, ErrTooManySends, count, limit, limit)
}

// NodeContext is what a running task sees.
type NodeContext struct {
	Thread string
	Task   Task
	// Checkpoint is the checkpoint the task's superstep runs from (the one
	// that holds the task); with Task.ID it names this task on its branch.
	Checkpoint int64
	// RunStart is the checkpoint where the run this task belongs to began
	// on its branch: the turn's input, a fork's first checkpoint or a
	// replay's (an update or a resume goes on with the run it follows). A
	// side effect an earlier run left waiting in the state is not this
	// run's to perform. 0: unknown.
	RunStart int64
	// Epoch is the run's fencing token (see store.Store.Fence): a node that
	// writes to the store itself (a side effect) passes it along, so a
	// writer that was taken over cannot act any more. 0: unfenced.
	Epoch int64
	// Values is the state as of the superstep's checkpoint. Its map is
	// the task's own; the values' bytes are shared and must not be changed.
	Values Values
	// Model is the configured model, counted per role for this task.
	Model model.Model
	base  model.Model // the engine's, uncounted: for ModelName
	emit  func(event.Payload)
	point func(name HookPoint)
}

// Point marks a named moment inside a node (say, just before a side effect)
// where a crash drill may kill the process. It does nothing otherwise.
func (nc *NodeContext) Point(name HookPoint) {
	if nc.point != nil {
		nc.point(name)
	}
}

// Emit records an event; it is stored with the task's writes and committed
// with the next checkpoint.
func (nc *NodeContext) Emit(p event.Payload) { nc.emit(p) }

// Block records that the node did not perform side effect operation, and
// why (say, its authorization expired). The node still returns the writes
// that record the outcome in state; the run goes on, and its Result lists
// the operation in Blocked so the caller can report a failure.
func (nc *NodeContext) Block(operation, reason string) {
	nc.emit(event.Blocked{Operation: operation, Reason: reason})
}

// Values is a thread's state: channel name → JSON value.
type Values map[string]json.RawMessage

// clone copies the map, not the values: values are never changed in place
// (reducers make new bytes), and a 384 KB value must not be copied for
// every task that reads the state.
func (v Values) clone() Values { return maps.Clone(v) }

// Decode fills a struct from the channels (by their JSON names); with
// names, from those channels only (a node that reads two small channels
// need not decode the whole conversation).
func (v Values) Decode(dst any, names ...string) error {
	// Channel values are already JSON: splice them into one object rather
	// than re-encoding (and re-validating) every one of them.
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for k, raw := range v {
		if len(raw) == 0 || len(names) > 0 && !slices.Contains(names, k) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('}')
	return json.Unmarshal(b.Bytes(), dst)
}

// Len is the number of items of a list channel (0 when absent or not a list).
func (v Values) Len(channel string) int { return countList(v[channel]) }

// Items splits a list channel into its items, keeping their bytes (nil when
// absent).
func (v Values) Items(channel string) ([]json.RawMessage, error) { return splitList(v[channel]) }
