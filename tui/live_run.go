package tui

// The state of a run the live strip (live.go) follows: the resume phase
// (which pending tasks a resume reused and which it redispatched, and the
// model calls they made), the model calls streaming their answers, and
// what ended the last run (a kill, an approval answer).

import (
	"encoding/json"
	"fmt"
	"rewind/engine/event"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/stream"
	"rewind/tui/draw"
	"rewind/tui/termtext"
)

// taskLabel names a task for people: its node and, for an executor, the
// subtask it works on.
func taskLabel(node string, args json.RawMessage) string {
	var a struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	label := node
	if len(args) > 0 && json.Unmarshal(args, &a) == nil && a.Task.ID != "" {
		label += " " + a.Task.ID
	}
	return termtext.Line(label)
}

func shortID(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	return termtext.Name(id)
}

// plural is n and its word (draw.Plural).
func plural(n int, one, many string) string { return draw.Plural(n, one, many) }

// answerInfo is an approval answer given from the TUI.
type answerInfo struct {
	approve bool
	op      string
	reason  string
	ended   bool
}

// killInfo is a run that ended by SIGKILL.
type killInfo struct {
	pid   int
	point string
}

// Task states in the live area.
const (
	taskPending = iota
	taskRunning
	taskDone
	taskReused
	// taskStopped started and did not finish: the run ended first (at a
	// gate, on an error, stopped).
	taskStopped
)

// phase follows the first superstep of a resume: the head's pending tasks,
// those with stored writes reused, the others redispatched, and the model
// calls the redispatched ones make. That is the drill's figure: a resume
// after a kill makes exactly as many calls as there were unfinished tasks.
type phase struct {
	from  int64
	plan  engine.ResumePlan
	pid   int
	tasks []*phaseTask
	byID  map[string]*phaseTask
	calls int
	// over is set once the phase's superstep committed its checkpoint.
	over bool
	// After the run: the figure from the result (complete) or, when the run
	// did not get through the phase, what was seen.
	figure   *phaseFigure
	later    int   // model calls after the phase
	endAt    int64 // checkpoint the run ended at
	endState string
	// effects are the side effects the phase's tasks did or found done
	// (event.SideEffectRecorded: an operation done, or found done, by its id), in order.
	effects []sideEffect
}

// sideEffect is an operation a resumed task recorded: reused when it was
// found done by its id (a draft written before a kill), not done again.
type sideEffect struct {
	op     string
	reused bool
	bad    string // its event's data did not decode: why
}

type phaseTask struct {
	id, node, label string
	stored          bool
	state           int
	calls           int
	// why a taskStopped task stopped, in words.
	why string
}

type phaseFigure struct {
	redispatched, reused, calls int
	complete                    bool
}

func (f phaseFigure) String() string {
	return fmt.Sprintf("resume: %d redispatched, %d reused, %s", f.redispatched, f.reused, plural(f.calls, "model call", "model calls"))
}

func newPhase(h *headInfo, pid int) *phase {
	p := &phase{from: h.cp.ID, plan: h.plan, pid: pid, byID: map[string]*phaseTask{}}
	tasks := h.plan.Tasks
	if rc := h.plan.Recheck; rc != nil && len(rc.Next) > 0 {
		// The recheck replaces the pending tasks: its tasks are the phase.
		tasks = nil
		for _, t := range rc.Next {
			tasks = append(tasks, engine.PlannedTask{Task: t})
		}
	}
	for _, t := range tasks {
		pt := &phaseTask{id: t.ID, node: t.Node, label: taskLabel(t.Node, t.Args), stored: t.Reuse()}
		if pt.stored {
			pt.state = taskReused
		}
		p.tasks = append(p.tasks, pt)
		p.byID[t.ID] = pt
	}
	return p
}

func (p *phase) toRun() int { return len(p.plan.Redispatched()) }

