package langgraph

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// writeRow is one stored write as both backends read it.
type writeRow struct {
	checkpoint string
	task       string
	idx        int
	channel    string
	typ        string
	path       string
	value      []byte
}

// kindOf names LangGraph's special writes (stored at negative indexes:
// error -1, scheduled -2, interrupt -3, resume -4).
func kindOf(channel string) string {
	switch channel {
	case chanError:
		return "error"
	case chanScheduled:
		return "scheduled"
	case chanInterrupt:
		return "interrupt"
	case chanResume:
		return "resume"
	}
	return ""
}

// countWrites counts, by checkpoint, the writes and the tasks that stored
// them, failed, or interrupted.
func countWrites(rows []writeRow) map[string]Counts {
	out := map[string]Counts{}
	tasks := map[[2]string]bool{}
	for _, r := range rows {
		c := out[r.checkpoint]
		c.Writes++
		if k := [2]string{r.checkpoint, r.task}; !tasks[k] {
			tasks[k] = true
			c.Tasks++
		}
		switch r.channel {
		case chanError:
			c.Errors++
		case chanInterrupt:
			c.Interrupts++
		}
		out[r.checkpoint] = c
	}
	return out
}

// groupWrites groups one checkpoint's writes by task, tasks in the order
// LangGraph applies them (orderTasks), writes by index. due are the
// checkpoint's due tasks, which name a task's node when its path does
// not; site names it by its id when neither does (taskids.go), a
// functional-API call among callees (site.calls).
func groupWrites(rows []writeRow, due []Task, site taskSite, callees []string) []TaskWrites {
	var out []TaskWrites
	at := map[string]int{}
	for _, r := range rows {
		i, ok := at[r.task]
		if !ok {
			i = len(out)
			at[r.task] = i
			out = append(out, TaskWrites{Task: r.task, Path: r.path, Command: r.task == NullTask, Writes: []Write{}})
		}
		tw := &out[i]
		w := Write{Idx: r.idx, Channel: r.channel, Kind: kindOf(r.channel), Type: r.typ, Value: Decode(r.typ, r.value)}
		tw.Writes = append(tw.Writes, w)
		switch w.Kind {
		case "error":
			tw.Error = errorText(w.Value)
		case "interrupt":
			tw.Interrupts = append(tw.Interrupts, interrupts(w.Value)...)
		}
	}
	paths := map[string]string{}
	for i := range out {
		slices.SortStableFunc(out[i].Writes, func(a, b Write) int { return cmp.Compare(a.Idx, b.Idx) })
		out[i].Node = nodeOfPath(out[i].Path, due)
		if out[i].Node == "" && !out[i].Command {
			node, n := site.which(out[i].Task, due)
			paths[out[i].Task] = derivedPath(node, n)
			if n >= 0 {
				node = due[nthSend(due, n)].Node
			}
			out[i].Node = node
			out[i].Update = out[i].Node == "" && site.update(out[i].Task)
		}
	}
	nameBySoleNode(out, due)
	site.calls(out, paths, callees)
	orderTasks(out, paths)
	return out
}

// nodeOfPath reads a task path: "~__pregel_pull, NODE" names the node,
// "~__pregel_push, N, …" the Nth queued Send.
func nodeOfPath(path string, due []Task) string {
	parts := strings.Split(path, ", ")
	if len(parts) < 2 {
		return ""
	}
	switch parts[0] {
	case "~__pregel_pull", "__pregel_pull":
		return parts[1]
	case "~__pregel_push", "__pregel_push":
		n, err := strconv.Atoi(parts[1])
		var sends []Task
		for _, t := range due {
			if t.Send {
				sends = append(sends, t)
			}
		}
		if err == nil && n >= 0 && n < len(sends) {
			return sends[n].Node
		}
	}
	return ""
}

// nameBySoleNode names the tasks no path named when every due task runs
// the same node and there are no more tasks than due ones: then each
// must be one of them. Anything less certain stays unnamed.
func nameBySoleNode(tws []TaskWrites, due []Task) {
	if len(due) == 0 {
		return
	}
	node := due[0].Node
	for _, t := range due {
		if t.Node != node {
			return
		}
	}
	n := 0
	for _, tw := range tws {
		if !tw.Command && !tw.Update {
			n++
		}
	}
	if n > len(due) {
		return
	}
	for i := range tws {
		if !tws[i].Command && !tws[i].Update && tws[i].Node == "" {
			tws[i].Node = node
		}
	}
}

// errorText is an error write's text: Python stores the exception's repr,
// LangGraph.js {"message", "name"}.
func errorText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		msg, _ := x["message"].(string)
		name, _ := x["name"].(string)
		switch {
		case msg != "" && name != "":
			return name + ": " + msg
		case msg != "":
			return msg
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "(unprintable error)"
	}
	return string(b)
}

// interrupts reads an interrupt write: a list of Interrupt objects
// (Python {"$type": "langgraph.types.Interrupt", "value", "id"},
// LangGraph.js {"value", "id"}); older ones stored a single value.
func interrupts(v any) []Interrupt {
	l, ok := v.([]any)
	if !ok {
		l = []any{v}
	}
	out := make([]Interrupt, 0, len(l))
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			out = append(out, Interrupt{Value: it})
			continue
		}
		value, has := m["value"]
		if !has {
			out = append(out, Interrupt{Value: it})
			continue
		}
		id, _ := m["id"].(string)
		if id == "" {
			id, _ = m["interrupt_id"].(string)
		}
		out = append(out, Interrupt{ID: id, Value: value})
	}
	return out
}
