package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// Editing the customer's message at the input checkpoint makes a new
// branch whose resume plans from the edited words; the original branch
// stays. A value the channel or the graph cannot take stores nothing.
func TestEditStateThenResumeTheEditedBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			first, err := e.Run(ctx, "ed", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			at1, err := e.Get(ctx, "ed", 1)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ticket.Decode(at1.Values, "messages")
			if err != nil {
				t.Fatal(err)
			}
			s.Messages[0].Content = "Please send me the invoice for SO20260902."
			edited, _ := json.Marshal(s.Messages)
			cp, err := e.EditState(ctx, "ed", 1, "messages", edited, engine.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cp.ParentID != 1 || cp.Source != engine.SourceUpdate || len(cp.Tasks) != 1 || cp.Tasks[0].Node != ticket.NodePlanner {
				t.Fatalf("edited checkpoint %+v: want an update child of @1 with the planner still due", cp)
			}
			res, err := e.ResumeAt(ctx, "ed", cp.ID, engine.RunConfig{})
			if err != nil || res.Status != engine.RunDone {
				t.Fatalf("resume the edited branch: %v %+v", err, res)
			}
			end, err := e.Get(ctx, "ed", res.Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			es, _ := ticket.Decode(end.Values, "subtasks")
			if len(es.Subtasks) != 1 || es.Subtasks[0].Topic != "invoice" || !strings.Contains(es.Subtasks[0].Goal, "SO20260902") {
				t.Fatalf("the edited branch planned %+v, want the invoice of SO20260902", es.Subtasks)
			}
			orig, err := e.Get(ctx, "ed", first.Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			os, _ := ticket.Decode(orig.Values, "subtasks")
			for _, st := range os.Subtasks {
				if st.Topic == "invoice" {
					t.Fatalf("the original branch changed: %+v", os.Subtasks)
				}
			}
			before, _ := e.History(ctx, "ed", 0, 0)
			for _, bad := range []struct{ channel, value string }{
				{"messages", `"oops"`},
				{"subtasks", `[{"id": 5}]`},
				{"nosuch", `1`},
				{"messages", `not json`},
				// Issue 32, item 3: past MaxEditValue, however well formed.
				{"messages", `[{"role": "user", "speaker": "user", "content": "` + strings.Repeat("x", engine.MaxEditValue) + `"}]`},
			} {
				if _, err := e.EditState(ctx, "ed", 1, bad.channel, json.RawMessage(bad.value), engine.UpdateOptions{}); !errors.Is(err, engine.ErrBadEdit) {
					t.Errorf("edit %s = %s: %v, want ErrBadEdit", bad.channel, bad.value, err)
				}
			}
			if after, _ := e.History(ctx, "ed", 0, 0); len(after) != len(before) {
				t.Fatalf("a refused edit stored %d checkpoints", len(after)-len(before))
			}
			// A counter is set, not added to.
			cp2, err := e.EditState(ctx, "ed", first.Checkpoint, "reviewRounds", json.RawMessage(`7`), engine.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := ticket.Decode(cp2.Values, "reviewRounds"); got.ReviewRounds != 7 {
				t.Fatalf("reviewRounds after setting 7: %d", got.ReviewRounds)
			}
		})
	}
}
