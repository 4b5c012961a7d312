package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// BenchmarkLangGraphThreads is `rewind threads` on a SqliteSaver file of
// 1,000 threads of 5 checkpoints each, every one with a task due and a
// write (so each thread's status reads its newest listing and its
// writes), the source opened once; list is the threads alone.
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
			if _, err := tx.Exec(`INSERT INTO writes VALUES (?, '', ?, 'task-1', 0, 'topic', 'msgpack', ?)`, thread, lgtest.ID(i), lgtest.MP(b, "u")); err != nil {
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
				if err := lgThreads(ctx, src, asJSON, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
