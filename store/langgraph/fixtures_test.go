package langgraph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// The four fixtures (testdata/README.md) were written by LangGraph's own
// checkpointers running testdata/generate-python.py and
// generate-js.mjs. Each test below checks, on every one of them, what
// those programs put there.

type fixture struct {
	name string
	open func(t *testing.T) langgraph.Source
	// checkpoints of t-main's root chain, as the generators print them.
	mainCheckpoints int
	// subgraph: Python's review node is a subgraph (namespace
	// review:<task id>); LangGraph.js's is a plain node.
	subgraph bool
	// replay is the source of the checkpoint that re-running an older
	// checkpoint made: Python 1.0 records a loop, LangGraph.js a fork.
	replay string
}

var fixtures = []fixture{
	{name: "sqlite-python", mainCheckpoints: 12, subgraph: true, replay: langgraph.SourceLoop,
		open: func(t *testing.T) langgraph.Source { return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python.db")) }},
	{name: "sqlite-js", mainCheckpoints: 13, replay: langgraph.SourceFork,
		open: func(t *testing.T) langgraph.Source { return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-js.db")) }},
	{name: "postgres-python", mainCheckpoints: 12, subgraph: true, replay: langgraph.SourceLoop,
		open: func(t *testing.T) langgraph.Source { return open(t, lgtest.Dump(t, "postgres-python.sql")) }},
	// LangGraph.js's PostgresSaver numbers channel versions per channel,
	// so fork A's trigger (branch:to:tools, version 4) collided with the
	// main branch's consumed one and the fork ran nothing: 10, not 13.
	{name: "postgres-js", mainCheckpoints: 10, replay: langgraph.SourceFork,
		open: func(t *testing.T) langgraph.Source { return open(t, lgtest.Dump(t, "postgres-js.sql")) }},
}

var (
	tMain = langgraph.Chain{Thread: "t-main"}
	tFail = langgraph.Chain{Thread: "t-fail"}
)

func eachFixture(t *testing.T, test func(t *testing.T, f fixture, src langgraph.Source)) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) { test(t, f, f.open(t)) })
	}
}

func history(t *testing.T, src langgraph.Source, c langgraph.Chain) []langgraph.Listing {
	t.Helper()
	h, err := src.History(context.Background(), c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func children(h []langgraph.Listing) map[string][]langgraph.Listing {
	out := map[string][]langgraph.Listing{}
	for _, l := range h {
		out[l.Parent] = append(out[l.Parent], l)
	}
	return out
}

func sources(ls []langgraph.Listing) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Source)
	}
	slices.Sort(out)
	return out
}

func TestFixtureThreadsAndNamespaces(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		ts, err := src.Threads(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, th := range ts {
			ids = append(ids, th.ID)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"t-fail", "t-main"}) {
			t.Fatalf("threads %v, want t-fail and t-main", ids)
		}
		th := ts[slices.IndexFunc(ts, func(th langgraph.Thread) bool { return th.ID == "t-main" })]
		root := th.Namespaces[0]
		if root.NS != "" || root.Checkpoints != f.mainCheckpoints || th.Latest != root.Latest || th.UpdatedAt.IsZero() {
			t.Errorf("t-main's root chain: %+v of %+v, want %d checkpoints first", root, th, f.mainCheckpoints)
		}
		if !f.subgraph {
			if len(th.Namespaces) != 1 {
				t.Errorf("namespaces %+v, want the root only (LangGraph.js's review is a plain node)", th.Namespaces)
			}
			return
		}
		if len(th.Namespaces) != 2 {
			t.Fatalf("namespaces %+v, want the root and the review subgraph's", th.Namespaces)
		}
		sub := th.Namespaces[1]
		if sub.Node != "review" || sub.NS != "review:"+sub.Task || sub.Parent != "" || sub.Checkpoints != 3 {
			t.Errorf("subgraph namespace %+v, want review:<task id> with 3 checkpoints", sub)
		}
		// The subgraph hangs off the parent checkpoint whose review task
		// ran it: that task's writes are stored there.
		ws, err := src.Writes(context.Background(), tMain, sub.ParentCheckpoint)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ws, func(w langgraph.TaskWrites) bool { return w.Task == sub.Task && w.Node == "review" }) {
			t.Errorf("parent checkpoint %s has writes %+v, want the review task %s", sub.ParentCheckpoint, ws, sub.Task)
		}
	})
}

