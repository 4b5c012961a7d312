package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"rewind/engine/event"
	"slices"

	"rewind/engine/chainformat"
	"rewind/engine/internal/jsoncheck"
	"rewind/engine/internal/userpanic"
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
		return Target{Node: node, send: true, err: &SendError{Node: node, Field: jsoncheck.Unencodable(args), Err: err}}
	}
	if path, why, bad := jsoncheck.Lossy(args, b); bad {
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

// Graph is a compiled set of channels, nodes and edges.
type Graph struct {
	Name string
	// SchemaVersion is the checkpoint document version this graph writes.
	SchemaVersion int
	// Migrations[n] upgrades a version-n document to n+1.
	Migrations map[int]Migration

	// schema is what the stored format knows of the graph (its
	// channels, transcript, keyed and object channels).
	schema *chainformat.Schema
	// sensitive are the channels Sensitive marked (sealing.go).
	sensitive []string
	nodes     map[string]NodeFunc
	entry     string
	edges     map[string][]string
	routers   map[string]Router
	paths     map[string][]Target // what each router may pick (Route's to)
	input     InputFunc
	err       error
	// gates are the nodes that may pause for a person (see Gate).
	gates map[string]bool
	// resumeCheck is the graph's own check before a resume (see OnResume).
	resumeCheck ResumeCheck
	// buildCheck is the graph's check before a fork or a new turn builds
	// on a checkpoint (see OnBuild).
	buildCheck BuildCheck
	// accessCheck is the graph's check that a session may read what the
	// pending tasks will read (see OnAccess).
	accessCheck AccessCheck
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
	migrations := map[int]Migration{}
	return &Graph{
		Name:          name,
		SchemaVersion: schemaVersion,
		Migrations:    migrations,
		schema:        chainformat.NewSchema(schemaVersion, migrations),
		nodes:         map[string]NodeFunc{},
		edges:         map[string][]string{},
		routers:       map[string]Router{},
		paths:         map[string][]Target{},
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
	if err := g.schema.Channel(name, r, initial); err != nil {
		return g.fail("%v", err)
	}
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
	g.nodes[name] = userpanic.Guard2("node", fn)
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
// to declares what r may pick (Goto, Send(node, nil)) as LangGraph's path
// map does: drawings show them, another pick fails; none: any target.
func (g *Graph) Route(from string, r Router, to ...Target) *Graph {
	if _, dup := g.routers[from]; dup {
		return g.fail("node %q has two routers", from)
	}
	g.routers[from], g.paths[from] = r, to
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
		for _, t := range g.paths[from] {
			if _, ok := g.nodes[t.Node]; !ok && t.Node != End {
				return fmt.Errorf("graph %s: route after %s declares unknown node %q", g.Name, from, t.Node)
			}
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
func (g *Graph) initialValues() Values { return g.schema.Initial() }

// apply folds writes into a copy of v (Schema.Apply).
func (g *Graph) apply(v Values, writes []Write) (Values, error) { return g.schema.Apply(v, writes) }

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
			ts, err := userpanic.Call1("route", r, v)
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
				if err := g.picked(node, t); err != nil {
					return nil, err
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
// why (say, its authorization expired), and what would get past it
// (fixes, on this thread: reason names no command). The node still
// returns the writes that record the outcome in state; the run goes on,
// and its Result lists the operation in Blocked so the caller can report
// a failure.
func (nc *NodeContext) Block(operation, reason string, fixes ...Action) {
	nc.emit(event.Blocked{Operation: operation, Reason: reason, Fixes: storedFixes(fixes)})
}

// tasksFor turns targets into tasks of checkpoint id.
func tasksFor(thread string, checkpoint int64, step int, targets []Target) []Task {
	out := make([]Task, 0, len(targets))
	packets := map[string]int{}
	for _, t := range targets {
		i := packets[t.Node]
		packets[t.Node]++
		out = append(out, Task{ID: chainformat.TaskID(thread, checkpoint, step, t.Node, i), Node: t.Node, Args: t.Args})
	}
	return out
}

// reid gives carried-over tasks the ids they have at a new checkpoint.
func reid(thread string, checkpoint int64, step int, tasks []Task) []Task {
	ts := make([]Target, len(tasks))
	for i, t := range tasks {
		ts[i] = Target{Node: t.Node, Args: t.Args, send: true}
	}
	return tasksFor(thread, checkpoint, step, ts)
}

// Transcript declares the channel that holds the conversation: an
// IndexedAppend channel of JSON objects whose items are stored once each,
// apart from checkpoints, and survive compaction and prune.
// indexField is the field IndexedAppend numbers the items by.
func (g *Graph) Transcript(channel, indexField string) *Graph {
	if err := g.schema.Transcript(channel, indexField); err != nil {
		return g.fail("%v", err)
	}
	return g
}

// Keyed declares that channel's items are objects keyed by field, upserted
// by its reducer (MergeByID(field)): stored writes keep only the fields an
// upsert changes.
func (g *Graph) Keyed(channel, field string) *Graph {
	if err := g.schema.Keyed(channel, field); err != nil {
		return g.fail("%v", err)
	}
	return g
}

// Object declares that channel is a LastValue channel of JSON objects whose
// stored writes keep only the fields that changed.
func (g *Graph) Object(channel string) *Graph {
	if err := g.schema.Object(channel); err != nil {
		return g.fail("%v", err)
	}
	return g
}
