package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"rewind/store"
)

// decodesSame reports whether a and b decode to the same value.
func decodesSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// tricky are documents holding what jsonb refuses, or the marker that
// stands in for it.
var tricky = []string{
	`{"s":"a\u0000b"}`,
	`{"a\u0000":"\u0000","b":["\u0000\u0000",{"\u0000":null}]}`,
	`{"lone":"\ud800","low":"x\uDC00y","pair":"\ud83d\ude00","hi-then-nul":"\ud800\u0000"}`,
	`{"m":"` + "\uE000" + `","m0":"` + "\uE0000" + `","mm":"` + "\uE000\uE000" + `s0041","esc":"\ue000\uE000"}`,
	`{"mix":"\\u0000 is not NUL","bs":"\\\u0000"}`,
	`{"n":1.50,"big":123456789012345678901234567890,"e":1e3,"t":true,"z":null}`,
}

func TestDocumentsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	for i, doc := range tricky {
		thread := fmt.Sprint("rt", i)
		cp := store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(doc)}
		ev := []store.Event{{ThreadID: thread, CheckpointID: 1, Seq: 1, Type: "x", Payload: []byte(doc)}}
		if err := s.PutCheckpoint(ctx, cp, ev); err != nil {
			t.Fatalf("%s: PutCheckpoint: %v", doc, err)
		}
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: thread, CheckpointID: 1, TaskID: "t", Writes: []byte(doc)}); err != nil {
			t.Fatalf("%s: PutWrites: %v", doc, err)
		}
		got, err := s.Get(ctx, thread, 1)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := s.Writes(ctx, thread, 1)
		if err != nil || len(ws) != 1 {
			t.Fatalf("Writes = %v, %v", ws, err)
		}
		es, err := s.Events(ctx, thread, 1)
		if err != nil || len(es) != 1 {
			t.Fatalf("Events = %v, %v", es, err)
		}
		for what, back := range map[string][]byte{"state": got.State, "writes": ws[0].Writes, "payload": es[0].Payload} {
			if !decodesSame(t, []byte(doc), back) {
				t.Errorf("%s: %s came back as %s", doc, what, back)
			}
			// Go decodes any lone surrogate to U+FFFD, so check they
			// survive as escapes, and that NULs are all there.
			for _, esc := range []string{`\u0000`, `\ud800`, `\udc00`} {
				if n, m := strings.Count(strings.ToLower(doc), esc), strings.Count(strings.ToLower(string(back)), esc); n != m {
					t.Errorf("%s: %s came back as %s: %d %s, want %d", doc, what, back, m, esc, n)
				}
			}
		}
		// Same content spelt differently is the same checkpoint: a no-op.
		var v any
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber() // keep big numbers exact
		_ = dec.Decode(&v)
		if strings.Contains(doc, `\ud800`) || strings.Contains(doc, `\uDC00`) {
			v = nil // re-encoding would turn lone surrogates into U+FFFD
		}
		if v != nil {
			respelt, _ := json.MarshalIndent(v, "", "  ")
			if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: thread, ID: 1, State: respelt}, ev); err != nil {
				t.Errorf("%s: same content re-put as %s: %v, want no-op", doc, respelt, err)
			}
		}
		if err := s.PutCheckpoint(ctx, cp, ev); err != nil {
			t.Errorf("%s: identical re-put: %v, want no-op", doc, err)
		}
		other := store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(`{"s":"a\u0000c"}`)}
		if err := s.PutCheckpoint(ctx, other, ev); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: different content: %v, want ErrConflict", doc, err)
		}
	}
}

// TestGeneratedStringsRoundTrip sends many strings built from the
// characters the escaping cares about through the database.
func TestGeneratedStringsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	alphabet := []string{"\x00", "\uE000", "0", "s", "d800", "\\", "\"", "u", "é", "😀", "\n", "a"}
	rng := rand.New(rand.NewPCG(1, 2))
	var events []store.Event
	var want []map[string]string
	for i := range 300 {
		var k, v strings.Builder
		for range rng.IntN(12) {
			k.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		for range rng.IntN(12) {
			v.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		m := map[string]string{k.String(): v.String(), "i": fmt.Sprint(i)}
		doc, _ := json.Marshal(m)
		want = append(want, m)
		events = append(events, store.Event{Seq: i + 1, Type: "gen", Payload: doc})
	}
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, "gen", 1)
	if err != nil || len(got) != len(want) {
		t.Fatalf("Events: %d, %v", len(got), err)
	}
	for i, e := range got {
		var m map[string]string
		if err := json.Unmarshal(e.Payload, &m); err != nil || !reflect.DeepEqual(m, want[i]) {
			t.Errorf("event %d: sent %q, got %s (%v)", i+1, want[i], e.Payload, err)
		}
	}
	// The same events again are the same step: a no-op.
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); err != nil {
		t.Errorf("re-put: %v", err)
	}
	events[len(events)-1].Payload = []byte(`{"i":"changed\u0000"}`)
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); !errors.Is(err, store.ErrConflict) {
		t.Errorf("re-put with one event changed: %v, want ErrConflict", err)
	}
}

