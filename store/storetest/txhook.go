package storetest

import (
	"slices"
	"testing"

	"rewind/store"
)

// The transaction hook (capability TxHook): a call inside PutCheckpoint's
// transaction, after its rows are written and before it commits, where the
// mid-transaction kill point fires.

// txHooker is a store that can call back in the middle of PutCheckpoint's
// transaction (the crash drills' "mid-transaction" kill point).
type txHooker interface {
	SetTxHook(func(stage string))
}

func testTxHook(t *testing.T, s store.Store) {
	h, ok := s.(txHooker)
	if !ok {
		t.Fatalf("%T declares %s but has no SetTxHook", s, TxHook)
	}
	ctx := t.Context()
	var stages []string
	h.SetTxHook(func(stage string) { stages = append(stages, stage) })
	put(t, s, checkpoint("t", 1, 0), event("a", `{}`))
	if want := []string{"checkpoint-written"}; !slices.Equal(stages, want) {
		t.Fatalf("hook calls after a new checkpoint = %q, want %q", stages, want)
	}
	// Calls that write nothing do not reach the point.
	put(t, s, checkpoint("t", 1, 0), event("a", `{}`))
	e := fence(t, s, "t")
	for _, err := range []error{
		s.PutCheckpoint(ctx, checkpoint("t", 1, 0), nil),                 // conflict
		s.PutCheckpoint(ctx, checkpoint("t", 3, 2), nil),                 // missing parent
		s.PutCheckpoint(ctx, checkpoint("", 1, 0), nil),                  // invalid
		s.PutCheckpoint(ctx, withEpoch(checkpoint("t", 2, 1), e+1), nil), // epoch never handed out
	} {
		if err == nil {
			t.Fatal("a put that should fail succeeded")
		}
	}
	if len(stages) != 1 {
		t.Errorf("hook calls after puts that wrote nothing = %q, want only the first", stages)
	}
	put(t, s, withEpoch(checkpoint("t", 2, 1), e))
	if len(stages) != 2 {
		t.Errorf("hook calls = %q, want two after the second new checkpoint", stages)
	}
	h.SetTxHook(nil)
	put(t, s, checkpoint("t", 3, 2))
	if len(stages) != 2 {
		t.Errorf("hook called after it was removed: %q", stages)
	}
	if h, err := s.History(ctx, "t", 0, 0); err != nil || len(h) != 3 {
		t.Errorf("History = %v, %v; want 3 checkpoints", idsOf(h), err)
	}
}
