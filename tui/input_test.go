package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/backend"
	"rewind/tui/termtext"
)

func paste(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true} }

// Issue 11's seventh case: a 1 MB paste was stored as its first 8,000
// characters without a word. A paste up to termtext.MaxInput (the CLI's
// limit too) goes in whole and is sent whole; one that would go past it is
// refused whole and the user is told, as is a key typed at the limit; the
// fork dialog holds the same.
func TestLongPasteUpToTheLimit(t *testing.T) {
	e := newEngine(t)
	h := newHarness(t, e, Settings{Thread: "long"}, 160, 48)
	h.until("empty thread", func() bool { return !h.m.timeline.loading })
	full := strings.Repeat("Où est ma commande SO20260901 ? ", termtext.MaxInput)
	full = strings.TrimSpace(strings.ToValidUTF8(full[:termtext.MaxInput-8], ""))
	for len(full) < termtext.MaxInput {
		full += "."
	}

	h.key("i")
	h.dispatch(paste(strings.Repeat("y", 1<<20)))
	if v := h.m.composer.Value(); v != "" {
		t.Fatalf("a 1 MB paste put %d bytes in the composer; want it refused whole", len(v))
	}
	if !strings.Contains(h.m.status.text, "paste of 1 MB refused") || !strings.Contains(h.m.status.text, "64 KB") || !h.m.status.isErr || !h.contains("paste of 1 MB refused") {
		t.Fatalf("the refusal is not shown: flash %q\n%s", h.m.status.text, h.screen())
	}

	h.dispatch(paste(full))
	if v := h.m.composer.Value(); v != full {
		t.Fatalf("a %d-byte paste left %d bytes in the composer", len(full), len(v))
	}
	h.typeText("x")
	if v := h.m.composer.Value(); v != full || !strings.Contains(h.m.status.text, "the message is full") {
		t.Fatalf("a key at the limit: composer %d bytes, flash %q", len(v), h.m.status.text)
	}
	h.key("enter")
	h.until("the reply", func() bool { return num(h.m.timeline.tree.maxID) >= 8 && h.at(num(h.m.timeline.tree.maxID)) })
	cp, err := e.Get(context.Background(), "long", 1)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ticket.Decode(cp.Values)
	if len(s.Messages) == 0 || s.Messages[0].Content != full {
		t.Fatalf("the sent message was not stored whole")
	}

	h.key("f")
	if !h.contains("Fork at") {
		t.Fatalf("f should open the fork dialog:\n%s", h.screen())
	}
	h.dispatch(paste(strings.Repeat("z", termtext.MaxInput+1)))
	f := h.m.dialog.(*formDialog)
	if v := f.fields[0].input.Value(); v != "" || !strings.Contains(f.err, "refused") || !h.contains("refused, nothing added") {
		t.Fatalf("the fork dialog took %d bytes of an over-long paste; err %q\n%s", len(v), f.err, h.screen())
	}
	h.dispatch(paste(full))
	if v := f.fields[0].input.Value(); v != full {
		t.Fatalf("the fork dialog holds %d bytes of a %d-byte paste", len(v), len(full))
	}
}

// A message at the limit reaches a worker process whole: the command line
// holds it (termtext.MaxInput is half Linux's limit on one argument).
func TestWorkerRunnerSendsAMessageAtTheLimit(t *testing.T) {
	exe := rewindBinary(t)
	spec := "sqlite:" + filepath.Join(t.TempDir(), "w.db")
	full := strings.Repeat("日本の注文 SO20260901 はどこ？", termtext.MaxInput)
	full = strings.TrimSpace(strings.ToValidUTF8(full[:termtext.MaxInput-8], ""))
	for len(full) < termtext.MaxInput {
		full += "."
	}
	run, err := NewWorkerRunner(WorkerConfig{Exe: exe, Store: spec}).Start(context.Background(), "w", Input{Text: full}, RunSettings{InterruptBefore: []string{ticket.NodePlanner}})
	if err != nil {
		t.Fatal(err)
	}
	for u := range run.Updates() {
		if u.Done && u.Err != nil {
			t.Fatalf("the worker failed: %v", u.Err)
		}
	}
	st, err := backend.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	cp, err := e.Get(context.Background(), "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ticket.Decode(cp.Values)
	if len(s.Messages) == 0 || s.Messages[0].Content != full {
		t.Fatalf("the worker stored a different message")
	}
}
