package engine_test

import (
	"bytes"
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// TestCacheNeverOutlivesTheStoredThread: an engine's cache answers for a
// row only while the store holds that very row. Here another process (a
// second handle on the same store; for memory, another engine on it)
// deletes a thread this engine wrote and cached, and writes it again: the
// same second turn after another first one, so some rows of the new thread
// are byte for byte the old ones (the same deltas, parents and listings)
// on other ancestors. Every checkpoint must read as the new thread holds
// it, as a new engine reads it.
func TestCacheNeverOutlivesTheStoredThread(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, reopen := sc.open(t)
			other := st
			if reopen != nil {
				other = reopen()
			}
			const thread = "reborn"
			conversation := func(e *engine.Engine, first string) int64 {
				var head int64
				for _, in := range []string{first, "thanks, and can I get a refund?"} {
					res, err := e.Run(ctx, thread, ticket.Input(in), engine.RunConfig{})
					if err != nil {
						t.Fatal(err)
					}
					head = res.Checkpoint
				}
				return head
			}
			// On a clock of its own (tickingClock), every duration the turns
			// store is 0 ms however loaded the machine, so rows can match
			// the old ones byte for byte (a loaded machine's milliseconds
			// made none match), and no two rows share a CreatedAt.
			tick := tickingClock()
			ticketEngine := func(t *testing.T, s store.Store) *engine.Engine { return ticketEngineOn(t, s, tick) }
			mine := ticketEngine(t, st)
			head := conversation(mine, "where is my order SO20260901?")
			old := map[int64]store.Checkpoint{}
			for id := int64(1); id <= head; id++ {
				if _, err := mine.Get(ctx, thread, id); err != nil { // cached, if the run had not
					t.Fatal(err)
				}
				row, err := st.Get(ctx, thread, id)
				if err != nil {
					t.Fatal(err)
				}
				old[id] = row
			}

			theirs := ticketEngine(t, other)
			if err := theirs.DeleteThread(ctx, thread, false); err != nil {
				t.Fatal(err)
			}
			if again := conversation(theirs, "where is my order SO20260777?"); again != head {
				t.Fatalf("the new thread ends at @%d, the old one at @%d", again, head)
			}
			same := 0
			for id, o := range old {
				n, err := other.Get(ctx, thread, id)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(n.Meta, o.Meta) && bytes.Equal(n.State, o.State) && n.ParentID == o.ParentID {
					same++
				}
			}
			if same == 0 {
				t.Fatal("no row of the new thread is byte for byte an old one: the test no longer sets up its case")
			}

			fresh := ticketEngine(t, other)
			check := func(how string, got, want engine.Checkpoint) {
				t.Helper()
				if name, ok := sameValues(got.Values, want.Values); !ok || !got.CreatedAt.Equal(want.CreatedAt) {
					t.Errorf("%s @%d: %s is the deleted thread's (created %v, the stored row %v)", how, want.ID, name, got.CreatedAt, want.CreatedAt)
				}
			}
			for id := int64(1); id <= head; id++ {
				got, err := mine.Get(ctx, thread, id)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.Get(ctx, thread, id)
				if err != nil {
					t.Fatal(err)
				}
				check("Get", got, want)
			}
			got, err := mine.Latest(ctx, thread)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Latest(ctx, thread)
			if err != nil {
				t.Fatal(err)
			}
			check("Latest", got, want)
			t.Logf("%d of %d rows of the new thread are byte for byte the old ones", same, head)
		})
	}
}

// counting is a store that counts the calls made through it, by method.
type counting struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
}

func (c *counting) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[method]++
}

// n is how many calls of method were counted since the last took.
func (c *counting) n(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

// took returns the calls counted since the last took and starts again.
func (c *counting) took() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func (c *counting) Fence(ctx context.Context, thread string) (int64, error) {
	c.count("Fence")
	return c.Store.Fence(ctx, thread)
}

func (c *counting) Epoch(ctx context.Context, thread string) (int64, error) {
	c.count("Epoch")
	return c.Store.Epoch(ctx, thread)
}

func (c *counting) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	c.count("Get")
	return c.Store.Get(ctx, thread, id)
}

func (c *counting) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	c.count("Latest")
	return c.Store.Latest(ctx, thread)
}

func (c *counting) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	c.count("Chain")
	return c.Store.Chain(ctx, thread, id)
}

func (c *counting) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	c.count("History")
	return c.Store.History(ctx, thread, before, limit)
}

func (c *counting) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	c.count("Bodies")
	return c.Store.Bodies(ctx, thread, messages, blobs)
}

func (c *counting) MessagesAt(ctx context.Context, thread string, index int64) ([]store.Message, error) {
	c.count("MessagesAt")
	return c.Store.MessagesAt(ctx, thread, index)
}

func (c *counting) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	c.count("MessagesIn")
	return c.Store.MessagesIn(ctx, thread, from, to)
}

