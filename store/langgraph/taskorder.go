package langgraph

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// LangGraph applies a superstep's writes in the order of its tasks' paths
// (the first three parts: pregel/_algo.py's apply_writes sorts on
// task_path_str(path[:3]), langgraphjs's algo.ts compares the same parts),
// so that is the order its tasks are listed in here, not their ids' order,
// which is a hash's and differs from run to run. task_path_str writes an
// int as 10 digits, so its strings sort as the paths do.

// Path parts: LangGraph's PULL and PUSH.
const (
	pathPull = "__pregel_pull"
	pathPush = "__pregel_push"
)

// pullPath is task_path_str((PULL, node)).
func pullPath(node string) string { return "~" + pathPull + ", " + node }

// pushPath is task_path_str((PUSH, n)): the nth queued Send.
func pushPath(n int) string { return fmt.Sprintf("~%s, %010d", pathPush, n) }

// callPath is task_path_str((PUSH, parent's path, n)): the nth call a
// functional-API task (@task / task()) got from its parent.
func callPath(parent string, n int) string {
	return fmt.Sprintf("~%s, %s, %010d", pathPush, parent, n)
}

// orderTasks sorts tws as LangGraph applies them: the input command's and
// a state update's writes first, then by task path (stored, or known from
// how the task was named: paths), then those of no known path by id.
func orderTasks(tws []TaskWrites, paths map[string]string) {
	rank := func(tw TaskWrites) (int, string) {
		switch {
		case tw.Command, tw.Update:
			return 0, tw.Task
		case tw.Path != "":
			return 1, tw.Path
		case paths[tw.Task] != "":
			return 1, paths[tw.Task]
		}
		return 2, tw.Task
	}
	slices.SortStableFunc(tws, func(a, b TaskWrites) int {
		ra, ka := rank(a)
		rb, kb := rank(b)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(ka, kb), cmp.Compare(a.Task, b.Task))
	})
}

// derivedPath is the task path of a task named by its id (taskSite.which):
// a pull task of node, or the nth Send; "" when unnamed.
func derivedPath(node string, send int) string {
	switch {
	case send >= 0:
		return pushPath(send)
	case node != "":
		return pullPath(node)
	}
	return ""
}

// pullNode is the node of a stored pull path ("~__pregel_pull, NODE"),
// "" for any other path.
func pullNode(path string) string {
	rest, ok := strings.CutPrefix(path, "~"+pathPull+", ")
	if !ok {
		return ""
	}
	return rest
}

// calls names the functional-API task calls among tws (those no path or
// id named yet): LangGraph derives a call's id from the checkpoint, its
// namespace (the parent task's, "NODE:ID", then "|" and the callee's name),
// the step, the callee's name, PUSH, the parent's path and the call's
// index among the parent's calls (_algo.py's prepare_push_task_functional,
// algo.ts's _prepareSingleTask). The parents are tws' pull tasks; the
// callees' names are those of names (a checkpoint's versions_seen holds
// every task that ran, calls too). It returns the paths of the calls named.
func (s taskSite) calls(tws []TaskWrites, paths map[string]string, names []string) {
	cp, ok := uuidBytes(s.checkpoint)
	parents := callers(tws, paths)
	if !ok || len(parents) == 0 {
		return
	}
	// A parent makes its calls 0, 1, …: the ones stored are among the
	// first; allow as many more as there are tasks.
	most := 2*len(tws) + 1
	for i := range tws {
		tw := &tws[i]
		if tw.Node != "" || tw.Command || tw.Update {
			continue
		}
		if name, path := s.callOf(cp, tw.Task, parents, names, most); name != "" {
			tw.Node, paths[tw.Task] = name, path
		}
	}
}

// caller is a pull task that may have made calls: its node and id.
type caller struct{ node, id string }

// callers are the pull tasks among tws, by stored path or by the path
// their id was found with (paths).
func callers(tws []TaskWrites, paths map[string]string) []caller {
	var out []caller
	for _, tw := range tws {
		node := pullNode(tw.Path)
		if node == "" && tw.Path == "" && tw.Node != "" && paths[tw.Task] == pullPath(tw.Node) {
			node = tw.Node
		}
		if node != "" {
			out = append(out, caller{node, tw.Task})
		}
	}
	return out
}

// callOf finds task id among the first most calls of each parent to each
// of names, in LangGraph.js's form and in Python's: the callee's name and
// the call's path, "" when none matches.
func (s taskSite) callOf(cp []byte, id string, parents []caller, names []string, most int) (name, path string) {
	step := strconv.Itoa(s.step)
	for _, p := range parents {
		ns := p.node + ":" + p.id
		if s.ns != "" {
			ns = s.ns + "|" + ns
		}
		for _, name := range names {
			callNS := ns + "|" + name
			for n := range most {
				if s.jsID(cp, callNS, step, name, pathPush, []string{pathPull, p.node}, n) == id ||
					s.pyID(cp, callNS, step, name, pathPush, pullPath(p.node), strconv.Itoa(n)) == id {
					return name, callPath(pullPath(p.node), n)
				}
			}
		}
	}
	return "", ""
}