func TestFixtureForks(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		h := history(t, src, tMain)
		if len(h) != f.mainCheckpoints {
			t.Fatalf("%d checkpoints, want %d", len(h), f.mainCheckpoints)
		}
		for i := 1; i < len(h); i++ {
			if h[i-1].ID <= h[i].ID {
				t.Fatalf("history not newest first at %d: %s then %s", i, h[i-1].ID, h[i].ID)
			}
		}
		kids := children(h)
		if roots := kids[""]; len(roots) != 1 || roots[0].Source != langgraph.SourceInput || roots[0].Step != -1 {
			t.Errorf("roots %+v, want one input checkpoint at step -1", roots)
		}
		// Fork A: update_state on the checkpoint about to run tools.
		var forkA, forkB bool
		for parent, ks := range kids {
			if parent == "" || len(ks) < 2 {
				continue
			}
			if len(ks) != 2 {
				t.Errorf("checkpoint %s has %d children, want at most 2", parent, len(ks))
			}
			p := h[slices.IndexFunc(h, func(l langgraph.Listing) bool { return l.ID == parent })]
			switch got := sources(ks); {
			case slices.Equal(got, []string{langgraph.SourceLoop, langgraph.SourceUpdate}):
				forkA = true
				if len(p.Next) != 1 || p.Next[0].Node != "tools" {
					t.Errorf("fork A's parent %s is due %+v, want tools", parent, p.Next)
				}
			case slices.Equal(got, slices.Sorted(slices.Values([]string{langgraph.SourceLoop, f.replay}))):
				forkB = true
				if p.Counts.Sends != 3 {
					t.Errorf("fork B's parent %s queues %d Sends, want the 3 workers", parent, p.Counts.Sends)
				}
			default:
				t.Errorf("checkpoint %s has children of sources %v", parent, got)
			}
		}
		if !forkA || !forkB {
			t.Errorf("fork A (update_state) found %t, fork B (replay) found %t: want both", forkA, forkB)
		}
	})
}

// latestWith is the newest listing of h that satisfies ok.
func latestWith(t *testing.T, h []langgraph.Listing, what string, ok func(langgraph.Listing) bool) langgraph.Listing {
	t.Helper()
	i := slices.IndexFunc(h, ok)
	if i < 0 {
		t.Fatalf("no checkpoint %s", what)
	}
	return h[i]
}

func TestFixtureToolCallJoinedToItsResult(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		h := history(t, src, tMain)
		done := latestWith(t, h, "with no task left", func(l langgraph.Listing) bool { return len(l.Next) == 0 && l.Step == 5 })
		cp, err := src.Checkpoint(context.Background(), tMain, done.ID)
		if err != nil {
			t.Fatal(err)
		}
		msgs := langgraph.CheckpointMessages(cp)
		var roles []string
		for _, m := range msgs {
			roles = append(roles, m.Role)
		}
		if want := []string{"human", "ai", "tool", "ai", "ai"}; !slices.Equal(roles, want) {
			t.Fatalf("roles %v, want %v (messages %+v)", roles, want, msgs)
		}
		call := msgs[1].ToolCalls
		if len(call) != 1 || call[0].ID != "call_1" || call[0].Name != "search" || call[0].Result != 2 {
			t.Fatalf("the AI message's tool calls %+v, want search call_1 answered by message 2", call)
		}
		if args, _ := call[0].Args.(map[string]any); args["q"] != "tables" || args["k"] != int64(3) {
			t.Errorf("tool call args %#v, want q tables, k 3", call[0].Args)
		}
		res := msgs[2]
		if res.ToolCallID != "call_1" || res.CallIndex != 1 || res.Content != "3 hits for tables" || res.Name != "search" {
			t.Errorf("tool message %+v, want the result of call_1, joined to message 1", res)
		}
		if msgs[0].Content != "research langgraph tables" || msgs[0].ID != "h-1" {
			t.Errorf("human message %+v", msgs[0])
		}
		if !strings.Contains(msgs[4].Content, "yes") {
			t.Errorf("last message %+v, want the summary with the resume value", msgs[4])
		}
	})
}

