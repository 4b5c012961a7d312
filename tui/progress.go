package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"rewind/engine"
	"rewind/engine/ticket"
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
	compacted   int
	refused     string // the last refused summary's first failure
	extractive  bool   // rewind wrote the summary itself
	seen        map[string]bool

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
	var d struct {
		Args json.RawMessage `json:"args"`
	}
	_ = json.Unmarshal(ev.Data, &d)
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
		d := struct {
			Tasks int  `json:"tasks"`
			ToRun *int `json:"toRun"`
		}{}
		_ = json.Unmarshal(ev.Data, &d)
		p.tasks = d.Tasks
		p.toRun = d.Tasks
		if d.ToRun != nil {
			p.toRun = *d.ToRun
		}
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
		var d struct {
			Role string `json:"role"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		p.calls[d.Role]++
		if ev.Task != "" {
			p.taskCalls[ev.Task]++
		}
	case engine.EventCheckpointSaved:
		p.checkpoints++
	case ticket.EventContextCompacted:
		p.compacted++
		var d struct {
			Strategy string `json:"strategy"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Strategy == ticket.ExtractiveStrategy {
			p.extractive = true
		}
	case ticket.EventCompactionRejected:
		p.refused = ticket.RefusalLine(ev.Data)
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
	if p.compacted > 0 {
		c := "compacted"
		if p.extractive {
			c += " (by rewind: the model's summaries were refused twice)"
		}
		parts = append(parts, c)
	}
	if p.refused != "" && !p.extractive {
		parts = append(parts, "! summary refused: "+p.refused)
	}
	return termtext.Line(strings.Join(parts, " · "))
}
