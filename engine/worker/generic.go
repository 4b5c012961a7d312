package worker

// Generic kill points: defined for any graph from the engine's hooks and
// events and the graph's declaration (its nodes and links), so a drill can
// kill a run of a graph rewind did not write. A graph's own named points
// (the ticket's Points) are added to them.

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"rewind/engine"
	"rewind/engine/event"
)

// The kinds of generic kill points. A node's take the node after a colon
// (before:NODE); each may take @N, the Nth time in one process.
const (
	// BeforeNode: a task of NODE began, before its node function runs.
	BeforeNode KillPoint = "before"
	// AfterNode: a task of NODE returned and its writes were checked, not
	// yet stored.
	AfterNode KillPoint = "after"
	// AfterWrites: a task of NODE finished and, when it ran beside other
	// tasks, its writes were stored as pending writes (alone, its writes
	// go with the commit that follows, so this is after:NODE again).
	AfterWrites KillPoint = "after-writes"
	// BeforeCommit: a superstep's (or the input's) checkpoint is encoded,
	// not yet stored.
	BeforeCommit KillPoint = "before-commit"
	// AfterCommit: a checkpoint committed, before the next superstep.
	AfterCommit KillPoint = "after-commit"
)

// Generic lists the generic points' forms, for help text.
var Generic = []Point{
	{Name: BeforeNode + ":NODE", Desc: "any graph: a task of NODE began, before its function runs"},
	{Name: AfterNode + ":NODE", Desc: "any graph: a task of NODE returned, its writes not yet stored"},
	{Name: AfterWrites + ":NODE", Desc: "any graph: a task of NODE finished; beside other tasks, its writes are stored as pending writes"},
	{Name: MidFanout, Desc: "any graph: one task of a superstep of two or more stored its writes, the others held before they run"},
	{Name: BeforeCommit, Desc: "any graph: before a checkpoint commits"},
	{Name: AfterCommit, Desc: "any graph: after a checkpoint committed"},
	{Name: MidTransaction, Desc: "any graph, on sqlite or PostgreSQL: inside a checkpoint's transaction, not committed"},
}

