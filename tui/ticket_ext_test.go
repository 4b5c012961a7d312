package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/event"
	"rewind/engine/ticket"
)

// The ticket's Narrator tells a run's compactions in the status bar: a
// refused summary while the run goes, rewind's own summary once written
// (and at the run's end); a run of a graph without it tells none of them.
func TestTicketNarratesCompactions(t *testing.T) {
	ev := func(typ string, d any) engine.Event {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return engine.Event{Type: typ, Data: b}
	}
	refused := ev(ticket.EventCompactionRejected, event.CompactionRejected{Attempts: 1, Failures: []string{"#3 user: 49.95 EUR altered"}, Trigger: "tokens"})
	extractive := ev(ticket.EventContextCompacted, event.ContextCompacted{Strategy: ticket.ExtractiveStrategy})

	p := newProgress("run")
	p.told = TicketExtension().(Narrator).Narrate()
	p.apply(refused)
	if line := p.line(); !strings.Contains(line, "! summary refused: ") {
		t.Errorf("a refused summary is not told: %q", line)
	}
	p.apply(extractive)
	if line := p.line(); !strings.Contains(line, "compacted (by rewind: the model's summaries were refused twice)") || strings.Contains(line, "summary refused") {
		t.Errorf("rewind's own summary is not told: %q", line)
	}
	if end := p.told.Ended(); end != "compacted by rewind (the model's summaries were refused twice)" {
		t.Errorf("the run's end says %q", end)
	}

	shape := newProgress("run")
	shape.apply(refused)
	shape.apply(extractive)
	if line := shape.line(); strings.Contains(line, "compacted") || strings.Contains(line, "refused") {
		t.Errorf("a graph without the ticket's extension tells the ticket's events: %q", line)
	}
}
