package langgraph

import (
	"sort"
	"strings"
)

// A subgraph's checkpoints live in their own namespace, "node:<task id>"
// of the parent's task that ran it; a subgraph inside a subgraph joins
// its namespace to its parent's with "|".
const (
	nsSep = "|"
	nsEnd = ":"
)

// splitNS reads a namespace: its parent namespace and the node and task
// of its last part.
func splitNS(ns string) (parent, node, task string) {
	last := ns
	if i := strings.LastIndex(ns, nsSep); i >= 0 {
		parent, last = ns[:i], ns[i+1:]
	}
	if i := strings.LastIndex(last, nsEnd); i >= 0 {
		return parent, last[:i], last[i+1:]
	}
	return parent, last, ""
}

// nsRow is one namespace of one thread, as the backends count it: its
// checkpoints, newest id, and the metadata of its first checkpoint
// (which names the parent checkpoint).
type nsRow struct {
	thread, ns  string
	checkpoints int
	latest      string
	firstMeta   []byte
}

// buildThreads assembles the threads, newest first. parentOf finds a
// subgraph's parent checkpoint when the metadata does not say (LangGraph
// before "parents"): the parent's checkpoint where the task stored writes.
func buildThreads(rows []nsRow, parentOf func(thread, parentNS, task string) string) []Thread {
	byID := map[string]*Thread{}
	var order []string
	for _, r := range rows {
		t := byID[r.thread]
		if t == nil {
			t = &Thread{ID: r.thread}
			byID[r.thread] = t
			order = append(order, r.thread)
		}
		n := Namespace{NS: r.ns, Checkpoints: r.checkpoints, Latest: r.latest, UpdatedAt: idTime(r.latest)}
		if r.ns != "" {
			n.Parent, n.Node, n.Task = splitNS(r.ns)
			n.ParentCheckpoint = readMeta(r.firstMeta).parents[n.Parent]
			if n.ParentCheckpoint == "" && parentOf != nil {
				n.ParentCheckpoint = parentOf(r.thread, n.Parent, n.Task)
			}
		}
		t.Checkpoints += r.checkpoints
		if r.ns == "" {
			t.Latest = r.latest
		}
		if n.UpdatedAt.After(t.UpdatedAt) {
			t.UpdatedAt = n.UpdatedAt
		}
		t.Namespaces = append(t.Namespaces, n)
	}
	out := make([]Thread, 0, len(order))
	for _, id := range order {
		t := byID[id]
		// The root first, then each namespace after its parent: sorting
		// the names does it, as a child's name extends its parent's.
		sort.Slice(t.Namespaces, func(i, j int) bool { return t.Namespaces[i].NS < t.Namespaces[j].NS })
		out = append(out, *t)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
