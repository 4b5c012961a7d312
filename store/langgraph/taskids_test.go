package langgraph_test

import (
	"context"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// LangGraph.js's task ids name their tasks: on every checkpoint of the
// JS fixtures (SqliteSaver and PostgresSaver, which store no task_path),
// each task the writes name is found by its id alone, the node its
// writes and the due tasks say (pull tasks, the fan-out's Sends, the
// input's __start__, the resumed subgraph node).
func TestTaskIDsNameTheirTasks(t *testing.T) {
	t.Parallel()
	specs := map[string]string{"js sqlite": "sqlite:" + lgtest.Copy(t, "sqlite-js.db")}
	if pgtest.Available(t) {
		specs["js postgres"] = lgtest.Dump(t, "postgres-js.sql")
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			named := 0
			eachTask(t, open(t, spec), func(c langgraph.Chain, at string, tw langgraph.TaskWrites, got string) {
				if got == "" || got != tw.Node {
					t.Errorf("%s @%s: task %s named %q by its id, its writes say %q", c, at, tw.Task, got, tw.Node)
				} else {
					named++
				}
			})
			if named < 15 {
				t.Errorf("only %d tasks named", named)
			}
			t.Logf("%d tasks named by their ids", named)
		})
	}
}

// Python's task ids (XXH3-128 since checkpoint format 2, SHA-1 before)
// name their tasks: on Python's PostgresSaver fixture, which stores each
// write's task_path, the node found from a task's id alone is the node
// its path names, for every task the path names; and on Python's
// SqliteSaver, which stores no path, every task is named, or known as
// the state update (update_state as_node=…) the fixtures make.
func TestPythonTaskIDsNameTheirTasks(t *testing.T) {
	t.Parallel()
	specs := map[string]string{"python sqlite": "sqlite:" + lgtest.Copy(t, "sqlite-python.db")}
	if pgtest.Available(t) {
		specs["python postgres"] = lgtest.Dump(t, "postgres-python.sql")
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			byPath, unnamed, updates := 0, 0, 0
			eachTask(t, open(t, spec), func(c langgraph.Chain, at string, tw langgraph.TaskWrites, got string) {
				switch {
				case tw.Update:
					updates++
					if tw.Node != "" || got != "" {
						t.Errorf("%s @%s: state update %s named %q/%q", c, at, tw.Task, tw.Node, got)
					}
				case got == "":
					unnamed++
					t.Errorf("%s @%s: task %s (%s) not named by its id", c, at, tw.Task, tw.Node)
				case tw.Path != "" && got != tw.Node:
					t.Errorf("%s @%s: task %s named %q by its id, its path %q says %q", c, at, tw.Task, got, tw.Path, tw.Node)
				case tw.Path != "":
					byPath++
				}
			})
			if name == "python postgres" && byPath < 15 {
				t.Errorf("only %d tasks checked against their paths", byPath)
			}
			if updates != 1 {
				t.Errorf("%d state updates found, want the fixture's 1 (update_state on t-main)", updates)
			}
			t.Logf("%d tasks named by their ids agree with their paths, %d unnamed, %d state updates", byPath, unnamed, updates)
		})
	}
}

// eachTask calls f with every task's writes (the run's command left out)
// on every checkpoint of every chain of src, and the node its id names.
func eachTask(t *testing.T, src langgraph.Source, f func(c langgraph.Chain, at string, tw langgraph.TaskWrites, byID string)) {
	t.Helper()
	ctx := context.Background()
	ts, err := src.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
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
					if !tw.Command {
						f(c, l.ID, tw, byID[tw.Task])
					}
				}
			}
		}
	}
}
