package app_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind/cli/app"
	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/replay"
	"rewind/engine/ticket"
)

// TestAnotherGraphsCallsAreRecorded: `rewind tui --record FILE` on a
// memory: store runs every graph in-process, and a thread of a graph the
// TUI switched to (App.For) records its model calls into FILE as the
// starting graph's do, in the one file: both graphs' calls are there.
// Before, the other graph's mock answered unrecorded.
func TestAnotherGraphsCallsAreRecorded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "session.json")
	a, err := app.Open(ctx, app.Config{Store: "memory:", Model: &app.ModelFlags{Record: path}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rg := &app.Graph{Name: research.Name, New: research.Graph, Mock: research.NewMock, Roles: research.Roles}
	rs, err := a.For(rg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Engine.Run(ctx, "ticket-1", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	ticketCalls := recorded(t, path)
	if len(ticketCalls) == 0 {
		t.Fatal("the ticket's turn recorded no call")
	}
	in, err := rs.Graph().TurnInput()(engine.Input{Text: research.Question}, rs.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Run(ctx, "research-1", in, engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	all := recorded(t, path)
	if !slices.EqualFunc(all[:min(len(ticketCalls), len(all))], ticketCalls, func(a, b replay.Exchange) bool { return a.Role == b.Role && a.Text == b.Text }) {
		t.Fatalf("the research turn's recording lost the ticket's calls: %d exchanges, the ticket's %d", len(all), len(ticketCalls))
	}
	asked := 0
	for _, x := range all[len(ticketCalls):] {
		if slices.ContainsFunc(x.Messages, func(m model.Message) bool { return strings.Contains(m.Content, research.Question) }) {
			asked++
		}
	}
	if asked == 0 {
		t.Fatalf("the research turn recorded no call asking its question (%d exchanges after the ticket's %d)", len(all)-len(ticketCalls), len(ticketCalls))
	}
}

// recorded are the exchanges the recording at path holds.
func recorded(t *testing.T, path string) []replay.Exchange {
	t.Helper()
	f, err := replay.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return f.Exchanges
}
