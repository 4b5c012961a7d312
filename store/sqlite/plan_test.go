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
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqlRecentThreads, int64(1<<40), "t", 40)
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
	text := strings.Join(plan, "\n")
	if strings.Count(text, "COVERING INDEX graph_threads_updated") != 2 || strings.Contains(text, "SCAN graph_threads") {
		t.Errorf("RecentThreads' page and count do not both search graph_threads_updated (a SCAN reads every thread):\n%s", text)
	}
}
