package langgraph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"rewind/store"
	"rewind/store/browse"
)

// The state LangGraph's get_state shows is not the stored checkpoint
// alone (Pregel._prepare_state_snapshot): the writes of the null task
// (Command(update=…) given to an interrupted thread, task id NullTask)
// are applied to every checkpoint, and for the current state (the
// newest checkpoint of its chain) so are the writes of the tasks that
// finished in the unfinished superstep from it, those tasks leaving
// Next. Error, interrupt and scheduled writes apply nothing; a resume
// write applies nothing either, but a task with one counts as finished,
// as LangGraph counts it.
//
// The reader has no graph, so no reducers: a value applies as LangGraph's
// usual channels apply it, told from the values themselves — a list of
// LangChain messages merges by message id (add_messages: a message whose
// id is held replaces it, a RemoveMessage removes it, one without id is
// added), another list onto a list is appended (operator.add), anything
// else replaces the value (LastValue). A LastValue channel that holds a
// list gets the new list appended to the old one where LangGraph would
// replace it; nothing in the database tells the two apart.

// pendingState applies the null task's writes, and for the newest
// checkpoint (current) the finished tasks' writes, to d's values; due are
// the checkpoint's due tasks. It returns the tasks still due and what was
// stored before (nil when nothing applied).
func (d *doc) pendingState(ws []writeRow, due []Task, site taskSite, current bool) ([]Task, *browse.Stored) {
	type task struct {
		at     int // index in due
		writes []writeRow
	}
	var null []writeRow
	var tasks []*task
	byID := map[string]*task{}
	done := map[int]bool{}
	if current {
		for _, w := range ws {
			if w.task == NullTask || w.channel == chanError || w.channel == chanInterrupt || w.channel == chanScheduled {
				continue
			}
			t, seen := byID[w.task]
			if !seen {
				at := taskIndex(w.task, w.path, due, site)
				if at >= 0 {
					t = &task{at: at}
					tasks = append(tasks, t)
					done[at] = true
				}
				byID[w.task] = t
			}
			if t != nil {
				t.writes = append(t.writes, w)
			}
		}
	}
	for _, w := range ws {
		if w.task == NullTask {
			null = append(null, w)
		}
	}
	slices.SortStableFunc(null, func(a, b writeRow) int { return a.idx - b.idx })
	slices.SortStableFunc(tasks, func(a, b *task) int { return a.at - b.at })
	var stored browse.Stored
	kept := map[string]bool{}
	apply := func(rows []writeRow) {
		slices.SortStableFunc(rows, func(a, b writeRow) int { return a.idx - b.idx })
		for _, w := range rows {
			if internal(w.channel) {
				continue
			}
			v := Decode(w.typ, w.value)
			if _, bad := IsOpaque(v); bad {
				d.bad = append(d.bad, fmt.Sprintf("a pending write of task %v to channel %q is not applied: its value does not decode", store.Name(w.task), store.Name(w.channel)))
				continue
			}
			old, has := d.values[w.channel]
			if !kept[w.channel] {
				kept[w.channel] = true
				stored.Channels = append(stored.Channels, browse.StoredChannel{Name: w.channel, Held: has, Value: old})
			}
			d.values[w.channel] = reduce(old, has, v)
		}
	}
	apply(null)
	for _, t := range tasks {
		apply(t.writes)
	}
	if len(done) == 0 && len(stored.Channels) == 0 {
		return due, nil
	}
	next := make([]Task, 0, len(due))
	for i, t := range due {
		if !done[i] {
			next = append(next, t)
		}
	}
	if len(done) > 0 {
		stored.Next = due
	}
	slices.SortFunc(stored.Channels, func(a, b browse.StoredChannel) int { return strings.Compare(a.Name, b.Name) })
	return next, &stored
}

// taskIndex is which of the due tasks task id is (-1: none): by its
// stored path ("~__pregel_pull, NODE"; "~__pregel_push, N, …" the Nth
// Send), else by LangGraph's deterministic task ids (taskids.go).
func taskIndex(id, path string, due []Task, site taskSite) int {
	parts := strings.Split(path, ", ")
	if len(parts) >= 2 {
		switch parts[0] {
		case "~__pregel_pull", "__pregel_pull":
			return slices.IndexFunc(due, func(t Task) bool { return !t.Send && t.Node == parts[1] })
		case "~__pregel_push", "__pregel_push":
			if n, err := strconv.Atoi(parts[1]); err == nil {
				return nthSend(due, n)
			}
		}
	}
	node, n := site.which(id, due)
	if n >= 0 {
		return nthSend(due, n)
	}
	if node == "" {
		return -1
	}
	return slices.IndexFunc(due, func(t Task) bool { return !t.Send && t.Node == node })
}

// nthSend is the index in due of the nth Send (-1: none).
func nthSend(due []Task, n int) int {
	for i, t := range due {
		if t.Send {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// reduce applies value v to a channel holding old (has: holds one).
func reduce(old any, has bool, v any) any {
	if !has {
		if _, isMsgs := browse.Messages(v); isMsgs {
			return addMessages(nil, v.([]any))
		}
		return v
	}
	ol, oldList := old.([]any)
	if !oldList {
		return v
	}
	if _, isMsgs := browse.Messages(old); isMsgs && len(ol) > 0 {
		if nl, ok := v.([]any); ok {
			if _, ok := browse.Messages(nl); ok {
				return addMessages(ol, nl)
			}
		} else if _, ok := browse.Messages([]any{v}); ok {
			return addMessages(ol, []any{v})
		}
	}
	if nl, ok := v.([]any); ok {
		if _, ok := browse.Messages(nl); ok && len(nl) > 0 && len(ol) == 0 {
			return addMessages(nil, nl)
		}
		return append(slices.Clip(ol), nl...)
	}
	return v
}

// addMessages merges messages as LangGraph's add_messages does: by id.
func addMessages(old, add []any) []any {
	out := slices.Clone(old)
	idOf := func(v any) string {
		m, _ := v.(map[string]any)
		id, _ := m["id"].(string)
		return id
	}
	for _, v := range add {
		id := idOf(v)
		at := -1
		if id != "" {
			at = slices.IndexFunc(out, func(o any) bool { return idOf(o) == id })
		}
		msgs, _ := browse.Messages([]any{v})
		switch {
		case len(msgs) == 1 && msgs[0].Role == "remove":
			if at >= 0 {
				out = slices.Delete(out, at, at+1)
			}
		case at >= 0:
			out[at] = v
		default:
			out = append(out, v)
		}
	}
	return out
}
