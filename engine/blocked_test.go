package engine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"rewind/engine/model"
	"rewind/store/memory"
)

// A node that blocks a side effect records it: the run goes on, its Result
// lists the operation, BlockedErr is a *BlockedError, and the event is
// stored with the checkpoint. A resume that reuses the blocking task's
// stored writes reports it too, since that resume commits it, with the
// fixes the node named (stored with its event, as data).
func TestBlockedSideEffectIsReported(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][2]int64{} // node → checkpoint, epoch it saw
	failOther := true
	node := func(name string) NodeFunc {
		return func(ctx context.Context, nc *NodeContext) ([]Write, error) {
			mu.Lock()
			seen[name] = [2]int64{nc.Checkpoint, nc.Epoch}
			fail := name == "other" && failOther
			mu.Unlock()
			if fail {
				return nil, errors.New("injected")
			}
			if name == "write" {
				nc.Block("op-1", "authorization expired", FixFreshGrant, FixShow)
			}
			return []Write{Put("log", []map[string]any{{"by": name}})}, nil
		}
	}
	g := NewGraph("blocked-test", 1).
		Channel("log", IndexedAppend("index"), []any{}).
		Node("start", node("start")).Node("write", node("write")).Node("other", node("other")).
		Entry("start").Edge("start", "write").Edge("start", "other").Edge("write", End).Edge("other", End)
	st := memory.New()
	e, err := New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	res, err := e.Run(ctx, "b", []Write{Put("log", []map[string]any{{"by": "input"}})}, RunConfig{})
	if err == nil || len(res.Blocked) != 0 {
		t.Fatalf("first run: %v, blocked %v; want the injected failure and nothing committed as blocked", err, res.Blocked)
	}
	if seen["write"][0] != 2 || seen["write"][1] != 1 {
		t.Fatalf("write saw checkpoint %d epoch %d, want 2 and 1", seen["write"][0], seen["write"][1])
	}
	mu.Lock()
	failOther = false
	mu.Unlock()
	res, err = e.Resume(ctx, "b", RunConfig{})
	if err != nil || res.Status != "done" {
		t.Fatalf("resume: %v %s", err, res.Status)
	}
	if len(res.Steps) != 1 || len(res.Steps[0].Reused) != 1 || res.Steps[0].Reused[0].Node != "write" {
		t.Fatalf("resume steps %+v: want the write task's stored writes reused", res.Steps)
	}
	if seen["other"][1] != 2 {
		t.Fatalf("the resumed task saw epoch %d, want 2 (a new writer)", seen["other"][1])
	}
	fixes := []Fix{{Action: FixFreshGrant, Thread: "b"}, {Action: FixShow, Thread: "b"}}
	want := Blocked{Operation: "op-1", Node: "write", Task: res.Steps[0].Reused[0].ID, Checkpoint: 3, Reason: "authorization expired", Fix: fixes}
	if len(res.Blocked) != 1 || !reflect.DeepEqual(res.Blocked[0], want) {
		t.Fatalf("blocked %+v, want %+v", res.Blocked, want)
	}
	var be *BlockedError
	berr := res.BlockedErr()
	if !errors.As(berr, &be) || !errors.Is(berr, ErrBlocked) || be.Thread != "b" || len(be.Blocked) != 1 {
		t.Fatalf("BlockedErr = %v", berr)
	}
	if msg := berr.Error(); !strings.Contains(msg, `thread "b": write did not perform operation op-1 (recorded at @3): authorization expired`) {
		t.Fatalf("BlockedErr says %q", msg)
	}
	if got := be.Fixes(); !reflect.DeepEqual(got, fixes) {
		t.Fatalf("BlockedErr's fixes %+v, want %+v", got, fixes)
	}
	evs, err := e.Events(ctx, "b", 3)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		found = found || ev.Type == EventBlocked && ev.Node == "write" && strings.Contains(string(ev.Data), `"op-1"`)
	}
	if !found {
		t.Fatalf("no stored %s event at @3: %+v", EventBlocked, evs)
	}
	if (Result{}).BlockedErr() != nil {
		t.Fatal("a result without blocked operations has a BlockedErr")
	}
}
