package sqlite

import (
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind/store"
)

// A page of RecentThreads and its count of the rest read the index of
// (updated_at, thread_id) (migrations[13]): without it SQLite read every
// graph_threads row and sorted them, at every page (issue 31 item 3).
func TestRecentThreadsReadTheirIndex(t *testing.T) {
	t.Parallel()
	text := queryPlan(t, sqlRecentThreads, int64(1<<40), "t", 40)
	if strings.Count(text, "COVERING INDEX graph_threads_updated") != 2 || strings.Contains(text, "SCAN graph_threads") {
		t.Errorf("RecentThreads' page and count do not both search graph_threads_updated (a SCAN reads every thread):\n%s", text)
	}
}

// Bodies reads a stretch of a conversation (sqlBodiesNear) as one range
// of graph_message_bodies' key, with two lookups of graph_message_keys
// for its ends: a lookup a message (sqlBodies) was a random page of the
// keys each, most of a new process's first load of an older checkpoint.
func TestBodiesReadAStretchAsOneRange(t *testing.T) {
	t.Parallel()
	text := queryPlan(t, sqlBodiesNear, "t", `["a","b"]`, `[]`, "a", "b", 20)
	if !strings.Contains(text, "SEARCH m USING PRIMARY KEY (thread_id=? AND idx>? AND idx<?)") ||
		strings.Count(text, "graph_message_keys") != 1 || strings.Contains(text, "SCAN m") {
		t.Errorf("Bodies' stretch is not one range of graph_message_bodies after one search of graph_message_keys:\n%s", text)
	}
}

// A load whose conversation repeats an earlier message (an "ok", a
// tool's same result: the thread keeps it at its first index, out of the
// stretch) parses no statement of its own: Bodies reads each message the
// stretch missed, up to nearMisses, through the stretch's statement,
// which Open prepared; and so when the repeat is the list's first or
// last (the stretch is then read without it). sqlBodies' parse and run
// at first use were a tenth of a new process's first load of such a
// checkpoint.
func TestBodiesOfARepeatParseNoStatement(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cp := store.Checkpoint{ThreadID: "t", ID: 1, Base: true, State: []byte(`{}`)}
	for i := range 80 {
		body := fmt.Appendf(nil, `{"role":"user","content":"message %d"}`, i+1)
		cp.Messages = append(cp.Messages, store.Message{Hash: store.ContentHash(body), Index: int64(i + 1), Body: body})
	}
	if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prepared := func() []string {
		s.r.mu.Lock()
		defer s.r.mu.Unlock()
		return slices.Sorted(maps.Keys(s.r.stmts))
	}
	opened := prepared()
	hashes := func(ms []store.Message) (out []string) {
		for _, m := range ms {
			out = append(out, m.Hash)
		}
		return out
	}
	for n := 1; n <= nearMisses; n++ {
		want := slices.Concat(hashes(cp.Messages[60:65]), hashes(cp.Messages[:n]), hashes(cp.Messages[65:]))
		ms, _, err := s.Bodies(ctx, "t", want, nil)
		if err != nil || len(ms) != len(want) {
			t.Fatalf("Bodies of a stretch with %d earlier messages: %d messages, %v; want %d", n, len(ms), err, len(want))
		}
	}
	// The list's own first or last repeats an earlier message, too far
	// back for one stretch.
	for _, want := range [][]string{
		slices.Concat(hashes(cp.Messages[:1]), hashes(cp.Messages[60:])),
		slices.Concat(hashes(cp.Messages[60:79]), hashes(cp.Messages[1:2])),
	} {
		ms, _, err := s.Bodies(ctx, "t", want, nil)
		if err != nil || len(ms) != len(want) {
			t.Fatalf("Bodies of a stretch whose end is an earlier message: %d messages, %v; want %d", len(ms), err, len(want))
		}
	}
	if now := prepared(); len(now) != len(opened) {
		t.Errorf("Bodies of a stretch with up to %d earlier messages parsed statements past Open's (%d):\n%s",
			nearMisses, len(now)-len(opened), strings.Join(slices.DeleteFunc(now, func(q string) bool { return slices.Contains(opened, q) }), "\n"))
	}
}

// queryPlan is SQLite's plan for q with args on a new store's schema,
// its lines joined.
func queryPlan(t *testing.T, q string, args ...any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
