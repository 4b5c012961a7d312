package langgraph_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"rewind/store/langgraph"
)

func send(node string, arg any) ext {
	return ext{Code: 1, Payload: []any{"langgraph.types", "Send", []any{node, arg}}}
}

// Checkpoints of LangGraph before format 4 kept their Sends beside the
// channels (pending_sends) or, from format 2, in their parent's writes to
// __pregel_tasks; their metadata named the writing nodes ("writes"); their
// graphs triggered nodes through start:NODE and branch:SRC:COND:NODE.
func TestOlderCheckpointFormats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newLGFile(t)
	c := langgraph.Chain{Thread: "old"}
	f.checkpoint("old", "", id(1), "", "msgpack", mp(t, map[string]any{
		"v": 1, "ts": "2024-05-01T10:00:00+00:00", "pending_sends": []any{},
		"channel_values":   map[string]any{"__start__": map[string]any{"topic": "x"}},
		"channel_versions": map[string]any{"__start__": 1},
		"versions_seen":    map[string]any{},
	}), []byte(`{"source": "input", "step": -1, "writes": {"__start__": {"topic": "x"}}}`))
	f.checkpoint("old", "", id(2), id(1), "msgpack", mp(t, map[string]any{
		"v": 1, "ts": "2024-05-01T10:00:01+00:00", "pending_sends": []any{},
		"channel_values":   map[string]any{"topic": "x", "start:agent": "__start__"},
		"channel_versions": map[string]any{"__start__": 2, "topic": 2, "start:agent": 2},
		"versions_seen":    map[string]any{"__start__": map[string]any{"__start__": 1}},
	}), []byte(`{"source": "loop", "step": 0, "writes": null}`))
	f.checkpoint("old", "", id(3), id(2), "msgpack", mp(t, map[string]any{
		"v": 1, "ts": "2024-05-01T10:00:02+00:00",
		"pending_sends":    []any{send("worker", map[string]any{"part": 0}), send("worker", map[string]any{"part": 1})},
		"channel_values":   map[string]any{"topic": "y", "branch:agent:route:review": "agent"},
		"channel_versions": map[string]any{"__start__": 2, "topic": 3, "start:agent": 3, "branch:agent:route:review": 3},
		"versions_seen":    map[string]any{"__start__": map[string]any{"__start__": 1}, "agent": map[string]any{"start:agent": 2}},
	}), []byte(`{"source": "loop", "step": 1, "writes": {"agent": {"topic": "y"}}}`))
	// The review node queued a Send as a write to __pregel_tasks; the
	// format-3 checkpoint after it does not hold it.
	f.write("old", "", id(3), "task-r", 0, "__pregel_tasks", "msgpack", mp(t, send("notify", "done")))
	f.checkpoint("old", "", id(4), id(3), "json", []byte(`{"v": 3, "ts": "2024-05-01T10:00:03.5Z", "id": "x",
		"channel_values": {"topic": "y", "join:a+b:merge": ["a"]}, "channel_versions": {"topic": 3, "join:a+b:merge": 4},
		"versions_seen": {}}`), []byte(`{"source": "loop", "step": 2, "writes": {"review": null, "worker": [{"x": 1}]}}`))

	want := map[string]struct {
		next      []langgraph.Task
		writtenBy []string
	}{
		id(1): {[]langgraph.Task{{Node: "__start__"}}, []string{"__start__"}},
		id(2): {[]langgraph.Task{{Node: "agent"}}, nil},
		id(3): {[]langgraph.Task{{Node: "review"}, {Node: "worker", Send: true}, {Node: "worker", Send: true}}, []string{"agent"}},
		// join:a+b:merge waits for b
		id(4): {[]langgraph.Task{{Node: "notify", Send: true}}, []string{"review", "worker"}},
	}
	src := open(t, "sqlite:"+f.path)
	h := history(t, src, c)
	page, err := src.History(ctx, c, "", 1) // the parent's writes lie outside the page
	if err != nil {
		t.Fatal(err)
	}
	h = append(page, h[1:]...)
	for _, l := range h {
		w := want[l.ID]
		if !reflect.DeepEqual(l.Next, w.next) || !slices.Equal(l.WrittenBy, w.writtenBy) || l.Damaged != "" {
			t.Errorf("%s: next %+v written by %v (%q), want %+v by %v", l.ID, l.Next, l.WrittenBy, l.Damaged, w.next, w.writtenBy)
		}
	}
	if got := h[0].CreatedAt.Format("15:04:05.0"); got != "10:00:03.5" {
		t.Errorf("created at %s, want the checkpoint's ts", got)
	}
	cp, err := src.Checkpoint(ctx, c, id(4))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Format != 3 || len(cp.Next) != 1 || cp.Next[0].Arg != "done" {
		t.Errorf("format %d, next %+v: want format 3 and the Send from the parent's writes, with its argument", cp.Format, cp.Next)
	}
	cp, err = src.Checkpoint(ctx, c, id(3))
	if err != nil {
		t.Fatal(err)
	}
	if arg, _ := cp.Next[2].Arg.(map[string]any); arg["part"] != int64(1) {
		t.Errorf("the second pending Send is %+v", cp.Next[2])
	}
}

// Subgraphs inside subgraphs, and a subgraph of a LangGraph that did not
// record its parent checkpoint in the metadata.
func TestNamespaces(t *testing.T) {
	t.Parallel()
	f := newLGFile(t)
	empty := func(id string) []byte { return cp4(t, id, map[string]any{}, map[string]any{}, map[string]any{}) }
	f.checkpoint("nest", "", id(1), "", "msgpack", empty(id(1)), meta("input", -1))
	f.checkpoint("nest", "", id(2), id(1), "msgpack", empty(id(2)), meta("loop", 0))
	f.checkpoint("nest", "outer:T1", id(3), "", "msgpack", empty(id(3)), []byte(`{"source": "input", "step": -1, "parents": {"": "`+id(2)+`"}}`))
	f.checkpoint("nest", "outer:T1|inner:T2", id(4), "", "msgpack", empty(id(4)), []byte(`{"source": "input", "step": -1, "parents": {"": "`+id(2)+`", "outer:T1": "`+id(3)+`"}}`))
	f.checkpoint("nest", "legacy:T3", id(5), "", "msgpack", empty(id(5)), meta("input", -1))
	f.write("nest", "", id(1), "T3", 0, "x", "null", nil) // where the legacy subgraph's task ran
	src := open(t, "sqlite:"+f.path)
	ts, err := src.Threads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Checkpoints != 5 || ts[0].Latest != id(2) {
		t.Fatalf("threads %+v", ts)
	}
	var got []langgraph.Namespace
	for _, n := range ts[0].Namespaces {
		n.UpdatedAt, n.Latest = n.UpdatedAt.UTC().Truncate(0), ""
		got = append(got, n)
	}
	want := []langgraph.Namespace{
		{NS: "", Checkpoints: 2},
		{NS: "legacy:T3", Node: "legacy", Task: "T3", ParentCheckpoint: id(1), Checkpoints: 1},
		{NS: "outer:T1", Node: "outer", Task: "T1", ParentCheckpoint: id(2), Checkpoints: 1},
		{NS: "outer:T1|inner:T2", Node: "inner", Task: "T2", Parent: "outer:T1", ParentCheckpoint: id(3), Checkpoints: 1},
	}
	for i := range want {
		want[i].UpdatedAt = got[i].UpdatedAt
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("namespaces\n got %+v\nwant %+v", got, want)
	}
}
