package selftest_test

import (
	"context"
	"encoding/json"
	"testing"

	"rewind/engine/selftest"
	"rewind/store"
	"rewind/store/memory"
)

func TestFiveChecksPassOnMemory(t *testing.T) {
	shared := memory.New()
	open := func(context.Context) (store.Store, error) { return noClose{shared}, nil }
	checks, err := selftest.Run(context.Background(), open)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 5 {
		t.Fatalf("%d checks, want 5", len(checks))
	}
	for _, c := range checks {
		if !c.Passed {
			b, _ := json.MarshalIndent(c, "", "  ")
			t.Errorf("check %d failed:\n%s", c.N, b)
		}
	}
	f := checks[1].Figures
	if f["pendingSubtasks"] != 3 || f["sentenceCopies"] != 1 || f["wrongWaySentenceCopies"] != 2 {
		t.Errorf("check 2 figures %v", f)
	}
	// Running it again on the same store gives the same answers.
	again, err := selftest.Run(context.Background(), open)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(checks)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("second selftest differs:\n%s\n%s", a, b)
	}
}

type noClose struct{ store.Store }

func (noClose) Close() error { return nil }
