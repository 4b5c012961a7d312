package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres"
	pgfloor "rewind/store/postgres/floor"
	"rewind/store/sqlite/floor"
)

// The floor a turn is compared with holds the very rows the store holds
// (a floor that missed some would flatter rewind): each checkpoint's
// listing and state, the head snapshot, every message and blob body,
// each task's writes and each event, after 25 turns, on SQLite (a file
// beside the store) and PostgreSQL (a schema of its own, dropped after).
func TestFloorHoldsTheTurnsRows(t *testing.T) {
	t.Parallel()
	backendtest.EachShared(t, func(t *testing.T, be backendtest.Backend) {
		t.Parallel()
		ctx := t.Context()
		st := be.Open(t, "floor")
		f, ok, err := backend.NewFloor(ctx, st)
		if err != nil || !ok {
			t.Fatalf("no floor on %s: %v", be.Name, err)
		}
		db := openFloor(t, st, f)
		counted := &countingFloor{Floor: f}
		rep, err := Run(ctx, st, be.Name, Options{Turns: 25, TurnsOnly: true, Floor: counted}, nil)
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
		th := rep.Thread
		writes, events := sameCheckpoints(t, st, db, th, rep.Checkpoints)
		// A checkpoint that completes its parent's superstep deletes the
		// parent's writes (Checkpoint.Settles): both keep only unsettled
		// ones, after the floor was given every task's.
		if n := db.count(t, `select count(*) from {t}writes`); n != writes || counted.writes == 0 || counted.syncs != 25 {
			t.Fatalf("the floor holds %d tasks' writes, the store %d; the floor was given %d and synced %d times in 25 turns", n, writes, counted.writes, counted.syncs)
		}
		if n := db.count(t, `select count(*) from {t}events`); n != events || events == 0 {
			t.Fatalf("the floor holds %d events, the store %d", n, events)
		}
		msgs, bodies := sameMessages(t, st, db, th)
		blobs := sameBlobs(t, st, db, th)
		last, err := st.Latest(ctx, th)
		if err != nil {
			t.Fatal(err)
		}
		var head []byte
		if err := db.row(t, `select doc from {t}heads where thread = ? and id = ?`, th, last.ID).Scan(&head); err != nil || !bytes.Equal(head, last.Head) {
			t.Fatalf("the floor's head snapshot is %d bytes (%v), the store's %d", len(head), err, len(last.Head))
		}
		t.Logf("%d checkpoints, %d tasks' writes (%d given), %d events, %d messages (%d bytes), %d blobs on both", rep.Checkpoints, writes, counted.writes, events, msgs, bodies, blobs)
		if err := f.Remove(); err != nil {
			t.Fatal(err)
		}
		if pg, ok := f.(*pgfloor.Floor); ok && db.count(t, `select count(*) from pg_namespace where nspname = ?`, pg.Schema()) != 0 {
			t.Fatalf("the floor's schema %s outlived Remove", pg.Schema())
		}
	})
}

// floorDB reads a floor: its queries name tables {t}name and take ?
// parameters, on either store.
type floorDB struct {
	queryRow func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error }
	prefix   string
	dollars  bool
}

func openFloor(t *testing.T, st store.Store, f backend.Floor) floorDB {
	t.Helper()
	switch f := f.(type) {
	case *floor.Floor:
		db, err := sql.Open("sqlite", "file:"+f.Path()+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return floorDB{queryRow: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
			return db.QueryRowContext(ctx, q, args...)
		}}
	case *pgfloor.Floor:
		pool := store.Unwrap(st).(*postgres.Store).Pool()
		return floorDB{prefix: f.Schema() + ".", dollars: true, queryRow: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
			return pool.QueryRow(ctx, q, args...)
		}}
	}
	t.Fatalf("a floor of type %T", f)
	return floorDB{}
}

func (d floorDB) row(t *testing.T, q string, args ...any) interface{ Scan(...any) error } {
	q = strings.ReplaceAll(q, "{t}", d.prefix)
	for n := 1; d.dollars && strings.Contains(q, "?"); n++ {
		q = strings.Replace(q, "?", fmt.Sprintf("$%d", n), 1)
	}
	return d.queryRow(t.Context(), q, args...)
}

func (d floorDB) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.row(t, q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// sameCheckpoints checks that the floor holds each checkpoint's row and
// the task writes the store keeps for it; it returns how many writes and
// events the store keeps.
func sameCheckpoints(t *testing.T, st store.Store, db floorDB, th string, checkpoints int64) (writes, events int) {
	t.Helper()
	ctx := t.Context()
	if n := db.count(t, `select count(*) from {t}checkpoints where thread = ?`, th); int64(n) != checkpoints {
		t.Fatalf("the floor holds %d checkpoints, the store %d", n, checkpoints)
	}
	for id := int64(1); id <= checkpoints; id++ {
		cp, err := st.Get(ctx, th, id)
		if err != nil {
			t.Fatal(err)
		}
		var meta, state []byte
		if err := db.row(t, `select meta, state from {t}checkpoints where thread = ? and id = ?`, th, id).Scan(&meta, &state); err != nil {
			t.Fatalf("checkpoint %d on the floor: %v", id, err)
		}
		if !sameJSON(meta, cp.Meta) || !sameJSON(state, cp.State) {
			t.Fatalf("checkpoint %d: the floor holds another row than the store's:\n%s\n%s", id, state, cp.State)
		}
		ws, err := st.Writes(ctx, th, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			var doc []byte
			if err := db.row(t, `select writes from {t}writes where thread = ? and checkpoint = ? and task = ?`, th, id, w.TaskID).Scan(&doc); err != nil || !sameJSON(doc, w.Writes) {
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

// sameJSON: PostgreSQL's store may hand a document back as jsonb wrote it.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// sameMessages checks that the floor holds every message body the store
// holds, and no other: their count and bytes.
func sameMessages(t *testing.T, st store.Store, db floorDB, th string) (n, bytesOf int) {
	t.Helper()
	msgs, err := st.MessagesIn(t.Context(), th, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		var body []byte
		if err := db.row(t, `select body from {t}messages where thread = ? and hash = ?`, th, m.Hash).Scan(&body); err != nil || !sameJSON(body, m.Body) {
			t.Fatalf("message #%d (%s): the floor holds %q (%v), the store %q", m.Index, m.Hash, body, err, m.Body)
		}
		bytesOf += len(m.Body)
	}
	if n := db.count(t, `select count(*) from {t}messages`); n != len(msgs) || n == 0 {
		t.Fatalf("the floor holds %d messages, the store %d", n, len(msgs))
	}
	return len(msgs), bytesOf
}

// sameBlobs checks that each blob on the floor is the store's: how many.
func sameBlobs(t *testing.T, st store.Store, db floorDB, th string) int {
	t.Helper()
	n := db.count(t, `select count(*) from {t}blobs where thread = ?`, th)
	if n == 0 {
		t.Fatal("the floor holds no blobs")
	}
	for i := range n {
		var hash string
		var body []byte
		if err := db.row(t, `select hash, body from {t}blobs where thread = ? order by hash limit 1 offset ?`, th, i).Scan(&hash, &body); err != nil {
			t.Fatal(err)
		}
		got, err := st.Blobs(t.Context(), th, []string{hash})
		if err != nil || len(got) != 1 || !bytes.Equal(got[0].Body, body) {
			t.Fatalf("blob %s: the floor holds %d bytes, the store %v (%v)", hash, len(body), got, err)
		}
	}
	return n
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
