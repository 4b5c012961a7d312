package langgraph_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// deep is a msgpack value nested n arrays deep: n bytes.
func deep(n int) []byte {
	return append(bytes.Repeat([]byte{0x91}, n), 0xc0) // [[[…nil…]]]
}

// wide is a msgpack array of n nils.
func wide(n int) []byte {
	b := []byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(b, bytes.Repeat([]byte{0xc0}, n)...)
}

// addChannels puts channels first in the channel_values of a msgpack
// checkpoint, as they were stored with the others after them. The
// fixtures' channel_values are fixmaps of a few channels.
func addChannels(t *testing.T, cp []byte, channels ...[2][]byte) []byte {
	t.Helper()
	key := append([]byte{0xae}, "channel_values"...)
	at := bytes.Index(cp, key)
	if at < 0 {
		t.Fatal("no channel_values in the checkpoint")
	}
	at += len(key)
	if n := cp[at]; n&0xf0 != 0x80 || int(n&0x0f)+len(channels) > 15 {
		t.Fatalf("channel_values starts %#x, want a small fixmap", n)
	}
	out := append([]byte{}, cp[:at]...)
	out = append(out, cp[at]+byte(len(channels)))
	for _, ch := range channels {
		out = append(out, 0xa0|byte(len(ch[0])))
		out = append(out, ch[0]...)
		out = append(out, ch[1]...)
	}
	return append(out, cp[at+1:]...)
}