func TestBadDocumentsRefused(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		put  func() error
		want string
	}{
		{"state not UTF-8", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte("{\"a\":\"\xff\"}")}, nil)
		}, "state is not valid UTF-8"},
		{"state not JSON", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{"a":`)}, nil)
		}, "put checkpoint 2 of thread \"t\": state is not valid JSON"},
		{"payload not JSON", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{}`)},
				[]store.Event{{Seq: 1, Type: "ok", Payload: []byte(`{}`)}, {Seq: 2, Type: "bad", Payload: []byte(`nope`)}})
		}, "payload of event 2 is not valid JSON"},
		{"writes not JSON", func() error {
			return s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "x", Writes: []byte(`[1,`)})
		}, "is not valid JSON"},
		{"NUL in thread id", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "a\x00b", ID: 1, State: []byte(`{}`)}, nil)
		}, "NUL byte"},
		{"thread id not UTF-8", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "a\xffb", ID: 1, State: []byte(`{}`)}, nil)
		}, "not valid UTF-8"},
	}
	for _, c := range cases {
		err := c.put()
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "postgres store: "):
			t.Errorf("%s: %q, want 'postgres store: ...%s'", c.name, err, c.want)
		case strings.Contains(c.name, "UTF-8") || strings.Contains(c.name, "NUL"):
			if errors.As(err, &pgErr) {
				t.Errorf("%s: should be refused before reaching the server: %v", c.name, err)
			}
		}
	}
	// Nothing of a refused step was kept: checkpoint and events are one
	// transaction.
	if latest, err := s.Latest(ctx, "t"); err != nil || latest.ID != 1 {
		t.Errorf("Latest = %d, %v; want 1: a refused put left a checkpoint", latest.ID, err)
	}
	if es, err := s.Events(ctx, "t", 0); err != nil || len(es) != 0 {
		t.Errorf("Events = %v, %v; want none", es, err)
	}
}

func TestStrayMarkerInRowWrittenByHand(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, state) values ('h', 1, $1::jsonb)`, "{\"a\":\"\uE000x\"}")
	_, err := s.Get(context.Background(), "h", 1)
	if err == nil || !strings.Contains(err.Error(), "U+E000") {
		t.Fatalf("Get = %v, want an error about the stray marker", err)
	}
}

func TestLockedMessage(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	release, err := s.Lock(ctx, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock(ctx, "th-1")
	if !errors.Is(err, store.ErrLocked) || err.Error() != `thread "th-1" is being run by another process` {
		t.Fatalf("second Lock = %v, want ErrLocked `thread \"th-1\" is being run by another process`", err)
	}
	if r2, err := s.Lock(ctx, "th-2"); err != nil {
		t.Fatalf("another thread: %v", err)
	} else if err := r2(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	r3, err := s.Lock(ctx, "th-1")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	// Close frees what is still held.
	s.Close()
	if err := r3(); err != nil {
		t.Fatalf("release after Close: %v", err)
	}
}

// advisoryHolders lists the backends holding advisory locks in dbURL's
// database.
func advisoryHolders(t *testing.T, dbURL string) []string {
	return query(t, dbURL, `select pid::text from pg_locks
where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`)
}

