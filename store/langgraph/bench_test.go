package langgraph_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/langgraph"
	"rewind/store/postgres/pgtest"
)

// A synthetic LangGraph thread of 10,000 checkpoints in a SQLite file
// with LangGraph's DDL, each checkpoint as Python's serializer stores it:
// every channel's value in the one msgpack blob (a window of 20 LangChain
// messages, a custom list, a pydantic model, a datetime), two writes, and
// a fork every 500 checkpoints.
const bigThread = 10000

var big struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the big thread's file, unless $REWIND_BENCH_KEEP is
// set: then it says where it is, to time `rewind log` on it (README,
// "LangGraph databases").
func TestMain(m *testing.M) {
	rewindbin.WaitMostly() // the tests mostly wait for the server and for files
	code := pgtest.Run(m)
	switch {
	case big.dir != "" && os.Getenv("REWIND_BENCH_KEEP") != "":
		fmt.Printf("kept the 10,000-checkpoint thread: sqlite:%s (thread big)\n", big.path)
	case big.dir != "":
		os.RemoveAll(big.dir)
	}
	rewindbin.Exit(code)
}

func bigFile(b *testing.B) string {
	b.Helper()
	big.once.Do(func() {
		big.dir, big.err = os.MkdirTemp("", "langgraph-bench-")
		if big.err == nil {
			big.path, big.err = buildBig(b, big.dir)
		}
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.path
}

func aiMessage(i int) ext {
	return ext{Code: 5, Payload: []any{"langchain_core.messages.ai", "AIMessage", map[string]any{
		"content": fmt.Sprintf("step %d: a reply of a realistic length, with a tool call to make the message look like one an agent sends", i),
		"id":      fmt.Sprintf("ai-%d", i), "type": "ai", "name": nil, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"tool_calls": []any{map[string]any{"name": "search", "args": map[string]any{"q": "x", "k": i}, "id": fmt.Sprintf("call_%d", i), "type": "tool_call"}},
	}, "model_validate_json"}}
}

func buildBig(b *testing.B, dir string) (string, error) {
	path := filepath.Join(dir, "big.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec(langgraphDDL); err != nil {
		return "", err
	}
	tx, err := db.Begin()
	if err != nil {
		return "", err
	}
	msgs := make([]any, 0, bigThread)
	for n := 1; n <= bigThread; n++ {
		msgs = append(msgs, aiMessage(n))
		window := msgs[max(0, len(msgs)-20):]
		parent := ""
		if n > 1 {
			parent = id(n - 1)
			if n%500 == 0 {
				parent = id(n - 3) // a fork
			}
		}
		values := map[string]any{
			"messages": window, "findings": []any{"a", "b", fmt.Sprint(n)}, "topic": "tables",
			"note":            ext{Code: 5, Payload: []any{"__main__", "Note", map[string]any{"title": "t", "score": 0.5}, "model_validate_json"}},
			"stamp":           ext{Code: 3, Payload: []any{"datetime", "datetime", "2026-01-02T03:04:05+00:00", "fromisoformat"}},
			"branch:to:agent": nil,
		}
		versions := map[string]any{"messages": fmt.Sprintf("%032d.0.5", n), "branch:to:agent": fmt.Sprintf("%032d.0.5", n)}
		seen := map[string]any{"agent": map[string]any{"branch:to:agent": fmt.Sprintf("%032d.0.5", n-1)}}
		if _, err := tx.Exec(`INSERT INTO checkpoints VALUES ('big', '', ?, ?, 'msgpack', ?, ?)`, id(n), nullable(parent),
			cp4(b, id(n), values, versions, seen), meta("loop", n)); err != nil {
			return "", err
		}
		for i, w := range []struct {
			ch  string
			val []byte
		}{{"messages", mp(b, []any{aiMessage(n + 1)})}, {"branch:to:agent", nil}} {
			if _, err := tx.Exec(`INSERT INTO writes VALUES ('big', '', ?, ?, ?, ?, 'msgpack', ?)`, id(n), fmt.Sprintf("task-%d", n), i, w.ch, w.val); err != nil {
				return "", err
			}
		}
	}
	return path, tx.Commit()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func benchSource(b *testing.B) langgraph.Source {
	src, err := langgraph.Open(context.Background(), "sqlite:"+bigFile(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	return src
}

// BenchmarkHistory10k lists the whole 10,000-checkpoint thread: what a
// timeline or `rewind log` reads.
func BenchmarkHistory10k(b *testing.B) {
	src := benchSource(b)
	c := langgraph.Chain{Thread: "big"}
	b.ResetTimer()
	for b.Loop() {
		h, err := src.History(context.Background(), c, "", 0)
		if err != nil || len(h) != bigThread || len(h[0].Next) != 1 {
			b.Fatalf("%d listings, %v", len(h), err)
		}
	}
}

// BenchmarkHistoryFirstPage lists the newest 200 (a TUI's first page).
func BenchmarkHistoryFirstPage(b *testing.B) {
	src := benchSource(b)
	c := langgraph.Chain{Thread: "big"}
	for b.Loop() {
		if h, err := src.History(context.Background(), c, "", 200); err != nil || len(h) != 200 {
			b.Fatalf("%d listings, %v", len(h), err)
		}
	}
}

// BenchmarkCheckpoint reads one checkpoint's values in the middle.
func BenchmarkCheckpoint(b *testing.B) {
	src := benchSource(b)
	c := langgraph.Chain{Thread: "big"}
	for b.Loop() {
		cp, err := src.Checkpoint(context.Background(), c, id(bigThread/2))
		if err != nil || len(langgraph.CheckpointMessages(cp)) != 20 {
			b.Fatalf("%+v, %v", cp.Listing, err)
		}
	}
}

// BenchmarkWrites reads one checkpoint's writes.
func BenchmarkWrites(b *testing.B) {
	src := benchSource(b)
	c := langgraph.Chain{Thread: "big"}
	for b.Loop() {
		if ws, err := src.Writes(context.Background(), c, id(bigThread/2)); err != nil || len(ws) != 1 {
			b.Fatalf("%+v, %v", ws, err)
		}
	}
}
