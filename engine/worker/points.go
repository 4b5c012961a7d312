package worker

// Kill points: the named moments a worker can be killed at, chosen in run
// config (never in state), and the trigger that fires them.

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"rewind/engine"
	"rewind/engine/model"
)

// KillPoint names a moment where a worker can be killed (--kill-at). The
// constants below are the only ones; Points describes each, in order.
type KillPoint string

// The kill points, in the order a turn reaches them. Add one here, to
// Points (with its description) and to Trigger.Hook or Reached's callers;
// a drill then kills at it (engine/drill), the TUI's picker and --kill-at
// list it by themselves.
const (
	BeforeModelCall         KillPoint = "before-model-call"
	AfterModelCall          KillPoint = "after-model-call"
	MidFanout               KillPoint = "mid-fanout"
	BeforeSummary           KillPoint = "before-summary"
	AfterSummary            KillPoint = "after-summary"
	AfterCompactionCommit   KillPoint = "after-compaction-commit"
	AwaitingApproval        KillPoint = "awaiting-approval"
	BeforeSideEffect        KillPoint = "before-side-effect" // the ticket's engine.HookPoint of that name
	AfterSideEffect         KillPoint = "after-side-effect"
	AfterSideEffectRecorded KillPoint = "after-side-effect-recorded"
	AfterVerify             KillPoint = "after-verify"
	MidTransaction          KillPoint = "mid-transaction"
)

// Point is a kill point with its description.
type Point struct {
	Name KillPoint `json:"name"`
	Desc string    `json:"description"`
	// DrillAt is which occurrence a drill kills at (0 means the first).
	DrillAt int `json:"drillAt,omitempty"`
	// Kind is a generic point's kind (generic.go: before, after-writes,
	// before-commit, …) and Node the node it names, if any; a graph's own
	// named point (the ticket's) has none.
	Kind KillPoint `json:"kind,omitempty"`
	Node string    `json:"node,omitempty"`
}

// DrillSpec is the --kill-at value a drill uses for p.
func (p Point) DrillSpec() string {
	if p.DrillAt > 1 {
		return fmt.Sprintf("%s@%d", p.Name, p.DrillAt)
	}
	return string(p.Name)
}

// Points lists every kill point, in the order a turn reaches them.
var Points = []Point{
	{Name: BeforeModelCall, Desc: "before the first model call (the planner's)"},
	{Name: AfterModelCall, Desc: "after the planner's call returned, before its writes are stored"},
	{Name: MidFanout, Desc: "after one executor stored its writes while the others are still running"},
	{Name: BeforeSummary, Desc: "in compaction: before the summary call"},
	{Name: AfterSummary, Desc: "in compaction: after the summary call, before its checkpoint commits"},
	{Name: AfterCompactionCommit, Desc: "in compaction: after its checkpoint committed, before the next model call"},
	{Name: AwaitingApproval, Desc: "while the run waits at the approval gate"},
	{Name: BeforeSideEffect, Desc: "before create_draft writes the draft"},
	{Name: AfterSideEffect, Desc: "after the draft was written, before its result is recorded"},
	{Name: AfterSideEffectRecorded, Desc: "after the draft's result was recorded in a checkpoint"},
	{Name: AfterVerify, Desc: "after the verify step's finding on the draft was recorded in a checkpoint"},
	// The third transaction of a turn commits the executors' superstep, so
	// the kill loses a whole superstep whose task writes are all stored.
	{Name: MidTransaction, Desc: "in the middle of a store transaction (checkpoint written, not committed)", DrillAt: 3},
}

// Lookup finds a point by name.
func Lookup(name string) (Point, bool) {
	for _, p := range Points {
		if string(p.Name) == name {
			return p, true
		}
	}
	return Point{}, false
}

// Names lists the ticket's point names and the generic forms, for error
// messages and help.
func Names() string {
	ns := make([]string, 0, len(Points)+len(Generic))
	for _, p := range Points {
		ns = append(ns, string(p.Name))
	}
	for _, p := range Generic {
		if _, own := Lookup(string(p.Name)); !own {
			ns = append(ns, string(p.Name))
		}
	}
	return strings.Join(ns, ", ")
}

