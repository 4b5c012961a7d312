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
