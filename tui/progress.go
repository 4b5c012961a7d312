package tui

import (
	"fmt"
	"rewind/engine/event"
	"sort"
	"strings"

	"rewind/engine"
	"rewind/tui/termtext"
)

// progress follows a run's live events: which nodes run, how many tasks of
// the superstep are pending, running, done or reused, and the model calls
// so far. The engine reports a task's events once live and again when they
// are committed with the checkpoint, so each event is counted once.
type progress struct {
	kind        string
	tasks       int
	running     map[string]string // task → node
	done        map[string]bool
	reused      map[string]bool
	calls       map[string]int
	checkpoints int
	bad         string // the last event whose data did not decode
	seen        map[string]bool
	// told is the extension's telling of the graph's own events
	// (Narrator), nil without one.
	told Narration

	// The current superstep's tasks in the order they started, with a
	// label for people and their model calls (for the live area).
	toRun     int
	order     []string
	labels    map[string]string
	taskCalls map[string]int
}

func newProgress(kind string) *progress {
	return &progress{kind: kind, running: map[string]string{}, done: map[string]bool{},
		reused: map[string]bool{}, calls: map[string]int{}, seen: map[string]bool{},
		labels: map[string]string{}, taskCalls: map[string]int{}}
}

func (p *progress) track(ev engine.Event) {
	if ev.Task == "" {
		return
	}
	if _, ok := p.labels[ev.Task]; ok {
		return
	}
	d, err := event.Decode[event.NodeStarted](ev.Type, ev.Data)
	if err != nil {
		p.bad = err.Error()
	}
	p.order = append(p.order, ev.Task)
	p.labels[ev.Task] = taskLabel(ev.Node, d.Args)
}

func (p *progress) apply(ev engine.Event) {
	id := fmt.Sprintf("%s|%s|%s|%d|%s", ev.Type, ev.Task, ev.Node, ev.At.UnixNano(), ev.Data)
	if p.seen[id] {
		return
	}
	p.seen[id] = true
	switch ev.Type {
	case engine.EventStepStarted:
		d, err := event.Decode[event.StepStarted](ev.Type, ev.Data)
		if err != nil {
			p.bad = err.Error()
		}
		p.tasks, p.toRun = d.Tasks, d.ToRun
		p.running = map[string]string{}
		p.done = map[string]bool{}
		p.reused = map[string]bool{}
		p.order = nil
		p.labels = map[string]string{}
		p.taskCalls = map[string]int{}
	case engine.EventNodeStarted:
		p.running[ev.Task] = ev.Node
		p.track(ev)
	case engine.EventNodeFinished:
		delete(p.running, ev.Task)
		p.done[ev.Task] = true
	case engine.EventTaskReused:
		if ev.Task != "" && !p.done[ev.Task] {
			p.reused[ev.Task] = true
		}
	case engine.EventModelCalled:
		d, err := event.Decode[event.ModelCalled](ev.Type, ev.Data)
		if err != nil {
			p.bad = err.Error()
		}
		p.calls[d.Role]++
		if ev.Task != "" {
			p.taskCalls[ev.Task]++
		}
	case engine.EventCheckpointSaved:
		p.checkpoints++
	default:
		if p.told == nil {
			break
		}
		if err := p.told.Event(ev); err != nil {
			p.bad = err.Error()
		}
	}
	if len(p.seen) > 20000 {
		p.seen = map[string]bool{}
	}
}

func (p *progress) totalCalls() int {
	n := 0
	for _, c := range p.calls {
		n += c
	}
	return n
}

// line is the status bar's one-line account of the run.
func (p *progress) line() string {
	var parts []string
	if len(p.running) > 0 {
		counts := map[string]int{}
		for _, n := range p.running {
			counts[n]++
		}
		names := make([]string, 0, len(counts))
		for n, c := range counts {
			if c > 1 {
				n = fmt.Sprintf("%s ×%d", n, c)
			}
			names = append(names, n)
		}
		sort.Strings(names)
		parts = append(parts, strings.Join(names, ", "))
	} else {
		parts = append(parts, p.kind)
	}
	if p.tasks > 0 {
		done := len(p.done) + len(p.reused)
		pending := max(p.tasks-done-len(p.running), 0)
		s := fmt.Sprintf("%d/%d done", done, p.tasks)
		if pending > 0 {
			s += fmt.Sprintf(" · %d pending", pending)
		}
		if len(p.reused) > 0 {
			s += fmt.Sprintf(" · %d reused", len(p.reused))
		}
		parts = append(parts, s)
	}
	parts = append(parts, plural(p.totalCalls(), "model call", "model calls"))
	if p.told != nil {
		parts = append(parts, p.told.Now()...)
	}
	if p.bad != "" {
		parts = append(parts, "! "+p.bad)
	}
	return termtext.Line(strings.Join(parts, " · "))
}
