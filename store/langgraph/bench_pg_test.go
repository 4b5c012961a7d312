package langgraph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// The 10,000-checkpoint thread of bench_test.go as PostgresSaver stores
// it: the checkpoint as jsonb with the primitives inline, each new
// channel version's value a blob.
func buildBigPostgres(b *testing.B) string {
	ctx := context.Background()
	dbURL := lgtest.Dump(b, "postgres-python.sql") // LangGraph's own DDL, and two small threads beside
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var cps, blobs, writes [][]any
	msgs := make([]any, 0, bigThread)
	version := func(n int) string { return fmt.Sprintf("%032d.0.5", n) }
	for n := 1; n <= bigThread; n++ {
		msgs = append(msgs, aiMessage(n))
		parent := any(nil)
		if n > 1 {
			parent = id(n - 1)
			if n%500 == 0 {
				parent = id(n - 3)
			}
		}
		doc, _ := json.Marshal(map[string]any{
			"v": 4, "id": id(n), "ts": "2026-01-02T03:04:05.000001+00:00",
			"channel_values":   map[string]any{"topic": "tables", "branch:to:agent": nil},
			"channel_versions": map[string]any{"messages": version(n), "findings": version(n), "note": version(1), "topic": version(1), "branch:to:agent": version(n)},
			"versions_seen":    map[string]any{"agent": map[string]any{"branch:to:agent": version(n - 1)}},
		})
		cps = append(cps, []any{"big", "", id(n), parent, nil, string(doc), fmt.Sprintf(`{"source": "loop", "step": %d, "parents": {}}`, n)})
		blobs = append(blobs,
			[]any{"big", "", "messages", version(n), "msgpack", mp(b, msgs[max(0, len(msgs)-20):])},
			[]any{"big", "", "findings", version(n), "msgpack", mp(b, []any{"a", "b", fmt.Sprint(n)})})
		writes = append(writes, []any{"big", "", id(n), fmt.Sprintf("task-%d", n), 0, "messages", "msgpack", mp(b, []any{aiMessage(n + 1)}), "~__pregel_pull, agent"})
	}
	blobs = append(blobs, []any{"big", "", "note", version(1), "msgpack",
		mp(b, ext{Code: 5, Payload: []any{"__main__", "Note", map[string]any{"title": "t", "score": 0.5}, "model_validate_json"}})})
	for table, rows := range map[string][][]any{"checkpoints": cps, "checkpoint_blobs": blobs, "checkpoint_writes": writes} {
		cols := map[string][]string{
			"checkpoints":       {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"},
			"checkpoint_blobs":  {"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"},
			"checkpoint_writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob", "task_path"},
		}[table]
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return dbURL
}

// BenchmarkPostgresHistory10k lists the whole thread from PostgreSQL.
func BenchmarkPostgresHistory10k(b *testing.B) {
	src := open(b, buildBigPostgres(b))
	c := langgraph.Chain{Thread: "big"}
	b.ResetTimer()
	for b.Loop() {
		h, err := src.History(context.Background(), c, "", 0)
		if err != nil || len(h) != bigThread || len(h[0].Next) != 1 || h[0].Counts.Channels != 4 {
			b.Fatalf("%d listings (%+v), %v", len(h), h[0], err)
		}
	}
}