// GraphPoints lists the kill points of g: before, after and after-writes
// of each node (sorted by name), mid-fanout when g can run two tasks in
// one superstep (a Send, or two links from one node), before-commit,
// after-commit and mid-transaction. The ticket graph's own named points
// come first and take their names' place (its mid-fanout holds executors).
func GraphPoints(g *engine.Graph) []Point {
	var out []Point
	own := map[KillPoint]bool{}
	if isNamed(g) {
		out = append(out, Points...)
		for _, p := range Points {
			own[p.Name] = true
		}
	}
	for _, n := range g.Nodes() {
		out = append(out,
			Point{Name: nodePoint(BeforeNode, n), Kind: BeforeNode, Node: n, Desc: "before a task of " + n + " runs"},
			Point{Name: nodePoint(AfterNode, n), Kind: AfterNode, Node: n, Desc: "after a task of " + n + " returned, its writes not yet stored"},
			Point{Name: nodePoint(AfterWrites, n), Kind: AfterWrites, Node: n, Desc: "after a task of " + n + " finished (beside other tasks: its writes stored)"})
	}
	for _, p := range []Point{
		{Name: MidFanout, Kind: MidFanout, Desc: "one task of a superstep of two or more stored its writes, the others held before they run"},
		{Name: BeforeCommit, Kind: BeforeCommit, Desc: "before a checkpoint commits"},
		{Name: AfterCommit, Kind: AfterCommit, Desc: "after a checkpoint committed"},
		{Name: MidTransaction, Kind: MidTransaction, Desc: "inside a checkpoint's store transaction, not committed (sqlite, PostgreSQL)"},
	} {
		if own[p.Name] || (p.Name == MidFanout && !canFanOut(g)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// MenuPoints is what a kill-point menu offers on g: the ticket graph's
// named points (its drills' and lessons' words), any other graph's
// GraphPoints; the ticket's for nil.
func MenuPoints(g *engine.Graph) []Point {
	if g == nil || isNamed(g) {
		return Points
	}
	return GraphPoints(g)
}

func nodePoint(kind KillPoint, node string) KillPoint { return kind + ":" + KillPoint(node) }

// canFanOut says whether g's declaration lets one superstep run two tasks.
func canFanOut(g *engine.Graph) bool {
	from := map[string]int{}
	for _, l := range g.Links() {
		if l.Send {
			return true
		}
		if l.From != "" && l.To != "" {
			from[l.From]++
		}
	}
	for _, n := range from {
		if n >= 2 {
			return true
		}
	}
	return false
}

// ParseFor reads "POINT" or "POINT@N" against g's points (GraphPoints). An
// unknown point is an error that lists g's.
func ParseFor(g *engine.Graph, spec string) (Point, int, error) {
	name, nth, err := splitNth(spec)
	if err != nil {
		return Point{}, 0, err
	}
	points := GraphPoints(g)
	for _, p := range points {
		if string(p.Name) == name {
			return p, nth, nil
		}
	}
	return Point{}, 0, fmt.Errorf("unknown kill point %q for graph %s: choose one of %s", name, g.Name, namesOf(points))
}

func splitNth(spec string) (string, int, error) {
	if i := strings.LastIndex(spec, "@"); i > 0 {
		n, err := strconv.Atoi(spec[i+1:])
		if err != nil || n < 1 {
			return "", 0, fmt.Errorf("kill point %q: the count after @ must be a positive number", spec)
		}
		return spec[:i], n, nil
	}
	return spec, 1, nil
}

func namesOf(points []Point) string {
	ns := make([]string, len(points))
	for i, p := range points {
		ns[i] = string(p.Name)
	}
	return strings.Join(ns, ", ")
}

// fanout is the generic mid-fanout's state: the Nth superstep that runs
// two tasks or more lets its first task run, holds the others as they
// begin, and kills once the first has finished (its writes stored).
type fanout struct {
	mu    sync.Mutex
	seen  int    // supersteps of two or more tasks begun
	armed bool   // this superstep is the Nth
	first string // the task let run
}

// Observe is the RunConfig.Observe side of the trigger: a node's task
// beginning and returning, a superstep beginning (generic points only).
func (t *Trigger) Observe(ev engine.Event) {
	if t == nil || t.Point.Kind == "" {
		return
	}
	switch {
	case ev.Type == engine.EventNodeStarted && t.Point.Kind == BeforeNode && ev.Node == t.Point.Node,
		ev.Type == engine.EventNodeFinished && t.Point.Kind == AfterNode && ev.Node == t.Point.Node:
		t.Reached(t.Point.Name)
	case t.Point.Kind == MidFanout:
		t.fanoutEvent(ev)
	}
}

func (t *Trigger) fanoutEvent(ev engine.Event) {
	f := &t.fan
	switch ev.Type {
	case engine.EventStepStarted:
		d, err := event.Decode[event.StepStarted](ev.Type, ev.Data)
		if err != nil || d.ToRun < 2 {
			return
		}
		f.mu.Lock()
		f.seen++
		f.armed = f.seen == t.Nth
		f.mu.Unlock()
	case engine.EventNodeStarted:
		f.mu.Lock()
		if !f.armed {
			f.mu.Unlock()
			return
		}
		if f.first == "" {
			f.first = ev.Task
		}
		hold := f.first != ev.Task
		f.mu.Unlock()
		if hold {
			t.hold()
		}
	}
}

// genericHook fires the generic points the engine's hooks mark.
func (t *Trigger) genericHook(point engine.HookPoint, info engine.HookInfo) {
	switch {
	case point == engine.HookTaskFinished && t.Point.Kind == AfterWrites && info.Task != nil && info.Task.Node == t.Point.Node,
		point == engine.HookBeforeCommit && t.Point.Kind == BeforeCommit,
		point == engine.HookAfterCommit && t.Point.Kind == AfterCommit:
		t.Reached(t.Point.Name)
	case point == engine.HookTaskFinished && t.Point.Kind == MidFanout && info.Task != nil:
		t.mu.Lock()
		t.fan.mu.Lock()
		fire := t.fan.armed && t.fan.first == info.Task.ID && !t.fanGone
		t.fan.mu.Unlock()
		t.mu.Unlock()
		if fire {
			t.Kill(t.Point.Name)
		}
	}
}
