package langgraph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/store/memory"
)

// walk reads a source as a TUI would, knowing nothing of which it is, and
// returns what it saw, one line per checkpoint.
func walk(t *testing.T, src langgraph.Source) []string {
	t.Helper()
	ctx := context.Background()
	ts, err := src.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, th := range ts {
		for _, ns := range th.Namespaces {
			c := langgraph.Chain{Thread: th.ID, NS: ns.NS}
			h, err := src.History(ctx, c, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]langgraph.Listing{}
			for _, l := range h {
				byID[l.ID] = l
			}
			for _, l := range h {
				if _, ok := byID[l.Parent]; l.Parent != "" && !ok {
					t.Errorf("%s: checkpoint %s has parent %s, not in its chain", c, l.ID, l.Parent)
				}
				cp, err := src.Checkpoint(ctx, c, l.ID)
				if err != nil || cp.ID != l.ID {
					t.Fatalf("%s: checkpoint %s read as %s: %v", c, l.ID, cp.ID, err)
				}
				var parent langgraph.Checkpoint
				if l.Parent != "" {
					if parent, err = src.Checkpoint(ctx, c, l.Parent); err != nil {
						t.Fatal(err)
					}
				}
				diff := engine.Diff(engine.Values(parent.State()), engine.Values(cp.State()))
				ws, err := src.Writes(ctx, c, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				var next, changed []string
				for _, task := range cp.Next {
					next = append(next, task.Node)
				}
				for _, d := range diff {
					changed = append(changed, d.Channel)
				}
				out = append(out, fmt.Sprintf("%s step %d %s next [%s] changed [%s] %d task(s) wrote, %d message(s)",
					c.Thread, cp.Step, cp.Source, strings.Join(next, " "), strings.Join(changed, " "), len(ws), len(langgraph.CheckpointMessages(cp))))
			}
		}
	}
	return out
}

// A rewind graph shaped like the fixtures' (a fan-out of Sends, a fork),
// read through the engine, and a LangGraph database, read by the same
// walk.
func TestOneWalkReadsBothSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := engine.NewGraph("walk", 1).
		Channel("messages", engine.IndexedAppend("index"), []any{}).
		Channel("findings", engine.IndexedAppend("index"), []any{}).
		Node("plan", func(context.Context, *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("messages", []map[string]any{{"role": "ai", "content": "fanning out", "id": "ai-2"}})}, nil
		}).
		Node("worker", func(_ context.Context, nc *engine.NodeContext) ([]engine.Write, error) {
			return []engine.Write{engine.Put("findings", []map[string]any{{"part": string(nc.Task.Args)}})}, nil
		}).
		Entry("plan").
		Route("plan", func(engine.Values) ([]engine.Target, error) {
			return []engine.Target{engine.Send("worker", 0), engine.Send("worker", 1), engine.Send("worker", 2)}, nil
		}).
		Edge("worker", engine.End)
	e, err := engine.New(memory.New(), g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	input := []engine.Write{engine.Put("messages", []map[string]any{{"role": "user", "content": "go", "id": "h-1"}})}
	if _, err := e.Run(ctx, "t-rewind", input, engine.RunConfig{InterruptBefore: []string{"worker"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Resume(ctx, "t-rewind", engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Fork(ctx, "t-rewind", 1, input, engine.RunConfig{InterruptBefore: []string{"worker"}}); err != nil {
		t.Fatal(err)
	}
	var src langgraph.Source = e.Browse(langgraph.About{Backend: "memory", Where: "memory:"})
	got := walk(t, src)
	if len(got) != 5 || !slices.Contains(got, "t-rewind step 1 loop next [worker worker worker] changed [messages] 3 task(s) wrote, 2 message(s)") ||
		!slices.Contains(got, "t-rewind step 2 loop next [] changed [findings] 0 task(s) wrote, 2 message(s)") ||
		!slices.Contains(got, "t-rewind step 1 fork next [plan] changed [messages] 1 task(s) wrote, 2 message(s)") {
		t.Errorf("rewind's engine through Source:\n%s", strings.Join(got, "\n"))
	}

	lg := walk(t, open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python.db")))
	for _, want := range []string{
		"t-main step 3 loop next [worker worker worker] changed [messages] 3 task(s) wrote, 4 message(s)",
		"t-main step 2 update next [tools] changed [findings] 1 task(s) wrote, 2 message(s)",
		"t-fail step 3 loop next [worker] changed [findings messages] 3 task(s) wrote, 4 message(s)",
	} {
		if !slices.Contains(lg, want) {
			t.Errorf("the LangGraph walk lacks %q:\n%s", want, strings.Join(lg, "\n"))
		}
	}
}

// engine.Diff compares two LangGraph checkpoints of different branches:
// the fork by update_state added a finding the main branch has not.
func TestDiffAcrossLangGraphBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python.db"))
	h := history(t, src, tMain)
	upd := latestWith(t, h, "made by update_state", func(l langgraph.Listing) bool { return l.Source == langgraph.SourceUpdate })
	sibling := latestWith(t, h, "beside the update", func(l langgraph.Listing) bool { return l.Parent == upd.Parent && l.ID != upd.ID })
	a, err := src.Checkpoint(ctx, tMain, sibling.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := src.Checkpoint(ctx, tMain, upd.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff := engine.Diff(engine.Values(a.State()), engine.Values(b.State()))
	byChannel := map[string]engine.ChannelDiff{}
	for _, d := range diff {
		byChannel[d.Channel] = d
	}
	f, ok := byChannel["findings"]
	if !ok || !slices.ContainsFunc(f.Lines, func(l string) bool { return strings.Contains(l, "forked-note") }) {
		t.Errorf("diff %+v, want findings + forked-note", diff)
	}
	// The fork went back to before the tool ran: its result is not there.
	m, ok := byChannel["messages"]
	if !ok || !strings.Contains(m.Summary, "−1 (tool-1)") || len(m.Lines) != 1 {
		t.Errorf("messages diff %+v, want the tool message (matched by id) only on the main branch", m)
	}
}
