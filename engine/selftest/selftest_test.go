package selftest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"rewind/engine/selftest"
	"rewind/store"
	"rewind/store/memory"
	"rewind/store/sqlite"
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

// Two selftests on one store would clear each other's threads mid-check
// (they have fixed names): while one runs, another is refused in one line
// naming who runs it, and what the first stored is untouched.
func TestASecondSelftestOnTheStoreIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	open := func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) }
	ctx := t.Context()
	if _, err := selftest.Run(ctx, open); err != nil {
		t.Fatal(err)
	}
	first, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	before, err := first.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first run, as far as the store can tell: its lock is held.
	release, err := first.Lock(ctx, selftest.ThreadLock)
	if err != nil {
		t.Fatal(err)
	}
	_, err = selftest.Run(ctx, open)
	if !errors.Is(err, selftest.ErrRunning) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("a second selftest while one runs: %v; want ErrRunning in one line naming pid %d", err, os.Getpid())
	}
	after, err := first.Threads(ctx)
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Fatalf("the refused selftest changed the store: %+v → %+v (%v)", before, after, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if _, err := selftest.Run(ctx, open); err != nil {
		t.Fatalf("once the first ended: %v", err)
	}
}
