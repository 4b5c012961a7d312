package langgraph_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// TestDeltaChannelSaysWhatItWasRebuiltFrom: at every checkpoint of the
// DeltaChannel conversation, what was stored is one key away from the
// state LangGraph shows: the snapshot as stored where one is held, else
// the ancestor whose snapshot the rebuild started from and how many of the
// writes stored since it applied, counted here from Writes along the
// parents (TestCLIReadsPostgresAsItsSQLiteTwin: in `rewind show`'s words).
func TestDeltaChannelSaysWhatItWasRebuiltFrom(t *testing.T) {
	t.Parallel()
	for _, cs := range caseSources() {
		if !cs.delta {
			continue
		}
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			src, _ := readCase(t, cs)
			h := readDeltaThread(t, src, langgraph.Chain{Thread: "t-delta"})
			snapshots, rebuilt := 0, 0
			for _, l := range h.hist {
				st := h.stored[l.ID]
				if st.Held {
					snapshots++
					continue
				}
				from, n := h.seed(l.Parent)
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

// deltaThread is what a chain stores of its DeltaChannel messages, by
// checkpoint.
type deltaThread struct {
	hist   []langgraph.Listing
	parent map[string]string
	stored map[string]browse.StoredChannel
	writes map[string]int // messages writes stored under each checkpoint
}

func readDeltaThread(t *testing.T, src caseReads, c langgraph.Chain) deltaThread {
	t.Helper()
	ctx := context.Background()
	hist, err := src.History(ctx, c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	h := deltaThread{hist: hist, parent: map[string]string{}, stored: map[string]browse.StoredChannel{}, writes: map[string]int{}}
	for _, l := range hist {
		h.parent[l.ID] = l.Parent
		cp, err := src.Checkpoint(ctx, c, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Stored == nil || len(cp.Stored.Channels) != 1 || cp.Stored.Channels[0].Name != "messages" || !cp.Stored.Channels[0].Delta {
			t.Fatalf("%s: stored %+v, want messages, a DeltaChannel", l.ID, cp.Stored)
		}
		st := cp.Stored.Channels[0]
		// As stored: LangGraph.js's JSON {"lc": 2, "type": "delta_snapshot"},
		// LangGraph Python's msgpack ext 7 (_DeltaSnapshot).
		if v, _ := st.Value.(map[string]any); st.Held && v["type"] != "delta_snapshot" && v["$type"] != "langgraph.checkpoint.serde.types._DeltaSnapshot" {
			t.Errorf("%s: holds %v, want the snapshot as stored", l.ID, st.Value)
		}
		h.stored[l.ID] = st
		ws, err := src.Writes(ctx, c, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tw := range ws {
			for _, w := range tw.Writes {
				if w.Channel == "messages" {
					h.writes[l.ID]++
				}
			}
		}
	}
	return h
}

// seed walks from id up the parents to the nearest checkpoint holding a
// snapshot ("" for none), counting the messages writes on the way.
func (h deltaThread) seed(id string) (from string, n int) {
	for ; id != ""; id = h.parent[id] {
		n += h.writes[id]
		if h.stored[id].Held {
			return id, n
		}
	}
	return "", n
}

// TestDeltaCountersThatLieCostReadsNotValues: a rebuild sizes its first
// read of the ancestors by the steps the checkpoint's metadata counts since
// the snapshot; where the count is short (here every checkpoint says one
// step), the walk reads on and rebuilds the same value from the same
// snapshot as on the file with the true counts.
func TestDeltaCountersThatLieCostReadsNotValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := langgraph.Chain{Thread: "t-delta"}
	truth := open(t, "sqlite:"+lgtest.Copy(t, "sqlite-js-cases.db"))
	path := lgtest.Copy(t, "sqlite-js-cases.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE checkpoints
		SET metadata = CAST(json_set(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot.messages', json('[1,1]')) AS BLOB)
		WHERE thread_id = 't-delta' AND json_extract(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot.messages') IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n < 200 {
		t.Fatalf("%d checkpoints' counters rewritten, want the 200 and more that count", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	lying := open(t, "sqlite:"+path)
	hist, err := truth.History(ctx, c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	walked := 0
	for i := range hist {
		l := hist[len(hist)-1-i] // oldest first
		if i%50 != 49 && i != len(hist)-1 {
			continue
		}
		want, err := truth.Checkpoint(ctx, c, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := lying.Checkpoint(ctx, c, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want.Stored == nil || got.Stored == nil || !reflect.DeepEqual(got.Stored.Channels, want.Stored.Channels) {
			t.Errorf("%s (step %d): stored %+v, with true counts %+v", l.ID, l.Step, got.Stored, want.Stored)
			continue
		}
		if !reflect.DeepEqual(got.Channels, want.Channels) {
			t.Errorf("%s (step %d): state differs from the one rebuilt with true counts", l.ID, l.Step)
		}
		if want.Stored.Channels[0].Replayed > 5 {
			walked++
		}
	}
	if walked < 3 {
		t.Errorf("%d checkpoints rebuilt from more than 5 writes back: the test reads none past the first page", walked)
	}
}

// TestDeltaWalkReadsEachAncestorOnceLean: the rebuild of a checkpoint far
// past its snapshot reads the ancestors on the way once each, without
// their metadata and without the chain's parent links: with them the
// checkpoint and the snapshot's are the rows read whole (of the newest,
// asked whether it is the current one, only the id is read). The state
// read so equals the one read uncounted.
func TestDeltaWalkReadsEachAncestorOnceLean(t *testing.T) {
	t.Parallel()
	for _, cs := range caseSources() {
		if !cs.delta {
			continue
		}
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			c := langgraph.Chain{Thread: "t-delta"}
			// Picked from readCase's reads (the same fixture, read
			// uncounted once for every test), then read counted on a copy
			// of its own.
			reads, _ := readCase(t, cs)
			far := farthestRebuilt(t, reads, c)
			src := cs.open(t)
			counted, n := langgraph.Counted(src)
			got, err := counted.Checkpoint(context.Background(), c, far.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Channels, far.Channels) || !reflect.DeepEqual(got.Stored, far.Stored) {
				t.Errorf("%s: read counted, state %+v, stored %+v; uncounted %+v, %+v", far.ID, got.Channels, got.Stored, far.Channels, far.Stored)
			}
			checkLeanWalk(t, far, n)
		})
	}
}

// farthestRebuilt is, of every 7th checkpoint of c (reading each costs
// a walk), the one whose delta channel replays the most writes.
func farthestRebuilt(t *testing.T, src reads, c langgraph.Chain) langgraph.Checkpoint {
	t.Helper()
	ctx := context.Background()
	hist, err := src.History(ctx, c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var far langgraph.Checkpoint
	for i := 0; i < len(hist); i += 7 {
		cp, err := src.Checkpoint(ctx, c, hist[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if st := cp.Stored.Channels[0]; st.RebuiltFrom != "" && (far.Stored == nil || st.Replayed > far.Stored.Channels[0].Replayed) {
			far = cp
		}
	}
	if far.Stored == nil || far.Stored.Channels[0].Replayed < 50 {
		t.Fatalf("no checkpoint rebuilt from 50 writes or more: %+v", far.Stored)
	}
	return far
}

// checkLeanWalk checks what reading far read.
func checkLeanWalk(t *testing.T, far langgraph.Checkpoint, n *langgraph.Reads) {
	t.Helper()
	if n.WithMeta > 2 || n.Parents > 0 {
		t.Errorf("%s: %d rows read with their metadata, the parent links read %d times; want at most 2 (itself, the snapshot's: the newest is asked its id alone) and none", far.ID, n.WithMeta, n.Parents)
	}
	if len(n.Lean) < far.Stored.Channels[0].Replayed/2 {
		t.Errorf("%s: %d ancestors read lean, want the %d or so on the way to the snapshot", far.ID, len(n.Lean), far.Stored.Channels[0].Replayed)
	}
	for id, k := range n.Lean {
		if k > 1 {
			t.Errorf("%s: ancestor %s read %d times", far.ID, id, k)
		}
	}
}
