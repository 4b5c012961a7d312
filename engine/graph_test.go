package engine

import (
	"context"
	"fmt"
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

// A graph's declaration reads back as drawn: the entry, static edges, a
// router's declared targets (Sends as Sends), and a router that declared
// none as one link decided at run time.
func TestLinksReadTheDeclaration(t *testing.T) {
	t.Parallel()
	noop := func(_ context.Context, _ *NodeContext) ([]Write, error) { return nil, nil }
	pick := func(Values) ([]Target, error) { return nil, nil }
	g := NewGraph("g", 1).Node("a", noop).Node("b", noop).Node("c", noop).Entry("a").
		Route("a", pick, Send("b", nil), Goto("c")).Edge("b", "c").Route("c", pick)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range g.Links() {
		got = append(got, fmt.Sprintf("%s>%s routed=%v send=%v", l.From, l.To, l.Routed, l.Send))
	}
	want := []string{">a routed=false send=false", "a>b routed=true send=true", "a>c routed=true send=false", "b>c routed=false send=false", "c> routed=true send=false"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("links:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A router that picks a target its Route did not declare fails the route
// (the drawing would lie otherwise), naming what it declared; a declared
// target that is no node fails Validate.
func TestARouteKeepsToItsDeclaredTargets(t *testing.T) {
	t.Parallel()
	noop := func(_ context.Context, _ *NodeContext) ([]Write, error) { return nil, nil }
	picks := []Target{Goto("b")}
	g := NewGraph("g", 1).Node("a", noop).Node("b", noop).Node("c", noop).Entry("a").
		Route("a", func(Values) ([]Target, error) { return picks, nil }, Goto("b"), Goto(End))
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.next([]string{"a"}, Values{}); err != nil {
		t.Fatalf("a declared pick: %v", err)
	}
	// The error names the declaration to add, as Go (a Send declared as
	// a Goto is the easy mistake).
	for p, fix := range map[string]string{"c": `add engine.Goto("c")`, "send b": `add engine.Send("b", nil)`} {
		picks = []Target{Goto(p)}
		if p == "send b" {
			picks = []Target{Send("b", 1)}
		}
		_, err := g.next([]string{"a"}, Values{})
		if err == nil || !strings.Contains(err.Error(), "route after a picked") || !strings.Contains(err.Error(), "[b __end__]") || !strings.Contains(err.Error(), fix) {
			t.Errorf("pick %v: %v, want the route to fail naming b and __end__ and %s", p, err, fix)
		}
	}
	bad := NewGraph("g", 1).Node("a", noop).Entry("a").Route("a", func(Values) ([]Target, error) { return nil, nil }, Goto("zz"))
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `declares unknown node "zz"`) {
		t.Fatalf("a route declaring an unknown node: %v", err)
	}
}
