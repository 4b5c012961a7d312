package tui

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/browse"
)

func watchedEngine(t *testing.T) (*engine.Engine, store.Store) {
	t.Helper()
	st := newStore() // it can be watched and names its lock's holder, as every real store does
	return newClockedEngine(t, st, ticket.NewGraph(), ticket.NewMock()), st
}

// A turn run by someone else (here another engine on the same store, as
// another process would) joins the open timeline without a key press; the
// cursor follows the head when it was there, and stays where the user put
// it otherwise.
func TestFollowGrowsTheTimeline(t *testing.T) {
	e, st := watchedEngine(t)
	other, err := engine.New(st, ticket.NewGraph(), ticket.NewMock(), engine.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread loaded and followed", func() bool { return h.loaded() && h.m.follow.on })
	head := num(h.m.timeline.tree.maxID)
	h.until("the cursor at the head", func() bool { return h.at(head) })
	h.until("the marker", func() bool { return h.contains("following") })

	if _, err := other.Run(ctx, "t", ticket.Input("second question"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	newest, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	h.until("the other run's checkpoints on the timeline, the cursor at the new head", func() bool {
		return num(h.m.timeline.tree.maxID) == newest.ID && h.at(newest.ID)
	})

	// The user moves away from the head: the next turn does not move the cursor.
	h.key("k", "k")
	at := num(h.m.timeline.tree.cursor)
	if at == newest.ID {
		t.Fatal("k did not move the cursor")
	}
	if _, err := other.Run(ctx, "t", ticket.Input("third question"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	third, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	h.until("the third turn on the timeline", func() bool { return num(h.m.timeline.tree.maxID) == third.ID })
	h.drain()
	if num(h.m.timeline.tree.cursor) != at {
		t.Errorf("cursor moved from @%d to @%s while the user was away from the head", at, h.m.timeline.tree.cursor)
	}
}

// The status bar names the process holding the thread's lock while it
// does, and says "following" once it let go.
func TestFollowShowsTheWriter(t *testing.T) {
	e, st := watchedEngine(t)
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	release, err := st.Lock(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	want := "● live: written by pid " + strconv.Itoa(os.Getpid())
	h.until("the live marker", func() bool { return h.contains(want) })
	if err := release(); err != nil {
		t.Fatal(err)
	}
	h.until("following once the writer let go", func() bool { return h.contains("following") && !h.contains("● live") })
}

// A store that cannot be watched shows no marker and no error.
func TestFollowNeedsAWatchableStore(t *testing.T) {
	e := newEngine(t)
	seed(t, e, "t")
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("loaded", h.loaded)
	h.drain()
	if h.m.follow.on || h.contains("following") || h.m.status.isErr {
		t.Errorf("follow mode on a store that cannot be watched: on %v, flash %q\n%s", h.m.follow.on, h.m.status.text, h.screen())
	}
}

// liveBackend is a Backend whose thread another process (pid 4242) is
// running: the follow marker's golden. Its watch never fires.
type liveBackend struct{ Backend }

func (liveBackend) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	c := make(chan struct{})
	go func() {
		<-ctx.Done()
		close(c)
	}()
	return c, nil
}

func (liveBackend) Writer(ctx context.Context, thread string) (string, error) { return "pid 4242", nil }

// Issue 38: the TUI following a thread kept saying "following" after
// another process deleted it, and once the id was written again it showed
// the old timeline with the new thread's content. Now the delete is said
// (the marker and the status line), and the thread written again under
// the id is opened from scratch: its own checkpoints, its own messages.
func TestFollowSaysADeletedThreadIsGoneAndOpensItsSuccessor(t *testing.T) {
	e, st := watchedEngine(t)
	// Another process, with its own clock reading.
	later := func() time.Time { return fixedClock().Add(time.Hour) }
	other, err := engine.New(st, ticket.NewGraph(), ticket.NewMock(), engine.WithClock(later))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "t", ticket.Input("second question about SO20260901"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "t"}, 120, 40)
	h.until("the thread loaded and followed", func() bool { return h.loaded() && h.m.follow.on && h.contains("following") })
	oldMax := h.m.timeline.tree.maxID

	if err := other.DeleteThread(ctx, "t", false); err != nil {
		t.Fatal(err)
	}
	h.until("the TUI saying the thread is gone", func() bool {
		return h.contains("deleted elsewhere") && !h.contains("following") && logged(h, "was deleted by another process")
	})

	if _, err := other.Run(ctx, "t", ticket.Input("A new customer: invoice INV-2026-0042 for order SO20261111"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	newest, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !idLess(idOf(newest.ID), oldMax) {
		t.Fatalf("the new thread has @%d, the old one had @%s: the test needs a shorter new thread", newest.ID, oldMax)
	}
	h.until("the new thread opened from scratch", func() bool {
		return h.loaded() && num(h.m.timeline.tree.maxID) == newest.ID && h.m.timeline.tree.len() == int(newest.ID) &&
			h.contains("SO20261111") && h.contains("following")
	})
	for id, n := range h.m.timeline.tree.nodes {
		if !n.at.Equal(later()) {
			t.Errorf("@%s on the timeline is the old thread's (written at %s)", id, n.at)
		}
	}
	if h.contains("second question") {
		t.Errorf("the old thread's text shows:\n%s", h.screen())
	}
}

// logged says whether the status log holds a line with s.
func logged(h *harness, s string) bool {
	for _, l := range h.m.status.log {
		if strings.Contains(l.text, s) {
			return true
		}
	}
	return false
}

// countingSource counts the thread's History reads (each follow reload
// reads it once).
type countingSource struct {
	browse.Source
	histories *atomic.Int64
}

func (s countingSource) History(ctx context.Context, c browse.Chain, before string, limit int) ([]browse.Listing, error) {
	s.histories.Add(1)
	return s.Source.History(ctx, c, before, limit)
}

// Issue 38: a flood of wake-ups carrying the followed thread's id (a NOTIFY
// per commit of a busy writer) kept the TUI at 46% CPU, one reload each.
// Now at most one reload is in flight and the next waits for a floor: 500
// wake-ups cost two reloads, and the last one reads what they announced.
func TestAWakeUpFloodCostsAFewReloads(t *testing.T) {
	e, st := watchedEngine(t)
	other, err := engine.New(st, ticket.NewGraph(), ticket.NewMock(), engine.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Run(ctx, "t", ticket.Input(firstInput), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	n := &atomic.Int64{}
	deps := depsFor(e)
	deps.Source = countingSource{deps.Source, n}
	h := newHarnessDeps(t, deps, Settings{Thread: "t"}, 120, 40)
	h.until("the thread loaded and followed", func() bool { return h.loaded() && h.m.follow.on })
	h.drain()
	// The writer's turn, announced by the store's own wake-up and by 500
	// more of the flood.
	if _, err := other.Run(ctx, "t", ticket.Input("second question"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	newest, err := st.Latest(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	before, issued := n.Load(), h.m.follow.reloads
	for range 500 {
		h.dispatch(watchWokeMsg{gen: h.m.follow.gen, thread: h.m.follow.thread})
	}
	h.until("the writer's turn on the timeline", func() bool { return num(h.m.timeline.tree.maxID) == newest.ID })
	h.until("no reload in flight", func() bool { return !h.m.follow.reloading })
	h.drain()
	reads, reloads := n.Load()-before, h.m.follow.reloads-issued
	t.Logf("500 wake-ups: %d reloads, %d history reads", reloads, reads)
	// A reload reads a page or two of listings; one per wake-up was 500.
	if reloads > 3 || reads > 6 {
		t.Fatalf("500 wake-ups made %d reloads, %d history reads; want at most 3 reloads", reloads, reads)
	}
}