func TestFixtureQueuedSends(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		for _, c := range []langgraph.Chain{tMain, tFail} {
			h := history(t, src, c)
			l := latestWith(t, h, "queueing Sends", func(l langgraph.Listing) bool { return l.Counts.Sends > 0 })
			for _, task := range l.Next {
				if !task.Send || task.Node != "worker" || task.Arg != nil {
					t.Errorf("%s: listing's next %+v, want Sends to worker without arguments", c, l.Next)
				}
			}
			cp, err := src.Checkpoint(context.Background(), c, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			next := cp.Next
			if cp.Stored != nil && cp.Stored.Next != nil {
				next = cp.Stored.Next // t-fail's finished workers left Next
			}
			if len(next) != 3 || cp.Counts.Sends != 3 {
				t.Fatalf("%s: next %+v, want the 3 pending Sends", c, next)
			}
			for i, task := range next {
				arg, _ := task.Arg.(map[string]any)
				if !task.Send || task.Node != "worker" || arg["part"] != int64(i) {
					t.Errorf("%s: Send %d is %+v, want worker with part %d", c, i, task, i)
				}
			}
			v, ok := cp.Value("__pregel_tasks")
			ch := cp.Channels[slices.IndexFunc(cp.Channels, func(ch langgraph.Channel) bool { return ch.Name == "__pregel_tasks" })]
			if q, _ := v.([]any); !ok || len(q) != 3 || !ch.Internal {
				t.Errorf("%s: __pregel_tasks %+v, want the 3 Sends, marked internal", c, ch)
			}
		}
	})
}

func TestFixtureInterruptAndResume(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		ctx := context.Background()
		h := history(t, src, tMain)
		// The run stopped before review (interrupt_before), then inside it.
		l := latestWith(t, h, "with an interrupt", func(l langgraph.Listing) bool { return l.Counts.Interrupts > 0 })
		if len(l.Next) != 1 || l.Next[0].Node != "review" {
			t.Errorf("the interrupted checkpoint is due %+v, want review", l.Next)
		}
		ws, err := src.Writes(ctx, tMain, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkInterrupted(t, ws, "review")
		if f.subgraph {
			// The subgraph's own chain holds the interrupt of its node.
			ts, err := src.Threads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			th := ts[slices.IndexFunc(ts, func(th langgraph.Thread) bool { return th.ID == "t-main" })]
			sub := langgraph.Chain{Thread: "t-main", NS: th.Namespaces[1].NS}
			sh := history(t, src, sub)
			sl := latestWith(t, sh, "with an interrupt in the subgraph", func(l langgraph.Listing) bool { return l.Counts.Interrupts > 0 })
			sws, err := src.Writes(ctx, sub, sl.ID)
			if err != nil {
				t.Fatal(err)
			}
			checkInterrupted(t, sws, "summarize")
		}
	})
}

// checkInterrupted: node's task interrupted asking to approve the
// summary, and the run was resumed with "yes".
func checkInterrupted(t *testing.T, ws []langgraph.TaskWrites, node string) {
	t.Helper()
	var asked, resumed bool
	for _, tw := range ws {
		for _, in := range tw.Interrupts {
			v, _ := in.Value.(map[string]any)
			if v["question"] == "approve summary?" && tw.Node == node && in.ID != "" {
				asked = true
			}
		}
		for _, w := range tw.Writes {
			if w.Kind == "resume" && w.Idx == -4 && strings.Contains(fmt.Sprint(w.Value), "yes") {
				resumed = true
			}
			if w.Kind == "interrupt" && w.Idx != -3 {
				t.Errorf("interrupt write at index %d, want -3", w.Idx)
			}
		}
	}
	if !asked || !resumed {
		t.Errorf("writes %+v: want %s's interrupt asking to approve the summary (found %t) and the resume yes (found %t)", ws, node, asked, resumed)
	}
}

func TestFixtureFailedFanOut(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		h := history(t, src, tFail)
		head := h[0]
		if head.Counts.Errors < 1 || head.Counts.Sends != 3 {
			t.Fatalf("t-fail's head %+v, want the failed fan-out: 3 Sends, an error", head)
		}
		ws, err := src.Writes(context.Background(), tFail, head.ID)
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		var found []string
		for _, tw := range ws {
			if tw.Node != "worker" {
				t.Errorf("task %s is named %q, want worker", tw.Task, tw.Node)
			}
			if strings.Contains(tw.Error, "worker 1 exploded") {
				failed = append(failed, tw.Task)
				if w := tw.Writes[0]; w.Kind != "error" || w.Idx != -1 || w.Channel != "__error__" {
					t.Errorf("error write %+v, want __error__ at -1", w)
				}
			}
			for _, w := range tw.Writes {
				if w.Channel == "findings" {
					found = append(found, fmt.Sprint(w.Value))
				}
			}
		}
		slices.Sort(found)
		if len(failed) != 1 || !slices.Equal(found, []string{"[boom#part0]", "[boom#part2]"}) {
			t.Errorf("writes %+v: want one task failing with worker 1 exploded (got %v) and the other two workers' findings (got %v)", ws, failed, found)
		}
	})
}

