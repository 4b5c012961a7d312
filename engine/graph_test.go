package engine

import (
	"context"
	"strings"
	"testing"
)

func TestTaskIDsAreDeterministic(t *testing.T) {
	t.Parallel()
	a := tasksFor("t", 3, 2, []Target{Send("executor", 1), Send("executor", 2), Goto("critic")})
	b := tasksFor("t", 3, 2, []Target{Send("executor", 1), Send("executor", 2), Goto("critic")})
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatalf("task %d: %s vs %s", i, a[i].ID, b[i].ID)
		}
	}
	if a[0].ID == a[1].ID {
		t.Fatal("two packets of one node got the same id")
	}
	if c := tasksFor("t", 4, 2, []Target{Send("executor", 1)}); c[0].ID == a[0].ID {
		t.Fatal("tasks of different checkpoints share an id")
	}
	if c := tasksFor("u", 3, 2, []Target{Send("executor", 1)}); c[0].ID == a[0].ID {
		t.Fatal("tasks of different threads share an id")
	}
}

func TestNextDedupesPlainTargetsButNotSends(t *testing.T) {
	t.Parallel()
	g := NewGraph("g", 1)
	noop := func(_ context.Context, _ *NodeContext) ([]Write, error) { return nil, nil }
	g.Node("a", noop).Node("b", noop).Node("c", noop).Entry("a").Edge("a", "c").Edge("b", "c").
		Route("a", func(Values) ([]Target, error) { return []Target{Send("b", 1), Send("b", 2)}, nil })
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	ts, err := g.next([]string{"a", "b", "b"}, Values{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, t := range ts {
		nodes = append(nodes, t.Node)
	}
	if got := strings.Join(nodes, ","); got != "c,b,b" {
		t.Fatalf("targets %s, want c,b,b", got)
	}
}

func TestValidateCatchesWiringMistakes(t *testing.T) {
	t.Parallel()
	noop := func(_ context.Context, _ *NodeContext) ([]Write, error) { return nil, nil }
	cases := map[string]*Graph{
		"no entry":         NewGraph("g", 1).Node("a", noop),
		"edge to nowhere":  NewGraph("g", 1).Node("a", noop).Entry("a").Edge("a", "zz"),
		"missing v1 to v2": NewGraph("g", 2).Node("a", noop).Entry("a"),
		"duplicate node":   NewGraph("g", 1).Node("a", noop).Node("a", noop).Entry("a"),
	}
	for name, g := range cases {
		if g.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
