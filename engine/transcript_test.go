package engine_test

import (
	"errors"
	"fmt"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// TestTranscriptIsMessageOfEachIndex: Transcript reads a range of a
// branch's original messages as Message reads each one, on a thread whose
// fork wrote other messages with the same indexes.
func TestTranscriptIsMessageOfEachIndex(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			const thread = "forked"
			var heads []int64
			for _, in := range []string{"where is my order SO20260901?", "thanks, and can I get a refund?", "and when does it arrive?"} {
				res, err := e.Run(ctx, thread, ticket.Input(in), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				heads = append(heads, res.Checkpoint)
			}
			// A fork after the first turn asks something else: its messages
			// from then on have the main branch's indexes.
			res, err := e.Fork(ctx, thread, heads[0], ticket.Input("cancel order SO20260901 please"), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			fork := res.Checkpoint
			last, err := st.MessagesIn(ctx, thread, 1, 1<<40)
			if err != nil || len(last) == 0 {
				t.Fatalf("MessagesIn: %d messages, %v", len(last), err)
			}
			top := last[len(last)-1].Index
			for _, at := range []int64{0, heads[0], heads[1], heads[2], fork} {
				for _, r := range [][2]int64{{1, top + 3}, {2, 5}, {top, top}, {5, 2}} {
					got, err := e.Transcript(ctx, thread, at, r[0], r[1])
					if err != nil {
						t.Fatalf("Transcript(@%d, #%d-#%d): %v", at, r[0], r[1], err)
					}
					var want []engine.StoredMessage
					for i := r[0]; i <= r[1]; i++ {
						m, err := e.Message(ctx, thread, at, i)
						if errors.Is(err, store.ErrNotFound) {
							continue
						}
						if err != nil {
							t.Fatalf("Message(@%d, #%d): %v", at, i, err)
						}
						want = append(want, m)
					}
					if fmt.Sprint(describe(got)) != fmt.Sprint(describe(want)) {
						t.Errorf("Transcript(@%d, #%d-#%d) =\n%v\nMessage of each index:\n%v", at, r[0], r[1], describe(got), describe(want))
					}
				}
			}
		})
	}
}

func describe(ms []engine.StoredMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("#%d@%d %s %s", m.Index, m.Checkpoint, m.CreatedAt.UTC().Format("15:04:05.000000"), m.Body))
	}
	return out
}

// TestTranscriptReadsAFewTimes: a transcript costs the same few store
// reads (the branch, then the messages at once) however long the thread.
func TestTranscriptReadsAFewTimes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	reads := map[int]map[string]int{}
	for _, turns := range []int{2, 6} {
		st := &counting{Store: memory.New()}
		e, err := ticket.NewEngine(st, ticket.NewMock())
		if err != nil {
			t.Fatal(err)
		}
		for n := range turns {
			if _, err := e.Run(ctx, "t", ticket.Input(fmt.Sprintf("where is my order SO2026%04d?", n)), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
		}
		st.took()
		got, err := e.Transcript(ctx, "t", 0, 1, 1000)
		if err != nil || len(got) < 10*turns {
			t.Fatalf("%d turns: Transcript gave %d messages, %v", turns, len(got), err)
		}
		reads[turns] = st.took()
	}
	if fmt.Sprint(reads[2]) != fmt.Sprint(reads[6]) || reads[6]["MessagesIn"] != 1 || reads[6]["MessagesAt"] != 0 {
		t.Errorf("a transcript of 2 turns read %v, of 6 turns %v: want the same few reads, the messages in one", reads[2], reads[6])
	}
}
