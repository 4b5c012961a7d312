package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
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
