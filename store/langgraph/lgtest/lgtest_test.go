package lgtest_test

import (
	"context"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

func TestMain(m *testing.M) { rewindbin.Exit(pgtest.Run(m)) }

// A watched database's Tables and Counts see what another session wrote
// after the watch began, as a connection a call would: a held session
// that read one snapshot would pass every "the command wrote nothing"
// check of the tests that watch.
func TestWatchSeesWhatAnotherSessionWrites(t *testing.T) {
	t.Parallel()
	db := lgtest.NewDatabase(t, lgtest.Admin(t))
	exec := func(stmt string) {
		t.Helper()
		c, done := lgtest.Connect(t, db)
		defer done()
		if _, err := c.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(`CREATE TABLE checkpoints (id int, body text); INSERT INTO checkpoints VALUES (1, 'a')`)
	w := lgtest.Watch(t, db)
	tables, counts := w.Tables(t), w.Counts(t)
	if tables != lgtest.Tables(t, db) || counts != lgtest.Counts(t, db) {
		t.Fatalf("watched %s / %s; a connection of its own reads %s / %s", tables, counts, lgtest.Tables(t, db), lgtest.Counts(t, db))
	}
	exec(`UPDATE checkpoints SET body = 'b'`)
	if now := w.Tables(t); now == tables {
		t.Errorf("an update went unseen: the tables still read %s", now)
	}
	exec(`INSERT INTO checkpoints VALUES (2, 'c')`)
	if now := w.Counts(t); now == counts {
		t.Errorf("an insert went unseen: the counts still read %s", now)
	}
	exec(`CREATE TABLE other (id int)`)
	if now := w.Tables(t); now != lgtest.Tables(t, db) {
		t.Errorf("a new table: watched %s, a connection of its own reads %s", now, lgtest.Tables(t, db))
	}
}
