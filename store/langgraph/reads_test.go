package langgraph_test

import (
	"context"
	"reflect"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// TestACheckpointReadsItsWritesOnce: reading a checkpoint, or its writes,
// reads the checkpoint's writes in one query (their count, the Sends, the
// entrypoint's name and the writes themselves come from it), and what it
// reads equals what the uncounted source reads.
func TestACheckpointReadsItsWritesOnce(t *testing.T) {
	t.Parallel()
	src := open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python-cases.db"))
	checked := 0
	for _, thread := range []string{"t-parallel", "t-func", "t-update"} {
		c := langgraph.Chain{Thread: thread}
		hist, err := src.History(context.Background(), c, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range hist {
			if l.Counts.Writes > 0 {
				checkWritesReadOnce(t, src, c, l)
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no checkpoint with writes in the fixture")
	}
}

// checkWritesReadOnce reads l's checkpoint and writes counted and
// uncounted.
func checkWritesReadOnce(t *testing.T, src langgraph.Source, c langgraph.Chain, l langgraph.Listing) {
	t.Helper()
	ctx := context.Background()
	wantCP, err := src.Checkpoint(ctx, c, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantWS, err := src.Writes(ctx, c, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	counted, n := langgraph.Counted(src)
	cp, err := counted.Checkpoint(ctx, c, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n.Writes != 1 {
		t.Errorf("%s %s: Checkpoint read writes %d times, want once", c.Thread, l.ID, n.Writes)
	}
	if !reflect.DeepEqual(cp, wantCP) {
		t.Errorf("%s %s: read counted %+v, uncounted %+v", c.Thread, l.ID, cp, wantCP)
	}
	n.Writes = 0
	ws, err := counted.Writes(ctx, c, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n.Writes != 1 {
		t.Errorf("%s %s: Writes read writes %d times, want once", c.Thread, l.ID, n.Writes)
	}
	if len(ws) == 0 || !reflect.DeepEqual(ws, wantWS) {
		t.Errorf("%s %s: writes read counted %+v, uncounted %+v (want some: the listing counts %d)", c.Thread, l.ID, ws, wantWS, l.Counts.Writes)
	}
}
