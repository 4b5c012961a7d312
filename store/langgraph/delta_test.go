package langgraph_test

import (
	"context"
	"testing"

	"rewind/store/browse"
	"rewind/store/langgraph"
)

// TestDeltaChannelSaysWhatItWasRebuiltFrom: at every checkpoint of the
// DeltaChannel conversation, what was stored is one key away from the
// state LangGraph shows: the snapshot as stored where one is held, else
// the ancestor whose snapshot the rebuild started from and how many of the
// writes stored since it applied, counted here from Writes along the
// parents (TestCLIReadsPostgresAsItsSQLiteTwin: in `rewind show`'s words).
func TestDeltaChannelSaysWhatItWasRebuiltFrom(t *testing.T) {
	ctx := context.Background()
	c := langgraph.Chain{Thread: "t-delta"}
	for _, cs := range caseSources() {
		t.Run(cs.name, func(t *testing.T) {
			src := cs.open(t)
			hist, err := src.History(ctx, c, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			parent := map[string]string{}
			for _, l := range hist {
				parent[l.ID] = l.Parent
			}
			held := map[string]bool{}
			writes := map[string]int{} // messages writes stored under each checkpoint
			stored := map[string]browse.StoredChannel{}
			for _, l := range hist {
				cp, err := src.Checkpoint(ctx, c, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				if cp.Stored == nil || len(cp.Stored.Channels) != 1 || cp.Stored.Channels[0].Name != "messages" || !cp.Stored.Channels[0].Delta {
					t.Fatalf("%s: stored %+v, want messages, a DeltaChannel", l.ID, cp.Stored)
				}
				st := cp.Stored.Channels[0]
				stored[l.ID], held[l.ID] = st, st.Held
				if v, _ := st.Value.(map[string]any); st.Held && v["type"] != "delta_snapshot" {
					t.Errorf("%s: holds %v, want the snapshot as stored", l.ID, st.Value)
				}
				ws, err := src.Writes(ctx, c, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, tw := range ws {
					for _, w := range tw.Writes {
						if w.Channel == "messages" {
							writes[l.ID]++
						}
					}
				}
			}
			snapshots, rebuilt := 0, 0
			for _, l := range hist {
				st := stored[l.ID]
				if st.Held {
					snapshots++
					continue
				}
				from, n := "", 0
				for id := l.Parent; id != ""; id = parent[id] {
					n += writes[id]
					if held[id] {
						from = id
						break
					}
				}
				if st.RebuiltFrom != from || st.Replayed != n {
					t.Errorf("%s (step %d): rebuilt from %q with %d writes, want %q with %d", l.ID, l.Step, st.RebuiltFrom, st.Replayed, from, n)
				}
				if from != "" {
					rebuilt++
				}
			}
			if snapshots != 2 || rebuilt < 100 {
				t.Errorf("%d snapshots, %d checkpoints rebuilt from one: want 2 snapshots (every 100 updates of 230) and the checkpoints after them", snapshots, rebuilt)
			}
		})
	}
}