// Parse reads "POINT" or "POINT@N" (the Nth time the point is reached) for
// the registered graph (the ticket's, Register): its own points and the
// generic ones on its nodes (ParseFor). An unknown POINT is an error that
// lists the valid ones; with no graph registered every POINT is refused.
func Parse(spec string) (Point, int, error) {
	name, nth, err := splitNth(spec)
	if err != nil {
		return Point{}, 0, err
	}
	_, g := theNamed()
	if g == nil {
		// The worker linked without the ticket: its named points would
		// never fire, and there are no nodes to read a NODE against.
		return Point{}, 0, fmt.Errorf("kill point %q: no graph registered its kill points with this program (engine/ticket registers the ticket's as it loads): parse it against the graph the run is on with worker.ParseFor", spec)
	}
	if p, ok := Lookup(name); ok {
		return p, nth, nil
	}
	for _, p := range GraphPoints(g) {
		if string(p.Name) == name {
			return p, nth, nil
		}
	}
	return Point{}, 0, fmt.Errorf("unknown kill point %q: choose one of %s (NODE one of %s)", name, Names(), strings.Join(g.Nodes(), ", "))
}

// Trigger fires kill when a run reaches the point for the nth time. It
// returns the RunConfig hook; points the engine cannot see (a store
// transaction, the approval wait) are fired by the caller via Reached.
type Trigger struct {
	Point Point
	Nth   int
	Kill  func(point KillPoint)

	// names are the registered graph's ties of its own points (none:
	// they never fire by a node).
	names    Named
	seen     atomic.Int64
	fan      fanout // the generic mid-fanout's
	mu       sync.Mutex
	fanFirst string // the executor task allowed to finish at mid-fanout
	fanAt    int64  // the checkpoint the executors now running run from
	fanRound int    // executor supersteps begun: the Nth is held and killed
	fanBlock chan struct{}
	// done is the run's context's; a mid-fanout hold ends with it, and when
	// the task let run fails (fanBlock closed, fanGone set): no kill comes.
	done    <-chan struct{}
	fanGone bool
}

// NewTrigger builds a trigger for a point.
func NewTrigger(p Point, nth int, kill func(point KillPoint)) *Trigger {
	t := &Trigger{Point: p, Nth: nth, Kill: kill, fanBlock: make(chan struct{})}
	if n, _ := theNamed(); n != nil {
		t.names = *n
	}
	return t
}

// Reached counts a point reached outside the engine's hooks.
func (t *Trigger) Reached(name KillPoint) {
	if t == nil || name != t.Point.Name {
		return
	}
	if int(t.seen.Add(1)) == t.Nth {
		t.Kill(name)
	}
}

// Hook is the engine.RunConfig hook.
func (t *Trigger) Hook(point engine.HookPoint, info engine.HookInfo) {
	if t == nil {
		return
	}
	if point == engine.HookTaskFailed {
		t.letGo(info)
		return
	}
	if t.Point.Kind != "" {
		t.genericHook(point, info)
		return
	}
	node := ""
	if info.Task != nil {
		node = info.Task.Node
	}
	switch t.Point.Name {
	case BeforeModelCall:
		if point == engine.HookBeforeModelCall {
			t.Reached(t.Point.Name)
		}
	case AfterModelCall:
		if point == engine.HookAfterModelCall {
			t.Reached(t.Point.Name)
		}
	case BeforeSummary:
		if point == engine.HookBeforeModelCall && info.Role == model.RoleSummarizer {
			t.Reached(t.Point.Name)
		}
	case AfterSummary:
		if point == engine.HookAfterModelCall && info.Role == model.RoleSummarizer {
			t.Reached(t.Point.Name)
		}
	case BeforeSideEffect:
		if point == engine.HookPoint(BeforeSideEffect) {
			t.Reached(t.Point.Name)
		}
	case AfterSideEffect:
		if point == engine.HookPoint(AfterSideEffect) {
			t.Reached(t.Point.Name)
		}
	case MidFanout:
		t.fanout(point, info, node)
	}
	if point == engine.HookAfterCommit && info.Committed != nil {
		t.committed(info.Committed)
	}
}

