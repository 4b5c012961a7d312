package browse

// A thread's status as LangGraph's get_state tells it: from the newest
// checkpoint of its root graph, the tasks still due (next) and what they
// stored for the superstep from it (their errors and interrupts).

import (
	"context"
	"slices"
	"strings"
)

// Thread states (Status.State).
const (
	// StateIdle: nothing is due (LangGraph's next is empty): the run ended.
	StateIdle = "idle"
	// StateInterrupted: tasks are due; they asked (interrupt()), or the
	// run stopped before them (interrupt_before, or a run that stopped).
	StateInterrupted = "interrupted"
	// StateError: a task of the newest superstep stored an error.
	StateError = "error"
)

// Status is where a thread stands.
type Status struct {
	State string `json:"state"`
	// Where names the tasks' nodes: those that failed (error), those that
	// interrupted, or "before NODE …" for due tasks that stored neither.
	Where string `json:"where,omitempty"`
	// NS is the subgraph run of the interrupted or failed task, when one
	// ran (its chain holds the interrupt's own checkpoints).
	NS string `json:"ns,omitempty"`
	// Error is the first failed task's error text; Errors counts the
	// failed tasks.
	Error  string `json:"error,omitempty"`
	Errors int    `json:"errors,omitempty"`
	// Interrupts are the values the tasks interrupted with.
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	// Checkpoint is the newest checkpoint, that all this is read from.
	Checkpoint string `json:"checkpoint"`
}

// ThreadStatus reads thread t's status: the newest checkpoint of its root
// chain, and its writes when a task failed or asked (its listing counts
// them).
func ThreadStatus(ctx context.Context, src Source, t Thread) (Status, error) {
	c := Chain{Thread: t.ID}
	h, err := src.History(ctx, c, "", 1)
	if err != nil {
		return Status{}, err
	}
	if len(h) == 0 {
		return Status{State: StateIdle}, nil
	}
	l := h[0]
	var ws []TaskWrites
	// Only a task that failed or asked says more than the listing: the
	// writes of one that did neither are not read.
	if l.Counts.Errors > 0 || l.Counts.Interrupts > 0 {
		if ws, err = src.Writes(ctx, c, l.ID); err != nil {
			return Status{}, err
		}
	}
	return StatusOf(l, ws, t.Namespaces), nil
}

// StatusOf is the status of a chain whose newest checkpoint is l, ws the
// writes of the superstep from it, nss the thread's namespaces (to name
// the subgraph run of a task).
func StatusOf(l Listing, ws []TaskWrites, nss []Namespace) Status {
	st := Status{State: StateIdle, Checkpoint: l.ID}
	var failed, asked []TaskWrites
	for _, tw := range ws {
		switch {
		case tw.Error != "":
			failed = append(failed, tw)
		case len(tw.Interrupts) > 0:
			asked = append(asked, tw)
		}
	}
	run := func(tws []TaskWrites) {
		for _, tw := range tws {
			i := slices.IndexFunc(nss, func(n Namespace) bool {
				return n.NS != "" && n.Parent == l.NS && n.Task == tw.Task
			})
			if i >= 0 {
				st.NS = nss[i].NS
				return
			}
		}
	}
	switch {
	case len(failed) > 0:
		st.State, st.Where, st.Errors = StateError, nodes(failed), len(failed)
		st.Error = failed[0].Error
		// LangGraph.js aborts the other tasks of a failed superstep: their
		// AbortError is not what failed.
		if i := slices.IndexFunc(failed, func(tw TaskWrites) bool { return !strings.HasPrefix(tw.Error, "AbortError") }); i > 0 {
			st.Error = failed[i].Error
		}
		run(failed)
	case len(asked) > 0:
		st.State, st.Where = StateInterrupted, nodes(asked)
		for _, tw := range asked {
			st.Interrupts = append(st.Interrupts, tw.Interrupts...)
		}
		run(asked)
	case len(l.Next) > 0:
		var due []string
		for _, t := range l.Next {
			if !slices.Contains(due, t.Node) {
				due = append(due, t.Node)
			}
		}
		st.State, st.Where = StateInterrupted, "before "+strings.Join(due, " ")
	}
	return st
}

// nodes names the tasks' nodes, each once, in task order ("?" for a task
// whose node is not known).
func nodes(tws []TaskWrites) string {
	var out []string
	for _, tw := range tws {
		n := tw.Node
		if n == "" {
			n = "?"
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}
