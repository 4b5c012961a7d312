package browse

import (
	"reflect"
	"testing"
)

// Three Sends to one node read as one run; a triggered task of the same
// node, or the same node again later, starts a new one.
func TestGroupJoinsNeighbouringRuns(t *testing.T) {
	got := Group([]Task{{Node: "exec", Send: true}, {Node: "exec", Send: true}, {Node: "exec", Send: true},
		{Node: "exec"}, {Node: "review"}, {Node: "exec", Send: true}})
	want := []Due{{"exec", true, 3}, {"exec", false, 1}, {"review", false, 1}, {"exec", true, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Group = %v, want %v", got, want)
	}
	if Group(nil) != nil {
		t.Fatal("no tasks must group to nothing")
	}
}

// The words every reader shows for the tasks due (the CLI's NEXT column,
// the browser's timeline and inspector).
func TestDescribeNext(t *testing.T) {
	for _, c := range []struct {
		next []Task
		want string
	}{
		{nil, "—"},
		{[]Task{{Node: "planner"}}, "planner"},
		{[]Task{{Node: "worker", Send: true}, {Node: "worker", Send: true}, {Node: "worker", Send: true}, {Node: "review"}}, "worker (Send) ×3, review"},
	} {
		if got := DescribeNext(c.next); got != c.want {
			t.Errorf("DescribeNext(%v) = %q, want %q", c.next, got, c.want)
		}
	}
}
