package langgraph

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"rewind/store/browse"
)

// Which tasks are due at a checkpoint is not stored: LangGraph works it
// out from the graph. Without the graph, the trigger channels' names say
// it. Since LangGraph 0.3 a node runs when its channel branch:to:NODE
// holds a value of a version the node has not seen; __start__ runs the
// input; the older start:NODE, branch:SOURCE:CONDITION:NODE and
// join:A+B:NODE name their target last. (Graphs from before 0.3 also let a
// plain edge trigger a node through a channel named after its source; that
// names no target, so such a task is not listed.) Then each queued Send is
// a task.

// triggerOf is the node a channel triggers ("" for none).
func triggerOf(ch string) string {
	switch {
	case ch == chanStart:
		return chanStart
	case strings.HasPrefix(ch, "branch:to:"):
		return strings.TrimPrefix(ch, "branch:to:")
	case strings.HasPrefix(ch, "start:"):
		return strings.TrimPrefix(ch, "start:")
	case strings.HasPrefix(ch, "branch:"), strings.HasPrefix(ch, "join:"):
		parts := strings.Split(ch, ":")
		if len(parts) >= 3 {
			return parts[len(parts)-1]
		}
	}
	return ""
}

// internal reports LangGraph's bookkeeping channels. __root__ is not one:
// it holds the whole state of a graph whose state is not a dict.
func internal(ch string) bool {
	if ch == "__root__" {
		return false
	}
	return strings.HasPrefix(ch, "__") || strings.HasPrefix(ch, "branch:") ||
		strings.HasPrefix(ch, "start:") || strings.HasPrefix(ch, "join:")
}

// next lists the tasks due: triggered nodes by name, then the Sends in
// queue order. args keeps the Sends' arguments.
func (d *doc) next(args bool) []Task {
	var nodes []string
	for ch, ver := range d.versions {
		node := triggerOf(ch)
		if node == "" {
			continue
		}
		v, has := d.values[ch]
		if !has || strings.HasPrefix(ch, "join:") && !joinReady(ch, v) {
			continue // consumed (or a join still waiting)
		}
		if cmpVersion(ver, d.seen[node][ch]) > 0 && !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	sort.Strings(nodes)
	nodes = d.entryTasks(nodes)
	tasks := make([]Task, 0, len(nodes))
	for _, n := range nodes {
		tasks = append(tasks, Task{Node: n})
	}
	for _, s := range d.sends() {
		if !args {
			s.Arg = nil
		}
		tasks = append(tasks, s)
	}
	return tasks
}

// sends are the queued Sends: the __pregel_tasks channel (format 4), or
// the pending_sends of an older checkpoint.
func (d *doc) sends() []Task {
	var out []Task
	queue, _ := d.values[chanTasks].([]any)
	for _, v := range append(queue, d.pendingSends...) {
		if t, ok := sendTask(v); ok {
			out = append(out, t)
		}
	}
	return out
}

// sendTask reads a Send: Python's {"$type": "langgraph.types.Send", "node",
// "arg"}, LangGraph.js's {"node", "args"}.
func sendTask(v any) (Task, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Task{}, false
	}
	node, ok := m["node"].(string)
	if !ok {
		return Task{}, false
	}
	arg, has := m["arg"]
	if !has {
		arg = m["args"]
	}
	return Task{Node: node, Send: true, Arg: arg}, true
}

// joinReady: a join:A+B:NODE channel triggers NODE once every source
// has written (its value is the set of those seen so far).
func joinReady(ch string, v any) bool {
	parts := strings.Split(ch, ":")
	if len(parts) < 3 {
		return true
	}
	if m, ok := v.(map[string]any); ok {
		v = m[KeyValue]
	}
	seen, ok := v.([]any)
	if !ok {
		return v != nil
	}
	for _, need := range strings.Split(parts[1], "+") {
		if !slices.Contains(seen, any(need)) {
			return false
		}
	}
	return true
}

// cmpVersion orders channel versions: Python stores zero-padded strings,
// LangGraph.js numbers; nil (never seen) is before any.
func cmpVersion(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	af, aNum := number(a)
	bf, bNum := number(b)
	if aNum && bNum {
		switch {
		case af < bf:
			return -1
		case af > bf:
			return 1
		}
		return 0
	}
	return strings.Compare(versionText(a), versionText(b))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// versionText prints a version.
func versionText(v any) string {
	if v == nil {
		return ""
	}
	if f, ok := v.(float64); ok {
		return fmt.Sprint(f)
	}
	return fmt.Sprint(v)
}

// channels lists the values, the graph's own channels first.
func (d *doc) channels() []Channel {
	out := make([]Channel, 0, len(d.values))
	for name, v := range d.values {
		// A functional-API run's state is what it returned (functional.go).
		in := internal(name) && (name != chanEnd || !d.functional())
		out = append(out, Channel{Name: name, Version: versionText(d.versions[name]), Internal: in, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return browse.Less(out[i], out[j]) })
	return out
}

// stateChannels counts the graph's own channels holding a value.
func (d *doc) stateChannels() int {
	n := 0
	for name := range d.values {
		if !internal(name) || name == chanEnd && d.functional() {
			n++
		}
	}
	return n
}
