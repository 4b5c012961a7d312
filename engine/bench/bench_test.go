package bench

import (
	"context"
	"testing"

	"rewind/store/memory"
)

// A long conversation stays small: what a turn stores does not grow with
// the thread (no channel may keep everything the thread ever did), and
// an inline value is stored once. Bytes, not time: this cannot be flaky.
func TestStorageStaysFlat(t *testing.T) {
	t.Parallel()
	st := memory.New()
	rep, err := Run(context.Background(), st, "memory:", Options{Turns: 160, Reads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The bytes a turn stores come from Size's running total: after 160
	// turns (puts, settled writes, heads replaced, compactions) it is
	// what the thread's rows count.
	if counted, err := st.CountSize(context.Background(), rep.Thread); err != nil || counted != rep.TotalBytes {
		t.Errorf("the thread's rows count %d bytes (%v), its running size says %d", counted, err, rep.TotalBytes)
	}
	_, early := rep.Medians(11, 30)
	_, late := rep.Medians(141, 160)
	t.Logf("a turn stores %.0f bytes at turns 11-30, %.0f at turns 141-160 (medians)", early, late)
	if late > 1.2*early {
		t.Errorf("a turn stores %.0f bytes at turns 141-160 but %.0f at turns 11-30: storage grows with the thread", late, early)
	}
	// Issue 9's target was 8 KB a turn (7.6 KB then). Since the models
	// read the conversation (issue 30) a turn stores about 8.7 KB: each
	// call's request hash and the plan's and verdicts' raw answers (about
	// 0.6 KB: what `show --calls` shows the model saw), and the executors'
	// tool rounds as calls of their own (0.2 KB). The facts ledger (every
	// pinned fact kept, appended at each compaction) adds 0.4 KB: 9.1-9.25
	// KB (durations stored in ms take more digits under -race), the same at
	// turns 981-1000. The bound moves with it, and stays one: a turn must
	// not grow.
	if early > 9.5*1024 {
		t.Errorf("a turn stores %.0f bytes: more than 9.5 KB", early)
	}

	// The models read the conversation: what a turn sends stays flat once
	// history is compacted and the facts ledger's part has reached what a
	// model is shown of it (ticket.FactsShown, about turn 45 here), and no
	// request nears the context window.
	earlyReq, _ := rep.Requests(61, 80)
	lateReq, _ := rep.Requests(141, 160)
	_, largest := rep.Requests(1, 160)
	t.Logf("a turn's requests carry %d tokens at turns 61-80, %d at 141-160; the largest request %d of a %d window", earlyReq, lateReq, largest, rep.Window)
	if float64(lateReq) > 1.2*float64(earlyReq) || largest > rep.Window*3/4 {
		t.Errorf("requests grow with the thread (%d → %d tokens a turn) or near the window (largest %d of %d)", earlyReq, lateReq, largest, rep.Window)
	}

	plain, err := Run(context.Background(), memory.New(), "memory:", Options{Turns: 10, Reads: 1, Thread: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const inline = 384 << 10
	with, err := Run(context.Background(), memory.New(), "memory:", Options{Turns: 10, Reads: 1, Thread: "t", InlineBytes: inline}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if extra := with.TotalBytes - plain.TotalBytes; float64(extra) > 1.1*inline {
		t.Errorf("a %d-byte inline value cost %d bytes over 10 turns: it must be stored once", inline, extra)
	}
}