func (p *phase) apply(ev engine.Event) {
	if p.over {
		return
	}
	t := p.byID[ev.Task]
	switch ev.Type {
	case engine.EventNodeStarted:
		if t != nil && t.state == taskPending {
			t.state = taskRunning
		}
	case engine.EventNodeFinished:
		if t != nil {
			t.state = taskDone
		}
	case engine.EventModelCalled:
		if t != nil {
			t.calls++
			p.calls++
		}
	case engine.EventTaskReused:
		if t != nil {
			t.state = taskReused
		}
	case event.TypeSideEffectRecorded:
		d, err := event.Decode[event.SideEffectRecorded](ev.Type, ev.Data)
		switch {
		case err != nil:
			p.effects = append(p.effects, sideEffect{bad: err.Error()})
		case d.Operation != "":
			p.effects = append(p.effects, sideEffect{op: d.Operation, reused: d.Reused})
		}
	case engine.EventCheckpointSaved:
		p.over = true
	}
}

// finish fixes the figure from the run's result: its first superstep, when
// it started from the resumed checkpoint, is the resume phase.
func (p *phase) finish(res engine.Result, runErr error) {
	p.endAt = res.Checkpoint
	p.endState = res.Status
	if o := p.plan.Outcome(res); o.Complete {
		f := &phaseFigure{redispatched: len(o.Redispatched), reused: len(o.Reused), calls: o.ModelCalls, complete: true}
		p.figure = f
		p.later = max(model.Counts(res.ModelCalls).Sum()-f.calls, 0)
		ran := map[string]bool{}
		for _, t := range o.Redispatched {
			ran[t.ID] = true
		}
		for _, t := range p.tasks {
			switch {
			case ran[t.id]:
				t.state = taskDone
			case t.stored:
				t.state = taskReused
			}
		}
		return
	}
	f := &phaseFigure{calls: p.calls}
	for _, t := range p.tasks {
		if t.stored {
			f.reused++
		} else if t.state != taskPending {
			f.redispatched++
		}
	}
	p.figure = f
	if runErr != nil {
		p.endState = "stopped"
	}
	why := "stopped before it finished"
	if res.Status == engine.RunAwaitingApproval {
		why = "stopped at its gate: it waits for an answer"
	}
	for _, t := range p.tasks {
		if t.state == taskRunning {
			t.state, t.why = taskStopped, why
		}
	}
}

// streams keeps what each model call has shown so far, in the order the
// calls started. Parallel executors stream at the same time; each call gets
// a label (its role and a number) so their pieces can be told apart.
type streams struct {
	calls  []*callStream
	byID   map[uint64]*callStream
	counts map[string]int
}

type callStream struct {
	id    uint64
	role  string
	label string
	text  string
	done  bool
	err   string
}

// Limits: a call keeps the tail of its text; a run keeps its latest calls.
const (
	streamTail  = 4096
	streamCalls = 32
)

func newStreams() *streams {
	return &streams{byID: map[uint64]*callStream{}, counts: map[string]int{}}
}

func (s *streams) apply(d stream.Delta) {
	c := s.byID[d.Call]
	if c == nil {
		s.counts[d.Role]++
		label := fmt.Sprintf("%s·%d", termtext.Line(d.Role), s.counts[d.Role])
		if len(d.Task) >= 8 {
			// The same short task id the task rows show.
			label = termtext.Line(d.Role) + " " + termtext.Line(d.Task[:8])
		}
		c = &callStream{id: d.Call, role: d.Role, label: label}
		s.byID[d.Call] = c
		s.calls = append(s.calls, c)
		if len(s.calls) > streamCalls {
			// Drop the oldest finished call (or the oldest one).
			drop := 0
			for i, x := range s.calls {
				if x.done {
					drop = i
					break
				}
			}
			delete(s.byID, s.calls[drop].id)
			s.calls = append(s.calls[:drop], s.calls[drop+1:]...)
		}
	}
	if d.Reset {
		c.text = ""
	}
	if d.Text != "" {
		c.text += d.Text
		if len(c.text) > streamTail {
			cut := len(c.text) - streamTail
			for cut < len(c.text) && (c.text[cut]&0xC0) == 0x80 {
				cut++ // keep whole UTF-8 sequences
			}
			c.text = c.text[cut:]
		}
	}
	if d.Done {
		c.done = true
		c.err = d.Err
	}
}
