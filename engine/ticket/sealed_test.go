package ticket_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/engine"
	"rewind/engine/seal"
	"rewind/engine/ticket"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

const sentinel = "ZEBRAQUOKKA7731"

func sealKey(t *testing.T, text string) *seal.Key {
	t.Helper()
	k, err := seal.ParseKey([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeSentinelThread runs turns whose messages name the sentinel until
// a summary holds it too.
func writeSentinelThread(t *testing.T, e *engine.Engine, thread string) {
	t.Helper()
	ctx := context.Background()
	for turn := 1; turn <= 8; turn++ {
		if _, err := e.Run(ctx, thread, ticket.Input("Where is my order "+sentinel+"? It is late"), engine.RunConfig{}); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
	}
	cp, err := e.Latest(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	if s.Summary == nil || !strings.Contains(s.Summary.Text, sentinel) {
		t.Fatalf("after 8 turns the summary does not hold the sentinel: %+v", s.Summary)
	}
}

// storedText is every byte the store keeps: a SQLite file and its WAL,
// or every row of every PostgreSQL table as text.
func storedText(t *testing.T, spec string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		for _, p := range []string{path, path + "-wal"} {
			if b, err := os.ReadFile(p); err == nil {
				out[filepath.Base(p)] = b
			}
		}
		if len(out) == 0 {
			t.Fatalf("no file at %s", path)
		}
		return out
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		out[table] = []byte(strings.Join(texts, "\n"))
	}
	if len(out) == 0 {
		t.Fatal("no tables")
	}
	return out
}

func noSentinel(t *testing.T, when string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(sentinel))) {
			t.Errorf("%s: %s holds the sentinel", when, name)
		}
	}
}

// TestSealedThreadKeepsNoPlaintext is issue 36's test of encryption at
// rest: a thread whose messages and summary hold a sentinel leaves it in
// none of the store's files or tables; read with the key, every
// checkpoint is the one an unencrypted run stores; without it, what
// reads listings and events still works and what needs the text says
// which key; a wrong key writes nothing; a rekey moves it all to another
// key.
func TestSealedThreadKeepsNoPlaintext(t *testing.T) {
	t.Parallel()
	k1 := sealKey(t, "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	k2 := sealKey(t, "k2:HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=")
	ctx := context.Background()
	mem := memory.New()
	w, err := ticket.NewEngine(mem, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	writeSentinelThread(t, w, "t")
	// Read back by an engine that caches nothing, as the sealed thread is.
	plain, err := ticket.NewEngine(mem, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}

	backendtest.EachShared(t, func(t *testing.T, b backendtest.Backend) {
		spec := b.Spec(t, "sealed")
		open := func(keys *seal.Keys) *engine.Engine {
			st, err := backend.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithKeys(keys))
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		w := open(seal.NewKeys(k1))
		writeSentinelThread(t, w, "t")
		noSentinel(t, "with the writer open", storedText(t, spec))
		if err := w.Store().Close(); err != nil {
			t.Fatal(err)
		}
		noSentinel(t, "after close", storedText(t, spec))

		// With the key, in a new process's engine.
		r := open(seal.NewKeys(k1))
		readsAsPlain(t, r, plain)
		if found, err := r.Search(ctx, "t", strings.ToLower(sentinel), 0); err != nil || len(found) != 8 {
			t.Fatalf("search with the key: %d found, %v; want the 8 user messages", len(found), err)
		}
		readsWithoutKey(t, open(nil))
		x := open(seal.NewKeys(k2))
		wrongKeyWritesNothing(t, x)

		// Rotation: k2 without k1 cannot rekey (nothing written); with
		// k1 given as the old key it does, and then k2 alone reads
		// every checkpoint and k1 alone none.
		if _, err := x.Rekey(ctx, "t", false); !errors.Is(err, seal.ErrSealed) {
			t.Fatalf("a rekey without the old key: %v", err)
		}
		res, err := open(seal.NewKeys(k2, k1)).Rekey(ctx, "t", false)
		if err != nil || res.Resealed["k1"] == 0 || res.Clear != 0 || res.KeyID != "k2" {
			t.Fatalf("rekey: %+v, %v", res, err)
		}
		noSentinel(t, "after the rekey", storedText(t, spec))
		readsAsPlain(t, open(seal.NewKeys(k2)), plain)
		if _, err := open(seal.NewKeys(k1)).Latest(ctx, "t"); !errors.Is(err, seal.ErrSealed) {
			t.Fatalf("the old key alone after the rekey: %v", err)
		}
	})
}

// readsAsPlain: every checkpoint of thread t reads in e as in plain.
func readsAsPlain(t *testing.T, e, plain *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	want, err := plain.History(ctx, "t", 0, 0)
	if err != nil || len(want) == 0 {
		t.Fatalf("history: %d, %v", len(want), err)
	}
	for _, l := range want {
		got, err := e.Get(ctx, "t", l.ID)
		if err != nil {
			t.Fatalf("@%d: %v", l.ID, err)
		}
		ref, err := plain.Get(ctx, "t", l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g, r := canonical(t, got.Values), canonical(t, ref.Values); g != r {
			t.Fatalf("@%d reads otherwise than the unencrypted run's:\n%.300s\n%.300s", l.ID, g, r)
		}
	}
}

// readsWithoutKey: listings, runs and events read; a state says what is
// encrypted.
func readsWithoutKey(t *testing.T, n *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	if _, err := n.History(ctx, "t", 0, 0); err != nil {
		t.Fatalf("history without the key: %v", err)
	}
	if runs, err := n.Runs(ctx, "t"); err != nil || len(runs.List) != 8 {
		t.Fatalf("runs without the key: %+v, %v", runs, err)
	}
	if evs, err := n.Events(ctx, "t", 0); err != nil || len(evs) == 0 {
		t.Fatalf("events without the key: %d, %v", len(evs), err)
	}
	_, err := n.Latest(ctx, "t")
	sealed, ok := n.SealedBy(err)
	if !ok || sealed.KeyID != "k1" || sealed.Given != "" || strings.Join(sealed.Channels, ",") != "messages,summary" {
		t.Fatalf("latest without the key: %v (%+v)", err, sealed)
	}
}

// wrongKeyWritesNothing: a run with another key fails in one line
// naming the key, and the thread keeps its size.
func wrongKeyWritesNothing(t *testing.T, x *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	before, err := x.Store().Size(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.Run(ctx, "t", ticket.Input("one more"), engine.RunConfig{})
	if sealed, ok := x.SealedBy(err); !ok || sealed.Given != "k2" || !strings.Contains(err.Error(), "key k1") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a run with the wrong key: %v", err)
	}
	if after, err := x.Store().Size(ctx, "t"); err != nil || after != before {
		t.Fatalf("a refused run changed the thread: %d bytes, then %d (%v)", before, after, err)
	}
}

// canonical is v as JSON with every object's keys sorted.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a any
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(a)
	return string(b)
}