func waitLock(t *testing.T, s *Store, thread string) func() error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		release, err := s.Lock(context.Background(), thread)
		if err == nil {
			return release
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("Lock: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLockReleasedWhenConnectionKilled(t *testing.T) {
	t.Parallel()
	a, dbURL := openFresh(t)
	b, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	releaseA, err := a.Lock(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(context.Background(), "t"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("b.Lock = %v, want ErrLocked", err)
	}
	if got := query(t, dbURL, `select application_name from pg_stat_activity where pid in (select pid from pg_locks where locktype = 'advisory'
  and database = (select oid from pg_database where datname = current_database()))`); len(got) != 1 || got[0] != appName() {
		t.Errorf("lock holder's application_name = %q, want %q", got, appName())
	}
	pids := advisoryHolders(t, dbURL)
	if len(pids) != 1 {
		t.Fatalf("advisory lock holders = %v, want one", pids)
	}
	adminExec(t, dbURL, `select pg_terminate_backend($1::int)`, pids[0])
	releaseB := waitLock(t, b, "t")
	if err := releaseA(); err == nil {
		t.Error("release of a lock whose connection was killed reported no error")
	}
	if err := releaseB(); err != nil {
		t.Fatal(err)
	}
	if got := advisoryHolders(t, dbURL); len(got) != 0 {
		t.Fatalf("after release, holders = %v", got)
	}
}

func TestLockKeysDiffer(t *testing.T) {
	t.Parallel()
	seen := map[int64]string{}
	for i := range 100000 {
		th := fmt.Sprint("thread-", i)
		k := lockKey(th)
		if prev, ok := seen[k]; ok {
			t.Fatalf("%s and %s share lock key %d", prev, th, k)
		}
		seen[k] = th
	}
}

// TestLockSessionSettings: the lock's connection is exempt from
// idle_session_timeout and probes a silent client.
func TestLockSessionSettings(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	// A server that drops idle sessions after 1 s would drop the lock.
	adminExec(t, dbURL, `do $$ begin execute format('alter database %I set idle_session_timeout = 1000', current_database()); end $$`)
	s.pool.Reset() // new connections pick up the database setting
	release, err := s.Lock(context.Background(), "idle")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	s.mu.Lock()
	var conn *pgx.Conn
	for c := range s.locks {
		conn = c
	}
	s.mu.Unlock()
	got := map[string]string{}
	for _, name := range []string{"idle_session_timeout", "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count"} {
		var v string
		if err := conn.QueryRow(context.Background(), `select current_setting($1)`, name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		got[name] = v
	}
	want := map[string]string{"idle_session_timeout": "0", "tcp_keepalives_idle": "60", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "6"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lock session settings = %v, want %v", got, want)
	}
	time.Sleep(1500 * time.Millisecond)
	b, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Lock(context.Background(), "idle"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("after 1.5 s idle, another Lock = %v, want ErrLocked", err)
	}
}

// Documents are json since store schema 7: every one reads back byte for
// byte as written (jsonb re-spelled them: a space after each colon and
// comma, keys reordered; about 400 bytes a turn of a ticket thread).
func TestDocumentsReadBackAsWritten(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	const state, meta, payload, writes, body, rebased = `{"zeta":1,"alpha":[1,2,{"b":"x","a":null}]}`, `[3,"loop",2]`,
		`{"t":1764633600000000000,"n":"plan"}`, `[{"c":"messages","v":{"z":"\u0000"}}]`, `{"to":"c@x","b":"hi"}`, `{"v":{"z":2,"a":1}}`
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(state), Meta: []byte(meta), Base: true}, []store.Event{{Type: "plan", Payload: []byte(payload)}}))
	must(s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(state), Meta: []byte(meta)}, nil))
	must(s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(state), Meta: []byte(meta)}, nil))
	must(s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 3, TaskID: "a", Writes: []byte(writes)}))
	if _, _, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, "t", []int64{1}, []store.Rebase{{ID: 2, State: []byte(rebased)}}); err != nil {
		t.Fatal(err)
	}
	cp, err := s.Get(ctx, "t", 3)
	must(err)
	chain, err := s.Chain(ctx, "t", 3)
	must(err)
	evs, err := s.Events(ctx, "t", 0)
	must(err)
	ws, err := s.Writes(ctx, "t", 3)
	must(err)
	d, err := s.Draft(ctx, "t", "op")
	must(err)
	for what, got := range map[string][2]string{
		"state": {string(cp.State), state}, "meta": {string(cp.Meta), meta},
		"rebased": {string(chain[len(chain)-1].Rebased), rebased},
		"writes":  {string(ws[0].Writes), writes}, "draft": {string(d.Body), body},
	} {
		if got[0] != got[1] {
			t.Errorf("%s reads back as %s, written %s", what, got[0], got[1])
		}
	}
	if len(evs) != 0 {
		t.Errorf("the pruned checkpoint's event is still there: %v", evs)
	}
	// A reformatted retry of the same put is still the same put.
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(`{ "alpha": [1, 2, {"a": null, "b": "x"}], "zeta": 1 }`), Meta: []byte(meta)}, nil); err != nil {
		t.Errorf("a reformatted retry of checkpoint 3: %v", err)
	}
}

