package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// BenchmarkLangGraphThreads is `rewind threads` on a SqliteSaver file of
// 1,000 threads of 5 checkpoints each, every one with a task due and a
// write; in one thread of ten the newest checkpoint's task failed (its
// status reads its writes too, the others' their newest listing alone).
// The source is opened once; list is the threads alone.
func BenchmarkLangGraphThreads(b *testing.B) {
	path := filepath.Join(b.TempDir(), "threads.db")
	w := lgtest.OpenWriter(b, path)
	tx, err := w.DB.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for th := range 1000 {
		thread := fmt.Sprintf("thread-%04d", th)
		for i := 1; i <= 5; i++ {
			parent := ""
			if i > 1 {
				parent = lgtest.ID(i - 1)
			}
			if _, err := tx.Exec(`INSERT INTO checkpoints VALUES (?, '', ?, ?, 'msgpack', ?, ?)`, thread, lgtest.ID(i), parent,
				lgtest.Doc(b, lgtest.ID(i), map[string]any{"topic": "t"}, "agent"), lgtest.Meta("loop", i)); err != nil {
				b.Fatal(err)
			}
			channel, idx := "topic", 0
			if th%10 == 0 && i == 5 {
				channel, idx = "__error__", -1 // the task failed
			}
			if _, err := tx.Exec(`INSERT INTO writes VALUES (?, '', ?, 'task-1', ?, ?, 'msgpack', ?)`, thread, lgtest.ID(i), idx, channel, lgtest.MP(b, "u")); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	src, err := langgraph.Open(ctx, "sqlite:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var out strings.Builder
	if err := lgThreads(ctx, src, threadsArgs{asJSON: true}, &out); err != nil || strings.Count(out.String(), `"state": "error"`) != 100 || strings.Count(out.String(), `"state": "interrupted"`) != 900 {
		b.Fatalf("threads: %v, want 100 failed and 900 due", err)
	}
	// list: the threads alone, what the statuses add to.
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			if _, err := src.Threads(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, asJSON := range []bool{false, true} {
		b.Run(map[bool]string{false: "text", true: "json"}[asJSON], func(b *testing.B) {
			for b.Loop() {
				if err := lgThreads(ctx, src, threadsArgs{asJSON: asJSON}, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
