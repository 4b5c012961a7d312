package langgraph_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// A copy of the Python fixture with values broken the ways a database can
// break them: a corrupt msgpack value, a pickled one, a truncated
// checkpoint, metadata that is not JSON. Everything still lists and reads;
// what does not decode shows as opaque, with why.
func TestDamagedValuesShowAsOpaque(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := lgtest.Copy(t, "sqlite-python.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	head := latestID(t, db, "t-fail")
	for _, stmt := range []string{
		// the findings write of one worker: 0xc1 is no msgpack code
		`UPDATE writes SET value = X'91c1' WHERE thread_id = 't-fail' AND channel = 'findings' AND instr(value, CAST('part0' AS BLOB)) > 0`,
		// the other worker's, pickled
		`UPDATE writes SET type = 'pickle', value = X'80044b012e' WHERE thread_id = 't-fail' AND channel = 'findings' AND instr(value, CAST('part2' AS BLOB)) > 0`,
		// the head's checkpoint cut in half, its metadata not JSON
		`UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, length(checkpoint) / 2), metadata = X'00ff' WHERE checkpoint_id = '` + head + `'`,
		// the parent's checkpoint stored by a serializer this reader does not know
		`UPDATE checkpoints SET type = 'encrypted+msgpack' WHERE checkpoint_id = (SELECT parent_checkpoint_id FROM checkpoints WHERE checkpoint_id = '` + head + `')`,
	} {
		if res, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s changed %d rows, want 1", stmt, n)
		}
	}
	db.Close()

	src := open(t, "sqlite:"+path)
	h := history(t, src, tFail)
	if len(h) != 5 || h[0].ID != head {
		t.Fatalf("history %+v, want all 5 checkpoints listed", h)
	}
	if !strings.Contains(h[0].Damaged, "checkpoint does not decode") || !strings.Contains(h[0].Damaged, "metadata does not decode") {
		t.Errorf("head damaged %q, want both the checkpoint and the metadata named", h[0].Damaged)
	}
	if !strings.Contains(h[1].Damaged, `stored as "encrypted+msgpack"`) {
		t.Errorf("parent damaged %q, want its unknown type named", h[1].Damaged)
	}
	if h[2].Damaged != "" || len(h[2].Next) != 1 {
		t.Errorf("an intact checkpoint %+v reads as damaged", h[2])
	}
	cp, err := src.Checkpoint(ctx, tFail, head)
	if err != nil || cp.Damaged == "" {
		t.Fatalf("the damaged head: %+v, %v; want it read, marked damaged", cp.Listing, err)
	}
	ws, err := src.Writes(ctx, tFail, head)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, tw := range ws {
		for _, w := range tw.Writes {
			if w.Channel != "findings" {
				continue
			}
			typ, ok := langgraph.IsOpaque(w.Value)
			if !ok {
				t.Errorf("write %+v, want opaque", w)
			}
			m := w.Value.(map[string]any)
			if typ == "msgpack" && !strings.Contains(m["$error"].(string), "c1") || m["$size"] == nil {
				t.Errorf("write %+v, want its size and, when corrupt, why", w)
			}
			types = append(types, typ)
		}
		if strings.Contains(tw.Error, "worker 1 exploded") != (len(tw.Writes) == 1) {
			t.Errorf("task %+v", tw)
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"msgpack", "pickle"}) {
		t.Errorf("opaque findings %v, want the corrupt msgpack and the pickle", types)
	}
}

func latestID(t *testing.T, db *sql.DB, thread string) string {
	t.Helper()
	var id string
	if err := db.QueryRow(`SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''`, thread).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