// A put's statement holds only the parts it has (putStatement): every one
// of them stores what it was given and nothing it was not.
func TestPutShapes(t *testing.T) {
	t.Parallel()
	s, _ := openFresh(t)
	ctx := context.Background()
	msg, blob := []byte(`{"role":"user","content":"hi"}`), []byte(`{"blob":1}`)
	for shape := range putPart(putShapes) {
		th := fmt.Sprintf("shape-%02d", shape)
		has := func(p putPart) bool { return shape&p != 0 }
		var epoch int64
		if has(putFenced) {
			var err error
			if epoch, err = s.Fence(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: th, ID: 1, State: []byte(`{}`), Base: true, Epoch: epoch}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: th, CheckpointID: 1, TaskID: "task", Writes: []byte(`[]`), Epoch: epoch}); err != nil {
			t.Fatal(err)
		}
		cp := store.Checkpoint{ThreadID: th, ID: 2, ParentID: 1, State: []byte(`{"d":1}`), Meta: []byte(`{"m":1}`), Epoch: epoch}
		var events []store.Event
		if has(putEvents) {
			events = []store.Event{{Seq: 1, Type: "e", Payload: []byte(`{"p":1}`)}}
		}
		if has(putMessages) {
			cp.Messages = []store.Message{{Hash: store.ContentHash(msg), Index: 0, Body: msg}}
		}
		if has(putBlobs) {
			cp.Blobs = []store.Blob{{Hash: store.ContentHash(blob), Body: blob}}
			cp.BlobRefs = []string{store.ContentHash(blob)}
		}
		if has(putHead) {
			cp.Head = []byte(`{"head":2}`)
		}
		if has(putSettles) {
			cp.Settles = 1
		}
		if err := s.PutCheckpoint(ctx, cp, events); err != nil {
			t.Fatalf("shape %06b: %v", shape, err)
		}
		if has(putFenced) {
			stale := cp
			stale.ID, stale.ParentID, stale.Settles, stale.Epoch = 3, 2, 0, epoch
			if _, err := s.Fence(ctx, th); err != nil {
				t.Fatal(err)
			}
			if err := s.PutCheckpoint(ctx, stale, nil); !errors.Is(err, store.ErrFenced) {
				t.Errorf("shape %06b: a put with a fenced epoch: %v, want ErrFenced", shape, err)
			}
		}
		got, err := s.Get(ctx, th, 2)
		if err != nil || string(got.State) != `{"d":1}` || string(got.Meta) != `{"m":1}` || got.ParentID != 1 {
			t.Fatalf("shape %06b: Get = %+v, %v", shape, got, err)
		}
		ev, err1 := s.Events(ctx, th, 2)
		ms, err2 := s.Messages(ctx, th, []string{store.ContentHash(msg)})
		bs, err3 := s.Blobs(ctx, th, []string{store.ContentHash(blob)})
		ws, err4 := s.Writes(ctx, th, 1)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			got  bool
			want bool
		}{
			{"events", len(ev) == 1, has(putEvents)},
			{"a message", len(ms) == 1, has(putMessages)},
			{"a blob", len(bs) == 1, has(putBlobs)},
			{"a head snapshot", string(got.Head) == `{"head":2}`, has(putHead)},
			{"the parent's writes settled", len(ws) == 0, has(putSettles)},
		} {
			if c.got != c.want {
				t.Errorf("shape %06b: %s: %v, want %v", shape, c.what, c.got, c.want)
			}
		}
	}
}

// The store's sessions plan every statement once (a custom plan for each
// of the first five runs cost a put 0.2-0.8 ms of planning), unless the
// URL says otherwise.
func TestGenericPlans(t *testing.T) {
	t.Parallel()
	dbURL := freshDB(t)
	ctx := context.Background()
	for _, c := range []struct{ query, want string }{{"", "force_generic_plan"}, {"plan_cache_mode=auto", "auto"}} {
		u := dbURL
		if c.query != "" {
			u += map[bool]string{true: "&", false: "?"}[strings.Contains(u, "?")] + c.query
		}
		s, err := Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		err = s.pool.QueryRow(ctx, `show plan_cache_mode`).Scan(&mode)
		s.Close()
		if err != nil || mode != c.want {
			t.Errorf("URL with %q: plan_cache_mode %q, %v; want %q", c.query, mode, err, c.want)
		}
	}
}

// A put that meets an insert of its id committed after its snapshot (the
// primary key refuses it) answers as for any stored id: nil for the same
// checkpoint, ErrConflict for another.
func TestPutRacesAnInsertOfItsID(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`), Base: true}, nil); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		state string
		want  error
	}{{`{"n":1}`, nil}, {`{"n":"other"}`, store.ErrConflict}} {
		id := int64(2 + i)
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `insert into graph_checkpoints (thread_id, checkpoint_id, parent_id, state, base) values ('t', $1, $2, '{"n":1}', false)`, id, id-1); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: []byte(c.state)}, nil)
		}()
		// The put waits for the insert's transaction on the primary key.
		for waiting := false; !waiting; {
			select {
			case err := <-done:
				t.Fatalf("put %d returned %v before the racing insert committed", id, err)
			case <-time.After(20 * time.Millisecond):
			}
			var n int
			if err := conn.QueryRow(ctx, `select count(*) from pg_locks where locktype = 'transactionid' and not granted`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			waiting = n > 0
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("put %d after a racing insert of the %s checkpoint: %v, want %v", id, map[bool]string{true: "same", false: "other"}[c.want == nil], err, c.want)
		}
		conn.Close(ctx)
	}
}
