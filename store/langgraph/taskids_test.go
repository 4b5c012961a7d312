package langgraph_test

import (
	"context"
	"os"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// LangGraph.js's task ids name their tasks: on every checkpoint of the
// JS fixtures (SqliteSaver and PostgresSaver, which store no task_path),
// each task the writes name is found by its id alone, the node its
// writes and the due tasks say (pull tasks, the fan-out's Sends, the
// input's __start__, the resumed subgraph node).
func TestTaskIDsNameTheirTasks(t *testing.T) {
	ctx := context.Background()
	specs := map[string]string{"js sqlite": "sqlite:" + lgtest.Copy(t, "sqlite-js.db")}
	if os.Getenv("REWIND_TEST_POSTGRES") != "" || os.Getenv("CI") != "" {
		specs["js postgres"] = lgtest.Dump(t, "postgres-js.sql")
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			src := open(t, spec)
			ts, err := src.Threads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			named := 0
			for _, th := range ts {
				for _, ns := range th.Namespaces {
					c := langgraph.Chain{Thread: th.ID, NS: ns.NS}
					for _, l := range history(t, src, c) {
						ws, err := src.Writes(ctx, c, l.ID)
						if err != nil {
							t.Fatal(err)
						}
						byID, err := langgraph.TaskNames(ctx, src, c, l.ID)
						if err != nil {
							t.Fatal(err)
						}
						for _, tw := range ws {
							if tw.Command {
								continue
							}
							if got := byID[tw.Task]; got == "" || got != tw.Node {
								t.Errorf("%s @%s: task %s named %q by its id, its writes say %q", c, l.ID, tw.Task, got, tw.Node)
							} else {
								named++
							}
						}
					}
				}
			}
			if named < 15 {
				t.Errorf("only %d tasks named", named)
			}
			t.Logf("%d tasks named by their ids", named)
		})
	}
}