// The current state is LangGraph's get_state: the workers that finished in
// t-fail's failed superstep have their findings applied and leave Next,
// only the failed one stays due; the stored value and the three stored
// Sends are one key away, the writes as stored. The history's listing
// (get_state_history) and the older checkpoints apply nothing.
func TestFixtureCurrentStateAppliesFinishedTasks(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		ctx := context.Background()
		h := history(t, src, tFail)
		for _, id := range []string{"", h[0].ID} {
			cp, err := src.Checkpoint(ctx, tFail, id)
			if err != nil {
				t.Fatal(err)
			}
			findings, _ := cp.Value("findings")
			if fmt.Sprint(findings) != "[boom#part0 boom#part2]" {
				t.Errorf("checkpoint %q: findings %v, want the two finished workers' [boom#part0 boom#part2]", id, findings)
			}
			arg, _ := cp.Next[0].Arg.(map[string]any)
			if len(cp.Next) != 1 || !cp.Next[0].Send || arg["part"] != int64(1) {
				t.Errorf("checkpoint %q: next %+v, want only the failed worker (part 1)", id, cp.Next)
			}
			// LangGraph.js stores the empty list, Python nothing.
			if cp.Stored == nil || len(cp.Stored.Next) != 3 || len(cp.Stored.Channels) != 1 ||
				cp.Stored.Channels[0].Name != "findings" || fmt.Sprint(cp.Stored.Channels[0].Value) != map[bool]string{true: "[]", false: "<nil>"}[cp.Stored.Channels[0].Held] {
				t.Errorf("checkpoint %q: stored %+v, want the 3 stored Sends and findings, unset or empty", id, cp.Stored)
			}
		}
		if len(h[0].Next) != 3 {
			t.Errorf("the head's listing next %+v, want the 3 stored Sends (get_state_history applies nothing)", h[0].Next)
		}
		for _, l := range h[1:] {
			cp, err := src.Checkpoint(ctx, tFail, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Stored != nil {
				t.Errorf("older checkpoint %s (step %d) shows %+v applied", l.ID, l.Step, cp.Stored)
			}
		}
	})
}

func TestFixtureHistoryPagesAndMisses(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f fixture, src langgraph.Source) {
		ctx := context.Background()
		all := history(t, src, tMain)
		var paged []langgraph.Listing
		before := ""
		for {
			page, err := src.History(ctx, tMain, before, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 5 {
				t.Fatalf("a page of %d, want at most 5", len(page))
			}
			paged = append(paged, page...)
			if len(page) < 5 {
				break
			}
			before = page[len(page)-1].ID
		}
		if len(paged) != len(all) {
			t.Fatalf("pages hold %d checkpoints, the whole history %d", len(paged), len(all))
		}
		for i := range all {
			if paged[i].ID != all[i].ID || paged[i].Counts != all[i].Counts || len(paged[i].Next) != len(all[i].Next) {
				t.Errorf("paged listing %d %+v differs from %+v", i, paged[i], all[i])
			}
		}
		latest, err := src.Checkpoint(ctx, tMain, "")
		if err != nil || latest.ID != all[0].ID {
			t.Errorf("latest %s (%v), want %s", latest.ID, err, all[0].ID)
		}
		for _, miss := range []func() error{
			func() error { _, err := src.History(ctx, langgraph.Chain{Thread: "nope"}, "", 0); return err },
			func() error { _, err := src.Checkpoint(ctx, tMain, "no-such-id"); return err },
			func() error { _, err := src.Writes(ctx, langgraph.Chain{Thread: "t-main", NS: "x:1"}, ""); return err },
		} {
			if err := miss(); !errors.Is(err, langgraph.ErrNotFound) || strings.Contains(err.Error(), "\n") {
				t.Errorf("a miss gave %v, want one line matching ErrNotFound", err)
			}
		}
	})
}