// fanout lets exactly one executor of the Nth executor superstep finish,
// holds the others before their model call, and kills once the first has
// stored its writes: a crash with some, but not all, executors done. The
// supersteps before run whole: a hold there would wait for good.
func (t *Trigger) fanout(point engine.HookPoint, info engine.HookInfo, node string) {
	if node == "" || node != t.names.Fanout {
		return
	}
	switch point {
	case engine.HookBeforeModelCall:
		t.mu.Lock()
		if info.Checkpoint != t.fanAt { // a superstep's tasks share the checkpoint they run from
			t.fanAt, t.fanRound = info.Checkpoint, t.fanRound+1
		}
		armed := t.fanRound == t.Nth
		if armed && t.fanFirst == "" {
			t.fanFirst = info.Task.ID
		}
		hold := armed && t.fanFirst != info.Task.ID
		t.mu.Unlock()
		if hold {
			t.hold()
		}
	case engine.HookTaskFinished:
		t.mu.Lock()
		fire := t.fanFirst == info.Task.ID && !t.fanGone
		t.mu.Unlock()
		if fire {
			t.Kill(t.Point.Name)
		}
	}
}

// hold keeps a task of a fan-out from running until the kill (that is,
// for good), or until the run's context ends or the task let run fails.
func (t *Trigger) hold() {
	select {
	case <-t.fanBlock:
	case <-t.done:
	}
}

// letGo ends mid-fanout's hold when the task let run fails (or stops at
// the approval gate): the kill it waits for never comes, so the held
// tasks run and the run ends with the task's error.
func (t *Trigger) letGo(info engine.HookInfo) {
	if info.Task == nil || (t.Point.Name != MidFanout && t.Point.Kind != MidFanout) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fan.mu.Lock()
	first := info.Task.ID == t.fanFirst || info.Task.ID == t.fan.first
	t.fan.mu.Unlock()
	if first && !t.fanGone {
		t.fanGone = true
		close(t.fanBlock)
	}
}

// committed fires the points that follow a checkpoint commit.
func (t *Trigger) committed(cp *engine.Checkpoint) {
	for _, n := range cp.Metadata.Nodes {
		switch {
		case n == "": // no registered graph's node
		case n == t.names.Summarizer && t.Point.Name == AfterCompactionCommit && wrote(cp, "summary"):
			t.Reached(t.Point.Name)
		case n == t.names.Draft && t.Point.Name == AfterSideEffectRecorded:
			t.Reached(t.Point.Name)
		case n == t.names.Verify && t.Point.Name == AfterVerify:
			t.Reached(t.Point.Name)
		}
	}
}

func wrote(cp *engine.Checkpoint, channel string) bool {
	for _, chs := range cp.Metadata.Writes {
		for _, c := range chs {
			if c == channel {
				return true
			}
		}
	}
	return false
}

// Times is how often the run reached the point: for a mid-fanout, the
// fan-outs begun.
func (t *Trigger) Times() int {
	switch {
	case t.Point.Kind == MidFanout:
		t.fan.mu.Lock()
		defer t.fan.mu.Unlock()
		return t.fan.seen
	case t.Point.Name == MidFanout:
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.fanRound
	}
	return int(t.seen.Load())
}

// UnreachedError is a run that ended without reaching its kill point the
// Nth time: nothing was killed, which a crash drill must not take for a
// kill.
type UnreachedError struct {
	Point KillPoint
	Nth   int
	// Times is how often the point was reached.
	Times int
}

func (e *UnreachedError) Error() string {
	const none = "nothing was killed (the run ended as it would with no kill point)"
	switch {
	case e.Times == 0 && e.Nth <= 1: // a bare POINT: no @1 the user did not write
		return fmt.Sprintf("kill point %s was never reached: %s; give a point this run reaches", e.Point, none)
	case e.Times == 0:
		return fmt.Sprintf("kill point %s@%d was never reached: %s was reached 0 times; %s; give a point this run reaches", e.Point, e.Nth, e.Point, none)
	}
	// Times ≥ 1 and Nth > Times: a smaller @N would have killed.
	times := "times"
	if e.Times == 1 {
		times = "time"
	}
	return fmt.Sprintf("kill point %s@%d was never reached: %s was reached %d %s; @%d never came: %s; give a point the run reaches (%s@%d at most, or a longer run)",
		e.Point, e.Nth, e.Point, e.Times, times, e.Nth, none, e.Point, e.Times)
}
