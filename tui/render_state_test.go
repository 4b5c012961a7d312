package tui

import (
	"context"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// Issue 10, item 3: the State pane lists the version of each record the
// tools read, and marks what a checkpoint read anew.
func TestStatePaneListsSourceVersions(t *testing.T) {
	e := newEngine(t)
	if _, err := e.Run(context.Background(), "s", ticket.Input(firstInput), engine.RunConfig{InterruptBefore: []string{ticket.NodeCritic}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, Settings{Thread: "s"}, 140, 60)
	h.until("the executors' checkpoint", func() bool { return h.at(3) })
	h.key("2")
	h.until("the State pane", func() bool { return h.contains("Source versions (") })
	s := h.screen()
	for _, want := range []string{"Source versions (3)", "orders/SO20260901 v1 • new", "shipments/SO20260901 v1 • new", "refunds/SO20260901 v1 • new"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the State pane lacks %q:\n%s", want, s)
		}
	}
	h.key("home")
	h.until("#1", func() bool { return h.at(1) })
	if h.contains("Source versions") {
		t.Fatalf("nothing was read at @1, yet the State pane lists source versions:\n%s", h.screen())
	}
}
