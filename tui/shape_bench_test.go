package tui

import (
	"encoding/json"
	"fmt"
	"testing"

	"rewind/engine"
	"rewind/themes"
)

// BenchmarkShapePanes: what a scrub step costs the panes on a graph with
// no extension (State and Conversation drawn anew; View then reuses the
// lines), at a chat of 400 messages and an object. cold: a renderer that
// has drawn nothing (every message drawn); scrub: between two
// neighbouring checkpoints (399 and 400 messages), as h/l does.
func BenchmarkShapePanes(b *testing.B) {
	at := func(n int) *detail {
		chat := make([]map[string]string, n)
		for i := range chat {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			chat[i] = map[string]string{"role": role, "content": fmt.Sprintf("message %d: the parcel left the depot and is due on Thursday between nine and noon", i)}
		}
		raw, _ := json.Marshal(chat)
		obj, _ := json.Marshal(map[string]any{"status": "open", "tags": []string{"a", "b"}, "n": n})
		return &detail{cp: engine.Checkpoint{Values: engine.Values{"chat": raw, "meta": obj}}}
	}
	steps := []*detail{at(399), at(400)}
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := newRenderer(themes.Or(themes.Dark))
			_ = r.state(steps[1], 60, false)
			_ = r.conversation(steps[1], 80, false)
		}
	})
	b.Run("scrub", func(b *testing.B) {
		r := newRenderer(themes.Or(themes.Dark))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d := steps[i%2]
			i++
			_ = r.state(d, 60, false)
			_ = r.conversation(d, 80, false)
		}
	})
}
