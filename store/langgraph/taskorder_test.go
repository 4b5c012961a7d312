package langgraph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"rewind/store/langgraph"
)

// TestTasksInLangGraphsOrderAndCallsNamed: on the functional-API thread of
// the generate-cases.mjs fixtures (an entrypoint "flow" calling the task
// "double" twice around an interrupt), the first checkpoint's writes are
// listed as LangGraph applies them (the resume command, then by task
// path: the entrypoint's pull, then its calls in the order it made
// them), not by task id (there the second call's id sorts first), and
// each call is named "double" from its id: the first returned the value
// LangGraph's state shows as a, the second b (LangGraph Python's flow
// then calls "describe", whose result is text).
func TestTasksInLangGraphsOrderAndCallsNamed(t *testing.T) {
	t.Parallel()
	for _, cs := range caseSources() {
		t.Run(cs.name, func(t *testing.T) {
			// The reads TestStateAsLangGraphShowsIt makes (readCase): they
			// hold the writes of every checkpoint LangGraph lists.
			src, answers := readCase(t, cs)
			want, ok := answers["t-func"]
			if !ok {
				t.Skipf("%s holds no t-func", cs.answers)
			}
			first := want.History[len(want.History)-1]
			if len(first.Tasks) != 1 || first.Tasks[0].Name != "flow" {
				t.Fatalf("the fixture's first checkpoint: tasks %+v, want the entrypoint flow", first.Tasks)
			}
			ws, err := src.Writes(context.Background(), langgraph.Chain{Thread: "t-func"}, first.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tw := range ws {
				switch {
				case tw.Command:
					got = append(got, "command")
				case tw.Node == "double" && len(tw.Writes) == 1:
					got = append(got, fmt.Sprintf("double→%v", tw.Writes[0].Value))
				case tw.Node == "describe" && len(tw.Writes) == 1:
					text, _ := json.Marshal(tw.Writes[0].Value)
					got = append(got, "describe→"+string(text))
				case tw.Task == first.Tasks[0].ID:
					got = append(got, tw.Node)
				default:
					got = append(got, fmt.Sprintf("%q %s", tw.Node, tw.Task))
				}
			}
			a, _ := json.Marshal(want.State.Values["a"])
			b, _ := json.Marshal(want.State.Values["b"])
			order := []string{"command", "flow", "double→" + string(a), "double→" + string(b)}
			if text, ok := want.State.Values["text"]; ok { // Python's flow calls describe(a, b) last
				j, _ := json.Marshal(text)
				order = append(order, "describe→"+string(j))
			}
			wantOrder := fmt.Sprint(order)
			if fmt.Sprint(got) != wantOrder {
				t.Errorf("tasks of %s:\n got %v\nwant %s", first.ID, got, wantOrder)
			}
		})
	}
}
