package bench

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"rewind/store"
	"rewind/store/sqlite"
	"rewind/store/sqlite/floor"
)

// The floor a turn is compared with holds the very rows the store holds
// (a floor that missed some would flatter rewind): each checkpoint's
// listing and state, the head snapshot, every message and blob body,
// each task's writes and each event, after 25 turns on a SQLite file.
func TestFloorHoldsTheTurnsRows(t *testing.T) {
	t.Parallel()
	ctx, dir := t.Context(), t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "rewind.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := floor.Create(ctx, filepath.Join(dir, "floor.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remove()
	counted := &countingFloor{Floor: f}
	rep, err := Run(ctx, st, "sqlite", Options{Turns: 25, TurnsOnly: true, Floor: counted}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range rep.Turns {
		if tn.FloorMs <= 0 || tn.FloorCPUMs < 0 {
			t.Fatalf("turn %d was not timed on the floor: %+v", tn.Turn, tn)
		}
	}
	if fl := rep.Floor; fl == nil || fl.Early.Times <= 0 || fl.Late.From != 16 || fl.Late.To != 25 {
		t.Fatalf("the report compares no turns with the floor: %+v", fl)
	}
	db, err := sql.Open("sqlite", "file:"+f.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	th := rep.Thread
	writes, events := sameCheckpoints(t, st, db, th, rep.Checkpoints)
	// A checkpoint that completes its parent's superstep deletes the
	// parent's writes (Checkpoint.Settles): both keep only unsettled ones,
	// after the floor was given every task's.
	if n := count(t, db, `select count(*) from writes`); n != writes || counted.writes == 0 || counted.syncs != 25 {
		t.Fatalf("the floor holds %d tasks' writes, the store %d; the floor was given %d and synced %d times in 25 turns", n, writes, counted.writes, counted.syncs)
	}
	if n := count(t, db, `select count(*) from events`); n != events || events == 0 {
		t.Fatalf("the floor holds %d events, the store %d", n, events)
	}
	msgs, bodies := sameMessages(t, st, db, th)
	blobs := sameBlobs(t, st, db, th)
	last, err := st.Latest(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	var head []byte
	if err := db.QueryRowContext(ctx, `select doc from heads where thread = ? and id = ?`, th, last.ID).Scan(&head); err != nil || !bytes.Equal(head, last.Head) {
		t.Fatalf("the floor's head snapshot is %d bytes (%v), the store's %d", len(head), err, len(last.Head))
	}
	t.Logf("%d checkpoints, %d tasks' writes (%d given), %d events, %d messages (%d bytes), %d blobs on both", rep.Checkpoints, writes, counted.writes, events, msgs, bodies, blobs)
}

// countingFloor counts the writes and syncs a floor is given.
type countingFloor struct {
	Floor
	writes, syncs int
}

func (c *countingFloor) Writes(ctx context.Context, w store.TaskWrites) error {
	c.writes++
	return c.Floor.Writes(ctx, w)
}

func (c *countingFloor) Sync() error {
	c.syncs++
	return c.Floor.Sync()
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// sameCheckpoints checks that the floor holds each checkpoint's row and
// the task writes the store keeps for it; it returns how many writes and
// events the store keeps.
func sameCheckpoints(t *testing.T, st store.Store, db *sql.DB, th string, checkpoints int64) (writes, events int) {
	t.Helper()
	ctx := t.Context()
	if n := count(t, db, `select count(*) from checkpoints where thread = ?`, th); int64(n) != checkpoints {
		t.Fatalf("the floor holds %d checkpoints, the store %d", n, checkpoints)
	}
	for id := int64(1); id <= checkpoints; id++ {
		cp, err := st.Get(ctx, th, id)
		if err != nil {
			t.Fatal(err)
		}
		var meta, state []byte
		if err := db.QueryRowContext(ctx, `select meta, state from checkpoints where thread = ? and id = ?`, th, id).Scan(&meta, &state); err != nil {
			t.Fatalf("checkpoint %d on the floor: %v", id, err)
		}
		if !bytes.Equal(meta, cp.Meta) || !bytes.Equal(state, cp.State) {
			t.Fatalf("checkpoint %d: the floor holds another row than the store's", id)
		}
		ws, err := st.Writes(ctx, th, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			var doc []byte
			if err := db.QueryRowContext(ctx, `select writes from writes where thread = ? and checkpoint = ? and task = ?`, th, id, w.TaskID).Scan(&doc); err != nil || !bytes.Equal(doc, w.Writes) {
				t.Fatalf("task %s of checkpoint %d: the floor holds %q (%v), the store %q", w.TaskID, id, doc, err, w.Writes)
			}
		}
		evs, err := st.Events(ctx, th, id)
		if err != nil {
			t.Fatal(err)
		}
		writes, events = writes+len(ws), events+len(evs)
	}
	return writes, events
}

// sameMessages checks that the floor holds every message body the store
// holds, and no other: their count and bytes.
func sameMessages(t *testing.T, st store.Store, db *sql.DB, th string) (n, bytesOf int) {
	t.Helper()
	msgs, err := st.MessagesIn(t.Context(), th, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		var body []byte
		if err := db.QueryRowContext(t.Context(), `select body from messages where thread = ? and hash = ?`, th, m.Hash).Scan(&body); err != nil || !bytes.Equal(body, m.Body) {
			t.Fatalf("message #%d (%s): the floor holds %q (%v), the store %q", m.Index, m.Hash, body, err, m.Body)
		}
		bytesOf += len(m.Body)
	}
	if n := count(t, db, `select count(*) from messages`); n != len(msgs) || n == 0 {
		t.Fatalf("the floor holds %d messages, the store %d", n, len(msgs))
	}
	return len(msgs), bytesOf
}

// sameBlobs checks that each blob on the floor is the store's: how many.
func sameBlobs(t *testing.T, st store.Store, db *sql.DB, th string) int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `select hash, body from blobs where thread = ?`, th)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var blobs int
	for rows.Next() {
		var hash string
		var body []byte
		if err := rows.Scan(&hash, &body); err != nil {
			t.Fatal(err)
		}
		got, err := st.Blobs(t.Context(), th, []string{hash})
		if err != nil || len(got) != 1 || !bytes.Equal(got[0].Body, body) {
			t.Fatalf("blob %s: the floor holds %d bytes, the store %v (%v)", hash, len(body), got, err)
		}
		blobs++
	}
	if err := rows.Err(); err != nil || blobs == 0 {
		t.Fatalf("the floor holds %d blobs (%v)", blobs, err)
	}
	return blobs
}