// TestWarmGetReadsOneRow: a checkpoint the engine has cached costs one
// row (Store.Get), not its chain, and its child two rows; one it has not
// reads the chain. On every
// store: the row read back must carry the very CreatedAt the engine
// stamped (SQLite and PostgreSQL keep microseconds), or every warm read
// would miss.
func TestWarmGetReadsOneRow(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			inner, _ := sc.open(t)
			st := &counting{Store: inner}
			e := ticketEngine(t, st)
			var head int64
			for _, in := range []string{"where is my order SO20260901?", "thanks, and can I get a refund?"} {
				res, err := e.Run(ctx, "t", ticket.Input(in), engine.RunConfig{})
				if err != nil {
					t.Fatal(err)
				}
				head = res.Checkpoint
			}
			st.took()
			for _, id := range []int64{head, head - 1, head - 3} {
				if _, err := e.Get(ctx, "t", id); err != nil {
					t.Fatal(err)
				}
				if got := st.took(); !maps.Equal(got, map[string]int{"Get": 1}) {
					t.Errorf("a warm Get of @%d read %v, want one row", id, got)
				}
			}
			cold := ticketEngine(t, st)
			if _, err := cold.Get(ctx, "t", head); err != nil {
				t.Fatal(err)
			}
			if got := st.took(); got["Chain"] != 1 || got["Get"] != 0 {
				t.Errorf("a cold Get read %v, want its chain (and no row before it)", got)
			}
			// What it read, it has: the next Get is warm.
			if _, err := cold.Get(ctx, "t", head); err != nil {
				t.Fatal(err)
			}
			if got := st.took(); !maps.Equal(got, map[string]int{"Get": 1}) {
				t.Errorf("a second Get of @%d read %v, want one row", head, got)
			}
			childReadsTwoRows(t, st, head-3)
		})
	}
}

// childReadsTwoRows: in a new engine on st, checkpoint id costs its chain,
// and then its child (id+1) two rows, its own and its parent's (the one
// cached), not its chain.
func childReadsTwoRows(t *testing.T, st *counting, id int64) {
	t.Helper()
	e := ticketEngine(t, st)
	for _, id := range []int64{id, id + 1} {
		if _, err := e.Get(t.Context(), "t", id); err != nil {
			t.Fatal(err)
		}
	}
	if got := st.took(); got["Chain"] != 1 || got["Get"] != 2 {
		t.Errorf("@%d then its child read %v, want one chain and then two rows", id, got)
	}
}

// TestWarmLatestReadsTheListing: the newest checkpoint, when it is the one
// this engine has cached, costs its listing alone (History, one row), not
// its state and the head snapshot; once another writer has added a turn,
// the listing differs and Latest reads the new head, as a new engine does.
// A cold engine's Latest reads no listing first.
func TestWarmLatestReadsTheListing(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			inner, _ := sc.open(t)
			st := &counting{Store: inner}
			e := ticketEngine(t, st)
			res, err := e.Run(ctx, "t", ticket.Input("where is my order SO20260901?"), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			st.took()
			got, err := e.Latest(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if calls := st.took(); !maps.Equal(calls, map[string]int{"History": 1}) || got.ID != res.Checkpoint {
				t.Errorf("a warm Latest read %v and returned @%d; want one listing and @%d", calls, got.ID, res.Checkpoint)
			}
			other := ticketEngine(t, inner)
			if _, err := other.Run(ctx, "t", ticket.Input("thanks, and can I get a refund?"), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			got, err = e.Latest(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			want, err := ticketEngine(t, inner).Latest(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if name, ok := sameValues(got.Values, want.Values); !ok || got.ID != want.ID || got.ID <= res.Checkpoint {
				t.Errorf("Latest after another writer's turn = @%d (%s differs), want @%d as a new engine reads it", got.ID, name, want.ID)
			}
			if calls := st.took(); calls["History"] != 1 || calls["Latest"] != 1 {
				t.Errorf("Latest after another writer's turn read %v, want the listing, then the newest row", calls)
			}
			cold := ticketEngine(t, st)
			if _, err := cold.Latest(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			if calls := st.took(); calls["History"] != 0 || calls["Latest"] != 1 {
				t.Errorf("a cold Latest read %v, want the newest row and no listing before it", calls)
			}
		})
	}
}

// TestWarmLatestTellsARewrittenThread: a thread deleted and written again
// by another writer with the very same turn has byte-identical listings;
// only CreatedAt tells its head from the one this engine cached, and
// Latest must return the stored one.
func TestWarmLatestTellsARewrittenThread(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := memory.New()
	clockAt := func(base time.Time) func() time.Time {
		return func() time.Time { return base } // every duration zero: the same documents
	}
	mine, err := engine.New(st, ticket.NewGraph(), ticket.NewMock(), engine.WithClock(clockAt(time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := engine.New(st, ticket.NewGraph(), ticket.NewMock(), engine.WithClock(clockAt(time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC))))
	if err != nil {
		t.Fatal(err)
	}
	in := ticket.Input("where is my order SO20260901?")
	if _, err := mine.Run(ctx, "t", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	before, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := theirs.DeleteThread(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	if _, err := theirs.Run(ctx, "t", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	after, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Meta, after.Meta) || before.ID != after.ID {
		t.Fatal("the rewritten head's listing differs from the old one: the test no longer sets up its case")
	}
	got, err := mine.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(after.CreatedAt) {
		t.Errorf("Latest = the deleted thread's head (created %v), want the stored one (created %v)", got.CreatedAt, after.CreatedAt)
	}
}

// tickingClock is a clock that moves a microsecond a reading, from a
// fixed time; safe for the tasks of a superstep reading it at once.
func tickingClock() func() time.Time {
	var mu sync.Mutex
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Microsecond)
		return at
	}
}

// ticketEngineOn is the ticket graph with the mock model on s, the graph
// and the engine reading the clock now.
func ticketEngineOn(t *testing.T, s store.Store, now func() time.Time) *engine.Engine {
	t.Helper()
	opts := []ticket.Option{ticket.WithClock(now)}
	if d, ok := s.(store.Drafts); ok {
		opts = append(opts, ticket.WithDrafts(d))
	}
	e, err := engine.New(s, ticket.NewGraph(opts...), ticket.NewMock(), engine.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
