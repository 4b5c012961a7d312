package tui

import (
	"context"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/themes"
)

// openFirstScreen runs the browser as the program does (each Cmd in its
// own goroutine) until its first screen of thread is whole: the newest
// page of the timeline, and the values and writes of the checkpoint under
// the cursor. With all, it also waits for the older listings.
func openFirstScreen(tb testing.TB, src browse.Source, thread string, all bool) *Browser {
	m := NewBrowser(context.Background(), src, "bench", thread, themes.Or(themes.Dark))
	m.follow.on = false
	msgs := make(chan tea.Msg, 64)
	run := func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		go func() { msgs <- cmd() }()
	}
	run(m.Init())
	for {
		if len(m.timeline.rows) > 0 && (!all && m.inFlight <= 1 || m.inFlight == 0) {
			key := cacheKey(m.chain, m.timeline.CurrentID())
			_, cp := m.cps.get(key)
			_, ws := m.wss.get(key)
			if cp && ws && (!all || !m.older) {
				_ = m.View()
				return m
			}
		}
		switch msg := (<-msgs).(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		default:
			_, next := m.Update(msg)
			run(next)
		}
	}
}

// BenchmarkBrowseOpen10k opens the browser on a 10,000-checkpoint
// LangGraph thread, the source opened fresh each time: until its first
// screen is whole (first), and until every listing is in (all).
func BenchmarkBrowseOpen10k(b *testing.B) {
	path := lgtest.Big(b, b.TempDir(), 10000)
	for _, all := range []bool{false, true} {
		name := "first"
		if all {
			name = "all"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				src, err := langgraph.Open(context.Background(), "sqlite:"+path)
				if err != nil {
					b.Fatal(err)
				}
				m := openFirstScreen(b, src, "big", all)
				if len(m.timeline.rows) < 200 || all && len(m.timeline.rows) != 10000 {
					b.Fatalf("%d rows", len(m.timeline.rows))
				}
				src.Close()
			}
		})
	}
}
