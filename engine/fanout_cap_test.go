package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"rewind/engine/model"
	"rewind/store/memory"
)

// Issue 32, item 3: a route fans out to at most the graph's cap of Sends
// in one superstep (DefaultMaxSends unless set); past it the route fails
// naming the node, the count and the cap, and no task of it is stored.
// Before, a list edited to 10,000 items started 10,000 tasks at once.
func TestFanOutIsCapped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		cap, n    int
		wantError string
	}{
		{"the default cap holds", 0, DefaultMaxSends, ""},
		{"one past the default", 0, DefaultMaxSends + 1, "route after split: too many Sends in one superstep: 257 Sends to work, over the cap of 256 tasks at once"},
		{"a graph's own cap", 3, 4, "route after split: too many Sends in one superstep: 4 Sends to work, over the cap of 3 tasks at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := make(chan struct{}, tc.n)
			g := NewGraph("fanout-test", 1).
				Channel("log", IndexedAppend("index"), []any{}).
				Node("split", func(context.Context, *NodeContext) ([]Write, error) { return nil, nil }).
				Node("work", func(context.Context, *NodeContext) ([]Write, error) { ran <- struct{}{}; return nil, nil }).
				Entry("split").
				Route("split", func(Values) ([]Target, error) {
					out := make([]Target, tc.n)
					for i := range out {
						out[i] = Send("work", map[string]int{"i": i})
					}
					return out, nil
				}).
				Edge("work", End)
			if tc.cap > 0 {
				g.MaxSends(tc.cap)
			}
			st := memory.New()
			e, err := New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run(t.Context(), "s", []Write{Put("log", []map[string]any{{"by": "input"}})}, RunConfig{})
			if tc.wantError == "" {
				if err != nil || len(ran) != tc.n {
					t.Fatalf("run: %v, %d of %d tasks ran", err, len(ran), tc.n)
				}
				return
			}
			if !errors.Is(err, ErrTooManySends) || !strings.Contains(err.Error(), tc.wantError) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("run: %v\nwant one line with %q", err, tc.wantError)
			}
			if len(ran) != 0 {
				t.Fatalf("%d tasks of the refused route ran", len(ran))
			}
			// The route is refused before its checkpoint: the newest is the
			// one that ran split, with no task of the fan-out stored.
			latest, err := st.Latest(context.Background(), "s")
			if err != nil || latest.ID != 1 {
				t.Fatalf("latest @%d (%v), want @1", latest.ID, err)
			}
		})
	}
	if err := NewGraph("bad", 1).MaxSends(0).Validate(); err == nil {
		t.Fatal("MaxSends(0) accepted")
	}
}