// A copy of the Python fixture whose head holds a channel nested a million
// levels deep (LangGraph's own msgpack would store it) and one of more
// values than the reader decodes: every command reads the thread, the two
// channels named with why, the others whole, and the stack stays small.
// Skipping the deep value used msgpack's recursive Skip: 10 million levels
// died with "fatal error: stack overflow".
func TestHostileValuesAreBounded(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	ctx := context.Background()
	clean := lgtest.Copy(t, "sqlite-python.db")
	path := lgtest.Copy(t, "sqlite-python.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	head := latestID(t, db, "t-fail")
	var cp []byte
	if err := db.QueryRow(`SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?`, head).Scan(&cp); err != nil {
		t.Fatal(err)
	}
	cp = addChannels(t, cp, [2][]byte{[]byte("notes"), deep(1 << 20)}, [2][]byte{[]byte("crowd"), wide(langgraph.MaxItems + 1)})
	if _, err := db.Exec(`UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?`, cp, head); err != nil {
		t.Fatal(err)
	}
	// a write as deep
	if _, err := db.Exec(`UPDATE writes SET value = ? WHERE checkpoint_id = ? AND rowid = (SELECT min(rowid) FROM writes WHERE checkpoint_id = ?)`, deep(1<<20), head, head); err != nil {
		t.Fatal(err)
	}
	db.Close()

	src, want := open(t, "sqlite:"+path), open(t, "sqlite:"+clean)
	h := history(t, src, tFail)
	if len(h) != 5 || h[0].ID != head {
		t.Fatalf("history %+v, want all 5 checkpoints listed", h)
	}
	for i, l := range h[1:] {
		if l.Damaged != "" {
			t.Errorf("checkpoint %d damaged: %s", i+1, l.Damaged)
		}
	}
	if h[0].Damaged != "" {
		t.Errorf("the head's listing reads as damaged (%s): a listing skips the values it does not show", h[0].Damaged)
	}
	got, err := src.Checkpoint(ctx, tFail, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`channel "notes"`, "nested deeper than 512", `channel "crowd"`, "more than"} {
		if !strings.Contains(got.Damaged, w) {
			t.Errorf("damaged %q, want it to say %q", got.Damaged, w)
		}
	}
	if strings.Contains(got.Damaged, "\n") {
		t.Errorf("damaged %q: want one line", got.Damaged)
	}
	whole, err := want.Checkpoint(ctx, tFail, head)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{}
	for _, ch := range got.Channels {
		values[ch.Name] = ch.Value
	}
	for _, name := range []string{"notes", "crowd"} {
		if _, ok := langgraph.IsOpaque(values[name]); !ok {
			t.Errorf("channel %s = %.200v, want opaque", name, values[name])
		}
	}
	// The too-deep write is a finished worker's findings: the current
	// state applies the other worker's alone, and says why.
	if l, _ := values["findings"].([]any); len(l) != 1 || !strings.Contains(got.Damaged, `to channel "findings" is not applied`) {
		t.Errorf("findings %v, damaged %q: want the one write that reads applied, the other named", values["findings"], got.Damaged)
	}
	for _, ch := range whole.Channels {
		if ch.Name == "findings" {
			continue
		}
		if !equalJSON(t, values[ch.Name], ch.Value) {
			t.Errorf("channel %s reads %.200v, want %.200v as in the intact file", ch.Name, values[ch.Name], ch.Value)
		}
	}
	if len(got.Messages()) == 0 || len(got.Messages()) != len(whole.Messages()) {
		t.Errorf("%d messages, want the intact file's %d", len(got.Messages()), len(whole.Messages()))
	}
	ws, err := src.Writes(ctx, tFail, head)
	if err != nil {
		t.Fatal(err)
	}
	opaque := 0
	for _, tw := range ws {
		for _, w := range tw.Writes {
			if m, ok := w.Value.(map[string]any); ok && strings.Contains(m[langgraph.KeyError].(string), "nested deeper") {
				opaque++
			}
		}
	}
	if opaque != 1 {
		t.Errorf("%d writes read as too deep, want 1: %+v", opaque, ws)
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// PostgreSQL keeps a channel's value apart (checkpoint_blobs): one nested
// a million deep is named the same way.
func TestHostileBlobIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := lgtest.Dump(t, "postgres-python.sql")
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var head string
	if err := conn.QueryRow(ctx, `SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't-fail' AND checkpoint_ns = ''`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	tag, err := conn.Exec(ctx, `UPDATE checkpoint_blobs b SET blob = $1, type = 'msgpack' FROM checkpoints c
		WHERE c.checkpoint_id = $2 AND b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
		AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'`, deep(1<<20), head)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("damage the head's messages: %v, %d rows", err, tag.RowsAffected())
	}
	src := open(t, dbURL)
	cp, err := src.Checkpoint(ctx, tFail, head)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cp.Damaged, `channel "messages" not read: its value of 1048577 bytes is nested deeper than 512 levels`) {
		t.Errorf("damaged %q, want the messages channel named", cp.Damaged)
	}
	if h := history(t, src, tFail); len(h) != 5 || h[0].Damaged != "" {
		t.Errorf("history %+v, want 5 checkpoints, none damaged (a listing reads no messages)", h)
	}
}

// Copies of the Python fixtures whose parent links loop: through the root
// (its parent set to the head) and between two checkpoints (one's parent
// set to its child), which a browser walking down from the roots missed
// (the TUI showed "reading the chain…" for ever, or 2 of 12). Every
// checkpoint reads, in one tree; the oldest of the cycle shows as a root,
// the cycle named.
func TestParentCyclesAreCut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// child's parent becomes parent (positions in t-main's ids, oldest
		// first; -1 the newest)
		child, parent int
		// cut is the checkpoint that shows as a root, and the cycle's length.
		cut, length int
	}{
		{"through the root", 0, -1, 0, 6},
		{"two checkpoints", 2, 3, 2, 2},
		{"itself", 4, 4, 4, 1},
	}
	backends := []struct {
		name string
		open func(t *testing.T) (spec string, exec func(string))
	}{
		{"sqlite", func(t *testing.T) (string, func(string)) {
			path := lgtest.Copy(t, "sqlite-python.db")
			return "sqlite:" + path, func(stmt string) {
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if _, err := db.Exec(stmt); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"postgres", func(t *testing.T) (string, func(string)) {
			url := lgtest.Dump(t, "postgres-python.sql")
			return url, func(stmt string) {
				ctx := context.Background()
				conn, err := pgx.Connect(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, b := range backends {
		for _, c := range cases {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				spec, exec := b.open(t)
				var ids []string
				for _, l := range history(t, open(t, spec), tMain) {
					ids = append([]string{l.ID}, ids...)
				}
				at := func(i int) string { return ids[(i+len(ids))%len(ids)] }
				exec(`UPDATE checkpoints SET parent_checkpoint_id = '` + at(c.parent) + `' WHERE thread_id = 't-main' AND checkpoint_ns = '' AND checkpoint_id = '` + at(c.child) + `'`)

				src := open(t, spec)
				h := history(t, src, tMain)
				if len(h) != len(ids) {
					t.Fatalf("%d checkpoints listed, want %d", len(h), len(ids))
				}
				if n := fromRoots(h); n != len(h) {
					t.Errorf("a walk down from the roots reaches %d of %d checkpoints", n, len(h))
				}
				cut := at(c.cut)
				for _, l := range h {
					if (l.Damaged != "") != (l.ID == cut) {
						t.Errorf("@%s damaged %q, want only @%s", l.ID, l.Damaged, cut)
					}
				}
				cp, err := src.Checkpoint(ctx, tMain, cut)
				if err != nil {
					t.Fatal(err)
				}
				want := "its parent is itself"
				if c.length > 1 {
					want = fmt.Sprintf("its parent @%s leads back to it, a parent cycle of %d checkpoints (@%s → ", at(c.parent), c.length, cut)
				}
				if cp.Parent != "" || !strings.Contains(cp.Damaged, want) || !strings.Contains(cp.Damaged, "shows as a root") {
					t.Errorf("the cut checkpoint: parent %q, damaged %q; want no parent and %q", cp.Parent, cp.Damaged, want)
				}
				if p, err := src.History(ctx, tMain, at(c.cut+1), 1); err != nil || len(p) != 1 || p[0].ID != cut || p[0].Damaged != cp.Damaged {
					t.Errorf("a page of the cut checkpoint alone: %+v, %v", p, err)
				}
			})
		}
	}
}

// fromRoots counts the listings a walk down from the roots (those whose
// parent is not listed) reaches, as the TUI's timeline lays them out.
func fromRoots(h []langgraph.Listing) int {
	listed, kids := map[string]bool{}, map[string][]string{}
	for _, l := range h {
		listed[l.ID] = true
	}
	var todo []string
	for _, l := range h {
		if listed[l.Parent] && l.Parent != l.ID {
			kids[l.Parent] = append(kids[l.Parent], l.ID)
		} else {
			todo = append(todo, l.ID)
		}
	}
	seen := map[string]bool{}
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !seen[id] {
			seen[id] = true
			todo = append(todo, kids[id]...)
		}
	}
	return len(seen)
}

// Random bytes stored as msgpack (a damaged value, or a key that did not
// open an encrypted one) decode to opaque without allocating what their
// lengths claim: a 3 KB value declaring a 4 GB string took a minute and
// 4 GB to clear before the lengths were checked against what is left.
// Not parallel: TotalAlloc counts every goroutine of the process, and
// the package's other tests allocated 4 MB beside one decode on CI.
func TestRandomBytesCostWhatTheyWeigh(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ms runtime.MemStats
	for i := range 300 {
		b := make([]byte, 100+r.IntN(4000))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		langgraph.Decode(langgraph.TypeMsgpack, b)
		runtime.ReadMemStats(&ms)
		if got := ms.TotalAlloc - before; got > 16<<20 {
			t.Fatalf("value %d (%d random bytes, first %x) allocated %d MB to decode", i, len(b), b[:4], got>>20)
		}
	}
}
