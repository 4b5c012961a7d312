package langgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// LangGraph's functional API (@entrypoint / entrypoint(), @task / task())
// runs one node, the entrypoint, on the __start__ channel itself: its
// task is due where a graph's would be __start__'s, and LangGraph names
// it by the entrypoint. What it returns is the thread's state, in the
// __end__ channel (and __previous__, what getPreviousState reads); its
// tasks' results are __return__ writes. The entrypoint's name is in the
// versions_seen of every checkpoint after its first run.

// Channels only the functional API writes.
const (
	chanEnd      = "__end__"
	chanPrevious = "__previous__"
	chanReturn   = "__return__"
)

func functionalChannel(ch string) bool {
	return ch == chanEnd || ch == chanPrevious || ch == chanReturn
}

// functional: d is a checkpoint of a functional-API run.
func (d *doc) functional() bool {
	_, ok := d.versions[chanPrevious]
	return ok
}

// entrypointOf is the entrypoint named in d's versions_seen ("": none):
// the one node that has seen __start__ and is not LangGraph's own.
func entrypointOf(d *doc) string {
	var found string
	for node, seen := range d.seen {
		if _, ok := seen[chanStart]; !ok || strings.HasPrefix(node, "__") {
			continue
		}
		if found != "" {
			return ""
		}
		found = node
	}
	return found
}

// nameEntrypoints names the entrypoint due at each of rows whose
// superstep wrote what only the functional API writes (ws: the rows'
// writes), from the rows' versions_seen, else the chain's newest
// checkpoint's.
func nameEntrypoints(ctx context.Context, s snapshot, c Chain, rows []row, ws []writeRow) error {
	fn := map[string]bool{}
	for _, w := range ws {
		if functionalChannel(w.channel) {
			fn[w.checkpoint] = true
		}
	}
	var due []row
	for _, rw := range rows {
		if fn[rw.id] && !rw.doc.functional() {
			if _, start := rw.doc.versions[chanStart]; start {
				due = append(due, rw)
			}
		}
	}
	if len(due) == 0 {
		return nil
	}
	name := ""
	for _, rw := range rows {
		if name = entrypointOf(rw.doc); name != "" {
			break
		}
	}
	if name == "" {
		newest, err := one(ctx, s, c, "", false)
		if err != nil {
			return fmt.Errorf("find the entrypoint of %s: %w", c, err)
		}
		name = entrypointOf(newest.doc)
	}
	for _, rw := range due {
		rw.doc.entry = name
	}
	return nil
}

// calleesOf are the names a functional-API task call among ws (the
// writes of checkpoint rw) may have: every task that ran is in a later
// checkpoint's versions_seen (an empty entry for a call), so the chain's
// newest names them, and rw's own the ones before it. None when nothing in
// ws is a call's result (__return__).
func calleesOf(ctx context.Context, s snapshot, c Chain, rw row, ws []writeRow) ([]string, error) {
	if !slices.ContainsFunc(ws, func(w writeRow) bool { return w.channel == chanReturn }) {
		return nil, nil
	}
	newest, err := one(ctx, s, c, "", false)
	if err != nil {
		return nil, fmt.Errorf("name the task calls of %s: %w", c, err)
	}
	var names []string
	for _, d := range []*doc{rw.doc, newest.doc} {
		for n := range d.seen {
			if !strings.HasPrefix(n, "__") && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// entryTasks puts the entrypoint in place of __start__ in nodes (a
// checkpoint's due nodes, sorted).
func (d *doc) entryTasks(nodes []string) []string {
	if d.entry == "" {
		return nodes
	}
	if i := slices.Index(nodes, chanStart); i >= 0 {
		nodes[i] = d.entry
		slices.Sort(nodes)
	}
	return nodes
}
